"""Regular expressions compiled on first use, not at import.

``re.compile`` at module level runs in every new process that imports the module, whether or
not the process ever matches: a hook process imports a few dozen patterns and, for a prompt,
uses one. :func:`lazy_compile` returns an object that compiles its pattern when first used and
then answers exactly as the compiled pattern (its methods are the compiled pattern's own, bound
once). Type checkers see an ``re.Pattern``. Only method and attribute use is supported: pass
the compiled pattern's source (``.pattern``) to the ``re`` module's functions, not the object.
"""

from __future__ import annotations

import re
from typing import Any, cast, overload

__all__ = ["lazy_compile"]

#: What the compiled pattern's first use copies onto the lazy one (later uses are plain
#: attribute reads).
_COPIED = (
    "match",
    "fullmatch",
    "search",
    "findall",
    "finditer",
    "sub",
    "subn",
    "split",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class _LazyPattern:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source: tuple[Any, int] = (pattern, flags)

    def __getattr__(self, name: str) -> object:  # only until the first use has compiled it
        compiled = re.compile(*self._source)
        for attribute in _COPIED:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._source[0]!r}, {self._source[1]})"


@overload
def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
@overload
def lazy_compile(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...
def lazy_compile(pattern: str | bytes, flags: int = 0) -> re.Pattern[Any]:
    """``re.compile(pattern, flags)``, done on first use."""
    return cast("re.Pattern[Any]", _LazyPattern(pattern, flags))
