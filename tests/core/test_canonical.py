"""The canonical encoder is RFC 8785 (JCS), byte for byte, under ledger's stricter value rules."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, cast

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ledger import CanonicalizationError, InputError, canonical_bytes
from ledger._evidence import lightjson
from ledger._evidence.canonical import (
    _SORT_KEYS_SAFE_INTEGERS,
    MAX_SAFE_INTEGER,
    _parse_checked,
    parse_canonical,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The variant tests build larger objects; fewer examples keep the module to a few seconds.
FEWER = settings(SETTINGS, max_examples=80)

# Characters: anything encodable in UTF-8 (no lone surrogates), with extra weight on the two
# ranges where UTF-16 code-unit order differs from code-point order: U+E000-U+FFFF and astral.
CHARS = st.one_of(
    st.characters(codec="utf-8"),
    st.characters(codec="utf-8", min_codepoint=0xE000, max_codepoint=0xFFFF),
    st.characters(codec="utf-8", min_codepoint=0x10000),
    st.characters(codec="utf-8", max_codepoint=0x1F),  # control characters and their escapes
)
# A small alphabet makes keys collide on prefixes, so the sort order is actually exercised.
HAZARD_CHARS = st.sampled_from(
    [
        "a",
        "b",
        "\x7f",
        "é",
        "\u20ac",
        "\ud7ff",
        "\ue000",
        "\ufb33",
        "\uffff",
        "\U00010000",
        "\U0001f600",
        "\U0010ffff",
    ]
)
KEYS = st.text(CHARS, max_size=8) | st.text(HAZARD_CHARS, max_size=4)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.sampled_from([0, -1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER])
    | st.text(CHARS, max_size=12)
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=6)


@pytest.fixture(scope="module", params=["stdlib", "orjson"], autouse=True)
def encoder_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs over both backends of the encoder: the standard library's, as on the
    hook path where orjson is not loaded, and orjson's (ledger/_evidence/lightjson.py)."""
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "stdlib":
            patch.setattr(lightjson, "_loaded_orjson", lambda: None)
        else:
            patch.setattr(lightjson, "_loaded_orjson", lightjson.orjson)
        yield str(request.param)


def jcs(value: object) -> bytes:
    # The same cast as the library's fallback (ledger/_evidence/canonical.py): a JSON value.
    return bytes(rfc8785.dumps(cast(Any, value)))


def reverse_every_object(value: Any) -> Any:
    """The same JSON value with every object's insertion order reversed."""
    if isinstance(value, dict):
        return {k: reverse_every_object(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [reverse_every_object(v) for v in value]
    return value


# --- agreement with the reference encoder ---------------------------------------------------


@SETTINGS
@given(JSON)
def test_matches_rfc8785_reference(value: Any) -> None:
    assert canonical_bytes(value) == jcs(value)


@FEWER
@given(st.dictionaries(st.text(HAZARD_CHARS, min_size=1, max_size=4), JSON, min_size=2, max_size=8))
def test_matches_rfc8785_when_utf16_and_code_point_order_differ(value: dict[str, Any]) -> None:
    assert canonical_bytes(value) == jcs(value)
    assert canonical_bytes({"nested": [value]}) == jcs({"nested": [value]})


@SETTINGS
@given(JSON, st.randoms(use_true_random=False))
def test_key_order_does_not_matter(value: Any, rnd: Any) -> None:
    reversed_value = reverse_every_object(value)
    assert canonical_bytes(reversed_value) == canonical_bytes(value)
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        assert canonical_bytes(dict(items)) == canonical_bytes(value)


@FEWER
@given(OBJECTS)
def test_parse_canonical_round_trips(value: dict[str, Any]) -> None:
    line = canonical_bytes(value)
    assert parse_canonical(line) == (value, None)


# --- golden vectors -----------------------------------------------------------------------

GOLDEN = [
    pytest.param(
        # RFC 8785 §3.2.3: keys sorted by UTF-16 code units, so the emoji (D83D DE00) sorts
        # before U+FB33 although its code point is larger.
        {
            "\u20ac": "Euro Sign",
            "\r": "Carriage Return",
            "\ufb33": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\U0001f600": "Emoji: Grinning Face",
            "\u0080": "Control",
            "\u00f6": "Latin Small Letter O With Diaeresis",
        },
        b'{"\\r":"Carriage Return","1":"One","\xc2\x80":"Control",'
        b'"\xc3\xb6":"Latin Small Letter O With Diaeresis","\xe2\x82\xac":"Euro Sign",'
        b'"\xf0\x9f\x98\x80":"Emoji: Grinning Face",'
        b'"\xef\xac\xb3":"Hebrew Letter Dalet With Dagesh"}',
        id="rfc8785-3.2.3-sorting",
    ),
    pytest.param(
        # RFC 8785 §3.2.2 without its floats (ledger has none): string escaping and literals.
        {"string": '\u20ac$\u000f\nA\'B"\\\\"/', "literals": [None, True, False]},
        b'{"literals":[null,true,false],"string":"\xe2\x82\xac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
        id="rfc8785-3.2.2-strings-literals",
    ),
    pytest.param(
        {"c": "\x00\x08\t\n\x0b\x0c\r\x1f\x7f\u2028\u2029"},
        b'{"c":"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\x7f\xe2\x80\xa8\xe2\x80\xa9"}',
        id="control-characters",
    ),
    pytest.param(
        {"min": -9007199254740991, "max": 9007199254740991, "zero": 0, "neg": -1, "t": True},
        b'{"max":9007199254740991,"min":-9007199254740991,"neg":-1,"t":true,"zero":0}',
        id="safe-integer-bounds",
    ),
    pytest.param(
        {"b": [{"z": 1, "a": []}, {}], "a": {"\ue000": 1, "\U0001f600": 2, "": None}},
        b'{"a":{"":null,"\xf0\x9f\x98\x80":2,"\xee\x80\x80":1},"b":[{"a":[],"z":1},{}]}',
        id="nested-utf16-order",
    ),
    pytest.param([], b"[]", id="empty-array"),
    pytest.param("é", b'"\xc3\xa9"', id="bare-string"),
]


@pytest.mark.parametrize(("value", "expected"), GOLDEN)
def test_golden_vectors(value: object, expected: bytes) -> None:
    assert canonical_bytes(value) == expected
    assert jcs(value) == expected  # the vector itself is right


# --- refused values -----------------------------------------------------------------------


class Colour(enum.IntEnum):
    RED = 1


REFUSED = [
    pytest.param(1.5, id="float"),
    pytest.param(1.0, id="integral-float"),
    pytest.param(-0.0, id="negative-zero-float"),
    pytest.param(float("nan"), id="nan"),
    pytest.param(float("inf"), id="infinity"),
    pytest.param({"a": [1, {"b": 0.5}]}, id="nested-float"),
    pytest.param(2**53, id="int-2**53"),
    pytest.param(-(2**53), id="int-minus-2**53"),
    pytest.param({"n": 2**64}, id="nested-huge-int"),
    pytest.param({1: "a"}, id="int-key"),
    pytest.param({None: 1}, id="none-key"),
    pytest.param({True: 1}, id="bool-key"),
    pytest.param({(1,): 1}, id="tuple-key"),
    pytest.param({b"k": 1}, id="bytes-key"),
    pytest.param((1, 2), id="tuple"),
    pytest.param({"a": (1,)}, id="nested-tuple"),
    pytest.param("\ud800", id="lone-high-surrogate"),
    pytest.param({"\udc00": 1}, id="lone-surrogate-key"),
    pytest.param({"a": ["x\ud83d"]}, id="nested-lone-surrogate"),
    pytest.param({"\ue000": "\ud800"}, id="lone-surrogate-on-utf16-slow-path"),
    pytest.param({"\U0001f600": {"k": "\udfff"}}, id="lone-surrogate-astral-key-slow-path"),
    pytest.param(b"bytes", id="bytes"),
    pytest.param({"s": {1, 2}}, id="set"),
    pytest.param(Decimal("1"), id="decimal"),
    pytest.param(Colour.RED, id="int-enum"),
    pytest.param(object(), id="object"),
]


@pytest.mark.parametrize("value", REFUSED)
def test_refused_values_raise(value: object) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonical_bytes(value)
    assert isinstance(info.value, InputError)  # the CLI maps it to "invalid input"
    assert "\n" not in str(info.value)


@FEWER
@given(st.floats(allow_nan=True, allow_infinity=True), OBJECTS)
def test_any_float_anywhere_is_refused(number: float, value: dict[str, Any]) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_bytes({**value, "\U0001f600" if value else "x": [number]})


@SETTINGS
@given(st.integers(min_value=MAX_SAFE_INTEGER + 1) | st.integers(max_value=-MAX_SAFE_INTEGER - 1))
def test_integers_beyond_safe_range_are_refused(number: int) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_bytes({"n": number})


@pytest.mark.parametrize("number", [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER])
def test_integers_at_safe_bounds_are_accepted(number: int) -> None:
    assert canonical_bytes({"n": number}) == b'{"n":%d}' % number


# --- parse_canonical: what is not canonical -----------------------------------------------


@FEWER
@given(OBJECTS.filter(bool))
def test_whitespace_is_not_canonical(value: dict[str, Any]) -> None:
    canonical = canonical_bytes(value)
    for variant in (
        json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1).encode(),
        b" " + canonical,
        canonical + b" ",
        b"{ " + canonical[1:],
    ):
        assume(variant != canonical)
        parsed, reason = parse_canonical(variant)
        assert reason is not None
        assert parsed == value


@FEWER
@given(st.dictionaries(KEYS, JSON, min_size=2, max_size=6))
def test_reordered_keys_are_not_canonical(value: dict[str, Any]) -> None:
    canonical = canonical_bytes(value)
    in_canonical_order = json.loads(canonical)
    reordered = dict(reversed(list(in_canonical_order.items())))
    variant = json.dumps(reordered, ensure_ascii=False, separators=(",", ":")).encode()
    assert variant != canonical
    parsed, reason = parse_canonical(variant)
    assert reason is not None
    assert parsed == value


@FEWER
@given(OBJECTS)
def test_ascii_escapes_are_not_canonical(value: dict[str, Any]) -> None:
    variant = json.dumps(
        json.loads(canonical_bytes(value)), ensure_ascii=True, separators=(",", ":")
    ).encode()
    assume(variant != canonical_bytes(value))  # needs a non-ASCII character to escape
    parsed, reason = parse_canonical(variant)
    assert reason is not None
    assert parsed == value


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"a":"\\u00e9"}', id="escaped-e-acute"),
        pytest.param(b'{"a":"\\u0061"}', id="escaped-ascii"),
        pytest.param(b'{"a":"\\/"}', id="escaped-solidus"),
        pytest.param(b'{"a":"\\u001F"}', id="uppercase-hex-escape"),
        pytest.param(b'{"a":"\\ud83d\\ude00"}', id="escaped-surrogate-pair"),
        pytest.param(b'{"b":1,"a":2}', id="reordered-keys"),
        pytest.param(b'{"a":1,"a":1}', id="duplicate-keys"),
        pytest.param(b'{"a":1,"a":2}', id="duplicate-keys-different-values"),
        pytest.param(b'{"a" :1}', id="space-before-colon"),
        pytest.param(b'{"a":1}\n', id="trailing-newline"),
        pytest.param(b'{"a":-0}', id="negative-zero"),
        # Code-point order instead of UTF-16 order (what plain json.dumps(sort_keys=True) emits).
        pytest.param('{"\ue000":1,"\U0001f600":2}'.encode(), id="code-point-key-order"),
    ],
)
def test_non_canonical_lines_are_flagged(line: bytes) -> None:
    parsed, reason = parse_canonical(line)
    assert isinstance(parsed, dict)
    assert reason is not None


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"a":1.0}', id="float-1.0"),
        pytest.param(b'{"a":1e2}', id="exponent"),
        pytest.param(b'{"a":NaN}', id="nan"),
        pytest.param(b'{"a":Infinity}', id="infinity"),
        pytest.param(b'{"a":-Infinity}', id="minus-infinity"),
        pytest.param(b'{"a":9007199254740992}', id="int-2**53"),
        pytest.param(b'{"a":01}', id="leading-zero"),
        pytest.param(b'{"a":1', id="unterminated"),
        pytest.param(b"", id="empty"),
        pytest.param(b"[1]", id="array"),
        pytest.param(b'"s"', id="string"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"a":"\xff"}', id="invalid-utf8"),
        pytest.param(b'{"a":"\xed\xa0\x80"}', id="utf8-encoded-surrogate"),
        pytest.param(b'\xef\xbb\xbf{"a":1}', id="bom"),
        pytest.param(b"{'a':1}", id="single-quotes"),
    ],
)
def test_malformed_lines_are_flagged(line: bytes) -> None:
    parsed, reason = parse_canonical(line)
    assert reason is not None
    if parsed is not None:  # parses, but is still reported (e.g. a BOM could be stripped)
        assert isinstance(parsed, dict)


def test_lone_surrogate_escape_in_line_is_not_canonical() -> None:
    # Valid JSON text, but the value holds a lone surrogate, which has no UTF-8 form; I-JSON
    # (RFC 7493 §2.1) forbids it, so the line is not ledger JSON at all.
    parsed, reason = parse_canonical(b'{"a":"\\ud800"}')
    assert parsed is None
    assert reason is not None
    assert "surrogate" in reason


# --- parse_canonical's fast path agrees with the full rules -------------------------------

# Numbers as orjson renders them, which is how a float or a huge integer would sit on a line
# that is otherwise byte-identical to its re-encoding: the case the fast path must not let by.
NUMBERS = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**63), 2**64 - 1)
    | st.sampled_from([MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 1e16, -1.5e-7, 0.0, -0.0])
)
RISKY_SCALARS = SCALARS | NUMBERS | st.sampled_from([",1.5", '":1e+16', "[2.0]", "\ue000"])
RISKY_JSON = st.recursive(
    RISKY_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)


@SETTINGS
@given(st.dictionaries(KEYS, RISKY_JSON, max_size=6))
def test_fast_path_answers_as_the_full_rules_do(value: dict[str, Any]) -> None:
    # The line is what orjson writes for the value: canonical but for the value's floats, huge
    # integers and UTF-16 key order, which are exactly what the fast path's byte probe and
    # OPT_STRICT_INTEGER stand in for. Any disagreement with the walk would let one through.
    line = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    assert parse_canonical(line) == _parse_checked(line, orjson.loads(line))


@FEWER
@given(st.dictionaries(KEYS, RISKY_JSON, min_size=1, max_size=6), NUMBERS)
def test_float_or_huge_integer_on_an_orjson_line_is_never_canonical(
    value: dict[str, Any], number: float
) -> None:
    assume(type(number) is float or abs(number) > MAX_SAFE_INTEGER)
    value[next(iter(value))] = [number]
    _, reason = parse_canonical(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    assert reason is not None


def test_fast_path_options_are_orjsons() -> None:
    # Spelled out as numbers so that importing the encoder does not import orjson.
    assert orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER == _SORT_KEYS_SAFE_INTEGERS
