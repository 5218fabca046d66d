"""``ledger install --hardened``: generated sandbox settings against the clients' documented
schemas, and a real bubblewrap sandbox built from them refusing writes to ``.orchestration/``."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ledger._clients.hardening import claude_settings
from ledger._clients.install import install, uninstall

# Claude Code settings, the parts --hardened writes. Written from the settings and sandboxing
# docs (https://code.claude.com/docs/en/settings, /en/sandboxing, /en/permissions) and the zod
# schema they are validated with (`SandboxSettingsSchema` in Claude Code's
# entrypoints/sandboxTypes.ts): unknown sandbox keys are errors there, so they are here.
_STRINGS = {"type": "array", "items": {"type": "string"}}
_RULES = {"type": "array", "items": {"type": "string", "pattern": r"^[A-Za-z]+(\(.+\))?$"}}
CLAUDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hooks": {"type": "object"},
        "permissions": {
            "type": "object",
            "properties": {
                "allow": _RULES,
                "deny": _RULES,
                "ask": _RULES,
                "additionalDirectories": _STRINGS,
                "defaultMode": {"type": "string"},
            },
        },
        "sandbox": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean"},
                "failIfUnavailable": {"type": "boolean"},
                "autoAllowBashIfSandboxed": {"type": "boolean"},
                "allowUnsandboxedCommands": {"type": "boolean"},
                "excludedCommands": _STRINGS,
                "ignoreViolations": {"type": "object"},
                "network": {"type": "object"},
                "filesystem": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "allowWrite": _STRINGS,
                        "denyWrite": _STRINGS,
                        "denyRead": _STRINGS,
                        "allowRead": _STRINGS,
                        "allowManagedReadPathsOnly": {"type": "boolean"},
                    },
                },
            },
        },
    },
}

# Codex config, the parts --hardened writes: `PermissionProfileToml` and the top-level
# `default_permissions` of openai/codex codex-rs/core/config.schema.json (generated from the
# config types; `additionalProperties: false` there as here).
CODEX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "default_permissions": {"type": "string"},
        "permissions": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "description": {"type": "string"},
                    "extends": {"type": "string"},
                    "filesystem": {"type": "object"},
                    "network": {"type": "object"},
                    "workspace_roots": {"type": "object"},
                },
            },
        },
    },
}
_ACCESS = {"read", "write", "deny", "none"}


def _workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    (root / ".orchestration" / "agent_trace.jsonl").write_text("{}\n", encoding="utf-8")
    (root / "src").mkdir()
    keys = home / ".config" / "ledger" / "keys"
    keys.mkdir(parents=True)
    (keys / "k1.pem").write_text("PRIVATE\n", encoding="utf-8")
    return root, home, {"LEDGER_HOME": str(home / ".config" / "ledger")}


def test_claude_hardened_settings_match_the_documented_schema(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    path, changes = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    settings = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(settings, CLAUDE_SCHEMA)
    sandbox = settings["sandbox"]
    assert (
        sandbox["enabled"],
        sandbox["failIfUnavailable"],
        sandbox["allowUnsandboxedCommands"],
    ) == (True, True, False)
    writes = sandbox["filesystem"]["denyWrite"]
    assert f"/{root}/.orchestration" in writes
    assert f"/{root}/.claude/settings.json" in writes
    assert f"/{root}/.claude/settings.local.json" in writes
    assert f"/{root}/.claude" not in writes  # the pitfall: it breaks every sandboxed command
    assert all(w.startswith(("//", "~/")) for w in writes)
    assert sandbox["filesystem"]["denyRead"] == ["~/.config/ledger/keys"]
    deny = settings["permissions"]["deny"]
    assert f"Edit(/{root}/.orchestration/**)" in deny
    assert "Read(~/.config/ledger/keys/**)" in deny
    assert any(c.action == "note" and "Bash" in c.detail for c in changes)
    # idempotent, and the team's shared settings file exists so the sandbox can protect it
    assert (root / ".claude" / "settings.json").read_text() == "{}\n"
    again = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )[1]
    assert {c.action for c in again} <= {"unchanged", "note"}


def test_codex_hardened_profile_matches_the_config_schema_and_keeps_user_keys(
    tmp_path: Path,
) -> None:
    root, home, env = _workspace(tmp_path)
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n', encoding="utf-8"
    )
    install("codex", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    jsonschema.validate(data, CODEX_SCHEMA)
    assert data["model"] == "gpt-5"  # still top level, not swallowed by a table
    assert data["mcp_servers"]["docs"]["command"] == "docs-mcp"
    assert data["default_permissions"] == "ledger"
    profile = data["permissions"]["ledger"]
    assert profile["extends"] == ":workspace"
    roots = profile["filesystem"][":workspace_roots"]
    assert roots["."] == "write"
    assert roots[".orchestration"] == roots[".codex"] == "read"
    assert set(roots.values()) <= _ACCESS
    assert profile["filesystem"]["~/.config/ledger/keys"] == "deny"
    uninstall("codex", root=root, home=home, environ=env)
    assert tomllib.loads(config.read_text(encoding="utf-8")) == {
        "model": "gpt-5",
        "mcp_servers": {"docs": {"command": "docs-mcp"}},
    }


def test_codex_hardening_never_overrides_a_sandbox_choice_already_made(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('sandbox_mode = "read-only"\n', encoding="utf-8")
    _, changes = install(
        "codex", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    assert [c.action for c in changes if c.target == str(config)] == ["skipped"]
    assert config.read_text(encoding="utf-8") == 'sandbox_mode = "read-only"\n'


def test_clients_without_a_configurable_sandbox_say_what_is_not_protected(
    tmp_path: Path,
) -> None:
    root, home, env = _workspace(tmp_path)
    for client, words in (
        ("cursor", "no setting that denies"),
        ("cline", "no OS sandbox"),
        ("gemini", "stays writable"),
    ):
        _, changes = install(
            client, root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
        )
        assert any(c.action == "note" and words in c.detail for c in changes), client


def _bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found is None and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "bubblewrap"],
            capture_output=True,
            timeout=300,
            check=False,
        )
        found = shutil.which("bwrap")
    if found is None:
        return None
    probe = subprocess.run(
        [found, "--bind", "/", "/", "--dev", "/dev", "true"],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return found if probe.returncode == 0 else None


def _expand(path: str, home: Path) -> str:
    return str(home / path[2:]) if path.startswith("~/") else path[1:]


def test_a_sandboxed_shell_cannot_write_orchestration_or_read_the_key(tmp_path: Path) -> None:
    """What Claude Code's Linux sandbox does with these settings, done with bubblewrap directly:
    a read-only bind of each ``denyWrite`` path and an empty tmpfs over each ``denyRead`` one."""
    bwrap = _bwrap()
    if bwrap is None:
        pytest.skip("bubblewrap is not available and could not be installed")
    root, home, env = _workspace(tmp_path)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    fs = claude_settings(root, home=home, environ=env)["sandbox"]["filesystem"]
    args = [bwrap, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in fs["denyWrite"]:
        target = _expand(path, home)
        if Path(target).exists():
            args += ["--ro-bind", target, target]
    for path in fs["denyRead"]:
        args += ["--tmpfs", _expand(path, home)]
    args += ["--chdir", str(root), "sh", "-c"]

    def sandboxed(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*args, command], capture_output=True, text=True, timeout=60, check=False
        )

    for attack in (
        "echo forged >> .orchestration/agent_trace.jsonl",
        "sort -o .orchestration/agent_trace.jsonl .orchestration/agent_trace.jsonl",
        "rm -f .orchestration/agent_trace.jsonl",
        "python3 -c \"open('.claude/settings.json','w').write('{}')\"",
        "touch .orchestration/new",
    ):
        ran = sandboxed(attack)
        assert ran.returncode != 0, attack
        assert "Read-only file system" in ran.stderr or "Permission denied" in ran.stderr, ran
    assert (root / ".orchestration" / "agent_trace.jsonl").read_text() == "{}\n"
    stolen = sandboxed(f"cat {home}/.config/ledger/keys/k1.pem")
    assert stolen.returncode != 0
    assert "PRIVATE" not in stolen.stdout
    work = sandboxed("echo ok > src/app.py && cat src/app.py")
    assert (work.returncode, work.stdout) == (0, "ok\n")
