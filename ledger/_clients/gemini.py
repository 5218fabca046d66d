"""Gemini CLI's hook protocol (docs/architecture.md, client protocols).

Input: Claude-like base fields (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``timestamp``) with Gemini's own event and tool names. The mapping follows
``gemini hooks migrate --from-claude``: ``BeforeTool``/``AfterTool`` are ``PreToolUse``/
``PostToolUse``, ``BeforeAgent`` is ``UserPromptSubmit``, ``AfterAgent`` is ``Stop``,
``PreCompress`` is ``PreCompact``; tools ``write_file``/``replace``/``run_shell_command``/
``read_file`` are ``Write``/``Edit``/``Bash``/``Read``. ``AfterTool``'s ``tool_response`` is an
object ``{llmContent, returnDisplay, error?}`` (reference.md) or a plain string (index.md); both
are accepted, and an ``error`` makes the neutral event ``PostToolUseFailure``.

Output: exit 0 and ``{"decision": "allow"|"deny", "reason", "systemMessage"?,
"hookSpecificOutput": {"additionalContext"?, "tool_input"?}}``. Gemini has no ``ask``: it becomes
``deny`` with a reason saying a human must approve.
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
    inverse_input,
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
    "native_phase",
    "parse",
    "render",
]

SPEC: Final[ClientSpec] = CLIENTS["gemini"]

PRE_EVENT: Final = "BeforeTool"

#: client event -> (neutral event, phase).
EVENTS: Final[dict[str, tuple[str, Phase]]] = {
    "BeforeTool": ("PreToolUse", "pre"),
    "AfterTool": ("PostToolUse", "post"),
    "BeforeAgent": ("UserPromptSubmit", "other"),
    "AfterAgent": ("Stop", "other"),
    "PreCompress": ("PreCompact", "other"),
    "SessionStart": ("SessionStart", "other"),
    "SessionEnd": ("SessionEnd", "other"),
    "Notification": ("Notification", "other"),
}

#: Gemini tool -> (neutral tool, argument renames). ``read_file`` took ``absolute_path`` in older
#: releases and ``file_path`` in newer ones; both become ``file_path``.
TOOLS: Final[ToolTable] = {
    "write_file": ("Write", {}),
    "replace": ("Edit", {}),
    "run_shell_command": ("Bash", {}),
    "read_file": ("Read", {"absolute_path": "file_path"}),
}

#: Gemini events without a Claude Code equivalent (they keep their own name).
_OTHER_EVENTS: Final = frozenset({"BeforeModel", "AfterModel", "BeforeToolSelection"})

_DECISION_EVENTS: Final = frozenset(
    {"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel"}
)
_CONTEXT_EVENTS: Final = frozenset({"SessionStart", "BeforeAgent", "AfterTool"})


def _tool_error(response: object) -> str | None:
    if not isinstance(response, dict):
        return None
    error = response.get("error")
    if isinstance(error, str):
        return error or None
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) else "tool failed"
    return None


def _mcp_tool_name(context: object) -> str | None:
    """``mcp__<server>__<tool>`` from BeforeTool/AfterTool's ``mcp_context``.

    Gemini CLI 0.61 names an MCP tool ``mcp_<server>_<tool>`` (seen by
    tests/conformance/test_gemini_mcp.py), which cannot be split when either name holds ``_``;
    ``mcp_context`` names both (``server_name``, ``tool_name``), so the neutral name is built
    from it, as Claude Code spells MCP tools."""
    if not isinstance(context, dict):
        return None
    server, tool = context.get("server_name"), context.get("tool_name")
    if isinstance(server, str) and server and isinstance(tool, str) and tool:
        return f"mcp__{server}__{tool}"
    return None


def native_phase(name: str) -> Phase | None:
    """The phase of Gemini CLI event ``name``; ``None`` when Gemini has no such event."""
    return table_phase(EVENTS, _OTHER_EVENTS, name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Gemini CLI payload into a :class:`HookEvent`.

    Raises:
        InputError: no event name, or a decision field of the wrong type.
    """
    name = event_name(obj, "hook_event_name", expected_event)
    event, phase = EVENTS.get(name, (name, "other"))
    raw_tool = strict_str(obj, "tool_name")
    tool_name = raw_tool
    arguments = as_tool_input(obj.get("tool_input"))
    if raw_tool is not None and raw_tool in TOOLS:
        tool_name, keymap = TOOLS[raw_tool]
        arguments = rename_keys(arguments, keymap)
    elif raw_tool is not None:
        tool_name = _mcp_tool_name(obj.get("mcp_context")) or raw_tool
    response = obj.get("tool_response")
    error = _tool_error(response)
    if name == "AfterTool" and error is not None:
        event = "PostToolUseFailure"
    return build_event(
        client="gemini",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "session_id"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_response=response,
        cwd=opt_str(obj, "cwd"),
        transcript_path=opt_str(obj, "transcript_path"),
        prompt=opt_str(obj, "prompt"),
        error=error,
        source=opt_str(obj, "source"),
        event_reason=opt_str(obj, "reason"),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Gemini CLI's output format for ``event``."""
    name = event.client_event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if name in _DECISION_EVENTS:
        permission = effective_permission(decision)
        if permission == "ask":
            # Only a tool call can wait for a human; elsewhere "ask" carries no instruction.
            permission = "deny" if name == "BeforeTool" else None
            decision = decision._replace(reason=needs_human_text("Gemini CLI", decision.reason))
        if permission == "deny":
            reason = agent_text(decision)
            if deny_via_exit_code:
                return HookResponse(2, "", reason)
            out["decision"] = "deny"
            out["reason"] = reason
        elif permission == "allow":
            out["decision"] = "allow"
            if decision.reason:
                out["reason"] = decision.reason
        if name == "BeforeTool" and decision.updated_input is not None:
            specific["tool_input"] = inverse_input(
                decision.updated_input, event, TOOLS, event.raw.get("tool_input")
            )
    if decision.system_message and name != "BeforeToolSelection":
        out["systemMessage"] = decision.system_message
    if decision.additional_context and name in _CONTEXT_EVENTS:
        specific["additionalContext"] = decision.additional_context
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": name, **specific}
    return HookResponse(0, dumps(out))
