"""The one list of supported clients, and the interface each client's adapter implements.

Everything that depends on *which* clients exist reads it from :data:`CLIENTS`: the hook
dispatcher (:func:`adapter`), the installer, the actor name in records, the CLI's choices and
help, and docs/clients.md's client table (a test checks it: :func:`markdown_table`). Adding a
client means one :class:`ClientSpec` here and one adapter module implementing
:class:`ClientAdapter`.

This module is pure data and imports no adapter: the hook path imports only the adapter of the
client in use (:func:`adapter`). Sources are the hook-protocol summaries of each client in
``docs/architecture.md`` (Claude Code §1, Cursor §2, Gemini CLI §3, Codex §4, Cline §5).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast

from ledger._errors import InputError
from ledger._startup.namedtuple import NamedTuple

if TYPE_CHECKING:
    from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = [
    "CLIENTS",
    "CLIENT_NAMES",
    "DECISIONS",
    "ClientAdapter",
    "ClientSpec",
    "Decided",
    "Delivery",
    "HookEntry",
    "Layout",
    "McpConfig",
    "actor_name",
    "adapter",
    "client_spec",
    "delivery",
    "enforcement",
    "markdown_table",
    "names_text",
]

Layout = Literal["nested", "flat", "scripts", "bundle"]
"""How a client's hook settings are laid out.

* ``nested``: ``{"hooks": {Event: [{"matcher"?, "hooks": [handler]}]}}`` (Claude Code, Codex,
  Gemini CLI);
* ``flat``: ``{"version": 1, "hooks": {event: [{"command", "failClosed"?}]}}`` (Cursor; GitHub
  Copilot CLI, whose entries run ``bash``; Windsurf, without ``version``);
* ``scripts``: one executable per hook, named after it, in a directory (Cline);
* ``bundle``: ``{"<bundle>": {"enabled": true, Event: [...]}}``, named bundles at the top level,
  tool events as ``{"matcher", "hooks": [handler]}`` groups and the others as plain handler lists
  (Antigravity CLI); ledger's bundle is :attr:`ClientSpec.hooks_key`.
"""


Decided = Literal["allow", "ask", "deny"]
"""What ledger decided for one hook call (the ``decision`` of a ``hook.*`` record)."""

#: ledger's decisions, in the order ``ledger doctor`` lists what each client does with them.
DECISIONS: Final[tuple[Decided, ...]] = ("allow", "ask", "deny")


class Delivery(NamedTuple):
    """What a client does with one of ledger's decisions (decision 0016: "what the client could
    deliver"): the decision it enforces, and one line for people saying how."""

    decision: Decided
    how: str


def _gate(allow: str, ask: Delivery, deny: str) -> Mapping[Decided, Delivery]:
    return {"allow": Delivery("allow", allow), "ask": ask, "deny": Delivery("deny", deny)}


_RUNS: Final = "the call runs; the client's own permission rules still apply"
_BLOCKED: Final = "the call is blocked; the model reads ledger's reason"


#: Claude Code's events that take a block [CC §1.7], ledger's blockable ones (Codex renders as it).
_CLAUDE_BLOCKS: Final = frozenset(
    {"UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "PermissionRequest"}
)


def _asks(title: str) -> Delivery:
    return Delivery("ask", f"{title} asks the person, who approves or refuses the call")


def _cannot_ask(why: str) -> Delivery:
    return Delivery("deny", f"delivered as deny: {why}; the reason says a person must approve")


class HookEntry(NamedTuple):
    """One event ``ledger install`` registers, with the client's tool matcher if it has one."""

    event: str
    matcher: str | None = None


class McpConfig(NamedTuple):
    """Where a client reads its MCP servers, for ``ledger install`` to register ``ledger mcp``.

    Attributes:
        project_file: the project's file, relative to the workspace root; ``None`` when the
            client reads MCP servers only per user (the user file then serves the project).
        user_file: the user-wide file, relative to ``$HOME``.
        format: ``json`` (an object of servers under :attr:`key`) or ``toml`` (a
            ``[<key>.ledger]`` table, Codex).
        key: the servers' key (``mcpServers``, Codex's ``mcp_servers``).
        enable: a key of the client's machine-local settings listing approved project servers
            (Claude Code asks a person before starting a server of ``.mcp.json`` otherwise).
        source: where the location and shape are documented.
    """

    project_file: str | None
    user_file: str
    format: Literal["json", "toml"]
    key: str
    enable: str | None
    source: str


class ClientSpec(NamedTuple):
    """What ledger knows about one client apart from its wire protocol.

    Attributes:
        name: the CLI name (``ledger hook <name>``, ``ledger install <name>``).
        actor: ``actor.client`` in records.
        title: the product's name, for people.
        module: the adapter module implementing :class:`ClientAdapter`.
        layout: the settings layout (:data:`Layout`).
        shared_file: the project settings file (or hooks directory) teammates share, relative
            to the workspace root.
        local_file: the project settings file the client keeps for this machine only (not
            committed), or ``None`` when the client has none.
        user_file: the user-wide settings file (or hooks directory), relative to ``$HOME``.
        sandbox_file: the project file ``ledger install --hardened`` writes the client's sandbox
            settings to, or ``None`` when the client has no sandbox ledger can configure.
        hooks: the events installed, in order.
        handler_fields: extra fields of each installed handler (``nested`` layout).
        nonblocking_exit: the exit status that reports a failed hook *without* blocking. Cline
            blocks on any non-zero exit, so its observational hooks must exit 0.
        blocks_when_unsure: a crashed hook with no clue of its event denies (Cline does so
            itself); the others answer "not blocking" then.
        sandbox: what ``ledger install --hardened`` configures (one line, for people).
        trust: what a person must do before the client runs project hooks, or ``None``.
        mcp: where ``ledger install`` registers the ``ledger mcp`` server (decision 0015).
        command_key: the handler field holding the command (``flat`` layout): ``command``, or
            Copilot's ``bash``.
        pre_handler_fields: extra fields of the handlers of tool-gating events (``flat``
            layout): Cursor fails open on a crashed hook unless ``failClosed`` is set.
        gate: what the client does with each decision on its tool-gating events (the
            enforcement matrix ``ledger doctor`` shows, recorded as ``delivered``).
        gate_by_event: client events where the client does otherwise than :attr:`gate`.
        blocks: the client's non-tool events (a prompt, a stop) where a deny is delivered as a
            block; elsewhere the client ignores it and the call is only recorded.
        hooks_key: the key holding ledger's hooks: ``hooks``, or the ``bundle`` layout's
            bundle name.
        user_only: the client reads hooks only per user (one file for every project), so
            ``ledger install`` needs ``--user``.
        file_fields: top-level fields the hooks file carries (``flat`` layout), e.g.
            ``version``.
        guards: the non-tool events whose hook guards a resident transport (decision 0021):
            ledger failing on one, or its command failing to run, blocks it as on a
            tool-gating event, where elsewhere a failed hook only says so.
        reads: the other files and folders the client reads hooks, settings or MCP servers
            from (beside the files above), relative to the workspace and the home folder
            alike: ``a/b.json`` a file, ``a/b/`` a folder (everything in it), ``a/b/*.json`` a
            folder of which the files matching the glob are watched (the client writes its
            own state beside them). Everything a client reads what runs from is protected and
            watched from these fields (ledger/_clients/runs_outside.py, ``client_files``).
    """

    name: str
    actor: str
    title: str
    module: str
    layout: Layout
    shared_file: str
    local_file: str | None
    user_file: str
    sandbox_file: str | None
    hooks: tuple[HookEntry, ...]
    handler_fields: Mapping[str, str]
    nonblocking_exit: int
    blocks_when_unsure: bool
    sandbox: str
    trust: str | None
    mcp: McpConfig
    gate: Mapping[Decided, Delivery]
    blocks: frozenset[str]
    command_key: str = "command"
    pre_handler_fields: Mapping[str, object] = {}
    gate_by_event: Mapping[str, Mapping[Decided, Delivery]] = {}
    hooks_key: str = "hooks"
    user_only: bool = False
    file_fields: Mapping[str, object] = {}
    guards: frozenset[str] = frozenset()
    reads: tuple[str, ...] = ()


class ClientAdapter(Protocol):
    """What every adapter module (``ledger._clients.<name>``) provides.

    ``PRE_EVENT`` and ``native_phase`` also define the fail-closed answer: a crashed hook on an
    event whose phase is ``pre`` (a tool-gating event) is denied in the client's own format, and
    ``PRE_EVENT`` is the event answered when a crash hides which one it was.
    """

    SPEC: ClientSpec
    PRE_EVENT: str

    def parse(self, obj: dict[str, Any], expected_event: str | None) -> HookEvent:
        """The neutral event for one decoded payload (raises ``InputError``)."""
        ...

    def render(
        self, event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = ...
    ) -> HookResponse:
        """``decision`` in the client's output format for ``event``."""
        ...

    def native_phase(self, name: str) -> Phase | None:
        """The phase of the client's event ``name``; ``None`` when it has no such event."""
        ...


_TOOL_MATCH_ALL: Final = "*"

CLIENTS: Final[Mapping[str, ClientSpec]] = {
    spec.name: spec
    for spec in (
        ClientSpec(
            name="claude",
            actor="claude-code",
            title="Claude Code",
            module="ledger._clients.claude",
            layout="nested",
            shared_file=".claude/settings.json",
            local_file=".claude/settings.local.json",
            user_file=".claude/settings.json",
            sandbox_file=".claude/settings.local.json",
            hooks=(
                HookEntry("PreToolUse", _TOOL_MATCH_ALL),
                HookEntry("PostToolUse", _TOOL_MATCH_ALL),
                HookEntry("PostToolUseFailure", _TOOL_MATCH_ALL),
                HookEntry("PermissionDenied", _TOOL_MATCH_ALL),
                HookEntry("SessionStart"),
                HookEntry("SessionEnd"),
                HookEntry("UserPromptSubmit"),
                HookEntry("Stop"),
                HookEntry("SubagentStop"),
            ),
            handler_fields={},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="sandboxed Bash (bubblewrap/Seatbelt) + permission deny rules",
            trust=None,
            gate=_gate(_RUNS, _asks("Claude Code"), _BLOCKED),
            blocks=_CLAUDE_BLOCKS,
            # The prompt's command hook reaches ledger whatever `ledger` server the session
            # started: it must not let a prompt through when it cannot decide (decision 0021).
            guards=frozenset({"UserPromptSubmit"}),
            mcp=McpConfig(
                project_file=".mcp.json",
                user_file=".claude.json",
                format="json",
                key="mcpServers",
                enable="enabledMcpjsonServers",
                source="code.claude.com/docs/en/mcp (scopes); settings: enabledMcpjsonServers",
            ),
        ),
        ClientSpec(
            name="cursor",
            reads=(".cursor/sandbox.json",),
            actor="cursor",
            title="Cursor",
            module="ledger._clients.cursor",
            layout="flat",
            shared_file=".cursor/hooks.json",
            local_file=None,
            user_file=".cursor/hooks.json",
            sandbox_file=None,
            hooks=tuple(
                HookEntry(event)
                for event in (
                    "preToolUse",
                    "postToolUse",
                    "postToolUseFailure",
                    "beforeShellExecution",
                    "afterShellExecution",
                    "beforeMCPExecution",
                    "afterMCPExecution",
                    "afterFileEdit",
                    "beforeSubmitPrompt",
                    "sessionStart",
                    "sessionEnd",
                    "stop",
                )
            ),
            handler_fields={},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="none: sandbox.json cannot deny a path inside the workspace",
            trust="project hooks run in trusted workspaces only",
            gate=_gate(
                _RUNS,
                # Cursor's hooks docs: preToolUse accepts "ask" but does not enforce it.
                _cannot_ask("Cursor does not enforce ask at preToolUse"),
                _BLOCKED,
            ),
            gate_by_event={
                event: _gate(_RUNS, _asks("Cursor"), _BLOCKED)
                for event in ("beforeShellExecution", "beforeMCPExecution")
            },
            blocks=frozenset({"beforeSubmitPrompt", "stop", "subagentStop"}),
            pre_handler_fields={"failClosed": True},
            file_fields={"version": 1},
            mcp=McpConfig(
                project_file=".cursor/mcp.json",
                user_file=".cursor/mcp.json",
                format="json",
                key="mcpServers",
                enable=None,
                source="cursor.com/docs/context/mcp (project .cursor/mcp.json, global)",
            ),
        ),
        ClientSpec(
            name="gemini",
            actor="gemini-cli",
            title="Gemini CLI",
            module="ledger._clients.gemini",
            layout="nested",
            shared_file=".gemini/settings.json",
            local_file=None,
            user_file=".gemini/settings.json",
            sandbox_file=".gemini/settings.json",
            hooks=(
                HookEntry("BeforeTool", ".*"),
                HookEntry("AfterTool", ".*"),
                HookEntry("SessionStart"),
                HookEntry("SessionEnd"),
                HookEntry("BeforeAgent"),
            ),
            handler_fields={"name": "ledger"},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="container sandbox (`tools.sandbox`); the workspace stays writable",
            trust="the folder must be trusted (trusted folders)",
            gate=_gate(_RUNS, _cannot_ask("Gemini CLI's hooks cannot ask"), _BLOCKED),
            blocks=frozenset({"BeforeAgent", "AfterAgent"}),
            mcp=McpConfig(
                project_file=".gemini/settings.json",
                user_file=".gemini/settings.json",
                format="json",
                key="mcpServers",
                enable=None,
                source="google-gemini/gemini-cli docs/tools/mcp-server.md (mcpServers)",
            ),
        ),
        ClientSpec(
            name="codex",
            reads=(".codex/*.toml", ".codex/rules/"),
            actor="codex",
            title="Codex CLI",
            module="ledger._clients.codex",
            layout="nested",
            shared_file=".codex/hooks.json",
            local_file=None,
            user_file=".codex/hooks.json",
            sandbox_file=".codex/config.toml",
            hooks=(
                HookEntry("PreToolUse", _TOOL_MATCH_ALL),
                HookEntry("PostToolUse", _TOOL_MATCH_ALL),
                HookEntry("SessionStart"),
                HookEntry("UserPromptSubmit"),
                HookEntry("Stop"),
            ),
            handler_fields={},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="permission profile in `.codex/config.toml` (read-only protected paths)",
            trust="trusted project, and each hook's definition trusted by a person (`/hooks`)",
            gate=_gate(
                _RUNS,
                # Measured with Codex 0.169.0 (tests/conformance): an ask answer runs the call.
                _cannot_ask("Codex does not enforce ask (the call would run)"),
                _BLOCKED,
            ),
            blocks=_CLAUDE_BLOCKS,
            mcp=McpConfig(
                project_file=".codex/config.toml",
                user_file=".codex/config.toml",
                format="toml",
                key="mcp_servers",
                enable=None,
                source="openai/codex docs/config.md ([mcp_servers.<name>] command, args)",
            ),
        ),
        ClientSpec(
            name="cline",
            reads=(
                # Cline as a VS Code extension keeps its MCP servers in the editor's storage.
                ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
                "cline_mcp_settings.json",
            ),
            actor="cline",
            title="Cline",
            module="ledger._clients.cline",
            layout="scripts",
            shared_file=".clinerules/hooks",
            local_file=None,
            user_file="Documents/Cline/Hooks",
            sandbox_file=None,
            hooks=tuple(
                HookEntry(event)
                for event in (
                    "PreToolUse",
                    "PostToolUse",
                    "TaskStart",
                    "TaskResume",
                    "TaskCancel",
                    "TaskComplete",
                    "UserPromptSubmit",
                    "PreCompact",
                )
            ),
            handler_fields={},
            nonblocking_exit=0,
            blocks_when_unsure=True,
            sandbox="none (Cline has no OS sandbox)",
            trust=None,
            gate=_gate(_RUNS, _cannot_ask("Cline's hooks cannot ask"), _BLOCKED),
            blocks=frozenset({"UserPromptSubmit", "PreCompact"}),
            mcp=McpConfig(
                project_file=None,
                user_file=".cline/data/settings/cline_mcp_settings.json",
                format="json",
                key="mcpServers",
                enable=None,
                source="docs.cline.bot/mcp/configuring-mcp-servers (cline_mcp_settings.json)",
            ),
        ),
        ClientSpec(
            # GitHub's hooks reference (github/docs content/copilot/reference/
            # hooks-reference.md): `.github/hooks/*.json` version 1, camelCase events, command
            # entries run `bash`; a crashed or non-zero preToolUse hook denies the call.
            name="copilot",
            reads=(".github/hooks/*.json", ".copilot/hooks/*.json"),
            actor="copilot-cli",
            title="GitHub Copilot CLI",
            module="ledger._clients.copilot",
            layout="flat",
            shared_file=".github/hooks/ledger.json",
            local_file=None,
            user_file=".copilot/hooks/ledger.json",
            sandbox_file=None,
            hooks=tuple(
                HookEntry(event)
                for event in (
                    "preToolUse",
                    "postToolUse",
                    "postToolUseFailure",
                    "sessionStart",
                    "sessionEnd",
                    "userPromptSubmitted",
                    "agentStop",
                )
            ),
            handler_fields={"type": "command"},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="none (not configured by ledger)",
            trust="the folder must be trusted (Copilot asks on first start there)",
            gate=_gate(
                _RUNS,
                # findings-2026-11-24 §1.2: prompts since 1.0.24; the cloud agent denies instead.
                _asks("Copilot CLI"),
                _BLOCKED,
            ),
            blocks=frozenset({"agentStop", "subagentStop"}),
            mcp=McpConfig(
                project_file=".github/mcp.json",
                user_file=".copilot/mcp-config.json",
                format="json",
                key="mcpServers",
                enable=None,
                # github/docs content/copilot/reference/copilot-cli-reference/
                # cli-config-dir-reference.md, "mcp-config.json"
                source="github/docs cli-config-dir-reference.md (.github/mcp.json)",
            ),
            command_key="bash",
            file_fields={"version": 1},
        ),
        ClientSpec(
            # Antigravity CLI (`agy`), Gemini CLI's successor (findings-2026-11-24 §1.2; the
            # sources are named in ledger/_clients/antigravity.py): one global hooks file of
            # named bundles, five events, and `{}` read as deny.
            name="antigravity",
            actor="antigravity-cli",
            title="Antigravity CLI",
            module="ledger._clients.antigravity",
            layout="bundle",
            shared_file=".gemini/config/hooks.json",
            local_file=None,
            user_file=".gemini/config/hooks.json",
            sandbox_file=None,
            hooks=(
                HookEntry("PreToolUse", _TOOL_MATCH_ALL),
                HookEntry("PostToolUse", _TOOL_MATCH_ALL),
                HookEntry("PreInvocation"),
                HookEntry("PostInvocation"),
                HookEntry("Stop"),
            ),
            handler_fields={"type": "command"},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="none (not configured by ledger)",
            trust="nothing (hooks run for every `agy` of this user)",
            gate=_gate(
                # `{}` is a deny (ai-memory#54), so ledger answers every allow explicitly.
                "the call runs: ledger answers allow explicitly, as Antigravity reads {} as deny",
                _asks("Antigravity CLI"),
                _BLOCKED,
            ),
            blocks=frozenset(),  # Stop's block is documented both ways (Irrlicht#1723)
            mcp=McpConfig(
                project_file=None,
                user_file=".gemini/config/mcp_config.json",
                format="json",
                key="mcpServers",
                enable=None,
                source="rohitg00/agentmemory#1146 (agy reads ~/.gemini/config/mcp_config.json)",
            ),
            hooks_key="ledger",
            user_only=True,
        ),
        ClientSpec(
            # VS Code's agent hooks, Local harness (microsoft/vscode-docs docs/agent-customization/
            # hooks.md): Claude-shaped, read from .github/hooks/*.json, which GitHub Copilot CLI
            # reads too; ask prompts the person.
            name="vscode",
            reads=(
                ".github/hooks/*.json",
                ".copilot/hooks/*.json",
                ".claude/settings.json",  # VS Code runs Claude Code's hooks too
                ".claude/settings.local.json",
                "Library/Application Support/Code/User/mcp.json",  # macOS's user profile
            ),
            actor="vscode",
            title="VS Code agent hooks",
            module="ledger._clients.vscode",
            layout="flat",
            shared_file=".github/hooks/ledger-vscode.json",
            local_file=None,
            user_file=".copilot/hooks/ledger-vscode.json",
            sandbox_file=None,
            hooks=tuple(
                HookEntry(event)
                for event in (
                    "PreToolUse",
                    "PostToolUse",
                    "SessionStart",
                    "UserPromptSubmit",
                    "SubagentStop",
                    "Stop",
                )
            ),
            handler_fields={"type": "command"},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="none (not configured by ledger)",
            trust="hooks must be allowed (organisations can disable them)",
            gate=_gate(_RUNS, _asks("VS Code"), _BLOCKED),
            blocks=frozenset({"Stop", "SubagentStop"}),
            mcp=McpConfig(
                project_file=".vscode/mcp.json",
                user_file=".config/Code/User/mcp.json",
                format="json",
                key="servers",
                enable=None,
                source="code.visualstudio.com/docs/copilot/customization/mcp-servers",
            ),
        ),
        ClientSpec(
            # Windsurf's Cascade hooks (docs.windsurf.com/windsurf/cascade/hooks): system, user
            # and workspace hooks.json merged; snake_case actions; exit 2 blocks a pre-hook and
            # nothing else answers: a hook cannot prompt.
            name="windsurf",
            actor="windsurf",
            title="Windsurf (Cascade)",
            module="ledger._clients.windsurf",
            layout="flat",
            shared_file=".windsurf/hooks.json",
            local_file=None,
            user_file=".codeium/windsurf/hooks.json",
            sandbox_file=None,
            hooks=tuple(
                HookEntry(event)
                for event in (
                    "pre_read_code",
                    "post_read_code",
                    "pre_write_code",
                    "post_write_code",
                    "pre_run_command",
                    "post_run_command",
                    "pre_mcp_tool_use",
                    "post_mcp_tool_use",
                    "pre_user_prompt",
                    "post_cascade_response",
                )
            ),
            handler_fields={},
            nonblocking_exit=1,
            blocks_when_unsure=False,
            sandbox="none (not configured by ledger)",
            trust=None,
            gate=_gate(
                _RUNS,
                Delivery(
                    "deny",
                    "delivered as a block (exit 2): Windsurf's hooks cannot prompt; the reason "
                    "says a person must approve",
                ),
                "the call is blocked (exit 2); Cascade shows ledger's reason",
            ),
            # pre_user_prompt blocks on exit 2 too, but the installed guard turns any failure of
            # a non-tool event into the non-blocking exit, so a prompt is never blocked.
            blocks=frozenset(),
            # show_output: the block's reason is shown in Cascade (docs, "Configuration").
            pre_handler_fields={"show_output": True},
            mcp=McpConfig(
                project_file=None,
                user_file=".codeium/windsurf/mcp_config.json",
                format="json",
                key="mcpServers",
                enable=None,
                source="docs.windsurf.com/windsurf/cascade/mcp (mcp_config.json)",
            ),
        ),
    )
}

#: The client names, in the registry's order.
CLIENT_NAMES: Final = tuple(CLIENTS)


def names_text(conjunction: str = "or") -> str:
    """``claude, cursor, gemini, codex or cline``: the names for help and error messages."""
    *head, last = CLIENT_NAMES
    return f"{', '.join(head)} {conjunction} {last}"


def client_spec(name: str) -> ClientSpec:
    """The spec of client ``name``.

    Raises:
        InputError: no such client (the message lists the valid names).
    """
    spec = CLIENTS.get(name)
    if spec is None:
        raise InputError(f"unknown hook client {name!r}; expected {names_text()}")
    return spec


def adapter(name: str) -> ClientAdapter:
    """The adapter of client ``name``, imported on first use (a hook serves one client).

    Raises:
        InputError: no such client.
    """
    return cast("ClientAdapter", importlib.import_module(client_spec(name).module))


def actor_name(name: str | None) -> str | None:
    """``actor.client`` for client ``name``; an unregistered name is kept as given."""
    spec = CLIENTS.get(name or "")
    return spec.actor if spec is not None else name


def enforcement(spec: ClientSpec, client_event: str | None = None) -> Mapping[Decided, Delivery]:
    """What ``spec``'s client does with each decision on a tool-gating event (``client_event``,
    default the client's usual one): the matrix ``ledger doctor`` shows."""
    if client_event is not None and client_event in spec.gate_by_event:
        return spec.gate_by_event[client_event]
    return spec.gate


def delivery(
    client: str | None, client_event: str | None, phase: str, decided: str
) -> dict[str, str] | None:
    """The ``delivered`` field of a ``hook.*`` record: what the client could do with what
    ledger ``decided`` (decision 0016), with ``why`` when that is not the decision itself.

    On a tool-gating event (``phase`` ``pre``) the client's :func:`enforcement` says; after a
    tool call nothing is left to block; elsewhere a deny blocks only at the client's
    :attr:`ClientSpec.blocks` events. ``None`` for a client not in the registry.
    """
    spec = CLIENTS.get(client or "")
    if spec is None or decided not in DECISIONS:
        return None
    if phase == "pre":
        given = enforcement(spec, client_event)[decided]
        if given.decision == decided:
            return {"decision": given.decision}
        return {"decision": given.decision, "why": given.how}
    if decided == "deny" and client_event not in spec.blocks:
        return {
            "decision": "allow",
            "why": f"{spec.title} does not act on a block at {client_event}; recorded only",
        }
    return {"decision": decided}


def markdown_table() -> str:
    """docs/clients.md's client table, generated from :data:`CLIENTS` (a test keeps them equal)."""
    rows = [
        "| client | `ledger hook`/`install` name | `actor.client` | shared hooks file "
        "| machine-local file | `--hardened` configures | before hooks run "
        "| `ledger mcp` registered in |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for spec in CLIENTS.values():
        local = f"`{spec.local_file}`" if spec.local_file else "none (the shared file)"
        shared = f"`{spec.shared_file}`"
        if spec.user_only:
            local = "none (per user only)"
            shared = f"`~/{spec.user_file}` (`--user` only: every project)"
        mcp = (
            f"`{spec.mcp.project_file}`; `--user`: `~/{spec.mcp.user_file}`"
            if spec.mcp.project_file
            else f"`~/{spec.mcp.user_file}` (`--user` only: per user)"
        )
        if spec.mcp.key != "mcpServers":
            mcp += f" (`[{spec.mcp.key}.ledger]`)"
        rows.append(
            f"| {spec.title} | `{spec.name}` | `{spec.actor}` | {shared} | {local} "
            f"| {spec.sandbox} | {spec.trust or 'nothing'} | {mcp} |"
        )
    return "\n".join(rows)
