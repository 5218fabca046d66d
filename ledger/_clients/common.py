"""Helpers shared by the client adapters: payload decoding, field coercion, output clipping.

Everything here is pure (no I/O) and cheap: it runs on every hook invocation.
"""

from __future__ import annotations

import json
import math
import ntpath
import posixpath
from collections.abc import Container, Mapping
from typing import Any, Final, NoReturn

from ledger._errors import InputError
from ledger._governance.vocabulary import (
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookEvent,
    Permission,
    Phase,
)

__all__ = [
    "DENY_FALLBACK",
    "ToolTable",
    "absolutize_file_path",
    "agent_text",
    "as_tool_input",
    "build_event",
    "clip",
    "clip_utf8",
    "decode_payload",
    "dumps",
    "effective_permission",
    "first_root",
    "inverse_input",
    "maybe_json",
    "milliseconds",
    "needs_human_text",
    "one_line",
    "opt_str",
    "rename_keys",
    "strict_str",
]

ToolTable = Mapping[str, tuple[str, Mapping[str, str]]]
"""client tool name -> (neutral tool name, {client argument key: neutral argument key})."""

TRUNCATION_MARKER: Final = " [... truncated by ledger]"
DENY_FALLBACK: Final = "Blocked by ledger policy."


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def decode_payload(raw: bytes) -> dict[str, Any]:
    """Decode one hook payload: UTF-8 JSON holding an object, at most ``MAX_PAYLOAD_BYTES``.

    The size check runs before any decoding. A UTF-8 byte-order mark is tolerated.

    Raises:
        InputError: too large, empty, not UTF-8, not JSON (incl. ``NaN``), or not an object.
    """
    if len(raw) > MAX_PAYLOAD_BYTES:
        # The caller reads at most limit + 1 bytes, so the true size is only known to exceed it.
        raise InputError(
            f"hook payload exceeds the {MAX_PAYLOAD_BYTES}-byte "
            f"({MAX_PAYLOAD_BYTES >> 20} MiB) limit"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"hook payload is not valid UTF-8 (bad byte at offset {exc.start})"
        ) from exc
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise InputError("hook payload is empty; expected a JSON object on stdin")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"hook payload is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise InputError(f"hook payload is not valid JSON: {one_line(str(exc))}") from exc
    if not isinstance(value, dict):
        raise InputError(f"hook payload must be a JSON object, got {_json_type(value)}")
    return value


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def strict_str(obj: Mapping[str, Any], key: str, *, where: str = "") -> str | None:
    """``obj[key]`` when it is a string, ``None`` when absent or null.

    Used for the fields ledger decides on (event name, tool name, session id).

    Raises:
        InputError: the field is present with another JSON type.
    """
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"hook payload field {where}{key!r} must be a string, got {_json_type(value)}")


def event_name(obj: Mapping[str, Any], key: str, *fallbacks: str | None) -> str:
    """The event name from ``obj[key]``, else the first non-empty fallback.

    Raises:
        InputError: no name anywhere, or ``obj[key]`` is not a string.
    """
    name = strict_str(obj, key) or next((f for f in fallbacks if f), None)
    if not name:
        raise InputError(f"hook payload has no {key!r}; pass the event explicitly")
    return name


def table_phase(
    events: Mapping[str, tuple[Any, ...]], others: Container[str], name: str
) -> Phase | None:
    """Phase of ``name`` from an adapter's event table; "other" for known non-table events."""
    spec = events.get(name)
    if spec is not None:
        phase: Phase = spec[1]
        return phase
    return "other" if name in others else None


def opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string, else ``None`` (descriptive fields are never fatal)."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def milliseconds(value: object) -> int | None:
    """A JSON number of milliseconds as ``int`` (floats rounded); anything else is ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return round(value)
    return None


def maybe_json(value: object) -> object:
    """Decode ``value`` when it is a string holding valid JSON; otherwise return it unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return value


def as_tool_input(value: object, *, where: str = "tool_input") -> dict[str, Any]:
    """Normalize a tool-arguments value to a fresh ``dict``.

    ``None`` gives ``{}``; a JSON string holding an object is decoded (Cursor sends MCP arguments
    that way); any other string is kept as ``{"raw_input": value}``.

    Raises:
        InputError: the value is an array, number or boolean.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, str):
        decoded = maybe_json(value)
        if isinstance(decoded, dict):
            return decoded
        return {"raw_input": value}
    raise InputError(f"hook payload field {where!r} must be an object, got {_json_type(value)}")


def rename_keys(arguments: Mapping[str, Any], keymap: Mapping[str, str]) -> dict[str, Any]:
    """Rename argument keys by ``keymap``; a target already present is never overwritten."""
    if not keymap:
        return dict(arguments)
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        target = keymap.get(key, key)
        if target != key and (target in arguments or target in out):
            out[key] = value  # both spellings present: keep the neutral one untouched
        else:
            out[target] = value
    return out


def inverse_input(
    updated: Mapping[str, Any], event: HookEvent, table: ToolTable, original: object
) -> dict[str, Any]:
    """Map a neutral ``updated_input`` back to the client's argument names for ``event``'s tool.

    Only keys the client actually sent under its own name are renamed back (``original`` is the
    client's argument object from ``event.raw``), so an alias accepted on input is never forced
    on output.
    """
    spec = table.get(event.raw_tool_name or "")
    if spec is None or not isinstance(original, dict):
        return dict(updated)
    keymap = {neutral: native for native, neutral in spec[1].items() if native in original}
    return rename_keys(updated, keymap)


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\", "~")) or ntpath.isabs(path)


def absolutize_file_path(tool_input: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    """Make ``tool_input["file_path"]`` absolute against ``cwd`` (lexically, no file access)."""
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path or cwd is None or _is_absolute(path):
        return tool_input
    # posixpath/ntpath rather than pathlib: pure string work, and pathlib costs ~3 ms to import.
    joiner = posixpath if cwd.startswith("/") else ntpath
    tool_input["file_path"] = joiner.normpath(joiner.join(cwd, path))
    return tool_input


def build_event(
    *,
    client: str,
    event: str,
    client_event: str,
    phase: Phase,
    raw: dict[str, Any],
    session_id: str | None = None,
    tool_name: str | None = None,
    raw_tool_name: str | None = None,
    tool_input: dict[str, Any] | None = None,
    tool_use_id: str | None = None,
    tool_response: object = None,
    cwd: str | None = None,
    model: str | None = None,
    agent_id: str | None = None,
    agent_type: str | None = None,
    transcript_path: str | None = None,
    prompt: str | None = None,
    error: str | None = None,
    duration_ms: int | None = None,
    source: str | None = None,
    event_reason: str | None = None,
) -> HookEvent:
    """Build a :class:`HookEvent`; ``file_path`` in ``tool_input`` is made absolute."""
    arguments = absolutize_file_path(tool_input if tool_input is not None else {}, cwd)
    return HookEvent(
        client=client,
        event=event,
        client_event=client_event,
        phase=phase,
        session_id=session_id,
        tool_name=tool_name,
        raw_tool_name=raw_tool_name,
        tool_input=arguments,
        tool_use_id=tool_use_id,
        tool_response=tool_response,
        cwd=cwd,
        model=model,
        agent_id=agent_id,
        agent_type=agent_type,
        transcript_path=transcript_path,
        prompt=prompt,
        error=error,
        duration_ms=duration_ms,
        source=source,
        event_reason=event_reason,
        raw=raw,
    )


def first_root(value: object) -> str | None:
    """The first string of a workspace-roots array, if any."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    return None


def one_line(text: str) -> str:
    """Collapse all whitespace runs (newlines included) to single spaces."""
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in a visible marker when cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(TRUNCATION_MARKER))] + TRUNCATION_MARKER


def clip_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, ending in a visible marker when cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = max(0, limit - len(TRUNCATION_MARKER.encode("utf-8")))
    return data[:room].decode("utf-8", errors="ignore") + TRUNCATION_MARKER


def dumps(value: object) -> str:
    """Compact JSON for client stdout (UTF-8 text, no ASCII escaping)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def agent_text(decision: HookDecision, fallback: str = DENY_FALLBACK) -> str:
    """The reason for the agent: ``reason``, then the standardized error JSON on its own line."""
    reason = decision.reason or fallback
    if decision.error:
        return f"{reason}\n{dumps(decision.error)}"
    return reason


def effective_permission(decision: HookDecision) -> Permission | None:
    """``deny`` when ``block`` is set (deny wins), else ``decision.permission``."""
    return "deny" if decision.block else decision.permission


def needs_human_text(client: str, reason: str | None) -> str:
    """The reason given when ``ask`` must become ``deny`` because the client cannot ask."""
    prefix = f"{reason} " if reason else ""
    return (
        f"{prefix}(A human must approve this action; {client} cannot ask for approval from this "
        "hook, so ledger denied it.)"
    )
