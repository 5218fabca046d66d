"""Antigravity CLI's (``agy``) hook protocol: Gemini CLI's successor, a contract of its own.

No headless ``agy`` installs from npm, so this module follows what its users measured and the
findings of 24 November 2026 (§1.2) collect; each payload fixture under
``tests/fixtures/payloads/antigravity/`` names its source:

* [PLUR] plur-ai/plur#1033 (``agy`` 1.1.21 probed): camelCase stdin (protojson),
  ``conversationId`` is the session; ``PreToolUse`` answering ``{"decision": "deny",
  "reason"}`` blocks the call and the model reads the reason; ``PreInvocation`` answering
  ``{"injectSteps": [{"ephemeralMessage"}]}`` reaches the model; no trust gate.
* [SIGIL] Ju571nK/sigil#202, #208 (``agy`` 1.1.7 probed): the ``PreToolUse`` payload
  ``{"conversationId", "modelName", "stepIdx", "toolCall": {"name": "run_command", "args":
  {"CommandLine", "Cwd"}}, "transcriptPath", "workspacePaths"}``: no event name, no ``cwd``.
* [IRR] ingo-eichhorst/Irrlicht#1723 (1.1.18): the ``Stop`` payload (``terminationReason``,
  ``fullyIdle``, ``error``, ``modelName``, ``workspacePaths``); the bundled ``hooks.md``
  documents Stop's result both as ignored and as a block, so ledger does not rely on it.
* [AIM] akitaonrails/ai-memory#54 (1.0.3): a ``PreToolUse`` answer of ``{}`` denies the call
  ("fail-closed block"), so ledger answers every allow explicitly.
* [GLINT] chenbstack/glint#116, [AGM] rohitg00/agentmemory#1146, [RTK] rtk-ai/rtk#1975: the
  one global ``~/.gemini/config/hooks.json`` of named bundles (``{"<name>": {"enabled": true,
  "PreToolUse": [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}],
  "Stop": [handler] ...}}``), matcher groups for tool events, plain handler lists otherwise.
* Tool arguments: ``run_command`` ``CommandLine``/``Cwd`` [SIGIL]; ``replace_file_content``
  ``TargetFile`` (entireio/cli#1287), ``TargetContent``/``ReplacementContent``/``StartLine``/
  ``EndLine`` (google-antigravity/antigravity-cli#1082); ``write_to_file`` ``TargetFile`` with
  ``CodeContent`` and ``view_file`` ``AbsolutePath`` are UNCONFIRMED (the Cascade tool family's
  names); a call's paths are checked whatever else it carries.

Answers: ``PreToolUse`` gets ``{"decision": allow|deny|ask, "reason"}``, allow included (``{}``
is a deny [AIM]); an ``ask`` prompts the person. ``PreInvocation`` (each turn; read as
UserPromptSubmit) carries ledger's context as an ephemeral message. The other events get
``{}``: only PreToolUse reads it as a deny [AIM]. sigil#208 reports an ``allow_tool``/
``deny_reason`` answer for one build; the findings' contract is followed here.
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
    opt_str,
    rename_keys,
    strict_str,
    table_phase,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._errors import InputError
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase

__all__ = ["EVENTS", "PRE_EVENT", "SPEC", "TOOLS", "native_phase", "parse", "render"]

SPEC: Final[ClientSpec] = CLIENTS["antigravity"]

PRE_EVENT: Final = "PreToolUse"

#: client event -> (neutral event, phase) [PLUR; findings §1.2]. PreInvocation runs before
#: each model turn: the nearest neutral event is the prompt's.
EVENTS: Final[dict[str, tuple[str, Phase]]] = {
    "PreToolUse": ("PreToolUse", "pre"),
    "PostToolUse": ("PostToolUse", "post"),
    "PreInvocation": ("UserPromptSubmit", "other"),
    "Stop": ("Stop", "other"),
}
_OTHER_EVENTS: Final = frozenset({"PostInvocation"})

_FILE: Final = {"TargetFile": "file_path", "AbsolutePath": "file_path"}

#: agy tool -> (neutral tool, argument renames) [SIGIL, entireio/cli#1287, agy#1082].
TOOLS: Final[ToolTable] = {
    "run_command": ("Bash", {"CommandLine": "command"}),
    "view_file": ("Read", _FILE),
    "write_to_file": ("Write", {**_FILE, "CodeContent": "content"}),
    "replace_file_content": (
        "Edit",
        {**_FILE, "TargetContent": "old_string", "ReplacementContent": "new_string"},
    ),
    "multi_replace_file_content": ("multi_replace_file_content", _FILE),
}


def native_phase(name: str) -> Phase | None:
    """The phase of Antigravity event ``name``; ``None`` when agy has no such event."""
    return table_phase(EVENTS, _OTHER_EVENTS, name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Antigravity CLI payload into a :class:`HookEvent`.

    The payload does not name its event [SIGIL]: the installed command passes it (``--event``).

    Raises:
        InputError: no event name, or a field of the wrong type.
    """
    name = event_name(obj, "hookEventName", opt_str(obj, "hook_event_name"), expected_event)
    event, phase = EVENTS.get(name, (name, "other"))
    call = obj.get("toolCall")
    if call is not None and not isinstance(call, dict):
        raise InputError("hook payload field 'toolCall' must be an object")
    call = call or {}
    raw_tool = strict_str(call, "name", where="toolCall.")
    arguments = as_tool_input(call.get("args"), where="toolCall.args")
    tool_name = raw_tool
    if raw_tool is not None and raw_tool in TOOLS:
        tool_name, keymap = TOOLS[raw_tool]
        arguments = rename_keys(arguments, keymap)
    error = opt_str(obj, "error") or None  # agy sends "" when there was none [IRR]
    cwd = first_root(obj.get("workspacePaths")) or opt_str(arguments, "Cwd")
    return build_event(
        client="antigravity",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "conversationId"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_response=obj.get("toolResult", obj.get("result")),  # UNCONFIRMED field names
        cwd=cwd,
        model=opt_str(obj, "modelName"),
        transcript_path=opt_str(obj, "transcriptPath"),
        prompt=opt_str(obj, "prompt") or opt_str(obj, "userMessage"),
        error=error,
        event_reason=opt_str(obj, "terminationReason"),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Antigravity CLI's output format for ``event``.

    ``deny_via_exit_code`` is not used: no source says how agy reads exit 2, and the JSON deny
    is the measured one [PLUR]. A rewritten input is not delivered (``overwrite`` is named in
    the findings but its shape is not documented), so the call is governed as sent.
    """
    del deny_via_exit_code
    name = event.client_event
    if name == PRE_EVENT:
        permission = effective_permission(decision) or "allow"  # {} would deny [AIM]
        out: dict[str, Any] = {"decision": permission}
        if permission in ("deny", "ask"):
            out["reason"] = agent_text(decision)
        elif decision.reason:
            out["reason"] = decision.reason
        return HookResponse(0, dumps(out))
    if name == "PreInvocation" and decision.additional_context:
        steps = [{"ephemeralMessage": decision.additional_context}]
        return HookResponse(0, dumps({"injectSteps": steps}))
    return HookResponse(0, "{}")
