"""The pydantic models accept exactly what the writer produces, and upcasting works."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import FORMAT_VERSION, InputError, Ledger, SigningKey, handle_event, parse_payload
from ledger._evidence.models import KIND_BODIES, parse_record
from ledger._evidence.schema import generate_schemas
from ledger._evidence.upcast import UPCASTERS, upcast

SAFE = 2**53 - 1
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-SAFE, SAFE) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _ticks() -> Callable[[], str]:
    state = {"n": 0}

    def clock() -> str:
        state["n"] += 1
        return f"2026-01-01T00:00:{state['n'] % 60:02d}.{state['n']:06d}Z"

    return clock


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.init(
        tmp_path / "ws",
        signing_key=SigningKey.from_seed(bytes(range(32))),
        clock=_ticks(),
        environ={"LEDGER_HOME": str(tmp_path / "home")},
    )


@settings(max_examples=60, deadline=None)
@given(
    body=st.dictionaries(st.text(max_size=10), json_values, max_size=6),
    session=st.none() | st.text(max_size=12),
)
def test_every_written_record_validates(
    tmp_path_factory: pytest.TempPathFactory, body: dict[str, object], session: str | None
) -> None:
    root = tmp_path_factory.mktemp("ws")
    ledger = Ledger.init(
        root,
        signing_key=SigningKey.from_seed(bytes(32)),
        clock=_ticks(),
        environ={"LEDGER_HOME": str(root / "home")},
    )
    ledger.append("app.event", body, actor={"session": session})
    schema = generate_schemas()[f"record.v{FORMAT_VERSION}.schema.json"]
    for record in ledger.records():
        parsed, body_model = parse_record(record.data)
        assert parsed.seq == record.seq
        assert (body_model is not None) == (record.kind in KIND_BODIES)
        jsonschema.validate(json.loads(record.line), schema)


def test_key_lifecycle_bodies_validate(ledger: Ledger) -> None:
    ledger.rotate_key(SigningKey.from_seed(bytes([7]) * 32))
    ledger.revoke_key(SigningKey.from_seed(bytes(range(32))).kid, from_seq=5, reason="test")
    kinds = []
    for record in ledger.records():
        _, body = parse_record(record.data)
        kinds.append((record.kind, type(body).__name__))
    assert kinds == [
        ("ledger.genesis", "GenesisBody"),
        ("key.rotated", "KeyRotatedBody"),
        ("key.revoked", "KeyRevokedBody"),
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("v", 4),
        ("seq", -1),
        ("prev", "xyz"),
        ("ts", "yesterday"),
        ("key", "rsa-1"),
        ("sig", "not base64!"),
        ("extra", 1),
    ],
)
def test_model_rejects_bad_envelopes(ledger: Ledger, field: str, value: object) -> None:
    data = dict(next(ledger.records()).data)
    data[field] = value
    with pytest.raises(InputError):
        parse_record(data)


def test_model_rejects_floats_in_body(ledger: Ledger) -> None:
    data = dict(next(ledger.records()).data)
    data["body"] = {"duration": 1.5}
    with pytest.raises(InputError):
        parse_record(data)


def test_upcast_applies_registered_steps_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ledger._evidence.upcast.FORMAT_VERSION", 3)
    monkeypatch.setitem(UPCASTERS, 1, lambda d: {**d, "v": 2, "a": d["old"]})
    monkeypatch.setitem(UPCASTERS, 2, lambda d: {**d, "v": 3, "b": d["a"] * 2})
    original = {"v": 1, "old": 21}
    assert upcast(original) == {"v": 3, "old": 21, "a": 21, "b": 42}
    assert original == {"v": 1, "old": 21}, "history is never rewritten"


@pytest.mark.parametrize("version", [None, 0, "1", 99])
def test_upcast_refuses_unknown_versions(version: object) -> None:
    with pytest.raises(InputError):
        upcast({"v": version})


def test_governed_session_records_match_their_body_models(tmp_path: Path) -> None:
    """Every record a governed hook session writes validates against its kind's model."""
    root = tmp_path / "ws"
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    ledger = Ledger.init(root, environ=env)
    (root / ".orchestration" / "active_intents.yaml").write_text(
        "intents:\n  - id: INT-001\n    name: n\n    status: active\n    owned_scope: ['src/**']\n"
    )
    (root / "src").mkdir()
    target = root / "src" / "a.py"
    target.write_text("def f(x):\n    return x\n")
    common = {"session_id": "s1", "cwd": str(root), "transcript_path": "/t.jsonl"}
    events: list[dict[str, Any]] = [
        {"hook_event_name": "SessionStart", "source": "startup", "model": "m"},
        {"hook_event_name": "UserPromptSubmit", "prompt": "go"},
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_use_id": "t0",
            "tool_input": {"file_path": str(target), "content": "x = 1.5\n"},
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_use_id": "t1",
            "tool_input": {"command": "ledger intent select INT-001"},
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_use_id": "t2",
            "tool_input": {"file_path": str(target), "old_string": "x", "new_string": "y"},
        },
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_use_id": "t2",
            "tool_input": {"file_path": str(target), "old_string": "x", "new_string": "y"},
            "tool_response": {
                "structuredPatch": [
                    {
                        "oldStart": 1,
                        "oldLines": 1,
                        "newStart": 1,
                        "newLines": 1,
                        "lines": ["-a", "+b"],
                    }
                ]
            },
            "duration_ms": 3,
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_use_id": "t3",
            "tool_input": {"command": "ledger intent expand INT-001 'docs/**'"},
        },
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "t3",
            "tool_input": {"command": "ledger intent expand INT-001 'docs/**'"},
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
        },
        {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
    ]
    for event in events:
        handle_event(parse_payload("claude", json.dumps({**common, **event}).encode()), environ=env)
    seen = set()
    for record in ledger.records():
        _, body = parse_record(record.data)
        assert body is not None, record.kind
        seen.add(record.kind)
    assert {
        "hook.pre",
        "hook.post",
        "hook.event",
        "intent.selected",
        "intent.scope_expanded",
    } <= seen
