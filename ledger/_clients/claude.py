"""Claude Code's hook protocol (docs/architecture.md); Codex reuses it (``_codex``).

Input: one flat JSON object with ``hook_event_name``, ``session_id``, ``cwd``, ``tool_name``,
``tool_input`` ... Claude Code's names *are* the neutral vocabulary, so parsing is mostly field
picking; only the ``Task`` tool is renamed to its current name ``Agent``.

Output: exit 0 with one JSON object on stdout. ``PreToolUse`` answers through
``hookSpecificOutput.permissionDecision``; ``PermissionRequest`` through
``hookSpecificOutput.decision.behavior``; the events listed in :data:`BLOCK_DECISION_EVENTS`
block with top-level ``decision: "block"`` + ``reason``. Every string is capped at 10,000
characters, the documented limit.
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients.common import (
    ToolTable,
    agent_text,
    as_tool_input,
    build_event,
    clip,
    dumps,
    effective_permission,
    event_name,
    inverse_input,
    milliseconds,
    opt_str,
    rename_keys,
    strict_str,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = [
    "BLOCK_DECISION_EVENTS",
    "CONTEXT_EVENTS",
    "EVENT_PHASES",
    "PRE_EVENT",
    "SPEC",
    "TOOLS",
    "native_phase",
    "parse",
    "parse_as",
    "render",
]

#: Claude Code caps every hook output string at this many characters.
STRING_LIMIT: Final = 10_000

SPEC: Final[ClientSpec] = CLIENTS["claude"]

PRE_EVENT: Final = "PreToolUse"

EVENT_PHASES: Final[dict[str, Phase]] = {
    "PreToolUse": "pre",
    "PostToolUse": "post",
    "PostToolUseFailure": "post",
    "PostToolBatch": "post",
}

#: Events that take top-level ``{"decision": "block", "reason": ...}`` [CC section 1.7].
BLOCK_DECISION_EVENTS: Final = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "ConfigChange",
        "PreCompact",
    }
)

#: Events whose ``hookSpecificOutput`` accepts ``additionalContext`` [CC section 1.7].
CONTEXT_EVENTS: Final = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "UserPromptSubmit",
        "SessionStart",
        "Stop",
        "SubagentStop",
        "SubagentStart",
        "Setup",
    }
)

#: Claude Code tool names are neutral; ``Task`` is the old name of ``Agent`` (still accepted).
TOOLS: Final[ToolTable] = {"Task": ("Agent", {})}


def native_phase(name: str) -> Phase:
    """The phase of Claude Code event ``name``; any name is a Claude (neutral) event name."""
    return EVENT_PHASES.get(name, "other")


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Claude Code payload into a :class:`HookEvent`.

    Raises:
        InputError: no event name, or a decision field of the wrong type.
    """
    return parse_as("claude", obj, expected_event, TOOLS)


def parse_as(
    client: str, obj: dict[str, Any], expected_event: str | None, tools: ToolTable
) -> HookEvent:
    """Parse a Claude-protocol payload for ``client`` with that client's tool table.

    Raises:
        InputError: no event name, or a decision field of the wrong type.
    """
    name = event_name(obj, "hook_event_name", expected_event)
    raw_tool = strict_str(obj, "tool_name")
    tool_name = raw_tool
    arguments = as_tool_input(obj.get("tool_input"))
    if raw_tool is not None and raw_tool in tools:
        tool_name, keymap = tools[raw_tool]
        arguments = rename_keys(arguments, keymap)
    return build_event(
        client=client,
        event=name,
        client_event=name,
        phase=EVENT_PHASES.get(name, "other"),
        raw=obj,
        session_id=strict_str(obj, "session_id"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_use_id=opt_str(obj, "tool_use_id"),
        tool_response=obj.get("tool_response"),
        cwd=opt_str(obj, "cwd"),
        model=opt_str(obj, "model"),
        agent_id=opt_str(obj, "agent_id"),
        agent_type=opt_str(obj, "agent_type"),
        transcript_path=opt_str(obj, "transcript_path"),
        prompt=opt_str(obj, "prompt"),
        error=opt_str(obj, "error"),
        duration_ms=milliseconds(obj.get("duration_ms")),
        source=opt_str(obj, "source"),
        event_reason=opt_str(obj, "reason"),
    )


def render(
    event: HookEvent,
    decision: HookDecision,
    *,
    deny_via_exit_code: bool = False,
    tools: ToolTable = TOOLS,
) -> HookResponse:
    """Render ``decision`` as Claude Code (or Codex) expects it for ``event``."""
    name = event.client_event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if decision.system_message:
        out["systemMessage"] = clip(decision.system_message, STRING_LIMIT)

    if name == "PreToolUse":
        permission = effective_permission(decision)
        if permission == "deny":
            reason = clip(agent_text(decision), STRING_LIMIT)
            if deny_via_exit_code:
                return HookResponse(2, "", reason)
            specific["permissionDecision"] = "deny"
            specific["permissionDecisionReason"] = reason
        elif permission is not None:
            specific["permissionDecision"] = permission
            if decision.reason:
                specific["permissionDecisionReason"] = clip(decision.reason, STRING_LIMIT)
        if decision.updated_input is not None:
            specific["updatedInput"] = inverse_input(
                decision.updated_input, event, tools, event.raw.get("tool_input")
            )
    elif name == "PermissionRequest":
        permission = effective_permission(decision)
        if permission == "allow":
            verdict: dict[str, Any] = {"behavior": "allow"}
            if decision.updated_input is not None:
                verdict["updatedInput"] = inverse_input(
                    decision.updated_input, event, tools, event.raw.get("tool_input")
                )
            specific["decision"] = verdict
        elif permission == "deny":
            message = clip(agent_text(decision), STRING_LIMIT)
            if deny_via_exit_code:
                return HookResponse(2, "", message)
            specific["decision"] = {"behavior": "deny", "message": message}
        # "ask" (or no opinion): say nothing, so Claude Code shows its own permission dialog.
    elif name in BLOCK_DECISION_EVENTS and effective_permission(decision) == "deny":
        reason = clip(agent_text(decision), STRING_LIMIT)
        if deny_via_exit_code:
            return HookResponse(2, "", reason)
        out["decision"] = "block"
        out["reason"] = reason

    if decision.additional_context and name in CONTEXT_EVENTS:
        specific["additionalContext"] = clip(decision.additional_context, STRING_LIMIT)
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": name, **specific}
    return HookResponse(0, dumps(out))
