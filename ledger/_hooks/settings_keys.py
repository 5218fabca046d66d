"""What each key of a client's settings file does: the part the tripwire holds fixed.

A client's settings file mixes what runs code or governs the agent (hooks, a status line
command, credential helpers, MCP servers, the permission mode) with what the client and the
person write there as they use it (the model, the theme, "don't ask again" rules). The tripwire
(:mod:`ledger._hooks.tripwire`, rule ``client-config``) holds the first part fixed and lets the
second change; which key is which is the table of each client's file here
(:data:`SETTINGS_FILES`), one class per key path:

* ``runs-nothing``: left out of the held part, whatever its change;
* ``code-variables``: ``env``, held only for the variables that make a program load or run
  code (:data:`_CODE_VARIABLES`);
* ``tightens-rules``, ``tightens-paths``: a list each entry of which only restricts the agent
  (Claude Code's ``permissions.deny`` and ``ask``, Gemini CLI's ``tools.exclude``, a sandbox's
  ``denyRead`` ...). Held, and compared by :func:`tightened_only`: entries added are accepted
  (when each has the plain shape of its kind), one removed loosens and trips;
* ``runs-code``, ``loosens``: held, as is every key the table does not name (fail-safe). They
  are listed so the table says why, and so the tests can draw from them.

A class holds for everything below its key path unless a longer path says otherwise
(``statusLine`` runs a command, ``statusLine.padding`` is only spacing).

Sources, for every key named: Claude Code's settings reference (code.claude.com/docs/en/settings,
"Available settings", "Permission settings", "Sandbox settings"; the status line page for
``statusLine``'s fields; as of v2.1.215, mirrored at shanraisshan/claude-code-best-practice
best-practice/claude-settings.md); Gemini CLI's configuration reference
(google-gemini/gemini-cli docs/reference/configuration.md, "Available settings in
settings.json"); Codex's configuration reference (developers.openai.com/codex/config-reference).
The hook files of the other clients (Cursor, Windsurf, GitHub Copilot CLI, VS Code, Antigravity,
Codex's ``hooks.json``) hold nothing but hooks (/work/shared/hook-protocols.md). Only the
tripwire imports this module, and only when a settings file changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any, Final, Literal

from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile

__all__ = [
    "SETTINGS_FILES",
    "KeyClass",
    "KeyTable",
    "client_settings",
    "legacy_client_settings",
    "mcp_servers",
    "settings_table",
    "tightened_only",
]

KeyClass = Literal[
    "runs-nothing", "code-variables", "tightens-rules", "tightens-paths", "runs-code", "loosens"
]


class KeyTable(NamedTuple):
    """One settings file's keys by class, and every path above a classified key (where the
    held part is looked into rather than taken whole)."""

    classes: Mapping[tuple[str, ...], KeyClass]
    parents: frozenset[tuple[str, ...]]


def _table(groups: Iterable[tuple[KeyClass, str]]) -> KeyTable:
    """A table from ``(class, "space separated dotted key paths")`` groups."""
    classes: dict[tuple[str, ...], KeyClass] = {}
    for key_class, paths in groups:
        for dotted in paths.split():
            path = tuple(dotted.split("."))
            if path in classes:  # one key, one class: a second would silently win
                raise ValueError(f"{dotted} is classified twice")
            classes[path] = key_class
    parents = frozenset(path[:end] for path in classes for end in range(len(path)))
    return KeyTable(classes, parents)


#: Claude Code: ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json.
_CLAUDE_CODE: Final = _table(
    (
        # The client's and the person's own: the model and how it thinks, how the terminal looks,
        # housekeeping. "Don't ask again" adds permissions.allow rules and /add-dir adds
        # directories: what a call may then do is still the hooks' decision (a PreToolUse deny or
        # ask overrides an allow rule). The MCP approvals name servers whose commands the MCP
        # files hold fixed.
        (
            "runs-nothing",
            "$schema model effortLevel alwaysThinkingEnabled fastMode fallbackModel"
            " advisorModel language outputStyle theme tui viewMode editorMode"
            " vimInsertModeRemaps spinnerTipsEnabled spinnerVerbs spinnerTipsOverride"
            " prefersReducedMotion syntaxHighlightingDisabled axScreenReader showTurnDuration"
            " showThinkingSummaries terminalProgressBarEnabled preferredNotifChannel"
            " autoScrollEnabled wheelScrollAccelerationEnabled teammateMode footerLinksRegexes"
            " respectGitignore autoCompactEnabled awaySummaryEnabled voice voiceEnabled"
            " autoUpdatesChannel minimumVersion cleanupPeriodDays companyAnnouncements"
            " includeCoAuthoredBy attribution includeGitInstructions feedbackSurveyRate"
            " skippedMarketplaces skippedPlugins"
            " permissions.allow permissions.additionalDirectories"
            " enabledMcpjsonServers disabledMcpjsonServers enableAllProjectMcpServers"
            " statusLine.padding statusLine.refreshInterval",
        ),
        ("code-variables", "env"),
        # deny rules are checked first, then ask: a rule added only blocks or asks for more.
        ("tightens-rules", "permissions.deny permissions.ask"),
        (
            "tightens-paths",
            "sandbox.filesystem.denyRead sandbox.filesystem.denyWrite"
            " sandbox.network.deniedDomains",
        ),
        # Each runs a command line: hooks, the status line (run on every update), the @-file
        # suggestion script, credential and header helpers, plugins and marketplaces (which bring
        # hooks and MCP servers of their own).
        (
            "runs-code",
            "hooks statusLine fileSuggestion apiKeyHelper awsAuthRefresh awsCredentialExport"
            " gcpAuthRefresh otelHeadersHelper enabledPlugins extraKnownMarketplaces"
            " pluginConfigs",
        ),
        # disableAllHooks turns ledger's hooks (and the status line) off; the permission mode,
        # the sandbox and the HTTP hooks' allowances decide how much the agent may do unasked.
        (
            "loosens",
            "disableAllHooks allowedHttpHookUrls httpHookAllowedEnvVars permissions.defaultMode"
            " permissions.disableBypassPermissionsMode"
            " permissions.skipDangerousModePermissionPrompt permissions.autoMode disableAutoMode"
            " sandbox",
        ),
    )
)

#: Gemini CLI: ~/.gemini/settings.json, .gemini/settings.json (the v2 layout, in categories).
_GEMINI_CLI: Final = _table(
    (
        # general.preferredEditor is one of the editors Gemini CLI knows (/editor), not a command.
        (
            "runs-nothing",
            "$schema general ui output ide.hasSeenNudge privacy model security.auth",
        ),
        (
            "tightens-rules",
            "tools.exclude mcp.excluded skills.disabled excludeTools"
            " security.environmentVariableRedaction.blocked",
        ),
        (
            "runs-code",
            "hooks mcpServers mcp.serverCommand tools.discoveryCommand tools.callCommand"
            " tools.shell.pager tools.sandbox advanced.bugCommand policyPaths adminPolicyPaths",
        ),
        # hooksConfig.disabled lists hooks not to run; general.defaultApprovalMode auto_edit
        # approves edits unasked; tools.allowed skips the confirmation.
        (
            "loosens",
            "general.defaultApprovalMode hooksConfig tools.allowed tools.core mcp.allowed"
            " security admin",
        ),
    )
)

#: Codex: ~/.codex/config.toml, a project's .codex/config.toml, profile files (*.config.toml).
_CODEX: Final = _table(
    (
        # notice: the warnings and nudges the person dismissed, which Codex records itself;
        # projects: the folders the person trusted at Codex's prompt (what a trusted project's
        # .codex/ runs is in the files the tripwire watches).
        (
            "runs-nothing",
            "model review_model model_reasoning_effort model_reasoning_summary model_verbosity"
            " personality service_tier tui notice projects file_opener hide_agent_reasoning"
            " show_raw_agent_reasoning history check_for_update_on_startup",
        ),
        ("tightens-rules", "shell_environment_policy.exclude"),
        (
            "runs-code",
            "notify hooks mcp_servers model_providers shell_environment_policy profile profiles"
            " plugins marketplaces features otel experimental_instructions_file",
        ),
        (
            "loosens",
            "approval_policy sandbox_mode sandbox_workspace_write permissions default_permissions"
            " windows",
        ),
    )
)

#: A file of hooks alone (Cursor's and Windsurf's hooks.json, GitHub Copilot CLI's and VS Code's
#: hook files, Antigravity's, Codex's hooks.json, Cursor's sandbox.json): held whole, but the
#: JSON schema an editor adds.
_HOOK_FILE: Final = _table((("runs-nothing", "$schema"), ("runs-code", "hooks")))

#: A file no row names: held whole.
_HELD_WHOLE: Final = _table(())

#: Every settings file of ``client_files`` with the tripwire's ``client-config`` rule, as
#: ``(folder, file glob, its table)``, ``None`` for a folder of executables (Cline's hooks,
#: Codex's rules), held byte for byte. tests/hooks/test_settings_keys.py checks that every
#: such row of the client registry has one here.
SETTINGS_FILES: Final[tuple[tuple[str, str, KeyTable | None], ...]] = (
    (".claude", "settings.json", _CLAUDE_CODE),
    (".claude", "settings.local.json", _CLAUDE_CODE),
    (".gemini", "settings.json", _GEMINI_CLI),
    (".codex", "config.toml", _CODEX),
    (".codex", "*.toml", _CODEX),
    (".codex", "hooks.json", _HOOK_FILE),
    (".cursor", "hooks.json", _HOOK_FILE),
    (".cursor", "sandbox.json", _HOOK_FILE),
    (".windsurf", "hooks.json", _HOOK_FILE),
    (".codeium/windsurf", "hooks.json", _HOOK_FILE),
    (".gemini/config", "hooks.json", _HOOK_FILE),
    (".github/hooks", "ledger.json", _HOOK_FILE),
    (".github/hooks", "ledger-vscode.json", _HOOK_FILE),
    (".github/hooks", "*.json", _HOOK_FILE),
    (".copilot/hooks", "ledger.json", _HOOK_FILE),
    (".copilot/hooks", "ledger-vscode.json", _HOOK_FILE),
    (".copilot/hooks", "*.json", _HOOK_FILE),
    (".clinerules/hooks", "*", None),
    ("Documents/Cline/Hooks", "*", None),
    (".codex/rules", "*", None),
)

#: Variables in a settings file's ``env`` that make what the client starts load or run code.
_CODE_VARIABLES: Final = lazy_compile(
    r"(PYTHON|LD_|DYLD_|NODE_|BASH_ENV$|ENV$|GIT_|PERL|RUBY|JAVA_TOOL|_JAVA_OPTIONS|PATH$|SHELL$"
    r"|PROMPT_COMMAND|ZDOTDIR|EDITOR|VISUAL|PAGER|LESS|MANPAGER|HOME$|XDG_|LEDGER_)"
)
#: An MCP server's fields a client or a person toggles without changing what runs.
_SERVER_TOGGLES: Final = frozenset(
    {"disabled", "enabled", "autoApprove", "alwaysAllow", "disabledTools", "timeout", "trust"}
)
#: Keys that hold MCP servers, at any depth (``projects.<path>.mcpServers`` in ~/.claude.json).
_SERVER_KEYS: Final = frozenset({"mcpServers", "servers", "mcp_servers"})
#: The shape an entry added to a tightening list must have to be accepted. A permission rule:
#: a tool's name (``Bash``, ``mcp__server__tool``, ``*``), with a specifier in parentheses
#: (``Bash(npm run test:*)``, ``Read(./secrets/**)``, ``WebFetch(domain:example.com)``) free of
#: the characters of shell syntax and quoting: a rule Claude Code cannot parse has made it skip
#: the whole settings file, ledger's hooks with it (anthropics/claude-code#12468, #13554). A
#: path or domain: one line, no quotes, shell syntax or control characters.
_ENTRY_SHAPES: Final = {
    "tightens-rules": lazy_compile(
        r"[A-Za-z_*][A-Za-z0-9_*.:-]{0,127}(?:\([^()|;&<>`$\\\"'\x00-\x1f\x7f]{0,512}\))?"
    ),
    "tightens-paths": lazy_compile(r"[^()|;&<>`$\\\"'{}\x00-\x1f\x7f]{1,1024}"),
}
#: What the tripwire held of every client's file before the tables above (one flat list): these
#: keys left out of any client-config file, and ``env`` as today. Only to verify a copy that a
#: seal from then kept (:func:`legacy_client_settings`).
_LEGACY: Final = _table(
    (
        (
            "runs-nothing",
            "permissions.allow permissions.ask permissions.additionalDirectories model theme"
            " outputStyle spinnerTipsEnabled includeCoAuthoredBy cleanupPeriodDays"
            " enabledMcpjsonServers disabledMcpjsonServers enableAllProjectMcpServers"
            " security.auth ui ide.hasSeenNudge general projects model_reasoning_effort tui",
        ),
        ("code-variables", "env"),
    )
)


def settings_table(path: str) -> KeyTable | None:
    """The table of the settings file at ``path`` (absolute, under the workspace or the home
    folder); ``None`` for an executable in a client's hooks folder (held byte for byte)."""
    parent, _, name = path.rpartition("/")
    for folder, glob, table in SETTINGS_FILES:
        if glob == "*":  # a folder of executables, at any depth below it
            if f"/{folder}/" in f"{parent}/":
                return table
        elif (parent == folder or parent.endswith(f"/{folder}")) and fnmatchcase(name, glob):
            return table
    return _HELD_WHOLE


def _document(data: bytes) -> Any:  # noqa: ANN401 -- a parsed JSON or TOML document
    """The settings as a document; ``None`` when it parses as neither JSON nor TOML."""
    import tomllib  # noqa: PLC0415 -- only when a client's settings changed

    try:
        return json.loads(data)
    except ValueError:
        try:
            return tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None


def _canonical(document: Any) -> bytes:  # noqa: ANN401
    return json.dumps(document, sort_keys=True, separators=(",", ":"), default=str).encode()


def client_settings(data: bytes, path: str) -> bytes:
    """The part of the client's settings file at ``path`` the tripwire holds fixed (the input
    of its digest): the document without what its table says runs nothing, and without the MCP
    servers' toggles, canonically re-encoded. An executable, or a file that parses as neither
    JSON nor TOML, is held byte for byte."""
    table = settings_table(path)
    held = _held_document(data, table) if table is not None else None
    return data if held is None else _canonical(held)


def legacy_client_settings(data: bytes) -> bytes:
    """What :func:`client_settings` held of any client's file before the per-client tables, to
    verify a copy kept under a seal written then (its digest is of this)."""
    held = _held_document(data, _LEGACY)
    return data if held is None else _canonical(held)


def _held_document(data: bytes, table: KeyTable) -> Any:  # noqa: ANN401
    document = _document(data)
    if document is None:
        return None
    held = _held(document, table, (), None)
    _strip_toggles(held)
    return held


def _held(node: Any, table: KeyTable, where: tuple[str, ...], inherited: KeyClass | None) -> Any:  # noqa: ANN401
    """``node`` (at key path ``where``) without what runs nothing. A block looked into and left
    empty goes too: the client creates ``permissions`` for its first "don't ask again" rule."""
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
    for key, value in node.items():
        path = (*where, str(key))
        key_class = table.classes.get(path, inherited)
        if key_class == "code-variables" and isinstance(value, dict):
            variables = {k: v for k, v in value.items() if _CODE_VARIABLES.match(str(k).upper())}
            if variables:
                kept[key] = variables
        elif path in table.parents and isinstance(value, dict):
            inner = _held(value, table, path, key_class)
            if inner:
                kept[key] = inner
        elif key_class != "runs-nothing":
            kept[key] = value
    return kept


def tightened_only(path: str, before: bytes | None, after: bytes) -> bool:
    """Whether the held part of the settings file at ``path`` went from ``before`` (``None``:
    no file) to ``after`` only by entries added to lists that tighten, each of the plain shape
    of its kind (:data:`_ENTRY_SHAPES`), or not at all (pure). Anything else (an entry removed,
    any other key changed, a file that does not parse) is not."""
    table = settings_table(path)
    if table is None:
        return False
    old = {} if before is None else _held_document(before, table)
    new = _held_document(after, table)
    if old is None or new is None:
        return False
    return _added_only(old, new, (), table)


#: A key on one side only (a list or block the edit created or removed).
_ABSENT: Final = object()


def _added_only(old: Any, new: Any, where: tuple[str, ...], table: KeyTable) -> bool:  # noqa: ANN401
    key_class = table.classes.get(where)
    if key_class in ("tightens-rules", "tightens-paths"):
        before = [] if old is _ABSENT else old
        after = [] if new is _ABSENT else new
        if not isinstance(before, list) or not isinstance(after, list):
            return False
        shape = _ENTRY_SHAPES[key_class]
        return all(entry in after for entry in before) and all(
            isinstance(entry, str) and shape.fullmatch(entry) is not None
            for entry in after
            if entry not in before
        )
    if where in table.parents:
        before = {} if old is _ABSENT else old
        after = {} if new is _ABSENT else new
        if isinstance(before, dict) and isinstance(after, dict):
            return all(
                _added_only(before.get(key, _ABSENT), after.get(key, _ABSENT), (*where, key), table)
                for key in before.keys() | after.keys()
            )
    return bool(old == new)


def mcp_servers(data: bytes) -> bytes:
    """The part of an MCP configuration the tripwire holds fixed: each server's definition
    (what it runs: command, arguments, environment, URL), found under ``mcpServers``,
    ``servers`` or ``mcp_servers`` at any depth, without its toggles. The rest of such a file
    is the client's own state (~/.claude.json keeps history and counters beside the servers)."""
    document = _document(data)
    if document is None:
        return data
    _strip_toggles(document)
    found: dict[str, Any] = {}
    _collect_servers(document, "", found)
    return _canonical(found)


def _collect_servers(node: Any, where: str, found: dict[str, Any]) -> None:  # noqa: ANN401
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        path = f"{where}/{key}"
        if key in _SERVER_KEYS and isinstance(value, dict):
            if value:  # an empty list of servers ("mcpServers": {}) runs nothing
                found[path] = value
        else:
            _collect_servers(value, path, found)


def _strip_toggles(node: Any) -> None:  # noqa: ANN401
    """Drop the MCP servers' toggles wherever servers are listed."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _SERVER_KEYS and isinstance(value, dict):
            for server in value.values():
                if isinstance(server, dict):
                    for toggle in _SERVER_TOGGLES.intersection(server):
                        server.pop(toggle)
        else:
            _strip_toggles(value)
