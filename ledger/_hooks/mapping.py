"""From a client's neutral :class:`HookEvent` to the engine's :class:`Invocation`, and from the
engine's :class:`MergedDecision` back to the neutral :class:`HookDecision` the adapters render.
"""

from __future__ import annotations

from typing import Final

from ledger._governance.engine import Invocation, MergedDecision, invocation_id_for
from ledger._governance.vocabulary import HookDecision, HookEvent

__all__ = ["BLOCKABLE_EVENTS", "decision_of", "invocation_of"]


# Events where a hook's block is honoured (docs/architecture.md); everything else is observed.
BLOCKABLE_EVENTS: Final = frozenset(
    {"UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "PermissionRequest"}
)


def invocation_of(event: HookEvent) -> Invocation:
    """The engine's view of one client event: every neutral field the engine or a record
    needs, typed; the client's raw payload stays in ``raw`` for configured hooks only."""
    outcome = None
    if event.phase == "post":
        outcome = "failure" if event.event == "PostToolUseFailure" or event.error else "success"
    return Invocation(
        id=invocation_id_for(event.client, event.session_id, event.tool_use_id),
        event=event.event,
        tool_name=event.tool_name,
        tool_input=dict(event.tool_input),
        tool_use_id=event.tool_use_id,
        session_id=event.session_id,
        client=event.client,
        cwd=event.cwd,
        model=event.model,
        agent_id=event.agent_id,
        outcome=outcome,
        tool_response=event.tool_response,
        error=event.error,
        duration_ms=event.duration_ms,
        raw=event.raw,
        client_event=event.client_event,
        prompt=event.prompt,
        agent_type=event.agent_type,
        source=event.source,
        event_reason=event.event_reason,
    )


def decision_of(event: HookEvent, merged: MergedDecision) -> HookDecision:
    """What the client is told: ``allow`` only when a hook explicitly allowed."""
    blocking = merged.decision != "allow"
    error = merged.error if blocking else None  # informational errors stay in the record
    if event.phase == "pre":
        # "allow" only when a hook said so: answering allow makes clients skip their own
        # permission prompt (docs/architecture.md), so "no objection" is no opinion.
        permission = merged.decision if merged.explicit else None
        return HookDecision(
            permission=permission,
            reason=merged.reason,
            additional_context=merged.additional_context,
            updated_input=merged.updated_input,
            error=error,
            block=merged.decision == "deny",
        )
    return HookDecision(
        reason=merged.reason,
        additional_context=merged.additional_context,
        block=merged.decision == "deny",
        error=error,
    )
