"""Client hook protocols <-> one neutral event: parse what a client sends, render what it reads.

Each supported client (Claude Code, Cursor, Gemini CLI, Codex CLI, Cline) has one private module;
this package dispatches on the client name. Everything here is pure (no I/O, no printing) and
imports nothing heavier than :mod:`json`, so it fits the hook path's ~60 ms budget.

A hook process does::

    event = parse_payload("claude", sys.stdin.buffer.read())
    decision = policy(event)                          # a HookDecision
    response = render_response("claude", event, decision)
    # write response.stdout / response.stderr, exit with response.exit_code

and, when anything above raised::

    response = fail_closed_response("claude", event_or_none, str(exc), raw=raw,
                                    expected_event="PreToolUse")

``expected_event`` is the event the hook was *registered* for, as the CLI learns it from
``ledger hook claude --event PreToolUse`` (the client's own name, e.g. ``beforeShellExecution``,
or the neutral one). It lets a crash on an unparseable payload still fail closed on a
tool-gating event, and it names the event when a payload lacks ``hook_event_name``.

Neutral names follow Claude Code; see :class:`HookEvent` for the fields and each client module's
docstring for the mapping and its source in docs/architecture.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ledger._clients.common import build_event, decode_payload, one_line
from ledger._clients.registry import CLIENT_NAMES, CLIENTS, adapter
from ledger._errors import InputError
from ledger._governance.vocabulary import (
    HOOK_ERROR_CODES,
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookErrorCodes,
    HookEvent,
    HookResponse,
    Permission,
    Phase,
    hook_error,
)

if TYPE_CHECKING:
    from re import Pattern

__all__ = [
    "CLIENTS",
    "CLIENT_NAMES",
    "HOOK_ERROR_CODES",
    "MAX_PAYLOAD_BYTES",
    "HookDecision",
    "HookErrorCodes",
    "HookEvent",
    "HookResponse",
    "Permission",
    "Phase",
    "event_phase",
    "fail_closed_response",
    "hook_error",
    "parse_payload",
    "render_response",
]

_PERMISSIONS: Final = (None, "allow", "deny", "ask")


def parse_payload(client: str, raw: bytes, *, expected_event: str | None = None) -> HookEvent:
    """Parse one hook payload from ``client`` into a neutral :class:`HookEvent`.

    Args:
        client: ``claude``, ``cursor``, ``gemini``, ``codex``, ``cline`` or ``copilot``.
        raw: the bytes read from stdin. Unknown fields are kept in ``HookEvent.raw``.
        expected_event: the event name to assume when the payload carries none.

    Raises:
        InputError: unknown client; payload over 256 MiB (checked before decoding), not UTF-8,
            not a JSON object; no event name; or a decision field (event, tool name, session,
            tool arguments) of the wrong JSON type. The message is one line.
    """
    event = adapter(client).parse(decode_payload(raw), expected_event)
    if expected_event and expected_event not in (event.client_event, event.event):
        # Registered for one event, sent another: which gate is this? Refuse (decision 0005).
        raise InputError(
            f"hook payload is a {event.client_event!r} event but the hook was "
            f"registered for {expected_event!r}"
        )
    if event.phase == "pre" and not event.tool_name:
        raise InputError(f"{event.client_event} payload has no tool_name; cannot govern it")
    return event


def render_response(
    client: str,
    event: HookEvent,
    decision: HookDecision,
    *,
    deny_via_exit_code: bool = False,
) -> HookResponse:
    """Render ``decision`` for ``event`` in ``client``'s output format.

    Args:
        client: the client the event came from.
        event: the parsed event.
        decision: what ledger decided.
        deny_via_exit_code: answer a deny/block with exit code 2 and the reason on stderr
            instead of JSON, for clients or versions where the JSON form cannot be used. The
            default is the JSON form with exit code 0.

    Raises:
        InputError: unknown client.
        ValueError: ``decision.permission`` is not ``allow``/``deny``/``ask``/``None``.
    """
    module = adapter(client)
    if decision.permission not in _PERMISSIONS:
        raise ValueError(f"invalid permission {decision.permission!r}")
    return module.render(event, decision, deny_via_exit_code=deny_via_exit_code)


def event_phase(client: str, name: str) -> Phase:
    """The phase of event ``name`` for ``client``; the client's or the neutral spelling works.

    Raises:
        InputError: unknown client.
    """
    phase = adapter(client).native_phase(name)
    if phase is None:  # not the client's own spelling: read it as a neutral (Claude) name
        phase = adapter("claude").native_phase(name) or "other"
    return phase


_recovery: tuple[Pattern[bytes], Pattern[bytes]] | None = None


def _recovery_patterns() -> tuple[Pattern[bytes], Pattern[bytes]]:
    # Crash path only, so compiled on first use. Inside JSON strings quotes are escaped, so the
    # patterns only match real keys and values.
    global _recovery  # noqa: PLW0603 - a lazily built module constant
    if _recovery is None:
        _recovery = (
            re.compile(
                rb'"(?:hook_event_name|hookName|agent_action_name|hookEventName)"\s*:\s*"([A-Za-z_]+)"'
            ),
            re.compile(rb'"([A-Za-z_]{3,40})"'),
        )
    return _recovery


def _recover(client: str, raw: bytes | None) -> tuple[str | None, Phase | None]:
    """(event name, phase) guessed from bytes that failed to parse.

    The event-name field decides when it is there; otherwise any quoted word that names a
    tool-gating event of ``client`` (or a neutral one) counts as a pre event.
    """
    if not raw:
        return None, None
    event_key, word = _recovery_patterns()
    head = raw[:MAX_PAYLOAD_BYTES]
    match = event_key.search(head)
    if match is not None:
        name = match.group(1).decode("ascii")
        return name, event_phase(client, name)
    words = {m.group(1).decode("ascii") for m in word.finditer(head)}
    if any(event_phase(client, name) == "pre" for name in words):
        return None, "pre"
    return None, None


def _gating_anywhere(name: str) -> bool:
    """Whether ``name`` is a tool-gating event of any registered client (unknown-client path)."""
    return any(adapter(client).native_phase(name) == "pre" for client in CLIENT_NAMES)


def fail_closed_response(
    client: str,
    event: HookEvent | None,
    message: str,
    *,
    raw: bytes | None = None,
    expected_event: str | None = None,
) -> HookResponse:
    """The response to give when the hook crashed; never raises.

    On a tool-gating (``pre``) event the call is denied with a ``HOOK_ERROR`` error and a
    one-line reason; an event that guards a resident transport (the client's ``guards``:
    Claude Code's prompt, decision 0021) is blocked with that reason. Every other event gets
    exit 0 and no block; the message goes to stderr.

    The phase comes from ``event`` when the payload parsed. Otherwise it is recovered from
    ``raw`` (the event-name field, else a pre-event token anywhere) and from ``expected_event``
    (see the package docstring); if either says ``pre``, the call is denied. With no evidence at
    all, Cline fails closed (as Cline itself does for crashed hooks) and the other clients do not.

    Args:
        client: the client name.
        event: the parsed event, or ``None`` when parsing failed.
        message: what went wrong; reduced to one line of at most 500 characters.
        raw: the payload bytes, when they were read.
        expected_event: the event the hook was registered for, if the CLI knows it.
    """
    text = one_line(str(message))[:500] or "internal error"
    try:
        module = adapter(client)
    except InputError:
        pre = expected_event is not None and _gating_anywhere(expected_event)
        return HookResponse(2 if pre else 1, "", f"ledger: hook error: {text}")
    if event is None:
        recovered, phase = _recover(client, raw)
        hinted = event_phase(client, expected_event) if expected_event else None
        if "pre" in (phase, hinted):
            phase = "pre"
        elif phase is None:
            phase = hinted or ("pre" if module.SPEC.blocks_when_unsure else "other")
        # Answer for a native event of that phase, so the renderer picks the right shape.
        names = [n for n in (recovered, expected_event) if n and module.native_phase(n) == phase]
        name = names[0] if names else (module.PRE_EVENT if phase == "pre" else "")
        event = build_event(client=client, event=name, client_event=name, phase=phase, raw={})
    if event.phase == "pre":
        reason = f"ledger hook failed, so this tool call was blocked (fail-closed): {text}"
        decision = HookDecision(
            permission="deny",
            reason=reason,
            error=hook_error(HOOK_ERROR_CODES.HOOK_ERROR, text, meta={"event": event.client_event}),
        )
        stderr = f"ledger: hook error (tool call denied): {text}"
    elif event.client_event in module.SPEC.guards:
        decision = HookDecision(
            reason=f"ledger hook failed, so this prompt was blocked (fail-closed): {text}",
            block=True,
        )
        stderr = f"ledger: hook error (prompt blocked): {text}"
    else:
        decision = HookDecision()
        stderr = f"ledger: hook error (not blocking): {text}"
    try:
        response = module.render(event, decision, deny_via_exit_code=False)
    except Exception:  # noqa: BLE001 - the crash path must answer whatever happens
        return HookResponse(2 if decision.block or event.phase == "pre" else 0, "", stderr)
    return response._replace(stderr=stderr)
