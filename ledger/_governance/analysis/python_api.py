"""Python read with :mod:`ast`: the public surface of a module, for the mutation classifier,
and ledger's own library used from inline code an agent's shell runs.

:mod:`ledger._governance.analysis.mutation` defines what counts as public and compares two
surfaces; this module reads one. The shell analysis asks :func:`ledger_api_writes` about code
it finds inline (``python -c``, a heredoc) that mentions ledger: appending records, keys and
checkpoints through the library bypasses the hook as much as ``ledger append`` does. It is
imported only for Python files and such code, since :mod:`ast` costs about 2 ms to import on a
hook call that does something else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["ledger_api_writes", "public_api"]

# What writes evidence or trust state through the library: ``Ledger``'s writing methods, the
# workspace's, the key lifecycle's, and the CLI's entry point (which runs any subcommand).
_LEDGER_WRITES = frozenset({
    "append", "append_many", "append_reserved", "checkpoint", "auto_checkpoint", "repair",
    "rotate_key", "revoke_key", "add_key", "pin_key", "pin", "init", "create", "rotate",
    "revoke", "record", "write_checkpoint", "seal", "main", "run_hook", "handle_event",
    "push_evidence", "fetch_evidence", "accept", "revert", "select", "expand",
})  # fmt: skip
_LEDGER_PACKAGES = frozenset({"ledger", "cli"})


def ledger_api_writes(source: str) -> tuple[str, ...]:
    """The writing calls (``append``, ``checkpoint``, ``rotate_key``...) inline Python makes
    through ledger's library, when it imports it; code that mentions ledger but does not parse
    answers ``("unparsable",)``, since no one can say what it does."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ("unparsable",)
    if not _imports_ledger(tree):
        return ()
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _LEDGER_WRITES:
            found.setdefault(node.attr, None)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and (node.func.id in _LEDGER_WRITES or node.func.id in ("getattr", "exec", "eval"))
        ):
            found.setdefault(node.func.id, None)
    return tuple(found)


def _imports_ledger(tree: ast.AST) -> bool:
    """``import ledger...``, ``from ledger... import``, ``__import__("ledger")``,
    ``importlib.import_module("ledger...")``: the library (or ledger's CLI) is loaded."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        else:
            continue
        if any(name.split(".")[0] in _LEDGER_PACKAGES for name in names):
            return True
    return False


# ast.TypeAlias exists from Python 3.12; we support 3.11.
_TYPE_ALIAS: type[ast.stmt] | None = getattr(ast, "TypeAlias", None)


def _is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def public_api(source: str) -> dict[str, frozenset[str]] | None:
    """Return ``symbol -> set of signature strings`` for a module, or None if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # ValueError: source with NUL bytes; RecursionError: absurdly nested code.
        return None
    api: dict[str, set[str]] = {}
    _collect(tree.body, "", api, module_level=True)
    return {name: frozenset(sigs) for name, sigs in api.items()}


def _block_bodies(node: ast.stmt) -> Iterable[list[ast.stmt]]:
    """Statement lists nested in a compound statement that still run at the enclosing level."""
    if isinstance(node, ast.If | ast.While | ast.For | ast.AsyncFor):
        yield node.body
        yield node.orelse
    elif isinstance(node, ast.With | ast.AsyncWith):
        yield node.body
    elif isinstance(node, ast.Try | ast.TryStar):
        yield node.body
        yield node.orelse
        yield node.finalbody
        for handler in node.handlers:
            yield handler.body


def _collect(
    body: list[ast.stmt], prefix: str, api: dict[str, set[str]], *, module_level: bool
) -> None:
    """Add the public definitions of ``body`` to ``api``."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _is_public(node.name):
                api.setdefault(prefix + node.name, set()).add(_function_signature(node))
        elif isinstance(node, ast.ClassDef):
            if _is_public(node.name):
                name = prefix + node.name
                api.setdefault(name, set()).add(_class_signature(node))
                _collect(node.body, name + ".", api, module_level=False)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for target_name in _target_names(target):
                    if _is_public(target_name):
                        api.setdefault(prefix + target_name, set()).add("=")
        elif isinstance(node, ast.AnnAssign):
            for target_name in _target_names(node.target):
                if _is_public(target_name):
                    api.setdefault(prefix + target_name, set()).add(
                        ": " + ast.unparse(node.annotation)
                    )
        elif _TYPE_ALIAS is not None and isinstance(node, _TYPE_ALIAS):
            # Python 3.12+ "type X = ..." statements (PEP 695).
            alias_name = str(getattr(getattr(node, "name", None), "id", ""))
            if alias_name and _is_public(alias_name):
                api.setdefault(prefix + alias_name, set()).add("type " + ast.unparse(node))
        else:
            for block in _block_bodies(node):
                _collect(block, prefix, api, module_level=module_level)


def _target_names(target: ast.expr) -> list[str]:
    """Names bound by an assignment target (``a``, ``a, b``, ``[a, *b]``); not ``x.y``/``x[i]``."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _function_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Render what callers depend on: decorators, async, parameters, return annotation.

    ``ast.unparse`` of the ``arguments`` node keeps names, kinds (``/``, ``*``, ``**``),
    defaults and annotations, and nothing about the body, formatting or comments.
    """
    decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
    is_async = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    type_params = _type_params(node)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{decorators}{is_async}def{type_params}({ast.unparse(node.args)}){returns}"


def _class_signature(node: ast.ClassDef) -> str:
    """Render a class header: decorators, bases and keywords (``metaclass=``...)."""
    decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
    bases = [ast.unparse(b) for b in node.bases]
    bases.extend(ast.unparse(k) for k in node.keywords)
    return f"{decorators}class{_type_params(node)}({', '.join(bases)})"


def _type_params(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """PEP 695 type parameters (Python 3.12+), empty on older interpreters."""
    params = getattr(node, "type_params", None)
    if not params:
        return ""
    return "[" + ", ".join(ast.unparse(p) for p in params) + "]"
