"""Mutation class of an edit: does it keep the code's public surface, or change it?

Every attributed edit is labelled with one of two classes:

* ``AST_REFACTOR``: a structure-preserving change. Formatting, comments, docstrings, renamed
  locals, rewritten function bodies and private helpers all leave every public signature as it
  was, so the change stays within the intent that produced the code.
* ``INTENT_EVOLUTION``: a public definition was added, removed or had its signature changed, or
  the file is new. The code now promises something different, which a reviewer should connect
  to an intent.

Python (``.py``, ``.pyi``) is compared through :mod:`ast`. The public surface is:

* top-level ``def``/``async def``/``class`` whose name does not start with ``_``, and the same
  inside public classes (recursively), plus dunder methods (``__init__``, ``__call__`` ...),
  because a constructor's or operator's signature is as public as any method's;
* for a function: its parameters (names, kinds, defaults, annotations), return annotation,
  decorators and ``async``;
* for a class: its bases, keywords (``metaclass=``) and decorators;
* public module-level and class-level assignments: the names, plus the annotation of an
  annotated assignment (a dataclass or pydantic field's type is part of the constructor).

Definitions inside ``if``/``try``/``with`` blocks at module or class level count (version
switches, ``TYPE_CHECKING``); ``@overload`` variants and property setters are compared as a set.
Imports and ``__all__`` contents are not compared.

Other languages, and Python that does not parse on either side, use a line heuristic: each line
whose start (after indentation) looks like a public declaration -- ``export``, ``function``,
``class``, ``interface``, ``type``, ``enum``, ``struct``, ``trait``, ``impl``, ``def``, ``fn``,
``pub``, ``func``, ``fun``, ``public``/``protected``, ``module``, ``namespace``, ``package``,
``declare``, ``module.exports``/``exports.`` -- is normalized (whitespace runs collapsed, spaces
around punctuation dropped, a trailing ``{`` ``;`` or ``:`` removed) and collected into a set,
skipping declarations whose name starts with ``_``. Different sets mean INTENT_EVOLUTION,
equal sets AST_REFACTOR. Known limits: a declaration spread over several lines is compared by its
first line only, and a file without declarations (Markdown, JSON, YAML) always compares equal.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

__all__ = ["MutationClass", "MutationKind", "classify_mutation"]

MutationKind = Literal["AST_REFACTOR", "INTENT_EVOLUTION"]


class MutationClass(NamedTuple):
    """The mutation class of one edit.

    Attributes:
        kind: ``"AST_REFACTOR"`` or ``"INTENT_EVOLUTION"``.
        reason: one line saying why.
        changed_symbols: public symbols added, removed or changed (``"Class.method"`` for
            members), sorted; empty for AST_REFACTOR and for new files.
    """

    kind: MutationKind
    reason: str
    changed_symbols: tuple[str, ...]


_PYTHON_SUFFIXES = (".py", ".pyi")


def classify_mutation(path: str, old: str | None, new: str) -> MutationClass:
    """Classify an edit of ``path`` from ``old`` to ``new`` content.

    Args:
        path: the file path; only its suffix is used, to pick the Python or heuristic analysis.
        old: the content before the edit, or None when the edit creates the file.
        new: the content after the edit.

    Returns:
        The :class:`MutationClass`.

    Example:
        >>> classify_mutation("a.py", "def f(x): return x", "def f(x): return 2 * x").kind
        'AST_REFACTOR'
        >>> classify_mutation("a.py", "def f(x): pass", "def f(x, y): pass").changed_symbols
        ('f',)
    """
    if old is None:
        return MutationClass("INTENT_EVOLUTION", "new file", ())
    if path.lower().endswith(_PYTHON_SUFFIXES):
        old_api = _python_api(old)
        new_api = _python_api(new)
        if old_api is not None and new_api is not None:
            return _compare(old_api, new_api, "public Python")
        heuristic = "heuristic (Python did not parse)"
    else:
        heuristic = "heuristic"
    return _compare(_declarations(old), _declarations(new), f"declaration-line {heuristic}")


def _compare(
    old: dict[str, frozenset[str]], new: dict[str, frozenset[str]], how: str
) -> MutationClass:
    """Compare two ``symbol -> signatures`` maps."""
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    changed = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    if not (added or removed or changed):
        return MutationClass("AST_REFACTOR", f"no public signature changed ({how})", ())
    parts = [
        f"{label}: {', '.join(names)}"
        for label, names in (("added", added), ("removed", removed), ("changed", changed))
        if names
    ]
    symbols = tuple(sorted({*added, *removed, *changed}))
    return MutationClass("INTENT_EVOLUTION", f"{'; '.join(parts)} ({how})", symbols)


# --- Python ------------------------------------------------------------------------------------


# ast.TypeAlias exists from Python 3.12; we support 3.11.
_TYPE_ALIAS: type[ast.stmt] | None = getattr(ast, "TypeAlias", None)


def _is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _python_api(source: str) -> dict[str, frozenset[str]] | None:
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


# --- heuristic -----------------------------------------------------------------------------

# A line (after indentation) that starts a public declaration. The keyword list covers
# JS/TS (export, function, class, interface, type, enum, declare, module.exports), Python/Ruby
# (def, class, module), Rust (pub, fn, struct, trait, impl, enum, type), Go (func, type,
# package), Kotlin/Swift (fun, func), Java/C#/PHP (public, protected), C++ (namespace).
_DECLARATION = re.compile(
    r"(?:export|(?:async\s+)?function|(?:abstract\s+|final\s+|sealed\s+|open\s+|data\s+)*class"
    r"|interface|type|enum|struct|trait|impl|def|async\s+def|fn|pub(?:\([^)]*\))?|func|fun"
    r"|public|protected|module|namespace|package|declare|module\.exports|exports\.)"
    r"(?![\w$])"
)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_DECLARATION_WORDS = frozenset(
    {
        "export", "default", "async", "function", "abstract", "final", "sealed", "open", "data",
        "class", "interface", "type", "enum", "struct", "trait", "impl", "def", "fn", "pub",
        "func", "fun", "public", "protected", "static", "const", "let", "var", "module",
        "namespace", "package", "declare", "unsafe", "extern", "crate", "override", "virtual",
        "readonly", "mut", "void", "int", "string", "bool", "exports",
    }
)  # fmt: skip


def _normalize(line: str) -> str:
    """Collapse whitespace, drop spaces around punctuation and a trailing ``{`` ``;`` ``:``."""
    line = re.sub(r"\s+", " ", line.strip())
    line = re.sub(r" ?([^\w\s$]) ?", r"\1", line)
    return line.rstrip("{;:").rstrip()


def _declared_name(line: str) -> str:
    """Best-effort name of the symbol a declaration line declares."""
    for match in _NAME.finditer(line):
        word = match.group()
        if word not in _DECLARATION_WORDS:
            return word
    return line


def _declarations(source: str) -> dict[str, frozenset[str]]:
    """Return ``name -> normalized declaration lines`` for the heuristic comparison."""
    found: dict[str, set[str]] = {}
    for raw in source.splitlines():
        stripped = raw.lstrip()
        if not _DECLARATION.match(stripped):
            continue
        line = _normalize(stripped)
        name = _declared_name(line)
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        found.setdefault(name, set()).add(line)
    return {name: frozenset(lines) for name, lines in found.items()}
