"""Cursor's hook protocol (docs/architecture.md, client protocols).

Input: a flat object with camelCase ``hook_event_name`` and the common fields
``conversation_id``, ``generation_id``, ``model``, ``workspace_roots`` ... plus per-event fields.
Several events imply their tool: ``beforeShellExecution`` is a ``Bash`` call with ``{command}``,
``beforeReadFile`` a ``Read``, ``afterFileEdit`` an ``Edit`` with ``{file_path, edits}``. MCP
arguments and results arrive as JSON *strings* and are decoded.

Output: exit 0 and one JSON object: ``{permission, user_message, agent_message}`` on the
permission events, ``{continue, user_message}`` on ``beforeSubmitPrompt``,
``{additional_context}`` on ``postToolUse``/``sessionStart``, ``{followup_message}`` on
``stop``/``subagentStop``. Where Cursor has no ``ask`` (``beforeReadFile``, ``preToolUse`` where it
is "accepted, not enforced", ``subagentStart``, ``beforeTabFileRead``) ``ask`` becomes ``deny``.

MCP tool names: Cursor does not name the server in ``beforeMCPExecution`` (it sends ``url`` or
``command``); ``MCP:<server>:<tool>`` becomes ``mcp__<server>__<tool>`` and a bare tool name
becomes ``mcp__unknown__<tool>`` (:data:`UNKNOWN_MCP_SERVER`), or ``mcp__ledger__<tool>`` when
the ``command`` is ``ledger mcp`` (the server ``ledger install cursor`` registers).
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients.common import (
    ToolTable,
    agent_text,
    as_tool_input,
    build_event,
    dumps,
    effective_permission,
    event_name,
    first_root,
    inverse_input,
    maybe_json,
    milliseconds,
    needs_human_text,
    opt_str,
    rename_keys,
    strict_str,
    table_phase,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = [
    "EVENTS",
    "PRE_EVENT",
    "SPEC",
    "TOOLS",
    "UNKNOWN_MCP_SERVER",
    "native_phase",
    "parse",
    "render",
]

SPEC: Final[ClientSpec] = CLIENTS["cursor"]

PRE_EVENT: Final = "preToolUse"
UNKNOWN_MCP_SERVER: Final = "unknown"

_BASH, _READ, _EDIT, _MCP = "Bash", "Read", "Edit", "mcp"

#: client event -> (neutral event, phase, implied neutral tool or ``_MCP`` or ``None``).
EVENTS: Final[dict[str, tuple[str, Phase, str | None]]] = {
    "beforeShellExecution": ("PreToolUse", "pre", _BASH),
    "beforeMCPExecution": ("PreToolUse", "pre", _MCP),
    "beforeReadFile": ("PreToolUse", "pre", _READ),
    "preToolUse": ("PreToolUse", "pre", None),
    "afterShellExecution": ("PostToolUse", "post", _BASH),
    "afterMCPExecution": ("PostToolUse", "post", _MCP),
    "afterFileEdit": ("PostToolUse", "post", _EDIT),
    "postToolUse": ("PostToolUse", "post", None),
    "postToolUseFailure": ("PostToolUseFailure", "post", None),
    "afterTabFileEdit": ("afterTabFileEdit", "post", _EDIT),
    "beforeTabFileRead": ("beforeTabFileRead", "other", _READ),
    "beforeSubmitPrompt": ("UserPromptSubmit", "other", None),
    "stop": ("Stop", "other", None),
    "sessionStart": ("SessionStart", "other", None),
    "sessionEnd": ("SessionEnd", "other", None),
    "subagentStart": ("SubagentStart", "other", None),
    "subagentStop": ("SubagentStop", "other", None),
    "preCompact": ("PreCompact", "other", None),
}

#: Cursor events without a Claude Code equivalent (they keep their own name).
_OTHER_EVENTS: Final = frozenset({"afterAgentResponse", "afterAgentThought", "workspaceOpen"})

_PATH_ALIAS: Final = {"path": "file_path"}  # UNCONFIRMED argument names for Read/Write/Delete

#: ``preToolUse``/``postToolUse`` tool names [CUR matcher values]; ``MCP:*`` handled apart.
TOOLS: Final[ToolTable] = {
    "Shell": ("Bash", {}),
    "Read": ("Read", _PATH_ALIAS),
    "Write": ("Write", _PATH_ALIAS),
    "Delete": ("Delete", _PATH_ALIAS),
    "Grep": ("Grep", {}),
    "Task": ("Agent", {}),
}

#: Permission events -> whether Cursor honours ``ask`` there.
_PERMISSION_EVENTS: Final = {
    "beforeShellExecution": True,
    "beforeMCPExecution": True,
    "preToolUse": False,  # "ask" is accepted by the schema but not enforced [CUR]
    "beforeReadFile": False,
    "beforeTabFileRead": False,
    "subagentStart": False,  # "ask" is treated as "deny" [CUR]
}
_AGENT_MESSAGE_EVENTS: Final = frozenset(
    {"beforeShellExecution", "beforeMCPExecution", "preToolUse"}
)
_CONTEXT_EVENTS: Final = frozenset({"postToolUse", "sessionStart"})
_FOLLOWUP_EVENTS: Final = frozenset({"stop", "subagentStop"})


def _runs_ledger_mcp(command: object) -> bool:
    """Whether an MCP server's start command (``beforeMCPExecution``'s ``command``) is ledger's
    own server: a ``ledger`` executable given ``mcp`` (what ``ledger install`` registers)."""
    if not isinstance(command, str):
        return False
    words = command.split()
    return (
        bool(words)
        and words[0].rsplit("/", 1)[-1].strip("'\"") == "ledger"
        and (len(words) > 1 and words[1] == "mcp")
    )


def mcp_tool_name(name: str) -> str:
    """Neutral ``mcp__<server>__<tool>`` for a Cursor MCP tool name."""
    if name.startswith("mcp__"):
        return name
    rest = name.removeprefix("MCP:")
    server, sep, tool = rest.partition(":")
    if sep and server and tool:
        return f"mcp__{server}__{tool}"
    return f"mcp__{UNKNOWN_MCP_SERVER}__{rest}"


def _tool(
    name: str, implied: str | None, obj: dict[str, Any]
) -> tuple[str | None, str | None, dict[str, Any]]:
    """(neutral tool, raw tool name, neutral arguments) for one Cursor event."""
    if implied == _BASH:
        command = strict_str(obj, "command")
        return _BASH, None, ({"command": command} if command is not None else {})
    if implied in (_READ, _EDIT):
        path = strict_str(obj, "file_path")
        arguments: dict[str, Any] = {} if path is None else {"file_path": path}
        if implied == _EDIT and "edits" in obj:
            arguments["edits"] = obj["edits"]
        return implied, None, arguments
    raw_tool = strict_str(obj, "tool_name")
    arguments = as_tool_input(obj.get("tool_input"))
    if raw_tool is None:
        return None, None, arguments
    if implied == _MCP or raw_tool.startswith(("MCP:", "mcp__")):
        neutral = mcp_tool_name(raw_tool)
        unknown = f"mcp__{UNKNOWN_MCP_SERVER}__"
        if neutral.startswith(unknown) and _runs_ledger_mcp(obj.get("command")):
            # beforeMCPExecution names the server only by how it is started: `ledger mcp`.
            neutral = "mcp__ledger__" + neutral.removeprefix(unknown)
        return neutral, raw_tool, arguments
    if name in ("preToolUse", "postToolUse", "postToolUseFailure") and raw_tool in TOOLS:
        neutral, keymap = TOOLS[raw_tool]
        return neutral, raw_tool, rename_keys(arguments, keymap)
    return raw_tool, raw_tool, arguments


def native_phase(name: str) -> Phase | None:
    """The phase of Cursor event ``name``; ``None`` when Cursor has no such event."""
    return table_phase(EVENTS, _OTHER_EVENTS, name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Cursor payload into a :class:`HookEvent`.

    Raises:
        InputError: no event name, or a decision field of the wrong type.
    """
    name = event_name(obj, "hook_event_name", expected_event)
    event, phase, implied = EVENTS.get(name, (name, "other", None))
    tool_name, raw_tool, arguments = _tool(name, implied, obj)
    if name == "afterShellExecution":
        response: object = obj.get("output")
    elif name == "afterMCPExecution":
        response = maybe_json(obj.get("result_json"))
    else:
        response = maybe_json(obj.get("tool_output"))
    duration = obj.get("duration")
    return build_event(
        client="cursor",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "conversation_id") or strict_str(obj, "session_id"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_use_id=opt_str(obj, "tool_use_id"),
        tool_response=response,
        cwd=opt_str(obj, "cwd") or first_root(obj.get("workspace_roots")),
        model=opt_str(obj, "model"),
        agent_id=opt_str(obj, "subagent_id"),
        agent_type=opt_str(obj, "subagent_type"),
        transcript_path=opt_str(obj, "transcript_path"),
        prompt=opt_str(obj, "prompt"),
        error=opt_str(obj, "error_message"),
        duration_ms=milliseconds(duration if duration is not None else obj.get("duration_ms")),
        source=opt_str(obj, "source"),
        event_reason=opt_str(obj, "reason"),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Cursor's output format for ``event``."""
    name = event.client_event
    out: dict[str, Any] = {}
    blocking = effective_permission(decision) == "deny"
    if name in _PERMISSION_EVENTS:
        permission = effective_permission(decision)
        reason = decision.reason
        if permission == "ask" and not _PERMISSION_EVENTS[name]:
            permission, reason = "deny", needs_human_text("Cursor", decision.reason)
        if permission == "deny" and deny_via_exit_code:
            return HookResponse(2, "", agent_text(decision._replace(reason=reason)))
        if permission is not None:
            out["permission"] = permission
        if permission in ("deny", "ask"):
            out["user_message"] = reason or "Blocked by ledger policy."
            if name in _AGENT_MESSAGE_EVENTS:
                out["agent_message"] = agent_text(decision._replace(reason=reason))
        if name == "preToolUse" and decision.updated_input is not None:
            out["updated_input"] = inverse_input(
                decision.updated_input, event, TOOLS, event.raw.get("tool_input")
            )
    elif name == "beforeSubmitPrompt":
        if blocking and deny_via_exit_code:
            return HookResponse(2, "", decision.reason or "Blocked by ledger policy.")
        out["continue"] = not blocking
        if blocking:
            out["user_message"] = decision.reason or "Blocked by ledger policy."
    elif name in _FOLLOWUP_EVENTS and blocking:
        # Claude's "block the stop" means "keep working, here is why": a follow-up message.
        out["followup_message"] = agent_text(decision)
    if decision.additional_context and name in _CONTEXT_EVENTS:
        out["additional_context"] = decision.additional_context
    return HookResponse(0, dumps(out))
