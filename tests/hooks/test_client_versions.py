"""The installed client's version, read from its files (``ledger._clients.versions``), and what
``ledger install --hardened``, ``ledger doctor`` and the tripwire do with it for Claude Code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import run_hook
from ledger._clients.install import hook_status, install, uninstall
from ledger._clients.mcp_hook import MCP_TOOL_EVENTS, hook_handler
from ledger._clients.versions import (
    CLAUDE_FEATURES,
    feature_applies,
    format_version,
    installed_version,
    parse_version,
)
from ledger._doctor import run_checks

from ._support import LEDGER, Session, Workspace, claude_payload, make_workspace, run_cli

FLOW = CLAUDE_FEATURES["sandbox-permission-flow"]


def npm_claude(base: Path, version: str, *, package: str = "@anthropic-ai/claude-code") -> Path:
    """A Claude Code laid out as ``npm install`` leaves it: ``bin/claude`` a symlink into the
    package, whose ``package.json`` names the version. Returns the ``bin`` folder."""
    pkg = base / "lib" / "node_modules" / package
    (pkg / "bin").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": package, "version": version}))
    exe = pkg / "bin" / "claude.exe"
    exe.write_text("#!/bin/sh\nexit 3\n")  # never run: the package names the version
    exe.chmod(0o755)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(exe)
    return bin_dir


def env_with(bin_dir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", **extra}


@given(st.tuples(*[st.integers(0, 10**6)] * 3))
def test_a_version_reads_back_as_written(version: tuple[int, int, int]) -> None:
    assert parse_version(f"{format_version(version)} (Claude Code)") == version
    assert parse_version(f"v{format_version(version)}\n") == version


@pytest.mark.parametrize("text", ["", "Claude Code", "2.1", "version 1..2.3"])
def test_text_without_a_version_reads_as_none(text: str) -> None:
    assert parse_version(text) is None


def test_npm_install_is_read_from_the_package_without_running_it(tmp_path: Path) -> None:
    found = installed_version("claude", env_with(npm_claude(tmp_path, "2.1.332")))
    assert (found.version, found.text) == ((2, 1, 332), "2.1.332")
    assert "package.json" in found.how


def test_another_packages_manifest_names_no_version(tmp_path: Path) -> None:
    # A package.json of something else on the way up proves nothing about the client; the
    # executable is then asked, and this one fails.
    bin_dir = npm_claude(tmp_path, "9.9.9", package="not-claude")
    found = installed_version("claude", env_with(bin_dir))
    assert found.version is None
    assert found.executable == bin_dir / "claude"


def test_a_client_planted_in_the_current_folder_is_never_found_nor_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty or relative PATH entry means the current folder, which for a hook is the
    agent's workspace: a `claude` planted there would be asked its version, i.e. run."""
    ran = tmp_path / "ran"
    planted = tmp_path / "claude"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\necho 2.1.332\n")
    planted.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    for path in ("", ".", f"{os.pathsep}/usr/bin", f"./{os.pathsep}/nonexistent"):
        found = installed_version("claude", {"PATH": path})
        assert found.executable is None, path
    assert not ran.exists()


def test_native_install_is_read_from_its_versions_folder(tmp_path: Path) -> None:
    versions = tmp_path / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    (versions / "2.1.290").write_text("#!/bin/sh\nexit 3\n")
    (versions / "2.1.290").chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "claude").symlink_to(versions / "2.1.290")
    assert installed_version("claude", env_with(tmp_path / "bin")).version == (2, 1, 290)


def test_a_client_no_file_names_is_asked(tmp_path: Path) -> None:
    (tmp_path / "claude").write_text("#!/bin/sh\necho '2.1.299 (Claude Code)'\n")
    (tmp_path / "claude").chmod(0o755)
    assert installed_version("claude", env_with(tmp_path)).version == (2, 1, 299)
    assert installed_version("claude", env_with(tmp_path), ask=False).version is None


def test_no_client_on_path(tmp_path: Path) -> None:
    found = installed_version("claude", env_with(tmp_path))
    assert (found.executable, found.version, found.text) == (None, None, "unknown")


def test_an_unknown_version_counts_as_the_newest() -> None:
    assert feature_applies(FLOW, None)
    assert feature_applies(FLOW, FLOW.since)
    assert not feature_applies(FLOW, (2, 1, 299))


# --- what --hardened and doctor do with it --------------------------------------------------


def hardened(tmp_path: Path, version: str) -> tuple[Workspace, dict[str, str], Path]:
    ws = make_workspace(tmp_path)
    bin_dir = npm_claude(tmp_path / "client", version)
    env = env_with(bin_dir, LEDGER_HOME=str(ws.home))
    home = tmp_path / "user-home"
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, hardened=True, environ=env)
    return ws, env, home


def version_check(ws: Workspace, env: dict[str, str], home: Path) -> tuple[str, str, str | None]:
    (found,) = [
        c for c in run_checks(ws.root, environ=env, home=home) if c.name == "client version: claude"
    ]
    return found.status, found.message, found.fix


def test_hardened_install_lets_a_sandboxed_command_run_without_a_prompt(tmp_path: Path) -> None:
    ws, env, home = hardened(tmp_path, "2.1.332")
    settings = json.loads(ws.path(".claude/settings.local.json").read_text())
    assert settings["sandbox"]["autoAllowBashIfSandboxed"] is True
    assert settings["sandbox"]["allowUnsandboxedCommands"] is False
    status, message, fix = version_check(ws, env, home)
    assert status == "ok", message
    assert "Claude Code 2.1.332" in message
    assert fix is None


def test_doctor_names_settings_the_installed_version_disagrees_with(tmp_path: Path) -> None:
    # Settings an older ledger wrote (no autoAllowBashIfSandboxed), a client that needs it.
    ws, env, home = hardened(tmp_path, "2.1.332")
    path = ws.path(".claude/settings.local.json")
    settings = json.loads(path.read_text())
    del settings["sandbox"]["autoAllowBashIfSandboxed"]
    path.write_text(json.dumps(settings))
    status, message, fix = version_check(ws, env, home)
    assert status == "warn"
    assert "2.1.332" in message
    assert "autoAllowBashIfSandboxed" in message
    assert fix == "run `ledger install claude --hardened`"
    # ... and the fix fixes it.
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, hardened=True, environ=env)
    assert version_check(ws, env, home)[0] == "ok"


def test_an_older_client_that_defaulted_to_no_prompt_agrees_without_the_key(
    tmp_path: Path,
) -> None:
    ws, env, home = hardened(tmp_path, "2.1.250")
    path = ws.path(".claude/settings.local.json")
    settings = json.loads(path.read_text())
    del settings["sandbox"]["autoAllowBashIfSandboxed"]
    path.write_text(json.dumps(settings))
    assert version_check(ws, env, home)[0] == "ok"


def test_doctor_says_when_it_cannot_read_the_version_of_hardened_settings(tmp_path: Path) -> None:
    ws, env, home = hardened(tmp_path, "2.1.332")
    env["PATH"] = str(tmp_path / "nowhere")
    status, message, fix = version_check(ws, env, home)
    assert status == "warn"
    assert "cannot read Claude Code's version" in message
    assert fix is not None
    assert "PATH" in fix


# --- the tripwire: the key is part of the sandbox block a person owns -------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (True, False),  # switched off: every sandboxed command now asks
        (True, None),  # removed
        (None, True),  # switched on where a person left it off: a loosening
        (False, True),
    ],
)
def test_changing_auto_allow_needs_a_person(
    tmp_path: Path, before: bool | None, after: bool | None
) -> None:
    ws = make_workspace(tmp_path)
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write("src/auth/login.ts", "x\n")

    def sandbox(value: bool | None) -> str:
        block: dict[str, object] = {"enabled": True, "allowUnsandboxedCommands": False}
        if value is not None:
            block["autoAllowBashIfSandboxed"] = value
        return json.dumps({"sandbox": block})

    ws.write(".claude/settings.local.json", sandbox(before))
    session = Session(ws, "agent")
    assert session.select().code is None  # arms the tripwire with the settings as they are
    ws.write(".claude/settings.local.json", sandbox(after))
    target = {"file_path": str(ws.path("src/auth/login.ts")), "content": "y\n"}
    assert session.pre("Write", target).code == "TAMPER"


# --- the hook transport follows the version: mcp_tool from onFailure's version -----------------


def handlers(ws: Workspace) -> dict[str, list[dict[str, object]]]:
    settings = json.loads(ws.path(".claude/settings.local.json").read_text())
    return {
        event: [h for group in groups for h in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }


def transports(ws: Workspace) -> dict[str, str]:
    return {event: str(found[0]["type"]) for event, found in handlers(ws).items()}


def installed_at(tmp_path: Path, ws: Workspace, version: str) -> dict[str, str]:
    bin_dir = npm_claude(tmp_path / f"client-{version}", version)
    env = env_with(bin_dir, LEDGER_HOME=str(ws.home))
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=tmp_path / "h", environ=env)
    return env


def test_a_client_that_honours_on_failure_gets_mcp_tool_hooks_for_the_gating_events(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    installed_at(tmp_path, ws, "2.1.332")
    by_event = transports(ws)
    assert {e for e, t in by_event.items() if t == "mcp_tool"} == MCP_TOOL_EVENTS
    # The events the transport ignores onFailure on keep the command and its guard, and so
    # does the prompt: the one hook a swapped `ledger` server cannot take (decision 0021).
    for event in ("SessionStart", "Stop", "SubagentStop", "SessionEnd", "UserPromptSubmit"):
        assert by_event[event] == "command"
    (pre,) = handlers(ws)["PreToolUse"]
    assert pre == hook_handler("PreToolUse")
    assert pre["onFailure"] == "block"
    assert pre["server"] == "ledger"
    assert hook_status("claude", ws.root, home=tmp_path / "h").problems == ()


def test_a_client_below_on_failure_keeps_command_hooks(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    installed_at(tmp_path, ws, "2.1.294")
    assert set(transports(ws).values()) == {"command"}


def test_install_switches_on_upgrade_and_downgrade_and_doctor_notices(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    home = tmp_path / "h"
    old = installed_at(tmp_path, ws, "2.1.290")
    new_bin = npm_claude(tmp_path / "new", "2.1.332")
    new = env_with(new_bin, LEDGER_HOME=str(ws.home))
    # Upgraded after the install: the commands still govern, at a process per call.
    status, message, fix = version_check(ws, new, home)
    assert (status, fix) == ("warn", "run `ledger install claude`")
    assert "upgraded" in message
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, environ=new)
    assert transports(ws)["PreToolUse"] == "mcp_tool"
    assert version_check(ws, new, home)[0] == "ok"
    # Downgraded below onFailure: mcp_tool hooks would fail open on a dead server.
    status, message, fix = version_check(ws, old, home)
    assert (status, fix) == ("fail", "run `ledger install claude`")
    assert "ignores onFailure" in message
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, environ=old)
    assert set(transports(ws).values()) == {"command"}
    assert version_check(ws, old, home)[0] == "ok"
    # Installing again changes nothing, and uninstall removes the mcp_tool hooks too.
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, environ=new)
    _, again = install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=home, environ=new)
    assert {c.action for c in again if c.target in MCP_TOOL_EVENTS} == {"unchanged"}
    uninstall("claude", root=ws.root, home=home)
    assert not ws.path(".claude/settings.local.json").exists() or "hooks" not in json.loads(
        ws.path(".claude/settings.local.json").read_text()
    )


def _prompt(ws: Workspace, environ: dict[str, str]) -> dict[str, object]:
    """Claude Code's UserPromptSubmit in ``ws``, decided in this process with ``environ``."""
    raw = json.dumps(claude_payload("UserPromptSubmit", ws, "s1", prompt="Carry on.")).encode()
    answer = run_hook("claude", raw, expected_event="UserPromptSubmit", environ=environ)
    assert answer.exit_code == 0, answer
    found = json.loads(answer.stdout or "{}")
    assert isinstance(found, dict)
    return found


def test_a_downgrade_below_on_failure_under_mcp_tool_hooks_blocks_every_prompt_until_install(
    tmp_path: Path,
) -> None:
    """Downgraded after the install, Claude Code keeps the mcp_tool hooks and ignores their
    onFailure: a killed server would let calls through. The prompt's command hook refuses
    each prompt until a person runs `ledger install claude` (decision 0021)."""
    ws = make_workspace(tmp_path)
    home = str(tmp_path / "h")
    new = {**installed_at(tmp_path, ws, "2.1.332"), "HOME": home}
    old_bin = npm_claude(tmp_path / "old", "2.1.290")
    old = env_with(old_bin, LEDGER_HOME=str(ws.home), HOME=home)
    assert "decision" not in _prompt(ws, new)  # arms the tripwire with the mcp_tool hooks
    for _ in range(2):
        refused = _prompt(ws, old)
        assert refused["decision"] == "block"
        reason = str(refused["reason"])
        assert "TRANSPORT" in reason
        assert "2.1.290" in reason
        assert "ledger install claude" in reason

    def person_installs(environ: dict[str, str]) -> None:
        done = run_cli(
            ["install", "claude", "--root", str(ws.root)],
            {**ws.proc_env, "PATH": environ["PATH"], "HOME": home},
        )
        assert done.returncode == 0, done.stderr

    person_installs(old)  # command hooks for 2.1.290
    assert set(transports(ws).values()) == {"command"}
    assert "decision" not in _prompt(ws, old)
    # A version no file names refuses nothing (doctor warns): the hooks may be right.
    person_installs(new)
    unknown = env_with(tmp_path / "none", LEDGER_HOME=str(ws.home), HOME=home)
    assert "decision" not in _prompt(ws, unknown)
