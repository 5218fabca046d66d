"""The one canonical encoder: plain JSON values → RFC 8785 (JCS) bytes.

Every hash and every signature in ``ledger`` is computed over :func:`domain_bytes`, which is
a named domain-separation prefix followed by :func:`canonical_bytes` of a plain dict. Nothing
else produces bytes that get hashed or signed.

Ledger's rules are RFC 8785 restricted further (design-notes §4):

* no floats at all -- durations are integer milliseconds;
* integers within ±(2**53 − 1), the I-JSON safe range (RFC 7493 §2.2);
* object keys are ``str``; values are ``dict``, ``list``, ``str``, ``int``, ``bool``, ``None``;
* strings must encode to UTF-8 (no lone surrogates).

Speed: the reference ``rfc8785`` package is pure Python (~23 µs for a 400-byte event). For
values that contain no float and whose keys sort identically by code point and by UTF-16 code
unit, the output of the C-accelerated ``json.dumps(sort_keys=True, ensure_ascii=False,
separators=(",", ":"))`` is byte-identical to JCS: same escapes (``\\b \\f \\n \\r \\t``, other
controls as lowercase ``\\u00xx``), same integer digits. The two key orders differ only when a
key holds a character ≥ U+E000 (UTF-16 puts astral characters, encoded as D800–DBFF surrogates,
*before* U+E000–U+FFFF); such values go through ``rfc8785`` itself. ``tests/test_canonical.py``
checks the equivalence with Hypothesis.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, Final, cast

from ledger._errors import CanonicalizationError

__all__ = [
    "CHECKPOINT_DOMAIN",
    "KEY_ID_DOMAIN",
    "MAX_SAFE_INTEGER",
    "RECORD_HASH_DOMAIN",
    "RECORD_SIG_DOMAIN",
    "ROTATION_DOMAIN",
    "canonical_bytes",
    "domain_bytes",
    "domain_digest",
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

_dumps: Final[Callable[[Any], str]] = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode

# Characters whose UTF-16 order differs from code point order (see module docstring).
_UTF16_ORDER_HAZARD: Final = re.compile("[\ue000-\U0010ffff]")
# The UTF-8 lead bytes of those characters: U+E000–U+FFFF start with 0xEE/0xEF, astral with 0xF0+.
_UTF16_ORDER_HAZARD_BYTES: Final = re.compile(rb"[\xee-\xf4]")


def _check(value: object) -> bool:
    """Validate ``value`` against ledger's JSON rules.

    Returns:
        True when some object key needs the UTF-16 ordering slow path.

    Raises:
        CanonicalizationError: on floats, out-of-range integers, non-str keys, other types.
    """
    needs_jcs = False
    stack: list[tuple[object, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # type: ignore[operator]
                raise CanonicalizationError(
                    f"integer at {where} is outside ±(2**53-1); store it as a string"
                )
            continue
        if kind is dict:
            for key, sub in item.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise CanonicalizationError(f"object key {key!r} at {where} is not a string")
                if not key.isascii() and _UTF16_ORDER_HAZARD.search(key):
                    needs_jcs = True
                stack.append((sub, f"{where}.{key}"))
            continue
        if kind is list:
            items: list[object] = item  # type: ignore[assignment]
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(items))
            continue
        if kind is float:
            raise CanonicalizationError(
                f"float at {where}: ledger records hold no floats (use integer units, e.g. ms)"
            )
        raise CanonicalizationError(f"value at {where} has unsupported type {kind.__name__}")
    return needs_jcs


def _encode(value: object, needs_jcs: bool) -> bytes:
    try:
        if needs_jcs:
            import rfc8785  # noqa: PLC0415 -- rare path; keeps the hook path's imports small

            try:
                return bytes(rfc8785.dumps(cast(Any, value)))
            except rfc8785.CanonicalizationError as exc:
                raise CanonicalizationError(f"cannot canonicalize: {exc}") from None
        return _dumps(value).encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalizationError(
            "string contains a lone surrogate (not valid UTF-8)"
        ) from None
    except RecursionError:
        raise CanonicalizationError("value nests too deeply") from None


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


def parse_canonical(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one ledger line and check that its bytes are canonical.

    This is the read-side twin of :func:`canonical_bytes`: it never trusts a re-serialization,
    it compares the bytes on disk with what the canonical encoder would produce for them.

    Args:
        line: the line without its trailing newline.

    Returns:
        ``(object, None)`` when the line is a canonical JSON object; ``(object, reason)`` when it
        parses but is not canonical; ``(None, reason)`` when it is not a JSON object at all.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, "line is not valid UTF-8"
    try:
        value = _decoder.decode(text)
    except ValueError as exc:
        return None, f"line is not ledger JSON ({str(exc).splitlines()[0][:80]})"
    except RecursionError:
        return None, "line nests too deeply to be ledger JSON"
    if type(value) is not dict:
        return None, "line is not a JSON object"
    try:
        needs_jcs = _UTF16_ORDER_HAZARD_BYTES.search(line) is not None and _check(value)
        canonical = _encode(value, needs_jcs)
    except CanonicalizationError as exc:
        return value, str(exc)
    if canonical != line:
        return value, "line is not in RFC 8785 canonical form"
    return value, None
