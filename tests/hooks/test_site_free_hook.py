"""The command every command client's hook runs: this installation's interpreter without ``site``
(``-I -S``) on ``cli/_thin.py``, which imports only the stdlib-only hook entry, asks the resident
decider, and decides in its own process (``site`` added then) whenever the decider cannot
answer -- the same answers and records as the ``ledger`` script."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger._clients.registry import CLIENTS, adapter
from ledger._clients.settings import MCP_HOOK_MARK, _installed_commands, site_free_runner

from ._support import LEDGER, clean_env
from .test_decider import Rig, _comparable, _normalize, select_payload, write_payload

FIXTURES = Path(__file__).parents[1] / "fixtures" / "payloads"
THIN = Path(__file__).resolve().parents[2] / "cli" / "_thin.py"
HOOK_ARGS = ("hook", "claude", "--event", "PreToolUse")
#: The interpreter the installed ``ledger`` script names (the venv's ``python3``).
PYTHON = LEDGER.read_text(encoding="utf-8").splitlines()[0][2:]
RUNNER = f"{shlex.quote(PYTHON)} -I -S {shlex.quote(str(THIN))}"


def _installed(tmp_path: Path, client: str) -> dict[str, str]:
    """event -> the command ``ledger install <client>`` wrote (as a person runs it)."""
    spec = CLIENTS[client]
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    home.mkdir()
    env = {**clean_env(tmp_path / "lh"), "HOME": str(home), "PATH": "/usr/bin:/bin"}
    args = [str(LEDGER), "install", client, "--root", str(root)]
    done = subprocess.run(
        [*args, "--user"] if spec.user_only else args,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    where = (
        home / spec.user_file if spec.user_only else root / (spec.local_file or spec.shared_file)
    )
    return _installed_commands(spec, where)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_install_writes_the_site_free_command_for_every_command_client(
    tmp_path: Path, client: str
) -> None:
    commands = _installed(tmp_path, client)
    assert commands
    for event, command in commands.items():
        if command == MCP_HOOK_MARK:
            continue
        expected = f"{RUNNER} {shlex.quote(str(LEDGER))} hook {client} --event {event}"
        assert command.startswith(expected + " ||"), command
        # The guard still closes a gating event whatever the interpreter does.
        if adapter(client).native_phase(event) == "pre":
            assert command.endswith("exit 2; }")


def test_a_hand_written_or_foreign_ledger_command_runs_as_written(tmp_path: Path) -> None:
    foreign = tmp_path / "ledger"
    foreign.write_text("#!/usr/bin/python3\n", encoding="utf-8")
    assert site_free_runner(str(foreign)) is None  # another interpreter's script
    assert site_free_runner("/nowhere/ledger") is None
    assert site_free_runner(f"{sys.executable} -m cli._entry") is None
    assert site_free_runner(shlex.quote(str(LEDGER))) == RUNNER


def _fixture_payloads() -> list[tuple[str, str, str]]:
    """(client, event, payload) of the first two fixtures of every client."""
    calls: list[tuple[str, str, str]] = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "real"):
        calls.extend(
            (folder.name, path.stem.split("-")[0], path.read_text(encoding="utf-8"))
            for path in sorted(folder.glob("*.json"))[:2]
        )
    return calls


def test_without_a_decider_the_site_free_hook_answers_and_records_as_the_script(
    tmp_path: Path,
) -> None:
    with (
        Rig(tmp_path / "script", decider="off", site_free=False) as script,
        Rig(tmp_path / "thin", decider="off") as thin,
    ):
        calls = _fixture_payloads()
        assert {client for client, _, _ in calls} >= {"codex", "gemini", "cursor", "cline"}
        for client, event, text in [*calls, ("codex", "PreToolUse", "{not json")]:
            answers = []
            for rig in (script, thin):
                raw = text.replace("/home/dev/app", str(rig.root)).encode()
                done = rig.hook(client, event, raw)
                answers.append(
                    (
                        done.returncode,
                        _normalize(done.stdout.decode(), rig.root),
                        _normalize(done.stderr.decode(), rig.root),
                    )
                )
            assert answers[0] == answers[1], (client, event)
        assert _comparable(script.records(), script.root) == _comparable(thin.records(), thin.root)


def test_with_the_decider_up_the_hook_loads_neither_site_nor_os(rig: Rig) -> None:
    rig.start()
    rig.hook("claude", "PreToolUse", select_payload(rig.root, "s"))  # the per-user secret
    served = rig.status()["requests"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-I", "-S", str(THIN), str(LEDGER), *HOOK_ARGS],
        input=json.dumps(write_payload(rig.root, "s", "t-imports")).encode(),
        cwd=rig.root,
        env=rig.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert b"deny" not in done.stdout, done.stdout  # an in-scope write, allowed quietly
    assert rig.status()["requests"] == served + 1  # the decider answered it
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
    assert {"cli._hook", "cli._decider", "_socket"} <= imported
    assert not imported & {"site", "os", "ledger", "socket", "json", "__future__"}, imported


def test_a_moved_installation_blocks_gating_calls_with_one_line(tmp_path: Path) -> None:
    commands = _installed(tmp_path, "codex")
    gating = commands["PreToolUse"].replace(str(THIN), str(tmp_path / "gone" / "cli" / "_thin.py"))
    done = subprocess.run(
        ["/bin/sh", "-c", gating], input=b"{}", capture_output=True, timeout=30, check=False
    )
    assert done.returncode == 2  # a block
    assert len(done.stderr.decode().strip().splitlines()) == 1
    assert b"Traceback" not in done.stderr


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with Rig(tmp_path, decider="on") as made:
        yield made
