"""GitHub Copilot CLI's hook protocol, camelCase format (decision 0017).

Sources (stored copies of GitHub's own documentation, ``github/docs``):

* [HR] ``content/copilot/reference/hooks-reference.md`` @05da5bc3 ("GitHub Copilot hooks
  reference", which replaced cli-hooks-reference and hooks-configuration): events, the
  camelCase payloads (``sessionId``, ``timestamp`` in ms, ``cwd``, ``toolName``,
  ``toolArgs: unknown``, ``toolResult {resultType, textResultForLlm}``, ``error``), the
  ``preToolUse`` output (``permissionDecision`` allow/deny/ask, ``permissionDecisionReason``,
  ``modifiedArgs``), ``additionalContext`` on ``sessionStart`` and ``postToolUse``, and the
  exit codes: a ``preToolUse`` command hook that crashes or exits non-zero denies the call
  (fail-closed), a timeout lets it through (fail-open).
* [HC] ``content/copilot/reference/hooks-configuration.md`` @1912b4fc (the older page): the
  example payloads, where ``toolArgs`` is a JSON *string* (``"{\\"command\\":\\"rm -rf
  dist\\"}"``), there is no ``sessionId``, ``postToolUse`` reports ``resultType`` ``failure`` or
  ``denied`` too, and ``edit`` takes ``path``.

Both shapes are read: ``toolArgs`` as an object or a JSON string, ``sessionId`` when present.

Tools [HR "Tool names for hook matching"]: ``bash``/``powershell`` are shell calls with
``{command}``; ``view`` reads, ``create`` writes, ``edit`` edits a ``path`` [HC]. The content
keys are not documented; Copilot CLI 1.0.102's own tool schemas (seen by
tests/conformance/test_copilot.py) name them ``file_text`` (``create``) and ``old_str``/
``new_str`` (``edit``), read as ``content``, ``old_string`` and ``new_string``; a call's paths
are checked whatever else it carries. MCP tools, named
``<server>-<tool>`` by the CLI, become ``mcp__<server>__<tool>`` (:func:`mcp_tool_name`); other
tools (``apply_patch``, ``str_replace_editor``) keep their names; both are checked by what their
input reaches (:mod:`ledger._governance.analysis.tool_input`).

Output: exit 0 and one JSON object. ``ask`` is answered as ``ask``: the CLI prompts the person
(findings-2026-11-24 §1.2: works since 1.0.24); under the cloud agent Copilot itself treats it
as ``deny`` [HR]. No payload carries a tool call id, so a scope expansion the person approves
through ``ask`` cannot be linked to its call and widens nothing (as for Gemini CLI).
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
    milliseconds,
    opt_str,
    rename_keys,
    strict_str,
    table_phase,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._errors import InputError
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = [
    "EVENTS",
    "PRE_EVENT",
    "SPEC",
    "TOOLS",
    "mcp_tool_name",
    "native_phase",
    "parse",
    "render",
]

SPEC: Final[ClientSpec] = CLIENTS["copilot"]

PRE_EVENT: Final = "preToolUse"

#: client event -> (neutral event, phase) [HR "Hook events"].
EVENTS: Final[dict[str, tuple[str, Phase]]] = {
    "preToolUse": ("PreToolUse", "pre"),
    "postToolUse": ("PostToolUse", "post"),
    "postToolUseFailure": ("PostToolUseFailure", "post"),
    "sessionStart": ("SessionStart", "other"),
    "sessionEnd": ("SessionEnd", "other"),
    "userPromptSubmitted": ("UserPromptSubmit", "other"),
    "agentStop": ("Stop", "other"),
    "subagentStart": ("SubagentStart", "other"),
    "subagentStop": ("SubagentStop", "other"),
    "preCompact": ("PreCompact", "other"),
    "notification": ("Notification", "other"),
    "permissionRequest": ("PermissionRequest", "other"),
}

#: Copilot events without a Claude Code equivalent (they keep their own name).
_OTHER_EVENTS: Final = frozenset({"errorOccurred", "userPromptTransformed"})

_EDITOR_KEYS: Final = {
    "path": "file_path",
    "file_text": "content",
    "old_str": "old_string",
    "new_str": "new_string",
}

#: Copilot tool -> (neutral tool, argument renames) [HR "Tool names for hook matching"; HC].
TOOLS: Final[ToolTable] = {
    "bash": ("Bash", {}),
    "powershell": ("PowerShell", {}),
    "view": ("Read", {"path": "file_path"}),
    "create": ("Write", _EDITOR_KEYS),
    "edit": ("Edit", _EDITOR_KEYS),
    "grep": ("Grep", {}),
    "glob": ("Glob", {}),
    "task": ("Agent", {}),
}

#: Events whose output Copilot reads ``additionalContext`` from [HR].
_CONTEXT_EVENTS: Final = frozenset({"sessionStart", "postToolUse", "notification"})


def mcp_tool_name(name: str) -> str:
    """``mcp__<server>__<tool>`` for an MCP tool, else ``name``.

    Copilot CLI 1.0.102 names an MCP server's tool ``<server>-<tool>`` (``ledger-
    select_active_intent``, seen by tests/conformance/test_copilot.py); its own tools have no
    hyphen (``bash``, ``list_bash``, ``read_agent`` ...). Server names take hyphens
    (``github-mcp-server``) and tool names underscores, so the name is split at its last
    hyphen."""
    server, sep, tool = name.rpartition("-")
    return f"mcp__{server}__{tool}" if sep and server and tool else name


def native_phase(name: str) -> Phase | None:
    """The phase of Copilot CLI event ``name``; ``None`` when Copilot has no such event."""
    return table_phase(EVENTS, _OTHER_EVENTS, name)


def _event_name(obj: dict[str, Any], expected_event: str | None) -> str:
    """The event: Copilot's camelCase payloads do not name it [HR], so the installed command
    passes it (``--event``); a payload that does (``hook_event_name``, the PascalCase format)
    must agree with it."""
    named = strict_str(obj, "hook_event_name")
    if named is not None and expected_event is not None and named != expected_event:
        known = {v[0]: k for k, v in EVENTS.items()}
        if known.get(named) != expected_event:
            raise InputError(f"payload is a {named} event, but the hook is for {expected_event}")
        return expected_event
    return event_name(obj, "hook_event_name", expected_event)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Copilot CLI payload into a :class:`HookEvent`.

    Raises:
        InputError: no event name, or a field of the wrong type.
    """
    name = _event_name(obj, expected_event)
    event, phase = EVENTS.get(name, (name, "other"))
    raw_tool = strict_str(obj, "toolName")
    tool_name = raw_tool
    arguments = as_tool_input(obj.get("toolArgs"), where="toolArgs")
    if raw_tool is not None and raw_tool in TOOLS:
        tool_name, keymap = TOOLS[raw_tool]
        arguments = rename_keys(arguments, keymap)
    elif raw_tool is not None:
        tool_name = mcp_tool_name(raw_tool)
    result = obj.get("toolResult")
    response: object = result
    error = opt_str(obj, "error")
    if isinstance(result, dict):
        response = result.get("textResultForLlm", result)
        kind = result.get("resultType")
        if name == "postToolUse" and kind in ("failure", "denied"):
            # The older page's postToolUse reports failures too [HC].
            event = "PostToolUseFailure"
            error = error or (response if isinstance(response, str) else str(kind))
    failure = obj.get("error")
    if isinstance(failure, dict):  # errorOccurred: {message, name, stack?}
        error = opt_str(failure, "message")
    return build_event(
        client="copilot",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "sessionId"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_response=response,
        cwd=opt_str(obj, "cwd"),
        transcript_path=opt_str(obj, "transcriptPath"),
        prompt=opt_str(obj, "prompt") or opt_str(obj, "initialPrompt"),
        error=error,
        duration_ms=milliseconds(obj.get("duration")),
        source=opt_str(obj, "source"),
        event_reason=opt_str(obj, "reason"),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Copilot CLI's output format for ``event``."""
    name = event.client_event
    out: dict[str, Any] = {}
    if name == PRE_EVENT:
        permission = effective_permission(decision)
        if permission == "deny" and deny_via_exit_code:
            return HookResponse(2, "", agent_text(decision))
        if permission is not None:
            out["permissionDecision"] = permission
        if permission in ("deny", "ask"):
            # Required with deny [HR]; the agent reads it, the person sees it when asked.
            out["permissionDecisionReason"] = agent_text(decision)
        if decision.updated_input is not None:
            out["modifiedArgs"] = inverse_input(
                decision.updated_input, event, TOOLS, as_tool_input(event.raw.get("toolArgs"))
            )
        if decision.additional_context:
            out["additionalContext"] = decision.additional_context
    elif name in ("agentStop", "subagentStop") and effective_permission(decision) == "deny":
        out = {"decision": "block", "reason": agent_text(decision)}
    elif decision.additional_context and name in _CONTEXT_EVENTS:
        out["additionalContext"] = decision.additional_context
    return HookResponse(0, dumps(out))
