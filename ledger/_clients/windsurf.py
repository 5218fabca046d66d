"""Windsurf's Cascade hooks: snake_case actions, answers by exit code only.

Source: [WS] docs.windsurf.com/windsurf/cascade/hooks ("Cascade Hooks"; findings-2026-11-24
§1.2): hooks in ``/etc/windsurf/hooks.json`` (system), ``~/.codeium/windsurf/hooks.json``
(user) and ``.windsurf/hooks.json`` (workspace), merged and run in that order, each entry
``{"command", "show_output"?}`` under ``hooks.<action>``; the payload is ``{"agent_action_name",
"trajectory_id", "execution_id", "timestamp", "tool_info": {...}}`` with ``tool_info`` per
action: ``pre/post_read_code`` ``{file_path}``, ``pre/post_write_code`` ``{file_path, edits:
[{old_string, new_string}]}``, ``pre/post_run_command`` ``{command_line, cwd}``,
``pre/post_mcp_tool_use`` ``{mcp_server_name, mcp_tool_name, mcp_tool_arguments, mcp_result?}``,
``pre_user_prompt`` ``{user_prompt}``, ``post_cascade_response`` ``{response}``. A pre-hook
blocks by exiting 2, its stderr shown; no output asks the person: **a hook cannot prompt**, so
ledger's ``ask`` is delivered as a block whose reason says a person must approve (the record
keeps the ask, ``delivered`` says deny). Nothing is read from stdout, so ledger prints nothing.
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients.common import (
    agent_text,
    as_tool_input,
    build_event,
    effective_permission,
    event_name,
    needs_human_text,
    opt_str,
    strict_str,
    table_phase,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = ["EVENTS", "PRE_EVENT", "SPEC", "native_phase", "parse", "render"]

SPEC: Final[ClientSpec] = CLIENTS["windsurf"]

PRE_EVENT: Final = "pre_run_command"

#: Windsurf action -> (neutral event, phase, neutral tool) [WS "Hook events"].
EVENTS: Final[dict[str, tuple[str, Phase, str | None]]] = {
    "pre_read_code": ("PreToolUse", "pre", "Read"),
    "post_read_code": ("PostToolUse", "post", "Read"),
    "pre_write_code": ("PreToolUse", "pre", "Edit"),
    "post_write_code": ("PostToolUse", "post", "Edit"),
    "pre_run_command": ("PreToolUse", "pre", "Bash"),
    "post_run_command": ("PostToolUse", "post", "Bash"),
    "pre_mcp_tool_use": ("PreToolUse", "pre", None),
    "post_mcp_tool_use": ("PostToolUse", "post", None),
    "pre_user_prompt": ("UserPromptSubmit", "other", None),
    "post_cascade_response": ("Stop", "other", None),
}
_OTHER_EVENTS: Final = frozenset({"post_setup_worktree"})


def native_phase(name: str) -> Phase | None:
    """The phase of Windsurf action ``name``; ``None`` when Windsurf has no such action."""
    return table_phase(EVENTS, _OTHER_EVENTS, name)


def _tool(tool: str | None, info: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any]]:
    """(neutral tool, raw tool name, neutral arguments) of one action's ``tool_info``."""
    if tool == "Bash":
        command = strict_str(info, "command_line", where="tool_info.")
        return tool, None, {} if command is None else {"command": command}
    if tool in ("Read", "Edit"):
        path = strict_str(info, "file_path", where="tool_info.")
        arguments: dict[str, Any] = {} if path is None else {"file_path": path}
        if tool == "Edit" and "edits" in info:
            arguments["edits"] = info["edits"]
        return tool, None, arguments
    server = strict_str(info, "mcp_server_name", where="tool_info.")
    name = strict_str(info, "mcp_tool_name", where="tool_info.")
    if server is None and name is None:
        return None, None, {}
    raw = f"mcp__{server or 'unknown'}__{name or 'unknown'}"
    args = as_tool_input(info.get("mcp_tool_arguments"), where="tool_info.mcp_tool_arguments")
    return raw, raw, args


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Windsurf payload into a :class:`HookEvent`.

    Raises:
        InputError: no action name, or a decision field of the wrong type.
    """
    name = event_name(obj, "agent_action_name", expected_event)
    event, phase, tool = EVENTS.get(name, (name, "other", None))
    info = obj.get("tool_info")
    info = info if isinstance(info, dict) else {}
    tool_name, raw_tool, arguments = _tool(tool, info) if phase != "other" else (None, None, {})
    response: object = info.get("mcp_result", info.get("response"))
    return build_event(
        client="windsurf",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "trajectory_id"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_use_id=opt_str(obj, "execution_id"),
        tool_response=response,
        cwd=opt_str(info, "cwd"),
        prompt=opt_str(info, "user_prompt"),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` as Windsurf reads it: exit 2 with the reason on stderr blocks a
    pre-hook; anything else is exit 0 and no output. ``deny_via_exit_code`` is always so."""
    del deny_via_exit_code
    permission = effective_permission(decision)
    if event.phase == "pre" and permission == "ask":
        decision = decision._replace(reason=needs_human_text("Windsurf", decision.reason))
        permission = "deny"
    if permission == "deny" and event.phase == "pre":
        return HookResponse(2, "", agent_text(decision))
    return HookResponse(0, "")
