"""The writer's byte splicing equals a full canonical re-encoding, for any body."""

from __future__ import annotations

import base64
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._evidence.canonical import canonical_bytes, parse_canonical
from ledger._evidence.keys import SigningKey
from ledger._evidence.record import _excise_hash_and_sig, build_line, check_line

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
