"""The writer's byte splicing equals a full canonical re-encoding, for any body."""

from __future__ import annotations

import base64
import hashlib
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._evidence.canonical import RECORD_HASH_DOMAIN, canonical_bytes, parse_canonical
from ledger._evidence.keys import SigningKey
from ledger._evidence.record import (
    _excise_hash_and_sig,
    build_line,
    check_line,
    record_statement,
)

KEY = SigningKey.from_seed(bytes(range(32)))
SAFE = 2**53 - 1
# Strings that look like the members the splicer searches for.
TRICKY = st.sampled_from(
    [
        ',"key":"',
        ',"ts":"',
        ',"hash":"',
        ',"sig":"',
        '"},"key":"x"',
        "ed25519-0000000000000000",
        "\\",
        '"',
        "\n",
        "é",
        "\U0001f600",
    ]
)
text = st.one_of(st.text(max_size=12), TRICKY, st.lists(TRICKY, max_size=4).map("".join))
values = st.recursive(
    st.none() | st.booleans() | st.integers(-SAFE, SAFE) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    body=st.dictionaries(text, values, max_size=6),
    kind=st.sampled_from(["a.b", "hook.pre"]),
    session=st.none() | text,
)
def test_spliced_line_equals_full_encoding(
    body: dict[str, object], kind: str, session: str | None
) -> None:
    actor = {"agent": None, "client": "c", "model": None, "session": session}
    line, record = build_line(
        ledger_id="L",
        seq=7,
        prev="0" * 64,
        ts="2026-01-01T00:00:00.0Z",
        kind=kind,
        actor=actor,
        body=body,
        key=KEY,
    )
    assert line == canonical_bytes(record)
    unsigned = {k: v for k, v in record.items() if k not in {"hash", "sig"}}
    assert _excise_hash_and_sig(line, record["hash"], record["sig"]) == canonical_bytes(unsigned)
    facts = check_line(line, {KEY.kid: KEY._private.public_key()})
    assert facts.problems == ()
    assert base64.b64decode(record["sig"])  # canonical base64


# Any float (finite, as JCS renders it) or integer beyond ±(2**53 - 1), anywhere in a value,
# must make the line fail: the byte pre-scan in parse_canonical may skip the walk only when no
# such number can be present.
bad_numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f) or abs(f) > 1),
    st.integers(min_value=SAFE + 1, max_value=2**63 - 1),
    st.integers(min_value=-(2**63) + 1, max_value=-SAFE - 1),
)


@settings(max_examples=400, deadline=None)
@given(
    body=st.dictionaries(text, values, max_size=4),
    bad=bad_numbers,
    key=text,
    nest=st.integers(0, 3),
)
def test_floats_and_huge_integers_never_parse_as_ledger_json(
    body: dict[str, object], bad: object, key: str, nest: int
) -> None:
    value: object = bad
    for _ in range(nest):
        value = [value] if nest % 2 else {"k": value}
    body[key] = value
    line = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    _, reason = parse_canonical(line)
    assert reason is not None, line


def _signed_as_orjson_writes_it(body: dict[str, object]) -> bytes:
    """A record whose hash and signature are right for its bytes, but whose bytes are what
    orjson writes for ``body`` (which may break ledger's rules): a writer with the key that
    skipped build_line's checks."""
    record: dict[str, object] = {
        "v": 2,
        "ledger": "L",
        "seq": 7,
        "prev": "0" * 64,
        "ts": "2026-01-01T00:00:00.0Z",
        "kind": "hook.pre",
        "actor": {"agent": None, "client": "c", "model": None, "session": None},
        "body": body,
        "key": KEY.kid,
    }
    hashed = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    record["hash"] = hashlib.sha256(RECORD_HASH_DOMAIN + hashed).hexdigest()
    statement = record_statement("L", 7, str(record["hash"]))
    record["sig"] = base64.b64encode(KEY.sign(statement)).decode()
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"duration": 1.5}, id="float"),
        pytest.param({"n": [{"m": 1e16}]}, id="nested-exponent-float"),
        pytest.param({"n": -0.0}, id="negative-zero-float"),
        pytest.param({"n": SAFE + 1}, id="int-2**53"),
        pytest.param({"n": -SAFE - 1}, id="int-minus-2**53"),
        pytest.param({"\ue000": 1, "\U0001f600": 2}, id="code-point-key-order"),
    ],
)
def test_signed_record_breaking_the_number_or_key_order_rules_is_rejected(
    body: dict[str, object],
) -> None:
    keys = {KEY.kid: KEY._private.public_key()}
    # The same writer obeying the rules produces a clean record: only the rule is at fault.
    assert check_line(_signed_as_orjson_writes_it({"n": 1}), keys).problems == ()
    facts = check_line(_signed_as_orjson_writes_it(body), keys)
    assert facts.problems
    assert facts.problems[0][0] in {"malformed", "non-canonical"}


def test_hex_digit_moved_from_prev_to_hash_is_malformed() -> None:
    # prev and hash are checked in one match over both; a digit moved from one to the other
    # keeps 128 hex digits in all, and must still be reported.
    _, record = build_line(
        ledger_id="L",
        seq=7,
        prev="0" * 64,
        ts="2026-01-01T00:00:00.0Z",
        kind="hook.pre",
        actor={"agent": None, "client": "c", "model": None, "session": None},
        body={},
        key=KEY,
    )
    record = {**record, "prev": "0" * 63, "hash": record["hash"] + "0"}
    facts = check_line(canonical_bytes(record), {KEY.kid: KEY._private.public_key()})
    assert facts.unparsed
    assert facts.problems == (("malformed", "prev and hash must be 64 lowercase hex digits"),)
