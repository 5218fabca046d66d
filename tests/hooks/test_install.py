"""`ledger install|uninstall <client>`: documented layouts, idempotence, other hooks kept."""

from __future__ import annotations

import copy
import json
import os
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import hook_command, install, uninstall
from ledger._clients.registry import CLIENTS as REGISTRY
from ledger._errors import ConfigError

from ._support import clean_env, make_workspace, run_cli

CMD = "/x/ledger"
CLIENT_EVENTS = {name: spec.hooks for name, spec in REGISTRY.items()}

# hook-protocols.md §1.1 (Claude), §2 (Cursor), §3 (Gemini), §4 (Codex), §5 (Cline).
# Claude Code keeps this machine's settings in settings.local.json; the others have no such file.
PROJECT_PATHS = {
    "claude": ".claude/settings.local.json",
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
    "gemini": ".gemini/settings.json",
    "cline": ".clinerules/hooks",
}
USER_PATHS = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
    "gemini": ".gemini/settings.json",
    "cline": "Documents/Cline/Hooks",
}
# Events each client must get at least (the tool-gating and tool-reporting ones first).
REQUIRED_EVENTS = {
    "claude": {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionDenied",
        "SessionStart",
        "SessionEnd",
        "UserPromptSubmit",
        "Stop",
    },
    "codex": {"PreToolUse", "PostToolUse", "SessionStart", "Stop"},
    "gemini": {"BeforeTool", "AfterTool", "SessionStart", "SessionEnd"},
    "cursor": {
        "preToolUse",
        "postToolUse",
        "beforeShellExecution",
        "afterFileEdit",
        "beforeMCPExecution",
        "sessionStart",
        "stop",
    },
    "cline": {"PreToolUse", "PostToolUse", "TaskStart", "TaskComplete"},
}
TOOL_EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionDenied",
    "BeforeTool",
    "AfterTool",
}
CLIENTS = sorted(PROJECT_PATHS)


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "ws", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    return root, home


def load(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def snapshot(path: Path) -> dict[str, tuple[bytes, int]]:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in files}


def check_layout(client: str, path: Path) -> None:
    """The layout hook-protocols.md documents for ``client``, with our command per event."""
    if client == "cline":
        assert path.is_dir()
        names = {p.name for p in path.iterdir()}
        assert REQUIRED_EVENTS["cline"] <= names
        for name in names:
            script = path / name
            assert script.stat().st_mode & stat.S_IXUSR
            text = script.read_text(encoding="utf-8")
            assert text.startswith("#!/bin/sh\n")
            assert f"\n{hook_command(REGISTRY['cline'], name, CMD)}\n" in text
            assert text.count(f"{CMD} hook cline --event {name} ||") == 1
        return
    data = load(path)
    hooks = data["hooks"]
    assert REQUIRED_EVENTS[client] <= set(hooks)
    if client == "cursor":
        assert data["version"] == 1
        for event, entries in hooks.items():
            assert entries == [
                {
                    "command": hook_command(REGISTRY["cursor"], event, CMD),
                    **(
                        {"failClosed": True}
                        if event in ("preToolUse", "beforeShellExecution", "beforeMCPExecution")
                        else {}
                    ),
                }
            ]
        return
    for event, groups in hooks.items():
        assert len(groups) == 1
        group = groups[0]
        handler = {"type": "command", "command": hook_command(REGISTRY[client], event, CMD)}
        if client == "gemini":
            handler["name"] = "ledger"
        assert group["hooks"] == [handler]
        if event in TOOL_EVENTS:
            assert group["matcher"] in ("*", ".*")
        else:
            assert "matcher" not in group


@pytest.mark.parametrize("user", [False, True], ids=["project", "user"])
@pytest.mark.parametrize("client", CLIENTS)
def test_install_writes_the_documented_layout(tmp_path: Path, client: str, user: bool) -> None:
    root, home = dirs(tmp_path)
    path, changes = install(client, root=root, home=home, user=user, ledger_cmd=CMD)
    assert path == (home / USER_PATHS[client] if user else root / PROJECT_PATHS[client])
    check_layout(client, path)
    assert {c.action for c in changes if c.action != "note"} == {"added"}
    hooks_added = [c for c in changes if c.action == "added" and not is_mcp_change(c)]
    assert len(hooks_added) == len(CLIENT_EVENTS[client])
    other = root if user else home
    assert list(other.iterdir()) == []  # nothing written to the other scope


@pytest.mark.parametrize("client", CLIENTS)
def test_second_install_changes_nothing(tmp_path: Path, client: str) -> None:
    root, home = dirs(tmp_path)
    path, _ = install(client, root=root, home=home, ledger_cmd=CMD)
    before = snapshot(path)
    again_path, changes = install(client, root=root, home=home, ledger_cmd=CMD)
    assert again_path == path
    assert {c.action for c in changes if c.action != "note"} == {"unchanged"}
    assert snapshot(path) == before
    # Another ledger path is recognised as ours and replaces it (a moved venv is fixed by
    # installing again): never a duplicate entry.
    _, changes = install(client, root=root, home=home, ledger_cmd="/opt/other/ledger")
    assert {c.action for c in changes if c.action != "note"} == {"updated"}
    text = "".join(p.read_text() for p in ([path] if path.is_file() else path.iterdir()))
    assert CMD not in text
    assert text.count("/opt/other/ledger hook") == len(CLIENT_EVENTS[client])


USER_CONFIG: dict[str, dict[str, Any]] = {
    "claude": {
        "permissions": {"allow": ["Bash(npm test *)"], "deny": ["Read(./.env)"]},
        "env": {"FOO": "1"},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "~/bin/check-bash.sh", "timeout": 30}],
                }
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    },
    "codex": {
        "hooks": {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 audit.py"}]}
            ]
        }
    },
    "gemini": {
        "tools": {"enableHooks": True},
        "hooks": {
            "BeforeTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [{"type": "command", "command": "./guard.sh", "name": "guard"}],
                }
            ]
        },
    },
    "cursor": {
        "version": 1,
        "hooks": {
            "beforeShellExecution": [{"command": "./shell-guard.sh", "failClosed": True}],
            "afterFileEdit": [{"command": "./format.sh"}],
        },
    },
}


def _contains(big: object, small: object) -> bool:
    """Every key/value of ``small`` is in ``big`` (lists: every item appears)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _contains(big[k], v) for k, v in small.items()
        )
    if isinstance(small, list):
        return isinstance(big, list) and all(any(_contains(b, s) for b in big) for s in small)
    return big == small


@pytest.mark.parametrize("client", sorted(USER_CONFIG))
def test_existing_hooks_are_kept_and_uninstall_removes_only_ours(
    tmp_path: Path, client: str
) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS[client]
    path.parent.mkdir(parents=True)
    original = copy.deepcopy(USER_CONFIG[client])
    path.write_text(json.dumps(original, indent=2), encoding="utf-8")

    install(client, root=root, home=home, ledger_cmd=CMD)
    installed = load(path)
    assert _contains(installed, original)
    commands = json.dumps(installed)
    assert f"{CMD} hook {client} --event" in commands

    _, changes = uninstall(client, root=root, home=home)
    assert changes
    assert {c.action for c in changes} == {"removed"}
    assert load(path) == original
    _, again = uninstall(client, root=root, home=home)
    assert again == []


def test_uninstall_keeps_user_hooks_sharing_a_group_with_ours(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS["claude"]
    path.parent.mkdir(parents=True)
    mixed = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/usr/local/bin/ledger hook claude --event PreToolUse",
                        },
                        {"type": "command", "command": "./my-ledger-helper.sh hook claude"},
                        {"type": "command", "command": "echo ledger"},
                    ],
                }
            ]
        }
    }
    path.write_text(json.dumps(mixed), encoding="utf-8")
    uninstall("claude", root=root, home=home)
    assert load(path) == {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "./my-ledger-helper.sh hook claude"},
                        {"type": "command", "command": "echo ledger"},
                    ],
                }
            ]
        }
    }


def test_cline_keeps_a_foreign_script(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    hooks = root / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    foreign = hooks / "PreToolUse"
    foreign.write_text("#!/bin/sh\necho '{\"cancel\": false}'\n", encoding="utf-8")
    _, changes = install("cline", root=root, home=home, ledger_cmd=CMD)
    skipped = [c for c in changes if c.action == "skipped"]
    assert [Path(c.target).name for c in skipped] == ["PreToolUse"]
    assert hook_command(REGISTRY["cline"], "PreToolUse", CMD) in skipped[0].detail
    assert foreign.read_text(encoding="utf-8") == "#!/bin/sh\necho '{\"cancel\": false}'\n"
    uninstall("cline", root=root, home=home)
    assert foreign.exists()
    assert sorted(p.name for p in hooks.iterdir()) == ["PreToolUse"]


@pytest.mark.parametrize("client", ["claude", "codex", "cursor", "gemini"])
@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": {"x": 1}'])
def test_invalid_existing_json_is_refused_and_left_untouched(
    tmp_path: Path, client: str, text: str
) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS[client]
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    before = snapshot(path)
    with pytest.raises(ConfigError) as caught:
        install(client, root=root, home=home, ledger_cmd=CMD)
    assert str(path) in str(caught.value)
    with pytest.raises(ConfigError):
        uninstall(client, root=root, home=home)
    assert snapshot(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp file left


def test_claude_settings_with_wrong_shapes_are_refused(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS["claude"]
    path.parent.mkdir(parents=True)
    shape: dict[str, Any]
    for shape in ({"hooks": []}, {"hooks": {"PreToolUse": {}}}):
        path.write_text(json.dumps(shape), encoding="utf-8")
        with pytest.raises(ConfigError):
            install("claude", root=root, home=home, ledger_cmd=CMD)
        assert load(path) == shape


@pytest.mark.parametrize(
    "shape", [{"hooks": []}, {"hooks": {"preToolUse": {}}}], ids=["hooks-list", "event-mapping"]
)
def test_cursor_settings_with_wrong_shapes_are_refused(
    tmp_path: Path, shape: dict[str, Any]
) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS["cursor"]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(shape), encoding="utf-8")
    with pytest.raises(ConfigError):
        install("cursor", root=root, home=home, ledger_cmd=CMD)


def test_claude_group_with_null_hooks_is_refused(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    path = root / PROJECT_PATHS["claude"]
    path.parent.mkdir(parents=True)
    path.write_text(
        '{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": null}]}}', encoding="utf-8"
    )
    with pytest.raises(ConfigError):
        install("claude", root=root, home=home, ledger_cmd=CMD)


# --- the CLI ----------------------------------------------------------------------------------


def is_mcp_change(change: Any) -> bool:
    """A change registering the `ledger mcp` server (tests/mcp/test_install_mcp.py covers it)."""
    return "MCP server" in change.detail or "McpjsonServers" in change.detail


def test_cli_install_prints_what_it_changed(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    env = clean_env(ws.home)
    env["HOME"] = str(tmp_path / "fake-home")
    done = run_cli(["install", "claude", "--root", str(ws.root)], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    settings = ws.root / ".claude" / "settings.local.json"
    assert lines[0] == str(settings)
    added = [line.split() for line in lines[1:] if "MCP" not in line and "Mcp" not in line]
    added = [parts for parts in added if parts[0] != "note"]
    assert {parts[0] for parts in added} == {"added"}
    assert any("MCP server ledger:" in line and " mcp --root " in line for line in lines)
    events = [parts[1].rstrip(":") for parts in added]
    assert set(events) == {e for e, _ in CLIENT_EVENTS["claude"]}
    data = load(settings)
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert " hook claude --event PreToolUse || " in command
    # This installation's interpreter without site, on cli/_thin.py, then the ledger script.
    words = shlex.split(command.split(" hook claude")[0])
    assert words[1:3] == ["-I", "-S"]
    assert Path(words[3]).name == "_thin.py"
    executable = words[-1]
    assert Path(executable).is_absolute()
    assert Path(executable).name == "ledger"
    assert os.access(executable, os.X_OK)
    assert os.access(words[0], os.X_OK)
    assert not (tmp_path / "fake-home" / ".claude").exists()

    again = run_cli(["install", "claude", "--root", str(ws.root)], env, cwd=tmp_path)
    assert again.returncode == 0
    assert {line.split()[0] for line in again.stdout.decode().splitlines()[1:]} == {"unchanged"}

    as_json = json.loads(
        run_cli(["install", "claude", "--root", str(ws.root), "--json"], env, cwd=tmp_path).stdout
    )
    assert as_json["path"] == str(settings)
    assert {c["action"] for c in as_json["changes"]} == {"unchanged"}

    # The installed command really answers Claude Code.
    payload = {
        "session_id": "installed",
        "transcript_path": "/t.jsonl",
        "cwd": str(ws.root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_use_id": "toolu_01Installed",
        "tool_input": {"file_path": str(ws.root / "src/auth/a.ts"), "content": "x"},
    }
    ran = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=ws.root,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith("INTENT_REQUIRED")

    removed = run_cli(["uninstall", "claude", "--root", str(ws.root)], env, cwd=tmp_path)
    assert removed.returncode == 0
    assert {line.split()[0] for line in removed.stdout.decode().splitlines()[1:]} == {"removed"}
    assert not settings.exists()  # nothing but ledger's hooks was in it: no {} left behind
    assert not settings.parent.exists()


def test_cli_install_reports_invalid_settings_without_a_traceback(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    settings = ws.root / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{broken", encoding="utf-8")
    done = run_cli(["install", "claude", "--root", str(ws.root)], clean_env(ws.home))
    assert done.returncode != 0
    assert b"Traceback" not in done.stderr
    assert str(settings).encode() in done.stderr
    assert settings.read_text(encoding="utf-8") == "{broken"
