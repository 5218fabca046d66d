"""``ledger install <client>`` registers ``ledger mcp`` where the client reads MCP servers, next to
the hooks; idempotent; ``uninstall`` removes only what it wrote (decision 0015)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import install, uninstall
from ledger._clients.registry import CLIENTS

CMD = "/x/ledger"

#: client -> (file relative to the workspace, servers key) at project scope, as documented.
PROJECT: dict[str, tuple[str, str]] = {
    "claude": (".mcp.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "gemini": (".gemini/settings.json", "mcpServers"),
    "codex": (".codex/config.toml", "mcp_servers"),
    "copilot": (".github/mcp.json", "mcpServers"),
    "vscode": (".vscode/mcp.json", "servers"),
}
#: ... and relative to $HOME with --user.
USER: dict[str, tuple[str, str]] = {
    "claude": (".claude.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "gemini": (".gemini/settings.json", "mcpServers"),
    "codex": (".codex/config.toml", "mcp_servers"),
    "cline": (".cline/data/settings/cline_mcp_settings.json", "mcpServers"),
    "copilot": (".copilot/mcp-config.json", "mcpServers"),
    "antigravity": (".gemini/config/mcp_config.json", "mcpServers"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
}


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    home.mkdir()
    return root, home


def _servers(path: Path, key: str) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    servers = data[key]
    assert isinstance(servers, dict)
    return servers


def test_every_client_has_an_mcp_configuration_in_the_registry() -> None:
    assert set(USER) == set(CLIENTS)
    for name, spec in CLIENTS.items():
        assert spec.mcp.user_file == USER[name][0]
        assert (spec.mcp.project_file, spec.mcp.key) == PROJECT.get(name, (None, "mcpServers"))


@pytest.mark.parametrize("client", list(PROJECT))
def test_a_project_install_registers_the_server_for_this_workspace(
    tmp_path: Path, client: str
) -> None:
    root, home = _dirs(tmp_path)
    install(client, root=root, home=home, ledger_cmd=CMD)
    relative, key = PROJECT[client]
    entry = _servers(root / relative, key)["ledger"]
    assert entry == {"command": CMD, "args": ["mcp", "--root", str(root)]}
    assert list(home.iterdir()) == []  # nothing outside the project


@pytest.mark.parametrize("client", list(USER))
def test_a_user_install_registers_a_server_that_finds_the_workspace_itself(
    tmp_path: Path, client: str
) -> None:
    root, home = _dirs(tmp_path)
    install(client, root=root, home=home, user=True, ledger_cmd=CMD)
    relative, key = USER[client]
    assert _servers(home / relative, key)["ledger"] == {"command": CMD, "args": ["mcp"]}
    assert sorted(p.name for p in root.iterdir()) == [".orchestration"]


def test_claude_code_approves_the_project_server_in_the_machine_local_settings(
    tmp_path: Path,
) -> None:
    root, home = _dirs(tmp_path)
    local = root / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"enabledMcpjsonServers": ["github"]}), encoding="utf-8")
    install("claude", root=root, home=home, ledger_cmd=CMD)
    assert json.loads(local.read_text())["enabledMcpjsonServers"] == ["github", "ledger"]
    uninstall("claude", root=root, home=home)
    assert json.loads(local.read_text()) == {"enabledMcpjsonServers": ["github"]}


def test_cline_reads_mcp_servers_per_user_so_a_project_install_only_says_how(
    tmp_path: Path,
) -> None:
    root, home = _dirs(tmp_path)
    _, changes = install("cline", root=root, home=home, ledger_cmd=CMD)
    assert list(home.iterdir()) == []
    notes = " ".join(c.detail for c in changes if c.action == "note")
    assert "ledger install cline --user" in notes


@pytest.mark.parametrize("client", list(PROJECT))
def test_installing_again_changes_nothing_and_another_venv_updates_the_command(
    tmp_path: Path, client: str
) -> None:
    root, home = _dirs(tmp_path)
    install(client, root=root, home=home, ledger_cmd=CMD)
    relative, key = PROJECT[client]
    before = (root / relative).read_bytes()
    _, again = install(client, root=root, home=home, ledger_cmd=CMD)
    assert (root / relative).read_bytes() == before
    assert [c.action for c in again if "MCP server" in c.detail] == ["unchanged"]
    _, moved = install(client, root=root, home=home, ledger_cmd="/opt/new/ledger")
    assert [c.action for c in moved if "MCP server" in c.detail] == ["updated"]
    assert _servers(root / relative, key)["ledger"]["command"] == "/opt/new/ledger"
    assert len(_servers(root / relative, key)) == 1


@pytest.mark.parametrize("client", list(PROJECT))
def test_other_servers_are_kept_and_uninstall_removes_only_ours(
    tmp_path: Path, client: str
) -> None:
    root, home = _dirs(tmp_path)
    relative, key = PROJECT[client]
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        mine = 'model = "gpt-5"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\nargs = []\n'
        path.write_text(mine, encoding="utf-8")
    else:
        path.write_text(json.dumps({key: {"github": {"command": "gh-mcp"}}}), encoding="utf-8")
    install(client, root=root, home=home, ledger_cmd=CMD)
    assert set(_servers(path, key)) == {"github", "ledger"}
    uninstall(client, root=root, home=home)
    assert set(_servers(path, key)) == {"github"}
    if client == "codex":
        assert path.read_text(encoding="utf-8") == mine


@pytest.mark.parametrize("client", ["claude", "cursor", "gemini"])
def test_a_server_named_ledger_that_is_not_ours_is_left_alone(tmp_path: Path, client: str) -> None:
    root, home = _dirs(tmp_path)
    relative, key = PROJECT[client]
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    theirs = {"command": "npx", "args": ["-y", "some-ledger-app"]}
    path.write_text(json.dumps({key: {"ledger": theirs}}), encoding="utf-8")
    _, changes = install(client, root=root, home=home, ledger_cmd=CMD)
    assert [c.action for c in changes if c.target == str(path) and "ledger" in c.detail][:1] == [
        "skipped"
    ]
    assert _servers(path, key)["ledger"] == theirs
    uninstall(client, root=root, home=home)
    assert _servers(path, key)["ledger"] == theirs


def test_codex_hardened_and_mcp_blocks_stay_put_across_installs(tmp_path: Path) -> None:
    root, home = _dirs(tmp_path)
    env = {"LEDGER_HOME": str(home / ".config" / "ledger")}
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "gpt-5"\n', encoding="utf-8")
    for _ in range(2):
        install("codex", root=root, home=home, ledger_cmd=CMD, hardened=True, environ=env)
    first = config.read_text(encoding="utf-8")
    _, third = install("codex", root=root, home=home, ledger_cmd=CMD, hardened=True, environ=env)
    assert config.read_text(encoding="utf-8") == first
    assert {c.action for c in third if c.target == str(config)} == {"unchanged"}
    data = tomllib.loads(first)
    assert data["model"] == "gpt-5"
    assert data["default_permissions"] == "ledger"
    assert data["mcp_servers"]["ledger"]["args"] == ["mcp", "--root", str(root)]
    uninstall("codex", root=root, home=home, environ=env)
    assert config.read_text(encoding="utf-8") == 'model = "gpt-5"\n'


def test_doctor_warns_when_the_hooks_are_installed_but_the_server_is_not(tmp_path: Path) -> None:
    from ledger import Ledger, run_checks  # noqa: PLC0415

    root, home = _dirs(tmp_path)
    (root / ".orchestration").rmdir()
    env = {"LEDGER_HOME": str(home / ".config" / "ledger")}
    Ledger.init(root, environ=env)
    ledger = tmp_path / "bin" / "ledger"
    ledger.parent.mkdir()
    ledger.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    ledger.chmod(0o755)
    install("cursor", root=root, home=home, ledger_cmd=str(ledger))
    ok = {c.name: c for c in run_checks(root, environ=env, home=home)}["hooks: cursor"]
    assert "`ledger mcp` registered" in ok.message
    (root / ".cursor" / "mcp.json").unlink()  # an install from before decision 0015
    warned = {c.name: c for c in run_checks(root, environ=env, home=home)}["hooks: cursor"]
    assert warned.status == "warn"
    assert "select_active_intent" in warned.message
    assert warned.fix == "run `ledger install cursor`"
