"""The neutral hook vocabulary every client adapter translates to and from.

A hook process reads one client payload, turns it into a :class:`HookEvent`, lets the policy
engine produce a :class:`HookDecision`, and writes a :class:`HookResponse` back in the client's
own format. The three types are plain ``NamedTuple`` values: immutable, cheap to build, and free
of pydantic and dataclasses so that the hook path stays inside its ~60 ms budget.

Neutral names are Claude Code's (events ``PreToolUse``, ``SessionStart`` ...; tools ``Write``,
``Edit``, ``Bash`` ...), because Claude Code is the richest protocol and Codex shares it.
"""

from __future__ import annotations

from typing import Any, Final, Literal, assert_never

from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "HOOK_ERROR_CODES",
    "MAX_PAYLOAD_BYTES",
    "SHELL_TOOLS",
    "ErrorType",
    "HookDecision",
    "HookErrorCodes",
    "HookEvent",
    "HookResponse",
    "Permission",
    "Phase",
    "for_person",
    "hook_error",
    "strictness",
]

#: Hook payloads above this size are refused before they are decoded (256 MiB). A 64 MiB
#: Write must be governed and recorded, not refused: its PostToolUse carries the content twice
#: (``tool_input`` and ``tool_response``), escaped; the record keeps at most 1 MiB of it.
MAX_PAYLOAD_BYTES: Final = 256 * 1024 * 1024

Phase = Literal["pre", "post", "other"]
"""``pre``: the event can stop a tool call; ``post``: it reports one; ``other``: anything else."""

Permission = Literal["allow", "deny", "ask"]
"""A decision on a tool call; match it exhaustively (``typing.assert_never`` on the rest)."""


def strictness(decision: Permission) -> int:
    """How strongly ``decision`` restricts the call: ``allow`` < ``ask`` < ``deny``."""
    match decision:
        case "allow":
            return 0
        case "ask":
            return 1
        case "deny":
            return 2
        case _:
            assert_never(decision)


ErrorType = Literal["tool_error", "hook_error", "hook_block"]
"""``type`` of a standardized error: a policy refused the tool call (``tool_error``), a hook
crashed or timed out (``hook_error``), or a configured hook blocked it (``hook_block``)."""

#: Neutral shell tools: the adapters map every client's shell tool to one of these, and their
#: ``tool_input["command"]`` is the command line.
SHELL_TOOLS: Final = frozenset({"Bash", "PowerShell"})


class HookEvent(NamedTuple):
    """One hook invocation, in neutral (Claude Code) vocabulary.

    Built by :func:`~ledger._clients.parse_payload`; every field is always present, ``None``
    where the client did not send it. ``raw`` keeps the payload exactly as decoded, including
    fields this adapter does not know.

    Attributes:
        client: ``claude``, ``cursor``, ``gemini``, ``codex`` or ``cline``.
        event: the neutral event name (``PreToolUse`` ...); a client event without a Claude Code
            equivalent keeps the client's own name (``afterAgentResponse``, ``TaskComplete``).
        client_event: the event name exactly as the client sent it.
        phase: ``pre``, ``post`` or ``other`` (see :data:`Phase`).
        session_id: the conversation identity (Cursor ``conversation_id``, Cline ``taskId``).
        tool_name: the neutral tool name (``Write``, ``Bash``, ``mcp__server__tool`` ...).
        raw_tool_name: the tool name as the client sent it; ``None`` for events that imply the
            tool (Cursor ``beforeShellExecution``, ``afterFileEdit`` ...).
        tool_input: the tool arguments in Claude Code's shapes where they map (``file_path`` made
            absolute against ``cwd``, ``content``, ``old_string``/``new_string``, ``edits``,
            ``command``, ``patch``); ``{}`` for events without a tool.
        tool_use_id: the client's id of the tool call, when it sends one.
        tool_response: the tool's result (any JSON value); JSON strings are decoded.
        cwd: the working directory (Cursor and Cline: the first workspace root when absent).
        model: the model name, when the client sends it.
        agent_id: the subagent id, when the event comes from inside a subagent.
        agent_type: the subagent (or ``--agent``) type.
        transcript_path: the client's transcript file, when it sends one.
        prompt: the user prompt (prompt-submit events).
        error: the failure text (tool-failure and stop-failure events).
        duration_ms: how long the tool (or session) took, in milliseconds.
        source: why a session started (Claude Code SessionStart ``startup``/``resume``/...).
        event_reason: why a session ended (SessionEnd ``reason``; Cursor ``sessionEnd``); named
            so that it is never confused with ledger's own decision ``reason``.
        raw: the decoded payload, untouched.
    """

    client: str
    event: str
    client_event: str
    phase: Phase
    session_id: str | None
    tool_name: str | None
    raw_tool_name: str | None
    tool_input: dict[str, Any]
    tool_use_id: str | None
    tool_response: Any
    cwd: str | None
    model: str | None
    agent_id: str | None
    agent_type: str | None
    transcript_path: str | None
    prompt: str | None
    error: str | None
    duration_ms: int | None
    source: str | None
    event_reason: str | None
    raw: dict[str, Any]


class HookDecision(NamedTuple):
    """What ledger wants the client to do, before it is rendered in the client's format.

    Attributes:
        permission: for tool-gating events (``phase == "pre"``, Claude ``PermissionRequest``,
            Cursor ``subagentStart``/``beforeTabFileRead``): ``allow``, ``deny``, ``ask`` or
            ``None`` (no opinion: the client's own permission flow decides). ``allow`` is not
            "no objection": Claude Code and Cursor then skip their own permission prompt, so
            use ``None`` unless ledger means to approve. On other blockable events ``deny``
            counts as ``block``; ``ask`` is ignored there.
        reason: one line for the human and the agent; required in spirit for ``deny``/``ask``.
        additional_context: text for the agent's context (dropped where the client's event has
            no such channel).
        updated_input: a replacement ``tool_input`` in neutral shape; renderers map it back to
            the client's argument names where the client supports input rewriting.
        block: block a non-tool event (prompt submit, stop, post-tool ...), or deny a pre event.
        error: the standardized error object from :func:`hook_error`; sent to the agent with
            the reason.
        system_message: a warning shown to the user, where the client has such a field.
    """

    permission: Permission | None = None
    reason: str | None = None
    additional_context: str | None = None
    updated_input: dict[str, Any] | None = None
    block: bool = False
    error: dict[str, Any] | None = None
    system_message: str | None = None


class HookResponse(NamedTuple):
    """What the hook process must do: exit with ``exit_code`` after writing the two streams."""

    exit_code: int
    stdout: str
    stderr: str = ""


class HookErrorCodes(NamedTuple):
    """The standardized error codes; each field's value is its own name.

    Use the instance :data:`HOOK_ERROR_CODES`: ``HOOK_ERROR_CODES.SCOPE_VIOLATION``;
    ``code in HOOK_ERROR_CODES`` tests membership.
    """

    INTENT_REQUIRED: str = "INTENT_REQUIRED"
    """A mutating tool call with no active intent selected."""
    SCOPE_VIOLATION: str = "SCOPE_VIOLATION"
    """The target is outside the active intent's ``owned_scope``."""
    STALE_FILE: str = "STALE_FILE"
    """The file changed since the agent last read it."""
    DESTRUCTIVE_COMMAND: str = "DESTRUCTIVE_COMMAND"
    """A shell command matched a destructive pattern."""
    HITL_REJECT: str = "HITL_REJECT"
    """A human rejected the action."""
    HOOK_ERROR: str = "HOOK_ERROR"
    """ledger itself failed; a pre event is denied (fail-closed)."""
    ORCHESTRATION_PROTECTED: str = "ORCHESTRATION_PROTECTED"
    """The agent tried to write ``.orchestration/`` directly."""
    SCOPE_EXPANSION_REQUESTED: str = "SCOPE_EXPANSION_REQUESTED"
    """The agent asked for a wider scope; a human must approve it."""
    HOOK_BLOCKED: str = "HOOK_BLOCKED"
    """A configured hook (``hooks.yaml``) blocked the call (exit 2)."""
    TAMPER: str = "TAMPER"
    """The tripwire found ledger's protected files or records changed outside the hooks; every
    call is denied until a person runs ``ledger tamper accept`` or ``revert``."""


HOOK_ERROR_CODES: Final = HookErrorCodes()


def hook_error(
    code: str,
    message: str,
    *,
    meta: dict[str, Any] | None = None,
    error_type: ErrorType = "tool_error",
) -> dict[str, Any]:
    """Build the standardized JSON error object ``{type, code, message, meta}``.

    The one builder of error objects: policies, the engine, external-hook executors and the
    adapters' fail-closed answer all call it.

    Args:
        code: one of :data:`HOOK_ERROR_CODES`.
        message: one line saying what was refused and why.
        meta: machine-readable details (``intent_id``, ``path`` ...); ``{}`` when omitted.
        error_type: the ``type`` member (:data:`ErrorType`).

    Raises:
        ValueError: ``code`` is not a standardized code.
    """
    if code not in HOOK_ERROR_CODES:
        raise ValueError(f"unknown hook error code {code!r}")
    return {"type": error_type, "code": code, "message": message, "meta": dict(meta or {})}


def for_person(text: str, limit: int) -> str:
    """``text`` as a person is shown it (an ``ask`` prompt): control and format characters
    (escapes, bidi overrides, zero-width marks) removed, whitespace runs made one space, and
    at most ``limit`` characters, so an agent's words cannot redraw or flood the prompt."""
    import unicodedata  # noqa: PLC0415 -- only when an agent's text reaches a person

    kept = "".join(
        " " if c.isspace() else c
        for c in text
        if unicodedata.category(c) not in ("Cc", "Cf") or c.isspace()
    )
    flat = " ".join(kept.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"
