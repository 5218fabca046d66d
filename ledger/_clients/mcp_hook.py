"""Claude Code's ``mcp_tool`` hooks into ``ledger mcp``: a hook call with no process per call.

Claude Code 2.1.295 and later can answer a hook by calling a tool on an MCP server it already
runs (``{"type": "mcp_tool", "server", "tool", "input", "onFailure"}``); with ``onFailure:
"block"`` the action the event guards is blocked for as long as the call fails (the server is
not connected, the call errors or times out, the answer is not hook JSON). ``ledger mcp`` runs
on a private stdio pipe the agent's shell cannot reach, so a hook into it needs no process, no
socket and no port, and its failure blocks.

The hook input reaches the tool only through ``input``'s ``${path}`` interpolation. Measured on
Claude Code 2.1.332 (a probe server logging ``tools/call``): a string field arrives as itself,
an object as its compact JSON text, a missing field as ``""``; ``${}`` is not the whole input.
So the handler carries each field the Claude adapter reads, one ``${field}`` each
(:data:`CARRIED_FIELDS`), and :func:`payload_from_arguments` rebuilds the payload the command
hook would have read on stdin; the hook service then answers it exactly as ``ledger hook
claude`` does. The tool is called ``hook`` and the server keeps it out of ``tools/list``
(Claude Code calls a hook's tool all the same, measured); a model that names it anyway is
denied at PreToolUse (``mcp__ledger__hook``,
:func:`ledger._governance.analysis.ledger_mcp.is_hook_tool`).

Claude Code ignores ``onFailure`` on Setup, SessionStart, Stop, SubagentStop, TaskCompleted and
TeammateIdle: those keep the command hook (:data:`MCP_TOOL_EVENTS` lists the others ledger
installs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ledger._governance.analysis.ledger_mcp import LEDGER_HOOK_TOOL, LEDGER_MCP_SERVER

__all__ = [
    "CARRIED_FIELDS",
    "EVENT_ARGUMENT",
    "HOOK_TOOL",
    "MCP_TOOL_EVENTS",
    "hook_handler",
    "is_our_hook_handler",
    "payload_from_arguments",
]

#: The tool's name on ``ledger mcp`` (``mcp__ledger__hook`` to Claude Code).
HOOK_TOOL: Final = LEDGER_HOOK_TOOL
_SERVER: Final = LEDGER_MCP_SERVER

#: The events ledger installs whose action ``onFailure: "block"`` blocks (or whose record must
#: not be skipped): they go through the tool. SessionStart, SessionEnd, Stop and SubagentStop
#: keep the command hook (ignored by the transport, or run while the session closes), and so
#: does UserPromptSubmit, once a prompt, on purpose: it guards the transport itself. The server
#: the tool hooks call is whatever ``.mcp.json`` names ``ledger`` when the session starts, and
#: Claude Code asks no one again when that definition changes under an approved name: a
#: session started after the agent swapped it (the change a tripwire records, but on a call the
#: swapped server never forwards) would send every tool hook to the swap. The command hook
#: reaches ledger whatever the server is, and blocks the prompt while a tampering is pending
#: (decision 0021).
MCP_TOOL_EVENTS: Final = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied"}
)

#: The hook input fields the handler carries: every field the Claude adapter reads, and the
#: common ones a record or a later reader may want (``ledger/_clients/claude.py``).
CARRIED_FIELDS: Final = (
    "session_id",
    "transcript_path",
    "cwd",
    "permission_mode",
    "hook_event_name",
    "prompt_id",
    "agent_id",
    "agent_type",
    "model",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "tool_response",
    "duration_ms",
    "error",
    "is_interrupt",
    "prompt",
    "source",
    "reason",
    "mcp_server",
)
#: Fields that arrive as JSON text (objects, numbers, booleans) and are decoded back.
_JSON_FIELDS: Final = frozenset(
    {"tool_input", "tool_response", "duration_ms", "is_interrupt", "mcp_server"}
)
#: The literal argument naming the event the hook is registered for (``--event``).
EVENT_ARGUMENT: Final = "ledger_event"
#: Seconds Claude Code waits for the tool (the command hook's guard answers within this too).
_TIMEOUT: Final = 60


def hook_handler(event: str) -> dict[str, Any]:
    """The ``mcp_tool`` handler ``ledger install claude`` writes for ``event``."""
    carried: dict[str, Any] = {field: f"${{{field}}}" for field in CARRIED_FIELDS}
    return {
        "type": "mcp_tool",
        "server": _SERVER,
        "tool": HOOK_TOOL,
        "input": {**carried, EVENT_ARGUMENT: event},
        "onFailure": "block",
        "timeout": _TIMEOUT,
    }


def is_our_hook_handler(handler: Mapping[str, Any]) -> bool:
    """A handler :func:`hook_handler` wrote (any event, any version of its input)."""
    return (
        handler.get("type") == "mcp_tool"
        and handler.get("server") == _SERVER
        and handler.get("tool") == HOOK_TOOL
    )


def _decoded(field: str, value: object) -> object:
    if field not in _JSON_FIELDS or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # a plain-text tool_response, or garbage the adapter judges as usual


def payload_from_arguments(arguments: Mapping[str, Any]) -> tuple[bytes, str | None]:
    """(payload bytes, registered event) rebuilt from the tool's arguments.

    An empty string is a field the client did not send (interpolation cannot tell them apart;
    no field the adapter reads is meaningful empty). Arguments other than the carried fields
    are dropped; a value of the wrong type is kept, for the adapter to refuse as it refuses it
    on stdin.
    """
    event = arguments.get(EVENT_ARGUMENT)
    payload = {
        field: _decoded(field, arguments[field])
        for field in CARRIED_FIELDS
        if field in arguments and arguments[field] != ""
    }
    # A lone surrogate (JavaScript strings hold them; the client's JSON escapes them) stays an
    # escape, so the adapter reads what the command hook reads on stdin, and refuses it alike.
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    raw = text.encode("utf-8", "backslashreplace")
    return raw, event if isinstance(event, str) and event else None
