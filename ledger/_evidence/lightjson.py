"""orjson's answers at the import cost of the standard library's :mod:`json`.

``orjson`` is ledger's JSON backend: several times faster than :mod:`json` per record, which is
what bulk readers and verification need. Importing it, though, imports :mod:`dataclasses` (and
with it :mod:`inspect`, :mod:`ast`, :mod:`dis`), :mod:`uuid` (and :mod:`platform`) and
:mod:`datetime`: 10 ms or more of a hook call that parses and writes only a handful of small
values, in a process that starts from nothing. So the hook path calls these two functions:

* :func:`loads` returns exactly what ``orjson.loads`` returns, or raises where it raises;
* :func:`dumps_sorted` returns exactly the bytes of ``orjson.dumps(value, option=OPT_SORT_KEYS)``,
  or raises where it raises.

Both use orjson itself once it is loaded (a bulk reader, verification or an export loaded it),
or for a large value (where its speed repays its import), and the standard library's
C-accelerated codec otherwise. Where the two could disagree, the standard library's answer is
never used: the input goes to orjson, imported then. On the
decoding side these are a lone surrogate escape, ``NaN``/``Infinity``, a float that overflows,
an integer outside the signed and unsigned 64-bit range (orjson makes them floats), any input
the standard library refuses, and nesting it cannot follow. On the encoding side: any type but
exactly ``dict`` with ``str`` keys, ``list``, ``str``, ``int`` within the 64-bit range, ``bool``
and ``None`` (floats print differently; orjson refuses other keys), strings that are not valid
UTF-8 (lone surrogates), and nesting deeper than orjson's 254 levels. For everything else the
two encoders agree: compact separators, keys sorted by code point (= by UTF-8 bytes), raw UTF-8,
``\\" \\\\ \\b \\f \\n \\r \\t`` and lowercase ``\\u00xx`` for the other control characters,
integers in decimal. ``tests/core/test_lightjson.py`` pins both functions to orjson with
Hypothesis.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

__all__ = [
    "AskOrjson",
    "dumps_sorted",
    "loads",
    "orjson",
    "stdlib_dumps_sorted",
    "stdlib_loads",
]

#: orjson refuses to encode containers nested deeper than this (its own recursion limit).
_ORJSON_MAX_DEPTH: Final = 254
_INT_MIN: Final = -(2**63)
_UINT_MAX: Final = 2**64 - 1
_INF: Final = float("inf")
_OPT_SORT_KEYS: Final = 1 << 5  # orjson.OPT_SORT_KEYS, a stable part of its API (checked in tests)
# Past these sizes orjson's speed repays its import (~10 ms; it parses and encodes a KiB of
# record JSON ~15 µs faster than the standard library).
_LARGE_INPUT: Final = 256 * 1024
_LARGE_VALUE: Final = 8192  # JSON values (containers and scalars) to encode


def orjson() -> Any:  # noqa: ANN401 -- the orjson module (it ships no stub for the module type)
    """The orjson module, imported on first need (bulk readers call this up front, and a
    resident hook process as it starts: ledger/_hooks/service.py ``warm_resident``)."""
    import orjson as module  # noqa: PLC0415 -- the point of this module

    return module


class AskOrjson(Exception):  # noqa: N818 -- control flow, not an error
    """The standard library's answer might differ from orjson's: orjson decides."""


def _parse_int(text: str) -> int:
    number = int(text)
    if not _INT_MIN <= number <= _UINT_MAX:  # orjson makes these floats
        raise AskOrjson
    return number


def _parse_float(text: str) -> float:
    number = float(text)
    if number in (_INF, -_INF):  # orjson refuses a float that overflows
        raise AskOrjson
    return number


def _parse_constant(_text: str) -> object:  # NaN, Infinity, -Infinity: orjson refuses them
    raise AskOrjson


_decoder: Final = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
)
_encoder: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False
)


def _loaded_orjson() -> Any:  # noqa: ANN401 -- the orjson module, or None
    """orjson when this process has imported it already (then it costs nothing more)."""
    return sys.modules.get("orjson")


def stdlib_loads(data: bytes) -> Any:  # noqa: ANN401 -- any JSON value
    """``orjson.loads(data)`` by the standard library, where the two surely agree.

    Raises:
        AskOrjson: they might not (see the module docstring): ask orjson.
    """
    # A surrogate escape (\udXXX) may be lone, which orjson refuses and json accepts: only
    # orjson's answer counts. Canonical ledger lines never hold one (they are raw UTF-8).
    if b"\\ud" in data or b"\\uD" in data:
        raise AskOrjson
    try:
        return _decoder.decode(data.decode("utf-8"))
    except (ValueError, RecursionError):  # refused here: orjson says how (or accepts it)
        raise AskOrjson from None


def loads(data: bytes) -> Any:  # noqa: ANN401 -- any JSON value
    """``orjson.loads(data)``: the same value, or the same refusal.

    Raises:
        ValueError: ``data`` is not JSON orjson accepts (``orjson.JSONDecodeError``).
    """
    loaded = _loaded_orjson()
    if loaded is None and len(data) <= _LARGE_INPUT:
        try:
            return stdlib_loads(data)
        except AskOrjson:
            pass
    return (loaded or orjson()).loads(data)


def _plain(value: object) -> bool:
    """Is ``value`` made only of what both encoders write identically (module docstring), and
    small?"""
    stack: list[tuple[object, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    budget = _LARGE_VALUE
    while stack:
        budget -= 1
        if budget < 0:
            return False
        item, depth = pop()
        kind = type(item)
        if kind is dict:
            if depth > _ORJSON_MAX_DEPTH:
                return False
            for key, sub in item.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    return False
                push((sub, depth + 1))
        elif kind is list:
            if depth > _ORJSON_MAX_DEPTH:
                return False
            for sub in item:  # type: ignore[attr-defined]
                push((sub, depth + 1))
        elif kind is int:
            if not _INT_MIN <= item <= _UINT_MAX:  # type: ignore[operator]
                return False
        elif not (kind is str or kind is bool or item is None):
            return False
    return True


def stdlib_dumps_sorted(value: object) -> bytes:
    """``orjson.dumps(value, option=OPT_SORT_KEYS)`` by the standard library, where the two
    surely agree.

    Raises:
        AskOrjson: they might not, or ``value`` is large (see the module docstring): ask orjson.
    """
    if not _plain(value):
        raise AskOrjson
    try:
        return _encoder.encode(value).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: orjson's own refusal
        raise AskOrjson from None


def dumps_sorted(value: object) -> bytes:
    """``orjson.dumps(value, option=orjson.OPT_SORT_KEYS)``: the same bytes, or the same refusal.

    Raises:
        TypeError: orjson cannot encode ``value`` (``orjson.JSONEncodeError``).
    """
    loaded = _loaded_orjson()
    if loaded is None:
        try:
            return stdlib_dumps_sorted(value)
        except AskOrjson:
            loaded = orjson()
    encoded: bytes = loaded.dumps(value, option=_OPT_SORT_KEYS)
    return encoded
