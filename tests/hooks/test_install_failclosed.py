"""Installed hooks that cannot silently fail open, local settings, clean uninstall, status.

Each guard is tested by running the installed command string itself with ``sh -c``, as the
clients do (hook-protocols.md: Claude Code runs the shell form with ``sh -c``), after breaking
the ``ledger`` executable it names.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli._app import CLIENTS_HELP
from cli._hook import _usage
from ledger._clients.install import hook_status, install, uninstall
from ledger._clients.registry import CLIENTS, adapter, markdown_table

CLIENTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
README = Path(__file__).resolve().parents[2] / "README.md"


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    home.mkdir()
    return root, home


def _stub(path: Path, body: str) -> str:
    """A stand-in ``ledger`` executable; returns its quoted path, as the installer writes it."""
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return shlex.quote(str(path))


def _gating(client: str, event: str) -> bool:
    return adapter(client).native_phase(event) == "pre"


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input="{}",
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _user(client: str) -> bool:
    """Install per user where the client reads hooks only there (Antigravity CLI)."""
    return CLIENTS[client].user_only


def _installed(client: str, root: Path, home: Path) -> dict[str, str]:
    """event -> installed command, read back from what the installer wrote."""
    spec = CLIENTS[client]
    path = home / spec.user_file if spec.user_only else root / (spec.local_file or spec.shared_file)
    if spec.layout == "scripts":
        return {p.name: p.read_text(encoding="utf-8").splitlines()[-1] for p in path.iterdir()}
    hooks = json.loads(path.read_text(encoding="utf-8"))[spec.hooks_key]
    if spec.layout == "flat":
        return {event: entries[0][spec.command_key] for event, entries in hooks.items()}
    found = {}
    for event, entries in hooks.items():
        if isinstance(entries, list):  # a bundle's "enabled" is not an event
            first = entries[0]
            found[event] = first["hooks"][0]["command"] if "hooks" in first else first["command"]
    return found


BREAKAGES = {
    "missing": lambda exe: exe.unlink(),  # the venv moved: sh exits 127
    "not-executable": lambda exe: exe.chmod(0o644),  # 126
    "broken-interpreter": lambda exe: exe.write_text("#!/nonexistent/python3\n"),  # 127 via exec
    "crashes-with-2": lambda exe: exe.write_text("#!/bin/sh\nexit 2\n"),  # python's usage exit
    "crashes": lambda exe: exe.write_text("#!/bin/sh\necho Traceback >&2; exit 1\n"),
}


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_a_broken_ledger_blocks_tool_gating_events_and_guards_never_observational_ones(
    tmp_path: Path, client: str, breakage: str
) -> None:
    """The guards (Claude Code's prompt, decision 0021) block as the tool-gating events do."""
    root, home = _dirs(tmp_path)
    exe = tmp_path / "venv" / "bin" / "ledger"
    exe.parent.mkdir(parents=True)
    cmd = _stub(exe, "echo '{\"ok\": true}'")
    install(client, root=root, home=home, ledger_cmd=cmd, user=_user(client))
    commands = _installed(client, root, home)
    spec = CLIENTS[client]
    gating = {e for e in commands if _gating(client, e)}
    assert gating, f"{client}: no tool-gating event installed"
    BREAKAGES[breakage](exe)
    for event, installed in commands.items():
        # Cline runs the script itself; the others run the command string with sh -c.
        command = str(root / spec.shared_file / event) if client == "cline" else installed
        ran = _run(command, root)
        if event in gating or event in spec.guards:
            assert ran.returncode == 2, (event, ran)
            if breakage != "crashes-with-2":  # an exit 2 is already a block with its reason
                what = "tool call" if event in gating else "prompt"
                assert f"this {what} is blocked" in ran.stderr
                assert f"ledger install {client}" in ran.stderr
        else:
            assert ran.returncode == spec.nonblocking_exit, (event, ran)
            assert ran.returncode != 2


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_working_ledger_passes_through_the_guard_unchanged(tmp_path: Path, client: str) -> None:
    root, home = _dirs(tmp_path)
    exe = tmp_path / "ledger"
    cmd = _stub(exe, "cat >/dev/null; echo '{\"answer\": 1}'; echo note >&2")
    install(client, root=root, home=home, ledger_cmd=cmd, user=_user(client))
    for command in _installed(client, root, home).values():
        ran = _run(command, root)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, '{"answer": 1}\n', "note\n")
    # ledger's own deliberate exit 2 (deny via exit code) keeps its reason, with nothing added
    _stub(exe, "echo 'SCOPE_VIOLATION: no' >&2; exit 2")
    gating = [c for e, c in _installed(client, root, home).items() if _gating(client, e)]
    ran = _run(gating[0], root)
    assert (ran.returncode, ran.stderr) == (2, "SCOPE_VIOLATION: no\n")


def test_claude_commands_go_to_the_local_file_and_leave_the_shared_one_shareable(
    tmp_path: Path,
) -> None:
    root, home = _dirs(tmp_path)
    shared = root / ".claude" / "settings.json"
    shared.parent.mkdir()
    team: dict[str, Any] = {
        "permissions": {"deny": ["Read(./.env)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]},
                # what an older ledger wrote here: this machine's path, in the shared file
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/ledger hook claude --event PreToolUse",
                        }
                    ],
                },
            ]
        },
    }
    shared.write_text(json.dumps(team), encoding="utf-8")
    path, changes = install("claude", root=root, home=home, ledger_cmd="/new/ledger")
    assert path == root / ".claude" / "settings.local.json"
    moved = [c for c in changes if c.detail == f"moved to {path}"]
    assert [c.action for c in moved] == ["removed"]
    assert "ledger" not in shared.read_text(encoding="utf-8")
    assert json.loads(shared.read_text(encoding="utf-8"))["hooks"]["PreToolUse"] == [
        team["hooks"]["PreToolUse"][0]
    ]
    assert "/new/ledger hook claude" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("client", ["cursor", "gemini", "codex", "cline"])
def test_clients_without_a_local_file_say_so(tmp_path: Path, client: str) -> None:
    root, home = _dirs(tmp_path)
    _, changes = install(client, root=root, home=home, ledger_cmd="/x/ledger")
    notes = " ".join(c.detail for c in changes if c.action == "note")
    assert "no machine-local settings file" in notes
    assert "keep it out of git" in notes


def test_codex_and_gemini_installs_explain_their_trust_gates(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    _, codex = install("codex", root=root, home=home, ledger_cmd="/x/ledger")
    text = " ".join(c.detail for c in codex if c.action == "note")
    assert "trusted project" in text
    assert "/hooks" in text
    assert "silently" in text
    assert "Managed hooks" in text
    assert f"[projects.{json.dumps(str(root))}]" in text
    _, gemini = install("gemini", root=root, home=home, ledger_cmd="/x/ledger")
    text = " ".join(c.detail for c in gemini if c.action == "note")
    assert "trusted folder" in text
    assert "--skip-trust" in text


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("hardened", [False, True], ids=["plain", "hardened"])
def test_uninstall_leaves_nothing_it_created(tmp_path: Path, client: str, hardened: bool) -> None:
    root, home = _dirs(tmp_path)
    env = {"LEDGER_HOME": str(home / ".config" / "ledger")}
    user = _user(client)
    for _ in range(2):
        install(
            client,
            root=root,
            home=home,
            ledger_cmd="/x/ledger",
            hardened=hardened,
            environ=env,
            user=user,
        )
    uninstall(client, root=root, home=home, environ=env, user=user)
    left = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert left == [".orchestration"]
    # Only ledger's own per-user folders may stay, empty (the hardened install made them for
    # the sandbox to bind; another workspace's sandbox may still bind them).
    kept = sorted(str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir())
    assert kept == []
    folders = {str(p.relative_to(home)) for p in home.rglob("*")}
    assert folders <= {
        ".config",
        ".config/ledger",
        ".config/ledger/run",  # the resident decider's socket folder, hidden from the sandbox
        ".local",
        ".local/state",
        ".local/state/ledger",
    }
    assert not folders or hardened


def test_uninstall_keeps_what_others_put_in_the_same_files(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    local = root / ".claude" / "settings.local.json"
    local.parent.mkdir()
    mine = {
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./secrets/**)"]},
        "sandbox": {"enabled": True},
    }
    local.write_text(json.dumps(mine), encoding="utf-8")
    env = {"LEDGER_HOME": str(home / ".config" / "ledger")}  # never the real one
    install("claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    uninstall("claude", root=root, home=home, environ=env)
    assert json.loads(local.read_text(encoding="utf-8")) == {
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./secrets/**)"]}
    }


def test_hook_status_detects_missing_broken_and_working_hooks(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    status = hook_status("claude", root, home=home)
    assert (status.installed, status.command_runs) == (False, None)
    assert "run `ledger install claude`" in status.problems[0]
    exe = tmp_path / "venv" / "ledger"
    exe.parent.mkdir()
    install("claude", root=root, home=home, ledger_cmd=_stub(exe, "exit 0"))
    status = hook_status("claude", root, home=home)
    assert (status.installed, status.command_runs, status.problems) == (True, True, ())
    assert status.path == root / ".claude" / "settings.local.json"
    exe.write_text("#!/moved/venv/bin/python\n")
    status = hook_status("claude", root, home=home)
    assert status.command_runs is False
    assert any("/moved/venv/bin/python" in p for p in status.problems)
    exe.unlink()
    assert hook_status("claude", root, home=home).command_runs is False


def test_hook_status_reads_codex_trust(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    exe = tmp_path / "ledger"
    install("codex", root=root, home=home, ledger_cmd=_stub(exe, "exit 0"))
    status = hook_status("codex", root, home=home)
    assert status.trusted is False
    assert any("does not trust this project" in p for p in status.problems)
    hooks_file = root / ".codex" / "hooks.json"
    entries = "\n".join(
        f'[hooks.state."{hooks_file}:{e.event}:0:0"]\ntrusted_hash = "sha256:{i:064x}"'
        for i, e in enumerate(CLIENTS["codex"].hooks)
    )
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[projects."{root}"]\ntrust_level = "trusted"\n', encoding="utf-8")
    status = hook_status("codex", root, home=home)
    assert status.trusted is False
    assert any("0 of 5" in p and "/hooks" in p for p in status.problems)
    config.write_text(config.read_text() + entries + "\n", encoding="utf-8")
    assert hook_status("codex", root, home=home).trusted is True


def test_hook_status_reads_gemini_trusted_folders(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    install("gemini", root=root, home=home, ledger_cmd="/x/ledger")
    assert hook_status("gemini", root, home=home).trusted is None  # Gemini will ask
    folders = home / ".gemini" / "trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(json.dumps({str(root): "DO_NOT_TRUST"}), encoding="utf-8")
    assert hook_status("gemini", root, home=home).trusted is False
    folders.write_text(json.dumps({str(tmp_path): "TRUST_FOLDER"}), encoding="utf-8")
    assert hook_status("gemini", root, home=home).trusted is True


def test_the_documented_client_table_is_the_registry() -> None:
    assert markdown_table() in CLIENTS_PAGE.read_text(encoding="utf-8")
    # and the README's install line names every client the registry knows
    text = README.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("ledger install claude"))
    assert set(re.findall(r"\b[a-z]+\b", line.split("#", 1)[1])) >= set(CLIENTS) - {"claude"}


def test_cli_help_and_hook_usage_list_the_registry(tmp_path: Path) -> None:
    assert all(name in CLIENTS_HELP for name in CLIENTS)
    assert "|".join(CLIENTS) in _usage()
    env = {**os.environ, "HOME": str(tmp_path)}
    ledger = str(Path(sys.executable).with_name("ledger"))
    ran = subprocess.run(
        [ledger, "hook"], capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert ran.returncode == 2
    assert "|".join(CLIENTS) in ran.stderr
