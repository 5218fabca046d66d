"""Mutation class of an edit: does it keep the code's public surface, or change it?

Every attributed edit is labelled with one of two classes:

* ``AST_REFACTOR``: a structure-preserving change. Formatting, comments, docstrings, renamed
  locals, rewritten function bodies and private helpers all leave every public signature as it
  was, so the change stays within the intent that produced the code.
* ``INTENT_EVOLUTION``: a public definition was added, removed or had its signature changed, or
  the file is new. The code now promises something different, which a reviewer should connect
  to an intent.

Python (``.py``, ``.pyi``) is compared through :mod:`ast`
(:mod:`ledger._governance.analysis.python_api`). The public surface is:

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

import re
from typing import Literal

from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile

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
        # ast (~2 ms to import) only for Python files; the hook path edits many others.
        from ledger._governance.analysis.python_api import public_api  # noqa: PLC0415

        old_api = public_api(old)
        new_api = public_api(new)
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


# --- heuristic -----------------------------------------------------------------------------

# A line (after indentation) that starts a public declaration. The keyword list covers
# JS/TS (export, function, class, interface, type, enum, declare, module.exports), Python/Ruby
# (def, class, module), Rust (pub, fn, struct, trait, impl, enum, type), Go (func, type,
# package), Kotlin/Swift (fun, func), Java/C#/PHP (public, protected), C++ (namespace).
_DECLARATION = lazy_compile(
    r"(?:export|(?:async\s+)?function|(?:abstract\s+|final\s+|sealed\s+|open\s+|data\s+)*class"
    r"|interface|type|enum|struct|trait|impl|def|async\s+def|fn|pub(?:\([^)]*\))?|func|fun"
    r"|public|protected|module|namespace|package|declare|module\.exports|exports\.)"
    r"(?![\w$])"
)
_NAME = lazy_compile(r"[A-Za-z_$][\w$]*")
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
