"""Cline's hook protocol (docs/architecture.md, client protocols).

Input: an envelope ``{clineVersion, hookName, timestamp, taskId, workspaceRoots, userId}`` with
the event's own data nested under the camelCase hook name, e.g.
``{"hookName": "PreToolUse", "preToolUse": {"toolName": "write_to_file", "parameters": {...}}}``.
Cline's tools map to neutral ones: ``write_to_file`` (``{path, content}``) is ``Write``,
``replace_in_file`` (``{path, diff}`` with SEARCH/REPLACE blocks) is ``Edit``, ``execute_command``
is ``Bash``, ``read_file`` is ``Read``, ``use_mcp_tool`` is ``mcp__<server>__<tool>``. A
``PostToolUse`` with ``success: false`` is the neutral ``PostToolUseFailure``.

Output: the last JSON object on stdout, ``{"cancel": bool, "contextModification"?: str (at most
50 KB), "errorMessage"?: str}``; exit 0. Cline has no ``ask``: it becomes ``cancel: true`` with an
``errorMessage`` saying a human must approve. Cline itself blocks on a crashed hook (non-zero
exit, invalid JSON, timeout).
"""

from __future__ import annotations

from typing import Any, Final

from ledger._clients.common import (
    ToolTable,
    agent_text,
    as_tool_input,
    build_event,
    clip_utf8,
    dumps,
    effective_permission,
    event_name,
    first_root,
    milliseconds,
    needs_human_text,
    opt_str,
    rename_keys,
    strict_str,
    table_phase,
)
from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._governance.vocabulary import HookDecision, HookEvent, HookResponse, Phase
from ledger._startup.patterns import lazy_compile

__all__ = [
    "CONTEXT_LIMIT_BYTES",
    "EVENTS",
    "PRE_EVENT",
    "SPEC",
    "TOOLS",
    "native_phase",
    "parse",
    "render",
]

SPEC: Final[ClientSpec] = CLIENTS["cline"]

PRE_EVENT: Final = "PreToolUse"

#: ``contextModification`` is capped at 50 KB by Cline.
CONTEXT_LIMIT_BYTES: Final = 50 * 1024

#: client event -> (neutral event, phase).
EVENTS: Final[dict[str, tuple[str, Phase]]] = {
    "PreToolUse": ("PreToolUse", "pre"),
    "PostToolUse": ("PostToolUse", "post"),
    "UserPromptSubmit": ("UserPromptSubmit", "other"),
    "PreCompact": ("PreCompact", "other"),
    "TaskStart": ("SessionStart", "other"),
    "TaskResume": ("SessionStart", "other"),
    "TaskCancel": ("TaskCancel", "other"),
    "TaskComplete": ("TaskComplete", "other"),
}

TOOLS: Final[ToolTable] = {
    "write_to_file": ("Write", {"path": "file_path"}),
    "replace_in_file": ("Edit", {"path": "file_path"}),
    "execute_command": ("Bash", {}),
    "read_file": ("Read", {"path": "file_path"}),
}

# Cline's SEARCH/REPLACE block markers, current (------- / +++++++) and legacy (<<<<<<< / >>>>>>>).
_SEARCH = lazy_compile(r"(?:-{3,}|<{3,}) SEARCH>?")
_DIVIDER = lazy_compile(r"={3,}")
_REPLACE = lazy_compile(r"(?:\+{3,}|>{3,}) REPLACE>?")


def search_replace_blocks(diff: str) -> list[tuple[str, str]] | None:
    """The ``(search, replace)`` pairs of a ``replace_in_file`` diff; ``None`` if malformed."""
    blocks: list[tuple[str, str]] = []
    old: list[str] = []
    new: list[str] = []
    state = "outside"
    for line in diff.split("\n"):
        marker = line.rstrip("\r").strip()
        if state == "outside":
            if _SEARCH.fullmatch(marker):
                state, old, new = "search", [], []
        elif state == "search":
            if _DIVIDER.fullmatch(marker):
                state = "replace"
            else:
                old.append(line)
        elif _REPLACE.fullmatch(marker):
            blocks.append(("\n".join(old), "\n".join(new)))
            state = "outside"
        else:
            new.append(line)
    return blocks if blocks and state == "outside" else None


def _tool(data: dict[str, Any], key: str) -> tuple[str | None, str | None, dict[str, Any]]:
    """(neutral tool, raw tool name, neutral arguments) of a ``preToolUse``/``postToolUse``."""
    raw_tool = strict_str(data, "toolName", where=f"{key}.")
    arguments = as_tool_input(data.get("parameters"), where=f"{key}.parameters")
    if raw_tool == "use_mcp_tool":
        server, tool = arguments.get("server_name"), arguments.get("tool_name")
        if isinstance(server, str) and isinstance(tool, str):
            return f"mcp__{server}__{tool}", raw_tool, as_tool_input(arguments.get("arguments"))
        return raw_tool, raw_tool, arguments
    if raw_tool is None or raw_tool not in TOOLS:
        return raw_tool, raw_tool, arguments
    neutral, keymap = TOOLS[raw_tool]
    written = arguments.get("path")
    arguments = rename_keys(arguments, keymap)
    if "path" in keymap and isinstance(written, str):
        # Cline writes `path`; an extra `file_path` must not be the path checked (decision 0005).
        arguments.pop("path", None)
        arguments["file_path"] = written
    diff = arguments.get("diff")
    if raw_tool == "replace_in_file" and isinstance(diff, str):
        blocks = search_replace_blocks(diff)
        if blocks is not None and len(blocks) == 1:
            arguments["old_string"], arguments["new_string"] = blocks[0]
        elif blocks is not None:
            arguments["edits"] = [{"old_string": o, "new_string": n} for o, n in blocks]
    return neutral, raw_tool, arguments


def _nested_name(obj: dict[str, Any]) -> str | None:
    """The hook name inferred from the one nested event object, for payloads without it."""
    found = [name for name in EVENTS if isinstance(obj.get(name[0].lower() + name[1:]), dict)]
    return found[0] if len(found) == 1 else None


def native_phase(name: str) -> Phase | None:
    """The phase of Cline hook ``name``; ``None`` when Cline has no such hook."""
    return table_phase(EVENTS, (), name)


def parse(obj: dict[str, Any], expected_event: str | None) -> HookEvent:
    """Turn a decoded Cline payload into a :class:`HookEvent`.

    Raises:
        InputError: no hook name, or a decision field of the wrong type.
    """
    name = event_name(obj, "hookName", expected_event, _nested_name(obj))
    event, phase = EVENTS.get(name, (name, "other"))
    key = name[0].lower() + name[1:]
    nested = obj.get(key)
    data: dict[str, Any] = nested if isinstance(nested, dict) else {}
    tool_name: str | None = None
    raw_tool: str | None = None
    arguments: dict[str, Any] = {}
    if name in ("PreToolUse", "PostToolUse"):
        tool_name, raw_tool, arguments = _tool(data, key)
    error = None
    if name == "PostToolUse" and data.get("success") is False:
        event = "PostToolUseFailure"
        result = data.get("result")
        error = result if isinstance(result, str) and result else "tool failed"
    metadata = data.get("taskMetadata")
    prompt = opt_str(data, "prompt")
    if prompt is None and isinstance(metadata, dict):
        prompt = opt_str(metadata, "initialTask")
    return build_event(
        client="cline",
        event=event,
        client_event=name,
        phase=phase,
        raw=obj,
        session_id=strict_str(obj, "taskId"),
        tool_name=tool_name,
        raw_tool_name=raw_tool,
        tool_input=arguments,
        tool_response=data.get("result"),
        cwd=first_root(obj.get("workspaceRoots")),
        prompt=prompt,
        error=error,
        duration_ms=milliseconds(data.get("executionTimeMs")),
    )


def render(
    event: HookEvent, decision: HookDecision, *, deny_via_exit_code: bool = False
) -> HookResponse:
    """Render ``decision`` in Cline's output format for ``event``."""
    permission = effective_permission(decision)
    if permission == "ask" and event.phase == "pre":
        decision = decision._replace(reason=needs_human_text("Cline", decision.reason))
        permission = "deny"
    out: dict[str, Any] = {"cancel": permission == "deny"}
    if permission == "deny":
        message = agent_text(decision)
        if deny_via_exit_code:
            return HookResponse(2, "", message)
        out["errorMessage"] = message
    if decision.additional_context:
        out["contextModification"] = clip_utf8(decision.additional_context, CONTEXT_LIMIT_BYTES)
    return HookResponse(0, dumps(out))
