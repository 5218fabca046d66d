"""VS Code's agent hooks (the Local harness): Claude Code's protocol with VS Code's own names.

Source: [VSC] microsoft/vscode-docs ``docs/agent-customization/hooks.md`` and
``docs/agents/reference/hooks-reference.md`` (findings-2026-11-24 §1.2): ``.github/hooks/*.json``
(``~/.copilot/hooks`` per user), ``{"hooks": {PascalCaseEvent: [{"type": "command", "command",
"timeout"?}]}}``; events SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact,
SubagentStart, SubagentStop, Stop; common input ``{timestamp, cwd, sessionId, hookEventName,
transcript_path}`` (camelCase session and event, snake_case the rest), ``tool_name``,
``tool_input``, ``tool_use_id``, ``tool_response``, ``prompt``, ``source``, ``agent_id``,
``agent_type``. Output as Claude Code's: ``hookSpecificOutput.permissionDecision``
allow/deny/ask (ask prompts the person), ``additionalContext`` at SessionStart, PreToolUse,
PostToolUse and SubagentStart; a block of a stop goes *inside* ``hookSpecificOutput`` for Stop
and at the top level for SubagentStop; UserPromptSubmit reads the common output only.

Tool names are VS Code's (``editFiles`` with ``files``, the documented example; the terminal
tool is read as a shell call, :data:`TOOLS`); a call's paths are checked whatever its tool
(:mod:`ledger._governance.analysis.tool_input`).
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients import claude as _claude
from ledger._clients.common import (
    ToolTable,
    agent_text,
    dumps,
    effective_permission,
    strict_str,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = ["EVENTS", "PRE_EVENT", "SPEC", "TOOLS", "native_phase", "parse", "render"]

SPEC: Final[ClientSpec] = CLIENTS["vscode"]

PRE_EVENT: Final = "PreToolUse"

#: VS Code's events and their phases [VSC "Hook lifecycle events"].
EVENTS: Final[dict[str, Phase]] = {
    "PreToolUse": "pre",
    "PostToolUse": "post",
    "SessionStart": "other",
    "UserPromptSubmit": "other",
    "PreCompact": "other",
    "SubagentStart": "other",
    "SubagentStop": "other",
    "Stop": "other",
}

#: VS Code's terminal tool, a shell call with ``{command}``: UNCONFIRMED names (the docs show
#: only ``editFiles``; ``runInTerminal`` is what VS Code's tool picker lists, ``run_in_terminal``
#: its older spelling).
TOOLS: Final[ToolTable] = {"runInTerminal": ("Bash", {}), "run_in_terminal": ("Bash", {})}

_CONTEXT_EVENTS: Final = frozenset({"SessionStart", "PreToolUse", "PostToolUse", "SubagentStart"})


def native_phase(name: str) -> Phase | None:
    """The phase of VS Code event ``name``; ``None`` when VS Code has no such event."""
    return EVENTS.get(name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded VS Code payload into a :class:`HookEvent` (Claude Code's field names,
    with VS Code's camelCase ``sessionId`` and ``hookEventName`` read too).

    Raises:
        InputError: no event name, or a decision field of the wrong type.
    """
    named = strict_str(obj, "hookEventName")
    event = _claude.parse_as("vscode", obj, named or expected_event, TOOLS)
    session = strict_str(obj, "sessionId")
    if event.session_id is None and session is not None:
        event = event._replace(session_id=session)
    return event._replace(phase=EVENTS.get(event.client_event, "other"))


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in VS Code's output format for ``event``."""
    name = event.client_event
    blocking = effective_permission(decision) == "deny"
    if name == "Stop" and blocking:
        # VS Code reads a stop's block inside hookSpecificOutput [VSC "Stop output"].
        reason = agent_text(decision)
        if deny_via_exit_code:
            return HookResponse(2, "", reason)
        specific = {"hookEventName": name, "decision": "block", "reason": reason}
        return HookResponse(0, dumps({"hookSpecificOutput": specific}))
    if name in ("UserPromptSubmit", "PreCompact"):
        decision = decision._replace(block=False)  # the common output only: no block there
    if name not in _CONTEXT_EVENTS:
        decision = decision._replace(additional_context=None)
    return _claude.render(event, decision, deny_via_exit_code=deny_via_exit_code, tools=TOOLS)
