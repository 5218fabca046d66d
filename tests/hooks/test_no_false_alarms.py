"""Ordinary edits a person or a client makes to a client's settings never halt a workspace.

Claude Code's first "don't ask again" rule, in a settings file with no ``permissions`` block
yet, tripped the tripwire, and every tool call was denied until ``ledger tamper accept``; so did
a person's own ``permissions.deny`` rule, or any key the tripwire did not know. The tripwire now
holds fixed only what runs code or loosens governance, per client (ledger/_hooks/settings_keys.py),
and accepts entries added to lists that only tighten (deny and ask rules, sandbox deny paths,
Gemini CLI's excluded tools); the corpus below is 0 alarms. The edits that do run something, or
loosen, still halt (:data:`HALTS` below, tests/hooks/test_tripwire.py,
tests/hooks/test_runs_later.py).
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
DENIES: dict[str, Any] = {
    **HOOKS,
    "permissions": {"deny": ["Bash(curl:*)"], "ask": ["Bash(git push *)"]},
}
STATUS: dict[str, Any] = {
    **HOOKS,
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}
SCHEMA = "https://json.schemastore.org/claude-code-settings.json"

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
    # a person's own rules that only tighten: deny and ask rules, sandbox deny paths
    (".claude/settings.json", HOOKS, _append("permissions", "deny", value="Read(.env)")),
    (".claude/settings.local.json", DENIES, _append("permissions", "deny", value="Bash(rm -rf *)")),
    ("~/.claude/settings.json", {}, _append("permissions", "ask", value="Bash(git push *)")),
    (
        ".claude/settings.local.json",
        None,
        _append("permissions", "deny", value="Read(./secrets/**)"),
    ),
    ("~/.claude/settings.json", None, _append("permissions", "deny", value="WebFetch")),
    (".claude/settings.json", HOOKS, _append("sandbox", "filesystem", "denyRead", value="~/.ssh")),
    (".claude/settings.json", HOOKS, _append("sandbox", "network", "deniedDomains", value="x.io")),
    # Claude Code's other keys that run nothing (its settings reference)
    (".claude/settings.json", STATUS, _set("statusLine", "padding", value=2)),
    ("~/.claude/settings.json", STATUS, _set("statusLine", "refreshInterval", value=5)),
    (".claude/settings.json", HOOKS, _set("$schema", value=SCHEMA)),
    ("~/.claude/settings.json", {}, _set("alwaysThinkingEnabled", value=True)),
    ("~/.claude/settings.json", {}, _set("effortLevel", value="high")),
    ("~/.claude/settings.json", {}, _set("language", value="japanese")),
    ("~/.claude/settings.json", {}, _set("editorMode", value="vim")),
    ("~/.claude/settings.json", {}, _set("autoUpdatesChannel", value="stable")),
    (".claude/settings.json", HOOKS, _set("attribution", "commit", value="")),
    ("~/.claude/settings.json", {}, _set("spinnerVerbs", value={"mode": "append", "verbs": ["x"]})),
    # Gemini CLI: excluded tools and servers, checkpointing, telemetry
    (".gemini/settings.json", SERVERS, _append("tools", "exclude", value="run_shell_command(rm)")),
    ("~/.gemini/settings.json", {}, _append("mcp", "excluded", value="github")),
    ("~/.gemini/settings.json", {}, _set("general", "checkpointing", "enabled", value=True)),
    ("~/.gemini/settings.json", {}, _set("privacy", "usageStatisticsEnabled", value=False)),
]

CODEX_MCP = '[mcp_servers.ledger]\ncommand = "/x/ledger"\nargs = ["mcp"]\n'
# Codex's config.toml as text (before, after): what Codex writes as it is used (the trusted
# project, a dismissed notice, the model picked), and the person's own settings.
TOML_CORPUS: list[tuple[str, str | None, str]] = [
    ("~/.codex/config.toml", CODEX_MCP, 'model = "gpt-5.5"\n' + CODEX_MCP),
    ("~/.codex/config.toml", CODEX_MCP, 'model_reasoning_effort = "high"\n' + CODEX_MCP),
    ("~/.codex/config.toml", CODEX_MCP, CODEX_MCP + '[projects."/w"]\ntrust_level = "trusted"\n'),
    ("~/.codex/config.toml", CODEX_MCP, CODEX_MCP + "[notice]\nhide_full_access_warning = true\n"),
    ("~/.codex/config.toml", None, "[tui]\nnotifications = true\n"),
    (".codex/config.toml", CODEX_MCP, CODEX_MCP + "enabled = false\n"),
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


def _path(ws: HomeWorkspace, where: str) -> Path:
    path = ws.home / where[2:] if where.startswith("~/") else ws.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _edited_between_calls(
    ws: HomeWorkspace, where: str, before: bytes | None, after: bytes
) -> tuple[str | None, str]:
    """Seal ``where`` as ``before`` (no file: ``None``) at one hook call, write ``after``, and
    make the next call: (its deny code, its reason)."""
    path = _path(ws, where)
    if before is not None:
        path.write_bytes(before)
    session = Session(ws, "agent")
    assert session.select().code is None  # armed, sealed with the file as it was
    path.write_bytes(after)
    target = str(ws.path(AUTH))
    fired = session.pre("Write", {"file_path": target, "content": "export const x = 2;\n"})
    return fired.code, fired.decision.reason or ""


def test_the_corpus_is_at_least_sixty_edits() -> None:
    assert len(CORPUS) + len(TOML_CORPUS) >= 60


@pytest.mark.parametrize(("where", "before", "edit"), CORPUS, ids=range(len(CORPUS)))
def test_an_ordinary_settings_edit_never_halts_the_workspace(
    ws: HomeWorkspace, where: str, before: dict[str, Any] | None, edit: Edit
) -> None:
    document = json.loads(json.dumps(before or {}))
    sealed = None if before is None else json.dumps(document, indent=2).encode()
    edit(document)
    code, reason = _edited_between_calls(ws, where, sealed, json.dumps(document, indent=2).encode())
    assert code is None, reason
    assert not [r for r in ws.records() if r.kind == "governance.tamper"]


@pytest.mark.parametrize(("where", "before", "after"), TOML_CORPUS, ids=range(len(TOML_CORPUS)))
def test_an_ordinary_codex_config_edit_never_halts_the_workspace(
    ws: HomeWorkspace, where: str, before: str | None, after: str
) -> None:
    sealed = None if before is None else before.encode()
    code, reason = _edited_between_calls(ws, where, sealed, after.encode())
    assert code is None, reason
    assert not [r for r in ws.records() if r.kind == "governance.tamper"]


def test_a_person_adding_a_deny_rule_is_sealed_so_removing_it_later_halts(
    ws: HomeWorkspace,
) -> None:
    path = _path(ws, ".claude/settings.json")
    path.write_text(json.dumps(HOOKS), encoding="utf-8")
    session = Session(ws, "agent")
    session.select()
    denied = {**HOOKS, "permissions": {"deny": ["Read(.env)"]}}
    path.write_text(json.dumps(denied), encoding="utf-8")
    target = str(ws.path(AUTH))
    assert session.pre("Write", {"file_path": target, "content": "x\n"}).code is None
    path.write_text(json.dumps(HOOKS), encoding="utf-8")  # the rule taken away again
    assert session.pre("Write", {"file_path": target, "content": "y\n"}).code == "TAMPER"


def test_a_code_loading_variable_in_a_settings_env_still_halts(ws: HomeWorkspace) -> None:
    path = ws.root / ".claude/settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(HOOKS), encoding="utf-8")
    session = Session(ws, "agent")
    session.select()
    path.write_text(json.dumps({**HOOKS, "env": {"NODE_OPTIONS": "--require /tmp/x.js"}}))
    target = str(ws.path(AUTH))
    assert session.pre("Write", {"file_path": target, "content": "x\n"}).code == "TAMPER"


EVIL = {"type": "command", "command": "/tmp/evil.sh"}
# (what it breaks, file, before, after): each runs code or loosens governance, and halts.
HALTS: list[tuple[str, str, Any, Any]] = [
    ("deny-rule-removed", ".claude/settings.local.json", DENIES, {**HOOKS, "permissions": {}}),
    (
        "ask-rule-removed",
        "~/.claude/settings.json",
        DENIES,
        {**HOOKS, "permissions": {"deny": ["Bash(curl:*)"]}},
    ),
    ("status-line-command-added", "~/.claude/settings.json", HOOKS, {**HOOKS, "statusLine": EVIL}),
    (
        "status-line-command-changed",
        ".claude/settings.json",
        STATUS,
        {**STATUS, "statusLine": {**STATUS["statusLine"], "command": "/tmp/evil.sh"}},
    ),
    ("api-key-helper", ".claude/settings.json", HOOKS, {**HOOKS, "apiKeyHelper": "/tmp/k.sh"}),
    ("aws-auth-refresh", "~/.claude/settings.json", {}, {"awsAuthRefresh": "/tmp/a.sh"}),
    ("otel-headers-helper", "~/.claude/settings.json", {}, {"otelHeadersHelper": "/tmp/o.sh"}),
    ("file-suggestion-command", ".claude/settings.json", HOOKS, {**HOOKS, "fileSuggestion": EVIL}),
    (
        "hooks-switched-off",
        ".claude/settings.local.json",
        HOOKS,
        {**HOOKS, "disableAllHooks": True},
    ),
    (
        "bypass-permissions-mode",
        ".claude/settings.json",
        HOOKS,
        {**HOOKS, "permissions": {"defaultMode": "bypassPermissions"}},
    ),
    (
        "sandbox-switched-off",
        ".claude/settings.local.json",
        {"sandbox": {"enabled": True}},
        {"sandbox": {"enabled": False}},
    ),
    (
        "deny-rule-claude-code-cannot-parse",
        ".claude/settings.json",
        HOOKS,
        {**HOOKS, "permissions": {"deny": ["Bash(curl *| bash)"]}},
    ),
    ("plugin-enabled", "~/.claude/settings.json", {}, {"enabledPlugins": {"x@market": True}}),
    (
        "gemini-hooks-disabled",
        ".gemini/settings.json",
        SERVERS,
        {**SERVERS, "hooksConfig": {"disabled": ["ledger"]}},
    ),
    (
        "gemini-auto-edit-mode",
        "~/.gemini/settings.json",
        {},
        {"general": {"defaultApprovalMode": "auto_edit"}},
    ),
    (
        "codex-notify-command",
        "~/.codex/config.toml",
        CODEX_MCP,
        'notify = ["/tmp/n"]\n' + CODEX_MCP,
    ),
    (
        "codex-full-access",
        ".codex/config.toml",
        CODEX_MCP,
        'sandbox_mode = "danger-full-access"\n' + CODEX_MCP,
    ),
]


def _content(document: Any) -> bytes:
    return document.encode() if isinstance(document, str) else json.dumps(document).encode()


@pytest.mark.parametrize(
    ("where", "before", "after"), [h[1:] for h in HALTS], ids=[h[0] for h in HALTS]
)
def test_a_settings_edit_that_runs_code_or_loosens_still_halts(
    ws: HomeWorkspace, where: str, before: Any, after: Any
) -> None:
    code, _ = _edited_between_calls(ws, where, _content(before), _content(after))
    assert code == "TAMPER"
