"""The one canonical encoder: plain JSON values → RFC 8785 (JCS) bytes.

Every hash and every signature in ``ledger`` is computed over :func:`domain_bytes`, which is
a named domain-separation prefix followed by :func:`canonical_bytes` of a plain dict. Nothing
else produces bytes that get hashed or signed.

Ledger's rules are RFC 8785 restricted further (docs/architecture.md, design note 4):

* no floats at all -- durations are integer milliseconds;
* integers within ±(2**53 − 1), the I-JSON safe range (RFC 7493 §2.2);
* object keys are ``str``; values are ``dict``, ``list``, ``str``, ``int``, ``bool``, ``None``;
* strings must encode to UTF-8 (no lone surrogates).

Speed: the reference ``rfc8785`` package is pure Python (~23 µs for a 400-byte event). For
values that contain no float and whose keys sort identically by code point and by UTF-16 code
unit, ``orjson.dumps(value, option=OPT_SORT_KEYS)`` is byte-identical to JCS: same escapes
(``\\b \\f \\n \\r \\t``, other controls as lowercase ``\\u00xx``), raw UTF-8, same integer
digits -- at a tenth of the cost, which is what lets verification keep pace with Ed25519. (The
hook path, which encodes a few small records per process, gets the same bytes from
:func:`ledger._evidence.lightjson.dumps_sorted` without paying for orjson's import.) The
two key orders differ only when a key holds a character ≥ U+E000 (UTF-16 puts astral
characters, encoded as D800–DBFF surrogates, *before* U+E000–U+FFFF); such values go through
``rfc8785`` itself. ``tests/core/test_canonical.py`` pins the result to ``rfc8785`` byte for
byte with Hypothesis.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, cast

from ledger._errors import CanonicalizationError
from ledger._evidence.lightjson import dumps_sorted
from ledger._startup.patterns import lazy_compile

__all__ = [
    "CHECKPOINT_DOMAIN",
    "COMMITMENT_DOMAIN",
    "KEY_ID_DOMAIN",
    "MAX_SAFE_INTEGER",
    "RECORD_HASH_DOMAIN",
    "RECORD_SIG_DOMAIN",
    "ROTATION_DOMAIN",
    "canonical_bytes",
    "domain_bytes",
    "domain_digest",
    "loads_ledger_json",
    "parse_canonical",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1

# Domain-separation prefixes. A signature or hash made for one purpose can never be replayed as
# another (cf. RFC 6962 §2.1 leaf/node prefixes, DSSE PAE). Each ends in NUL, which cannot occur
# at the start of canonical JSON.
RECORD_HASH_DOMAIN: Final = b"ledger.record.v1\x00"
RECORD_SIG_DOMAIN: Final = b"ledger.record-sig.v1\x00"
ROTATION_DOMAIN: Final = b"ledger.key-rotation.v1\x00"
CHECKPOINT_DOMAIN: Final = b"ledger.checkpoint.v1\x00"
KEY_ID_DOMAIN: Final = b"ledger.key-id.v1\x00"
# A salted commitment to a content field of a record (ledger/_evidence/disclosure.py).
COMMITMENT_DOMAIN: Final = b"ledger.commitment.v1\x00"

# Characters from U+E000 up sort differently by UTF-16 code unit and by code point (see the
# module docstring); a key holds one when its largest character is at least this.
_UTF16_ORDER_HAZARD: Final = "\ue000"
# Their UTF-8 lead bytes: U+E000–U+FFFF start with 0xEE/0xEF, astral characters with 0xF0+.
_UTF16_ORDER_HAZARD_BYTES: Final = lazy_compile(rb"[\xee-\xf4]")

# The fast path of parse_canonical. OPT_STRICT_INTEGER makes orjson refuse integers beyond
# ±(2**53 - 1) (exactly the I-JSON bound); floats need a look at the bytes. If a line equals
# orjson's encoding of its value, every float in the value is on the line as orjson renders
# floats: an optional "-", digits, then "." or "e" (``1.5``, ``1e+16``, ``-2e-7``), right after
# a member's ``":``, a ``,`` or a ``[``. Deleting digits and "-" and folding "e"/"E" into "."
# and "[" into "," turns every such token into ``":.`` or ``,.`` -- two substring searches
# instead of a walk over the value. Inside strings those pairs are rare (``"a,e"``); a hit
# only sends the line down the full check. The same translation marks the UTF-8 lead bytes of
# the UTF-16 order hazard (0xEE-0xF4) as 0xFF, which UTF-8 text never holds.
# orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER, stable parts of its API (checked in tests);
# spelled out so that importing this module does not import orjson (the hook path avoids it).
_SORT_KEYS_SAFE_INTEGERS: Final = 32 | 64
_PROBE_TABLE: Final = bytes.maketrans(
    b"eE[" + bytes(range(0xEE, 0xF5)), b"..," + b"\xff" * (0xF5 - 0xEE)
)
_PROBE_DELETE: Final = b"0123456789-"
_FLOAT_AFTER_COLON: Final = b'":.'
_FLOAT_AFTER_COMMA: Final = b",."
_HAZARD: Final = b"\xff"


def _check(value: object) -> bool:
    """Validate ``value`` against ledger's JSON rules.

    Returns:
        True when some object key needs the UTF-16 ordering slow path.

    Raises:
        CanonicalizationError: on floats, out-of-range integers, non-str keys, other types.
    """
    # Hot loop (every append): no per-value bookkeeping; the path to a bad value is rebuilt
    # by _locate() only when there is an error to report.
    needs_jcs = False
    stack: list[object] = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key, sub in item.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise CanonicalizationError(
                        f"object key {key!r} at {_locate(value, key)} is not a string"
                    )
                if not key.isascii() and max(key) >= _UTF16_ORDER_HAZARD:
                    needs_jcs = True
                push(sub)
        elif kind is list:
            extend(item)  # type: ignore[arg-type]
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # type: ignore[operator]
                raise CanonicalizationError(
                    f"integer at {_locate(value, item)} is outside ±(2**53-1); store it as a string"
                )
        elif kind is float:
            raise CanonicalizationError(
                f"float at {_locate(value, item)}: ledger records hold no floats (use integer "
                "units, e.g. ms)"
            )
        else:
            raise CanonicalizationError(
                f"value at {_locate(value, item)} has unsupported type {kind.__name__}"
            )
    return needs_jcs


def _check_numbers(value: object) -> None:
    """The number rules only, for values parsed from JSON (no other types can occur)."""
    stack: list[object] = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            extend(item.values())  # type: ignore[attr-defined]
        elif kind is list:
            extend(item)  # type: ignore[arg-type]
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # type: ignore[operator]
                raise CanonicalizationError(
                    f"integer at {_locate(value, item)} is outside ±(2**53-1)"
                )
        elif kind is float:
            raise CanonicalizationError(f"float at {_locate(value, item)}")


def _locate(root: object, target: object) -> str:
    """JSONPath-like location of ``target`` (by identity) inside ``root``; error path only."""
    stack: list[tuple[object, str]] = [(root, "$")]
    while stack:
        item, where = stack.pop()
        if item is target:
            return where
        if isinstance(item, dict):
            for key, sub in item.items():
                if key is target:
                    return where
                stack.append((sub, f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(item))
    return "$"


def _encode(value: object, needs_jcs: bool) -> bytes:
    """Encode a value already checked by :func:`_check` (see the module docstring)."""
    if needs_jcs:
        import rfc8785  # noqa: PLC0415 -- rare path; keeps the hook path's imports small

        try:
            return bytes(rfc8785.dumps(cast(Any, value)))
        except rfc8785.CanonicalizationError as exc:
            raise CanonicalizationError(f"cannot canonicalize: {exc}") from None
        except RecursionError:
            raise CanonicalizationError("value nests too deeply") from None
    try:
        return dumps_sorted(value)
    except TypeError as exc:  # orjson's refusal: lone surrogates, nesting beyond its limit
        reason = (
            "string contains a lone surrogate (not valid UTF-8)"
            if "surrogate" in str(exc)
            else f"cannot canonicalize: {exc}"
        )
        raise CanonicalizationError(reason) from None


def canonical_bytes(value: object) -> bytes:
    """Encode a plain JSON value as RFC 8785 canonical bytes, under ledger's rules.

    Args:
        value: ``dict``/``list``/``str``/``int``/``bool``/``None`` nested arbitrarily.

    Returns:
        The JCS encoding, UTF-8, no whitespace.

    Raises:
        CanonicalizationError: the value contains a float, an integer outside ±(2**53 − 1),
            a non-string key, a lone surrogate, or an unsupported type.

    >>> canonical_bytes({"b": [1, True, None], "a": "é"})
    b'{"a":"\\xc3\\xa9","b":[1,true,null]}'
    """
    return _encode(value, _check(value))


def domain_bytes(domain: bytes, value: dict[str, Any]) -> bytes:
    """The exact bytes that get hashed or signed: ``domain || canonical_bytes(value)``."""
    return domain + canonical_bytes(value)


def domain_digest(domain: bytes, value: dict[str, Any]) -> str:
    """Hex SHA-256 of :func:`domain_bytes`."""
    return hashlib.sha256(domain_bytes(domain, value)).hexdigest()


def _reject_float(text: str) -> object:
    raise ValueError(f"float {text}")


def _reject_constant(text: str) -> object:
    raise ValueError(f"constant {text}")


def _safe_int(text: str) -> int:
    number = int(text)
    if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        raise ValueError(f"integer {text} outside ±(2**53-1)")
    return number


_decoder: Final = json.JSONDecoder(
    parse_float=_reject_float, parse_int=_safe_int, parse_constant=_reject_constant
)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    body: dict[str, object] = {}
    for key, value in pairs:
        if key in body:
            raise ValueError(f"duplicate key {key!r}")
        body[key] = value
    return body


# Input (a body to record) is held to the same number rules, and a duplicate key is an error,
# never a silent "last one wins".
_input_decoder: Final = json.JSONDecoder(
    parse_float=_reject_float,
    parse_int=_safe_int,
    parse_constant=_reject_constant,
    object_pairs_hook=_no_duplicate_keys,
)


def loads_ledger_json(text: str) -> object:
    """Parse JSON text under ledger's rules: no floats, no NaN, integers within ±(2**53 − 1),
    no duplicate keys.

    Raises:
        ValueError: the text breaks a rule or is not JSON; the first line of the message says
            which (``float 1.5``, ``duplicate key 'a'``, ...).
        RecursionError: it nests too deeply.
    """
    return _input_decoder.decode(text)


def parse_canonical(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one ledger line and check that its bytes are canonical.

    This is the read-side twin of :func:`canonical_bytes`: it never trusts a re-serialization,
    it compares the bytes on disk with what the canonical encoder would produce for them.

    Args:
        line: the line without its trailing newline.

    Returns:
        ``(object, None)`` when the line is a canonical JSON object; ``(object, reason)`` when it
        parses but is not canonical; ``(None, reason)`` when it is not ledger JSON at all
        (not UTF-8, not JSON, not an object, a float or an integer beyond ±(2**53 − 1)).
    """
    import orjson  # noqa: PLC0415 -- verification is bulk work: the fast parser, loaded once

    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None, _why_not_json(line)
    if type(value) is not dict:
        return None, "line is not a JSON object"
    # Fast path (verify's hot loop, docs/architecture.md "verify"): accept the line without
    # walking the value when its bytes rule out every case the walk exists for. It only ever
    # answers "canonical"; anything else is decided by _parse_checked, which is the whole rule.
    probe = line.translate(_PROBE_TABLE, _PROBE_DELETE)
    # find(), not `in`: bytes.__contains__ first tries its argument as an int and formats a
    # TypeError each time, which costs more than the search.
    if (
        probe.find(_FLOAT_AFTER_COLON) < 0
        and probe.find(_FLOAT_AFTER_COMMA) < 0
        and probe.find(_HAZARD) < 0
    ):
        try:
            canonical = orjson.dumps(value, option=_SORT_KEYS_SAFE_INTEGERS)
        except orjson.JSONEncodeError:
            pass  # an integer beyond ±(2**53 - 1), a lone surrogate: the slow path says which
        else:
            if canonical == line:
                return value, None
    return _parse_checked(line, value)


def _parse_checked(line: bytes, value: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """:func:`parse_canonical` for a parsed object, by the full rules (walk, then re-encode)."""
    try:
        # orjson accepts floats and large integers; ledger JSON has neither. Keys need the
        # UTF-16 order check only if the raw bytes hold a character >= U+E000 at all.
        _check_numbers(value)
        needs_jcs = (
            not line.isascii()
            and _UTF16_ORDER_HAZARD_BYTES.search(line) is not None
            and _check(value)
        )
    except CanonicalizationError as exc:
        return None, f"line is not ledger JSON ({exc})"
    try:
        canonical = _encode(value, needs_jcs)
    except CanonicalizationError as exc:
        return value, str(exc)
    if canonical != line:
        return value, "line is not in RFC 8785 canonical form"
    return value, None


def _why_not_json(line: bytes) -> str:
    """A precise reason for a line orjson refused (error path only: the strict stdlib parser)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "line is not valid UTF-8"
    try:
        _decoder.decode(text)
    except ValueError as exc:
        return f"line is not ledger JSON ({str(exc).splitlines()[0][:80]})"
    except RecursionError:
        return "line nests too deeply to be ledger JSON"
    return "line is not ledger JSON (it holds a lone surrogate escape or nests too deeply)"
