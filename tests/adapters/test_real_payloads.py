"""Replaying the payloads real clients sent (captured by tests/conformance, normalized).

``tests/fixtures/payloads/real/<client>-<version>/<scenario>/NN-<Event>[-<tool>].json`` are what
the real CLIs wrote to ledger's hooks, in order. These tests need no client: they check that the
adapter reads every one of them, that a deny is rendered as the client's block, that a whole
captured session replayed through ``ledger hook`` gets the decisions it got live, and that every
field the adapter ignores is listed, with its reason, in ``unread_fields.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ledger import HookDecision, parse_payload, render_response

from ..conformance._harness import INTENTS_YAML
from ..conformance._payloads import (
    NAMELESS_EVENTS,
    REAL_FIXTURES,
    allowed_unread,
    unread_fields,
    unread_table,
)
from ._support import blocks

REAL_FILES = sorted(REAL_FIXTURES.glob("*/*/*.json"))
LEDGER = Path(sys.executable).parent / "ledger"
PHASES = {"PreToolUse": "pre", "PostToolUse": "post", "PostToolUseFailure": "post"}


def _client(path: Path) -> str:
    return path.parts[-3].split("-", 1)[0]


def _load(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _named(client: str, event: str) -> str | None:
    """The event to pass with a payload that does not name it (Copilot CLI's camelCase)."""
    return event if client in NAMELESS_EVENTS else None


def _id(path: Path) -> str:
    return "/".join(path.parts[-3:])


def test_real_payloads_are_present() -> None:
    # The conformance suite wrote these with LEDGER_CONFORMANCE_SAVE=1; an empty glob would
    # make every test below pass vacuously.
    assert {_client(p) for p in REAL_FILES} >= {"claude"}
    assert len(REAL_FILES) > 50


@pytest.mark.parametrize("path", REAL_FILES, ids=_id)
def test_real_payload_parses_to_the_neutral_event(path: Path) -> None:
    client, payload = _client(path), _load(path)
    name = path.stem.split("-")[1]
    event = parse_payload(client, path.read_bytes(), expected_event=_named(client, name))
    assert event.client_event == name
    assert event.session_id is not None
    assert event.cwd == "/workspace"
    if name in PHASES:
        assert event.phase == PHASES[name]
        assert event.tool_name is not None
        assert event.tool_use_id is not None
        assert event.tool_use_id == payload.get("tool_use_id", event.tool_use_id)
    path_arg = event.tool_input.get("file_path")
    if path_arg is not None:
        assert str(path_arg).startswith("/")


@pytest.mark.parametrize(
    "path", [p for p in REAL_FILES if "PreToolUse" in p.name or "preToolUse" in p.name], ids=_id
)
def test_a_deny_on_a_real_pre_tool_payload_blocks_the_call(path: Path) -> None:
    client = _client(path)
    event = parse_payload(
        client, path.read_bytes(), expected_event=_named(client, path.stem.split("-")[1])
    )
    response = render_response(
        client, event, HookDecision(permission="deny", reason="no", block=True)
    )
    assert blocks(event, response)


def _by_version() -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in REAL_FILES:
        groups[path.parts[-3]].append(path)
    return groups


@pytest.mark.parametrize("version", sorted(_by_version()))
def test_every_field_the_adapter_ignores_is_listed_with_a_reason(version: str) -> None:
    client = version.split("-", 1)[0]
    unknown: dict[str, set[str]] = defaultdict(set)
    for path in _by_version()[version]:
        event = path.stem.split("-")[1]
        unread = unread_fields(client, _load(path), event)
        unknown[event] |= unread - set(allowed_unread(client, event))
    report = {event: sorted(fields) for event, fields in sorted(unknown.items()) if fields}
    assert report == {}, f"{version}: fields the adapter does not read, per event: {report}"


@pytest.mark.parametrize("version", sorted(_by_version()))
def test_the_allow_list_names_only_fields_real_clients_send(version: str) -> None:
    client = version.split("-", 1)[0]
    sent: dict[str, set[str]] = defaultdict(set)
    for path in _by_version()[version]:
        sent[path.stem.split("-")[1]] |= set(_load(path))
    every = set.union(*sent.values())
    stale = [
        f"{event}.{field}"
        for event, fields in unread_table(client).items()
        for field in fields
        if field not in (every if event == "*" else sent.get(event, {field}))
    ]
    assert stale == []


def _replay(tmp_path: Path, scenario: Path) -> list[tuple[str, dict[str, Any]]]:
    """Send a captured session's payloads through ``ledger hook`` in a fresh workspace."""
    root, home = tmp_path / "workspace", tmp_path / "home"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "CLAUDE_"))}
    # the key and trust pins go under this HOME, not the user's $XDG_CONFIG_HOME/ledger
    # ... and each hook decides in its own process: a decider started here would outlive the test
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), LEDGER_DECIDER="off")
    subprocess.run([LEDGER, "init"], cwd=root, env=env, check=True, capture_output=True)
    (root / ".orchestration" / "active_intents.yaml").write_text(
        INTENTS_YAML.format(scope='"src/auth/**"'), encoding="utf-8"
    )
    client = scenario.parent.name.split("-", 1)[0]
    answers = []
    for path in sorted(scenario.glob("*.json")):
        raw = path.read_text(encoding="utf-8").replace("/workspace", str(root))
        event = path.stem.split("-")[1]
        done = subprocess.run(
            [LEDGER, "hook", client, "--event", event],
            input=raw,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        answers.append((path.stem, json.loads(done.stdout) if done.stdout.strip() else {}))
    verify = subprocess.run([LEDGER, "verify"], cwd=root, env=env, capture_output=True, check=False)
    assert verify.returncode == 0
    return answers


def _decisions(answers: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str | None]]:
    return [
        (stem, answer.get("hookSpecificOutput", {}).get("permissionDecision"))
        for stem, answer in answers
        if "PreToolUse" in stem
    ]


def test_replayed_out_of_scope_session_gets_its_live_decisions(tmp_path: Path) -> None:
    scenario = REAL_FIXTURES / "claude-2.1.330" / "out_of_scope_write_is_refused"
    answers = _replay(tmp_path, scenario)
    assert _decisions(answers) == [("02-PreToolUse-Bash", "allow"), ("04-PreToolUse-Write", "deny")]
    assert "SCOPE_VIOLATION" in json.dumps(dict(answers)["04-PreToolUse-Write"])


def test_replayed_intent_required_session_gets_its_live_decisions(tmp_path: Path) -> None:
    scenario = REAL_FIXTURES / "claude-2.1.330" / "write_before_intent_selection_is_refused"
    answers = _replay(tmp_path, scenario)
    assert _decisions(answers) == [("02-PreToolUse-Write", "deny")]
    assert "INTENT_REQUIRED" in json.dumps(dict(answers)["02-PreToolUse-Write"])
