"""The client settings keys' table (ledger/_hooks/settings_keys.py) and the tripwire's judgement
of a change that only tightens (:func:`settings_tightened`), unit by unit: the end-to-end and
generated corpora are ``test_no_false_alarms.py`` and ``test_no_false_alarms_generated.py``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ledger._governance.analysis.client_files import CLIENT_FILES
from ledger._hooks.settings_keys import (
    SETTINGS_FILES,
    client_settings,
    legacy_client_settings,
    settings_table,
    tightened_only,
)
from ledger._hooks.tripwire import Change, Entry, TripwireStore, fingerprint, settings_tightened

HOOKS = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/x/ledger"}]}]}}


def test_every_client_settings_file_of_the_registry_has_a_key_table() -> None:
    watched = {
        (folder, glob) for *_, folder, glob, _rec, rule in CLIENT_FILES if rule == "client-config"
    }
    tabled = {(folder, glob) for folder, glob, _ in SETTINGS_FILES}
    assert watched - tabled == set()  # a client added to the registry is classified here too
    assert tabled - watched == set()  # and no row names a file no client has


@pytest.mark.parametrize(
    "where",
    [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".gemini/settings.json",
        ".codex/config.toml",
    ],
)
def test_a_key_that_runs_code_or_loosens_is_held_even_under_a_block_that_runs_nothing(
    where: str,
) -> None:
    path = f"/home/me/{where}"
    table = settings_table(path)
    assert table is not None
    held = [p for p, c in table.classes.items() if c in ("runs-code", "loosens", "tightens-rules")]
    assert len(held) >= 5
    for key_path in held:
        document: dict[str, Any] = {}
        node = document
        for key in key_path[:-1]:
            node = node.setdefault(key, {})
        node[key_path[-1]] = ["/tmp/evil"]
        assert client_settings(json.dumps(document).encode(), path) != b"{}", key_path


def test_an_unknown_key_is_held_and_an_edit_of_it_is_not_a_tightening() -> None:
    path = "/w/.claude/settings.json"
    before = json.dumps(HOOKS).encode()
    after = json.dumps({**HOOKS, "someKeyFromANewerRelease": True}).encode()
    assert client_settings(before, path) != client_settings(after, path)
    assert not tightened_only(path, before, after)


def test_a_cline_hook_script_is_held_byte_for_byte_even_when_it_parses_as_toml() -> None:
    script = b'model = "x"\n'  # valid TOML, and a shell line that runs `model`
    assert client_settings(script, "/w/.clinerules/hooks/PreToolUse") == script
    assert client_settings(script, "/home/me/Documents/Cline/Hooks/sub/TaskStart") == script
    assert not tightened_only("/w/.clinerules/hooks/PreToolUse", b"", script)


@pytest.mark.parametrize(
    ("before", "after", "tightens"),
    [
        ({}, {"permissions": {"deny": ["Read(.env)"]}}, True),
        ({"permissions": {"deny": ["A"]}}, {"permissions": {"deny": ["B", "A"]}}, True),
        ({"permissions": {"deny": ["A", "B"]}}, {"permissions": {"deny": ["B"]}}, False),
        ({"permissions": {"deny": ["A"]}}, {"permissions": {"deny": "A"}}, False),
        ({}, {"permissions": {"deny": [{"tool": "Bash"}]}}, False),
        ({}, {"permissions": {"ask": ["Bash(curl *| sh)"]}}, False),
        ({}, {"permissions": {"deny": ["Read(.env)"], "defaultMode": "plan"}}, False),
        ({}, {"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}}, True),
        ({}, {"sandbox": {"filesystem": {"denyRead": ["$(evil)"]}}}, False),
        ({}, {"sandbox": {"filesystem": {"allowWrite": ["/"]}}}, False),
        ({"model": "a"}, {"model": "b", "theme": "dark"}, True),  # runs nothing: no change
    ],
)
def test_only_entries_added_to_tightening_lists_tighten(
    before: dict[str, Any], after: dict[str, Any], tightens: bool
) -> None:
    path = "/w/.claude/settings.json"
    old, new = json.dumps({**HOOKS, **before}).encode(), json.dumps({**HOOKS, **after}).encode()
    assert tightened_only(path, old, new) is tightens


@pytest.fixture
def store(tmp_path: Path) -> TripwireStore:
    return TripwireStore(
        "0b5c0000-0000-4000-8000-000000000000", {"LEDGER_HOME": str(tmp_path / "lh")}
    )


def _settings(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "ws" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_deny_rule_added_is_a_tightening_judged_against_the_kept_copy(
    tmp_path: Path, store: TripwireStore
) -> None:
    path = _settings(tmp_path, HOOKS)
    sealed = fingerprint({str(path): "client-config"})[str(path)]
    store.keep(str(path), sealed)
    path.write_text(json.dumps({**HOOKS, "permissions": {"deny": ["Read(.env)"]}}))
    now = fingerprint({str(path): "client-config"})[str(path)]
    change = Change(str(path), "changed", "client-config")
    assert settings_tightened(store, change, sealed, now)


def test_without_a_kept_copy_a_settings_change_cannot_be_told_and_trips(
    tmp_path: Path, store: TripwireStore
) -> None:
    path = _settings(tmp_path, HOOKS)
    sealed = fingerprint({str(path): "client-config"})[str(path)]  # no copy kept
    path.write_text(json.dumps({**HOOKS, "permissions": {"deny": ["Read(.env)"]}}))
    now = fingerprint({str(path): "client-config"})[str(path)]
    assert not settings_tightened(store, Change(str(path), "changed", "client-config"), sealed, now)


def test_a_settings_file_rewritten_after_it_was_hashed_is_judged_at_the_next_call(
    tmp_path: Path, store: TripwireStore
) -> None:
    # The fingerprint hashed a hook added; the file then only adds a deny rule. Accepting the
    # second would seal the first's digest.
    path = _settings(tmp_path, HOOKS)
    sealed = fingerprint({str(path): "client-config"})[str(path)]
    store.keep(str(path), sealed)
    evil = {"hooks": {**HOOKS["hooks"], "Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    path.write_text(json.dumps(evil))
    now = fingerprint({str(path): "client-config"})[str(path)]
    path.write_text(json.dumps({**HOOKS, "permissions": {"deny": ["Read(.env)"]}}))
    assert not settings_tightened(store, Change(str(path), "changed", "client-config"), sealed, now)


def test_a_seal_from_before_the_key_tables_still_verifies_its_copy(
    tmp_path: Path, store: TripwireStore
) -> None:
    # Sealed before the per-client tables, when every ask rule and `ui` were left out of any
    # client's file: its digest is of that part. The person then picks another model: no alarm.
    document = {**HOOKS, "permissions": {"ask": ["Bash(git push *)"]}, "model": "opus"}
    path = _settings(tmp_path, document)
    content = path.read_bytes()
    legacy = hashlib.sha256(legacy_client_settings(content)).hexdigest()
    assert legacy != fingerprint({str(path): "client-config"})[str(path)].digest
    objects = store.directory / "objects"
    objects.mkdir(parents=True)
    (objects / legacy).write_bytes(content)
    sealed = Entry("client-config", 0, len(content), 0, legacy)
    assert store.copy_of(sealed, str(path)) == content
    path.write_text(json.dumps({**document, "model": "sonnet"}))
    now = fingerprint({str(path): "client-config"})[str(path)]
    assert settings_tightened(store, Change(str(path), "changed", "client-config"), sealed, now)
    # ... and a copy that matches neither digest is no copy.
    (objects / legacy).write_bytes(json.dumps({**HOOKS, "apiKeyHelper": "x"}).encode())
    assert store.copy_of(sealed, str(path)) is None
