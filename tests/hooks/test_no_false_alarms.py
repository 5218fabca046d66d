"""Ordinary edits a person or a client makes to a client's settings never halt a workspace.

Claude Code's first "don't ask again" rule, in a settings file with no ``permissions`` block
yet, tripped the tripwire, and every tool call was denied until ``ledger tamper accept``. The
tripwire now holds fixed only what runs (hooks, MCP servers' commands, the variables that load
code); the corpus below is 0 alarms. The edits that do run something still halt
(tests/hooks/test_tripwire.py, tests/hooks/test_runs_later.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ._support import Session, Workspace, make_workspace

AUTH = "src/auth/login.ts"
Edit = Callable[[dict[str, Any]], None]


class HomeWorkspace(Workspace):
    @property
    def env(self) -> dict[str, str]:
        return {"LEDGER_HOME": str(self.home / ".config" / "ledger"), "HOME": str(self.home)}


def _set(*path: str, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    return edit


def _append(*path: str, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node.setdefault(path[-1], []).append(value)

    return edit


HOOKS = {
    "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "x"}]}]}
}
SERVERS = {"mcpServers": {"ledger": {"command": "/x/ledger", "args": ["mcp"]}}}
CLAUDE_STATE = {"numStartups": 3, "projects": {"/w": {"mcpServers": {}}}, **SERVERS}

# (file under the workspace or ~, its content before (None: not there yet), the edit)
CORPUS: list[tuple[str, dict[str, Any] | None, Edit]] = [
    # Claude Code's project and local settings
    (".claude/settings.json", HOOKS, _append("permissions", "allow", value="Bash(npm test)")),
    (".claude/settings.local.json", HOOKS, _append("permissions", "allow", value="Read(**)")),
    (".claude/settings.local.json", HOOKS, _append("permissions", "ask", value="Bash(git *)")),
    (".claude/settings.json", HOOKS, _set("model", value="opus")),
    (".claude/settings.json", HOOKS, _set("theme", value="dark")),
    (".claude/settings.json", HOOKS, _set("env", "DEBUG", value="1")),
    (".claude/settings.json", HOOKS, _set("env", "ANTHROPIC_MODEL", value="sonnet")),
    (".claude/settings.json", HOOKS, _set("outputStyle", value="Explanatory")),
    (".claude/settings.json", HOOKS, _set("includeCoAuthoredBy", value=False)),
    (".claude/settings.json", HOOKS, _set("cleanupPeriodDays", value=10)),
    (".claude/settings.local.json", HOOKS, _append("enabledMcpjsonServers", value="ledger")),
    (".claude/settings.local.json", HOOKS, _append("disabledMcpjsonServers", value="github")),
    (".claude/settings.local.json", HOOKS, _set("enableAllProjectMcpServers", value=True)),
    (".claude/settings.json", HOOKS, _append("permissions", "additionalDirectories", value="../x")),
    # the user's Claude Code settings and state
    ("~/.claude/settings.json", {}, _append("permissions", "allow", value="WebFetch")),
    ("~/.claude/settings.json", {}, _set("model", value="haiku")),
    ("~/.claude.json", CLAUDE_STATE, _set("numStartups", value=4)),
    ("~/.claude.json", CLAUDE_STATE, _set("projects", "/w", "allowedTools", value=["Bash"])),
    ("~/.claude.json", CLAUDE_STATE, _set("tipsHistory", value={"x": 1})),
    # MCP toggles
    (".mcp.json", SERVERS, _set("mcpServers", "ledger", "disabled", value=True)),
    (".cursor/mcp.json", SERVERS, _set("mcpServers", "ledger", "disabled", value=True)),
    (
        "~/.cline/data/settings/cline_mcp_settings.json",
        SERVERS,
        _set("mcpServers", "ledger", "autoApprove", value=["list_intents"]),
    ),
    (
        "~/.cline/data/settings/cline_mcp_settings.json",
        SERVERS,
        _set("mcpServers", "ledger", "disabled", value=True),
    ),
    (
        ".vscode/mcp.json",
        {"servers": {"ledger": {"command": "/x/ledger"}}},
        _set("inputs", value=[]),
    ),
    (
        "~/.codeium/windsurf/mcp_config.json",
        SERVERS,
        _set("mcpServers", "ledger", "disabled", value=True),
    ),
    (".gemini/settings.json", SERVERS, _set("mcpServers", "ledger", "trust", value=True)),
    # Gemini CLI's own state
    (".gemini/settings.json", {}, _set("ui", "theme", value="GitHub")),
    ("~/.gemini/settings.json", {}, _set("security", "auth", "selectedType", value="oauth")),
    ("~/.gemini/settings.json", {}, _set("general", "vimMode", value=True)),
    ("~/.gemini/settings.json", {}, _set("model", value={"name": "gemini-2.5-pro"})),
    # Copilot CLI and Antigravity MCP toggles
    ("~/.copilot/mcp-config.json", SERVERS, _set("mcpServers", "ledger", "timeout", value=30)),
    (
        "~/.gemini/config/mcp_config.json",
        SERVERS,
        _set("mcpServers", "ledger", "disabledTools", value=["x"]),
    ),
    # files the client or the person creates the first time they keep something of their own
    (".claude/settings.local.json", None, _append("permissions", "allow", value="Bash(ls)")),
    ("~/.claude/settings.json", None, _set("model", value="opus")),
    ("~/.claude.json", None, _set("numStartups", value=1)),
    (".gemini/settings.json", None, _set("ui", "theme", value="GitHub")),
    ("~/.gemini/settings.json", None, _set("security", "auth", "selectedType", value="oauth")),
    (".mcp.json", None, _set("mcpServers", value={})),
]


@pytest.fixture
def ws(tmp_path: Path) -> HomeWorkspace:
    base = make_workspace(tmp_path)
    home = tmp_path / "userhome"
    (home / ".config").mkdir(parents=True)
    base.home.rename(home / ".config" / "ledger")
    subprocess.run(["git", "init", "-q", str(base.root)], check=True)
    ws = HomeWorkspace(base.root, home)
    ws.write(AUTH, "export const login = 1;\n")
    return ws


def test_the_corpus_is_at_least_thirty_edits() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize(("where", "before", "edit"), CORPUS, ids=range(len(CORPUS)))
def test_an_ordinary_settings_edit_never_halts_the_workspace(
    ws: HomeWorkspace, where: str, before: dict[str, Any] | None, edit: Edit
) -> None:
    path = ws.home / where[2:] if where.startswith("~/") else ws.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    document = json.loads(json.dumps(before or {}))
    if before is not None:
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    session = Session(ws, "agent")
    assert session.select().code is None  # armed, sealed with the file as it was
    edit(document)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    target = str(ws.path(AUTH))
    fired = session.pre("Write", {"file_path": target, "content": "export const x = 2;\n"})
    assert fired.code is None, fired.decision.reason
    assert not [r for r in ws.records() if r.kind == "governance.tamper"]


def test_a_code_loading_variable_in_a_settings_env_still_halts(ws: HomeWorkspace) -> None:
    path = ws.root / ".claude/settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(HOOKS), encoding="utf-8")
    session = Session(ws, "agent")
    session.select()
    path.write_text(json.dumps({**HOOKS, "env": {"NODE_OPTIONS": "--require /tmp/x.js"}}))
    target = str(ws.path(AUTH))
    assert session.pre("Write", {"file_path": target, "content": "x\n"}).code == "TAMPER"
