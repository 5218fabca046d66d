"""The hook path's JSON gives orjson's answers without importing orjson.

``ledger._evidence.lightjson`` answers with the standard library's :mod:`json` only where the
two codecs agree and hands everything else to orjson. These tests hold it to that, input by
input: every value the standard-library side returns equals orjson's (types included), and
every input orjson refuses is handed over, never answered. The canonical encoder built on it is
pinned to the RFC 8785 reference implementation in ``test_canonical.py``, over both backends.
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any, cast

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from ledger._evidence import lightjson
from ledger._evidence.canonical import MAX_SAFE_INTEGER, canonical_bytes
from ledger._evidence.lightjson import AskOrjson, stdlib_dumps_sorted, stdlib_loads

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every character, lone surrogates included (neither UTF-8 nor orjson accept them).
CHARS = st.one_of(
    st.characters(),
    st.characters(max_codepoint=0x1F),  # control characters and their escapes
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.characters(min_codepoint=0xE000),
    st.sampled_from(['"', "\\", "/", "\x7f", "\u2028", "\u2029", "\ufeff"]),
)
TEXT = st.text(CHARS, max_size=10)


class Str(str):
    __slots__ = ()


class Int(int):
    pass


# Values of every kind either codec might meet, including those only orjson may judge.
ANY_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: beyond 64 bits too
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1])
    | st.floats()
    | TEXT
    | TEXT.map(Str)
    | st.integers(-5, 5).map(Int)
)
ANY_KEYS = TEXT | st.integers(-3, 3) | TEXT.map(Str) | st.booleans()
ANY_VALUE = st.recursive(
    ANY_SCALAR,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(ANY_KEYS, children, max_size=4)
    ),
    max_leaves=20,
)
# What ledger writes: ledger's JSON rules (test_canonical.py).
LEDGER_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.sampled_from([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0])
    | st.text(st.characters(codec="utf-8"), max_size=12)
)
LEDGER_VALUE = st.recursive(
    LEDGER_SCALAR,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=6), children, max_size=5)
    ),
    max_leaves=25,
)


def typed(value: Any) -> list[Any]:
    """``value`` as a flat token list where every type, key order and float bit pattern counts
    (iterative: decoded values may nest a thousand levels deep)."""
    tokens: list[Any] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            tokens.append(("dict", len(item)))
            for key, sub in reversed(list(item.items())):
                stack.extend((sub, key))
        elif isinstance(item, list):
            tokens.append(("list", len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, float):
            tokens.append(("float", repr(item), math.copysign(1, item)))
        else:
            tokens.append((type(item).__name__, item))
    return tokens


def orjson_dumps(value: object) -> bytes | type[Exception]:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return TypeError


def orjson_loads(data: bytes) -> list[Any] | type[ValueError]:
    try:
        return typed(orjson.loads(data))
    except orjson.JSONDecodeError:
        return ValueError


@pytest.fixture
def orjson_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on the hook path, where no earlier code has imported orjson."""
    monkeypatch.setattr(lightjson, "_loaded_orjson", lambda: None)


# --- encoding ------------------------------------------------------------------------------


def nested(depth: int, kind: str) -> object:
    value: object = [] if kind == "list" else {}
    for level in range(depth - 1):
        value = [value] if (kind == "list" or (kind == "mixed" and level % 2)) else {"k": value}
    return value


@SETTINGS
@given(ANY_VALUE)
@example("\ud800")
@example({"a": "\udfff"})
@example({1: 2})
@example({Str("k"): 1})
@example(2**64)
@example(-(2**63) - 1)
@example(1e16)
@example(float("nan"))
@example((1, [2]))
def test_encoding_equals_orjson_or_asks_orjson(value: object) -> None:
    expected = orjson_dumps(value)
    try:
        got: bytes | type[Exception] = stdlib_dumps_sorted(value)
    except AskOrjson:
        return  # orjson decides: nothing was answered here
    assert got == expected, (value, got, expected)


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
@pytest.mark.parametrize("depth", [1, 2, 253, 254, 255, 256, 300])
def test_nesting_depth_is_refused_exactly_where_orjson_refuses_it(
    depth: int, kind: str, orjson_not_loaded: None
) -> None:
    value = nested(depth, kind)
    expected = orjson_dumps(value)
    if expected is TypeError:
        with pytest.raises(TypeError):
            lightjson.dumps_sorted(value)
    else:
        assert lightjson.dumps_sorted(value) == expected
        assert stdlib_dumps_sorted(value) == expected  # no hand-over below the limit


@SETTINGS
@given(ANY_VALUE)
def test_public_encoder_is_orjson_exactly(value: object) -> None:
    expected = orjson_dumps(value)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lightjson, "_loaded_orjson", lambda: None)
        try:
            got: bytes | type[Exception] = lightjson.dumps_sorted(value)
        except TypeError:
            got = TypeError
    assert got == expected


@SETTINGS
@given(LEDGER_VALUE)
@example({"big": MAX_SAFE_INTEGER, "small": -MAX_SAFE_INTEGER, "nested": {"b": [1], "a": {}}})
@example({"\u20ac": 1, "\r": 2, "1": 3, "\u0080": 4, "\u00f6": 5, "é": "\x00\x1f\x7f\u2028"})
def test_ledger_values_encode_as_rfc8785_without_orjson(value: object) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lightjson, "_loaded_orjson", lambda: None)
        got = canonical_bytes(value)
    assert got == bytes(rfc8785.dumps(cast(Any, value)))
    assert stdlib_dumps_sorted(value) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def test_large_values_are_left_to_orjson() -> None:
    with pytest.raises(AskOrjson):
        stdlib_dumps_sorted(list(range(10_000)))
    assert stdlib_dumps_sorted(list(range(100))) == orjson.dumps(list(range(100)))


# --- decoding ------------------------------------------------------------------------------


def spellings(value: object) -> st.SearchStrategy[bytes]:
    """Ways to write ``value`` as JSON text: orjson's, ASCII-escaped, spaced out."""
    texts = [
        json.dumps(value, ensure_ascii=True).encode(),
        json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass"),
    ]
    with contextlib.suppress(orjson.JSONEncodeError):
        texts.append(orjson.dumps(value))
    return st.sampled_from(texts)


DOCUMENTS = ANY_VALUE.flatmap(spellings)
CRAFTED = [
    b"NaN",
    b"[Infinity]",
    b"-Infinity",
    b"[1e400]",
    b"-1e400",
    b"1e-400",
    b"-0",
    b"-0.0",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"1" * 5000,
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"\\uD83D\\uDE00"',
    b'"C:\\\\udir"',
    b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8: not UTF-8
    b'"\xc0\xaf"',  # overlong
    b'"\xff"',
    b"\xef\xbb\xbf{}",  # BOM
    b'{"a":1,"b":2,"a":3}',
    b" \t\r\n{} \n",
    b"\x0c{}",
    b"{}\x00",
    b'"a\x01"',
    b'"\\u00e9\\/\\b"',
    b"[1,]",
    b"{'a':1}",
    b"",
    b"[" * 1024 + b"]" * 1024,
    b"[" * 1025 + b"]" * 1025,
    b'{"a":' * 1000 + b"1" + b"}" * 1000,
    b"\xfe\xff\x00[\x00]",  # UTF-16 that json.loads(bytes) would guess
]


def assert_decodes_like_orjson(data: bytes) -> None:
    expected = orjson_loads(data)
    try:
        got: list[Any] | None = typed(stdlib_loads(data))
    except AskOrjson:
        got = None  # orjson decides: nothing was answered here
    assert got is None or got == expected, (data[:80], got, expected)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lightjson, "_loaded_orjson", lambda: None)
        try:
            public: list[Any] | type[ValueError] = typed(lightjson.loads(data))
        except ValueError:
            public = ValueError
    assert public == expected


@pytest.mark.parametrize("data", CRAFTED, ids=lambda d: repr(d[:24]))
def test_crafted_inputs_decode_like_orjson(data: bytes) -> None:
    assert_decodes_like_orjson(data)


@SETTINGS
@given(DOCUMENTS)
def test_documents_decode_like_orjson(data: bytes) -> None:
    assert_decodes_like_orjson(data)


@SETTINGS
@given(DOCUMENTS, st.data())
def test_damaged_documents_decode_like_orjson(data: bytes, draw: st.DataObject) -> None:
    if data:
        at = draw.draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw.draw(st.integers(0, 255))]) + data[at + 1 :]
    assert_decodes_like_orjson(data)


@SETTINGS
@given(st.binary(max_size=40))
def test_any_bytes_decode_like_orjson(data: bytes) -> None:
    assert_decodes_like_orjson(data)


@SETTINGS
@given(LEDGER_VALUE.filter(lambda v: isinstance(v, dict)))
def test_ledger_lines_are_answered_without_orjson(value: dict[str, Any]) -> None:
    line = canonical_bytes(value)
    assume(b"\\ud" not in line.lower())  # text holding a backslash then "ud" is handed over
    # Answered here, never handed over: no orjson on the hook path.
    assert typed(stdlib_loads(line)) == typed(orjson.loads(line))


def test_the_sort_keys_option_is_orjsons() -> None:
    assert lightjson._OPT_SORT_KEYS == orjson.OPT_SORT_KEYS
