"""OpenAI Codex CLI hooks (docs/architecture.md): Claude Code's protocol plus ``turn_id``.

Codex sends Claude Code's field names (``session_id``, ``hook_event_name``, ``tool_name``,
``tool_input`` ...) and reads Claude Code's output (``hookSpecificOutput.permissionDecision``,
``decision: "block"``), so this module only adds Codex's tool table: shell tools already arrive as
``Bash`` with ``{command}``, and ``apply_patch`` carries the raw patch body in
``tool_input.command``, which becomes neutral ``ApplyPatch`` with ``{patch}``.
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients import claude as _claude
from ledger._clients.common import ToolTable, effective_permission, needs_human_text
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = [
    "EVENT_PHASES",
    "PRE_EVENT",
    "SPEC",
    "TOOLS",
    "native_phase",
    "parse",
    "render",
]

SPEC: Final[ClientSpec] = CLIENTS["codex"]

PRE_EVENT: Final = _claude.PRE_EVENT
EVENT_PHASES: Final[dict[str, Phase]] = _claude.EVENT_PHASES

TOOLS: Final[ToolTable] = {"apply_patch": ("ApplyPatch", {"command": "patch"})}


def native_phase(name: str) -> Phase:
    """The phase of Codex event ``name`` (Codex uses Claude Code's event names)."""
    return _claude.native_phase(name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Codex payload into a :class:`HookEvent` (``turn_id`` stays in ``raw``)."""
    return _claude.parse_as("codex", obj, expected_event, TOOLS)


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Codex's (Claude-compatible) output format.

    Codex does not enforce ``ask``: measured with Codex 0.169.0 (tests/conformance), an ``ask``
    answer to PreToolUse is logged as a failed hook and the command runs. A call that needs a
    human is therefore denied, with a reason that says so (as for Cursor and Gemini CLI).
    """
    if event.client_event == "PreToolUse" and effective_permission(decision) == "ask":
        decision = decision._replace(
            permission="deny", reason=needs_human_text("Codex", decision.reason)
        )
    return _claude.render(event, decision, deny_via_exit_code=deny_via_exit_code, tools=TOOLS)
