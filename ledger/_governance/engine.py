"""The hook engine: registration, matching, ordered execution, merging, and signed records.

One *invocation* is one tool call. :meth:`HookEngine.execute_tool` runs it in-process:

1. it gets a UUID;
2. pre-hooks run in registration order; a ``deny`` (a block) wins and skips the rest;
3. the tool executes only if the merged decision allows it (``ask`` needs an approver);
4. post-hooks always run, on blocked and failed outcomes too;
5. each phase is appended to the ledger as a signed record (``hook.pre`` / ``hook.post``),
   linked by invocation id and ``tool_use_id``.

Agent clients run the phases in separate processes; :meth:`HookEngine.run_pre`,
:meth:`~HookEngine.run_post` and :meth:`~HookEngine.run_event` are the same steps for one
phase, and the invocation id is derived from ``(client, session, tool_use_id)`` so the post
record links to its pre record without shared state.

Merge rules (Claude Code's, docs/architecture.md): the permission decision is the most
restrictive one (deny > ask > allow); additional context is concatenated with newlines;
``updated_input``: the last writer wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ledger._errors import LedgerError, PolicyError
from ledger._governance.matchers import Matcher, compile_matcher
from ledger._governance.vocabulary import HOOK_ERROR_CODES, Permission, hook_error, strictness
from ledger._startup.namedtuple import NamedTuple

if TYPE_CHECKING:
    import threading

__all__ = [
    "HookEngine",
    "HookOutcome",
    "HookSpec",
    "Invocation",
    "InvocationResult",
    "MergedDecision",
    "invocation_id_for",
    "merge_outcomes",
]

# RFC 9562 name-based (v5) UUIDs under this namespace; built by hand because importing `uuid`
# costs the hook path ~2 ms (it loads `platform`).
_INVOCATION_NAMESPACE: Final = bytes.fromhex("6f1d3c528a0e4d7b9b612c4e5f7a9d10")
PRE_EVENTS: Final = frozenset({"PreToolUse"})
POST_EVENTS: Final = frozenset({"PostToolUse", "PostToolUseFailure"})


class HookOutcome(NamedTuple):
    """What one hook says. Every field is optional: ``HookOutcome()`` means "no opinion".

    Attributes:
        decision: ``allow``, ``deny`` or ``ask``; ``None`` = no opinion.
        reason: one line shown to the agent (deny) or the human (ask).
        additional_context: text for the agent's context.
        updated_input: a replacement tool input.
        error: a standardized error ``{type, code, message, meta}`` (see ``hook_error``).
        data: facts to keep in the record (risk, mutation class, intent id ...).
    """

    decision: Permission | None = None
    reason: str | None = None
    additional_context: str | None = None
    updated_input: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    data: dict[str, Any] | None = None


class Invocation(NamedTuple):
    """One hook invocation as hooks see it (neutral vocabulary, see ``HookEvent``)."""

    id: str
    event: str
    tool_name: str | None
    tool_input: dict[str, Any]
    tool_use_id: str | None = None
    session_id: str | None = None
    client: str | None = None
    cwd: str | None = None
    model: str | None = None
    agent_id: str | None = None
    # post phase
    outcome: str | None = None  # success | failure | blocked
    tool_response: Any = None
    error: str | None = None
    duration_ms: int | None = None
    # the client's payload, untouched (command hooks get it verbatim)
    raw: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    # What the client said about the event itself (recorded; hooks may read them too).
    client_event: str | None = None
    prompt: str | None = None
    agent_type: str | None = None
    source: str | None = None
    event_reason: str | None = None


# A hook may also answer with a plain mapping of HookOutcome's fields (as a judge may); it is
# normalized, and an invalid one fails closed (_normalize).
HookFn = Callable[[Invocation], "HookOutcome | Mapping[str, Any] | None"]


class HookSpec(NamedTuple):
    """A registered hook."""

    name: str
    event: str
    fn: HookFn
    matcher: Matcher
    once: bool = False
    mode: str = "sync"  # "sync" | "async" (fire-and-forget, still recorded)


class MergedDecision(NamedTuple):
    """The merged outcome of every hook that ran for one phase."""

    decision: Permission
    reason: str | None
    additional_context: str | None
    updated_input: dict[str, Any] | None
    error: dict[str, Any] | None
    hooks: list[dict[str, Any]]  # one entry per hook, for the record
    data: dict[str, Any]
    explicit: bool = False  # some hook gave a decision (else "allow" means "no objection")

    @property
    def allowed(self) -> bool:
        """The tool may run without asking anyone."""
        return self.decision == "allow"


class InvocationResult(NamedTuple):
    """What :meth:`HookEngine.execute_tool` did."""

    invocation_id: str
    pre: MergedDecision
    executed: bool
    outcome: str  # success | failure | blocked
    result: Any
    post: MergedDecision


def _format_uuid(raw: bytes, version: int) -> str:
    data = bytearray(raw[:16])
    data[6] = (data[6] & 0x0F) | (version << 4)
    data[8] = (data[8] & 0x3F) | 0x80  # RFC 9562 variant
    text = data.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def invocation_id_for(client: str | None, session: str | None, tool_use_id: str | None) -> str:
    """A stable invocation id: the same tool call gets the same id in its pre and post process.

    With a ``tool_use_id`` it is a UUIDv5 of ``(client, session, tool_use_id)``; otherwise a
    random UUIDv4.
    """
    if tool_use_id:
        name = f"{client}\x00{session}\x00{tool_use_id}".encode()
        return _format_uuid(hashlib.sha1(_INVOCATION_NAMESPACE + name).digest(), 5)  # noqa: S324 -- RFC 9562 v5 is defined over SHA-1
    return _format_uuid(os.urandom(16), 4)


def merge_outcomes(entries: Iterable[tuple[str, HookOutcome]]) -> MergedDecision:
    """Merge hook outcomes (pure). ``entries`` are ``(hook name, outcome)`` in run order."""
    decision: Permission = "allow"
    reasons: dict[str, str | None] = {}
    contexts: list[str] = []
    updated: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    first_error: dict[str, Any] | None = None
    hooks: list[dict[str, Any]] = []
    data: dict[str, Any] = {}
    for name, outcome in entries:
        if first_error is None and outcome.error is not None:
            first_error = outcome.error
        hooks.append(
            {
                "decision": outcome.decision,
                "error": outcome.error,
                "name": name,
                "reason": outcome.reason,
            }
        )
        if outcome.data:
            data.update(outcome.data)
        if outcome.additional_context:
            contexts.append(outcome.additional_context)
        if outcome.updated_input is not None:
            updated = outcome.updated_input
        if outcome.decision is None:
            continue
        reasons.setdefault(outcome.decision, outcome.reason)
        if strictness(outcome.decision) > strictness(decision):
            decision = outcome.decision
            if outcome.error is not None:
                error = outcome.error
        elif outcome.decision == decision and error is None and outcome.error is not None:
            error = outcome.error
    return MergedDecision(
        decision=decision,
        reason=reasons.get(decision),
        additional_context="\n".join(contexts) or None,
        updated_input=updated,
        # With nothing blocking, keep the first error (a crashed observer, HITL_REJECT) as data.
        error=error if decision != "allow" else first_error,
        hooks=hooks,
        data=data,
        explicit=bool(reasons),
    )


def _normalize(value: object) -> HookOutcome:
    if value is None:
        return HookOutcome()
    if isinstance(value, HookOutcome):
        outcome = value
    elif isinstance(value, Mapping):
        outcome = HookOutcome(**{k: v for k, v in value.items() if k in HookOutcome._fields})
    else:
        raise PolicyError(f"hook returned {type(value).__name__}, expected HookOutcome or None")
    if outcome.decision not in (None, "allow", "deny", "ask"):
        raise PolicyError(f"hook returned an invalid decision {outcome.decision!r}")
    return outcome


RecordFn = Callable[[str, dict[str, Any], Invocation], None]


class HookEngine:
    """Registry and runner of hooks.

    Args:
        record: called with ``(kind, body, invocation)`` for each phase record; the workspace
            wiring appends it to the ledger. ``None`` records nothing (tests, dry runs).
        fired_once: ``(session, hook name)`` pairs already fired in earlier processes, so
            ``once`` hooks stay once per session across hook processes.
        fail_closed: a crashing pre-hook denies the call (default). Observational events
            never block.
    """

    def __init__(
        self,
        *,
        record: RecordFn | None = None,
        fired_once: Iterable[tuple[str | None, str]] = (),
        fail_closed: bool = True,
    ) -> None:
        self._hooks: list[HookSpec] = []
        self._record = record
        self._fired: set[tuple[str | None, str]] = set(fired_once)
        self._async_threads: list[threading.Thread] = []
        self.fail_closed = fail_closed

    # --- registration --------------------------------------------------------------------

    def register_hook(
        self,
        event: str,
        name: str,
        fn: HookFn,
        *,
        matcher: str | None = None,
        once: bool = False,
        mode: str = "sync",
    ) -> HookSpec:
        """Register ``fn`` for ``event`` (any string: Claude Code's, a client's, your own).

        Raises:
            PolicyError: bad matcher regex, unknown mode, or a duplicate name for the event.
        """
        if mode not in ("sync", "async"):
            raise PolicyError(f"hook {name}: mode must be 'sync' or 'async'")
        if any(h.name == name and h.event == event for h in self._hooks):
            raise PolicyError(f"hook {name!r} is already registered for {event}")
        spec = HookSpec(name, event, fn, compile_matcher(matcher), once, mode)
        self._hooks.append(spec)
        return spec

    def register_pre_hook(
        self,
        name: str,
        fn: HookFn,
        *,
        matcher: str | None = None,
        once: bool = False,
        mode: str = "sync",
    ) -> HookSpec:
        """Register a hook that runs before a tool call and may allow, ask or deny it."""
        return self.register_hook("PreToolUse", name, fn, matcher=matcher, once=once, mode=mode)

    def register_post_hook(
        self,
        name: str,
        fn: HookFn,
        *,
        matcher: str | None = None,
        once: bool = False,
        mode: str = "sync",
    ) -> HookSpec:
        """Register a hook that runs after every tool call: succeeded, failed or blocked."""
        return self.register_hook("PostToolUse", name, fn, matcher=matcher, once=once, mode=mode)

    @property
    def hooks(self) -> Sequence[HookSpec]:
        """Registered hooks in registration order."""
        return tuple(self._hooks)

    # --- running ---------------------------------------------------------------------------

    def _matching(self, events: Iterable[str], inv: Invocation) -> list[HookSpec]:
        wanted = set(events)
        out = []
        for spec in self._hooks:
            if spec.event not in wanted:
                continue
            if inv.tool_name is not None and not spec.matcher.matches(
                inv.tool_name, inv.tool_input, root=inv.cwd
            ):
                continue
            if spec.once and (inv.session_id, spec.name) in self._fired:
                continue
            out.append(spec)
        return out

    def _run(self, specs: list[HookSpec], inv: Invocation, *, can_block: bool) -> MergedDecision:
        entries: list[tuple[str, HookOutcome]] = []
        timings: list[int] = []
        fail_closed = can_block and self.fail_closed and inv.event in PRE_EVENTS
        for spec in specs:
            started = time.perf_counter_ns()
            if spec.once:
                self._fired.add((inv.session_id, spec.name))
            if spec.mode == "async":
                # Fire and forget: the decision never waits for it; the start is recorded.
                import threading  # noqa: PLC0415 -- only async hooks need it

                thread = threading.Thread(
                    target=_call_quietly, args=(spec.fn, inv), name=f"ledger-hook-{spec.name}"
                )
                thread.start()
                self._async_threads.append(thread)
                outcome = HookOutcome(data={f"async:{spec.name}": "started"})
            else:
                try:
                    outcome = _normalize(spec.fn(inv))
                except Exception as exc:  # noqa: BLE001 -- a crashing hook is recorded
                    outcome = _crash_outcome(spec, exc, deny=fail_closed)
            if not can_block and outcome.decision is not None:
                # Observational events never block (docs/architecture.md): keep it as data.
                outcome = outcome._replace(decision=None)
            entries.append((spec.name, outcome))
            timings.append((time.perf_counter_ns() - started) // 1_000_000)
            if outcome.decision == "deny":
                break  # any block wins and skips the remaining hooks
        merged = merge_outcomes(entries)
        for entry, ms in zip(merged.hooks, timings, strict=True):
            entry["duration_ms"] = ms
        return merged

    def wait_async(self, timeout: float | None = None) -> None:
        """Wait for async hooks started by this engine (tests; a CLI process exits anyway)."""
        for thread in self._async_threads:
            thread.join(timeout)

    def run_pre(self, inv: Invocation) -> MergedDecision:
        """Run the pre-hooks of one tool call and record ``hook.pre``."""
        merged = self._run(self._matching(PRE_EVENTS, inv), inv, can_block=True)
        self._emit("hook.pre", inv, merged)
        return merged

    def run_post(self, inv: Invocation) -> MergedDecision:
        """Run the post-hooks of one tool call (any outcome) and record ``hook.post``."""
        # Post-hooks run for every outcome; failure-specific hooks run on failures too.
        events = {"PostToolUse", inv.event}
        merged = self._run(self._matching(events, inv), inv, can_block=False)
        self._emit("hook.post", inv, merged)
        return merged

    def run_event(self, inv: Invocation, *, can_block: bool = False) -> MergedDecision:
        """Run the hooks of any other event (SessionStart, Stop, ...) and record ``hook.event``."""
        merged = self._run(self._matching((inv.event,), inv), inv, can_block=can_block)
        self._emit("hook.event", inv, merged)
        return merged

    def _emit(self, kind: str, inv: Invocation, merged: MergedDecision) -> None:
        if self._record is not None:
            self._record(
                kind,
                {
                    "decision": merged.decision,
                    "reason": merged.reason,
                    "error": merged.error,
                    "hooks": merged.hooks,
                    "data": merged.data,
                },
                inv,
            )

    def execute_tool(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        execute: Callable[[dict[str, Any]], Any] | None = None,
        approve: Callable[[Invocation, MergedDecision], bool] | None = None,
    ) -> InvocationResult:
        """Run one tool call in-process through pre-hooks, the tool, and post-hooks.

        Args:
            tool_name: neutral tool name (``Write``, ``Bash``, ...).
            tool_input: the tool's arguments.
            context: ``session_id``, ``client``, ``cwd``, ``model``, ``agent_id``,
                ``tool_use_id`` and anything else hooks may read (``Invocation.context``).
            execute: runs the tool with the (possibly updated) input; its exception is the
                failure outcome. ``None`` records the decision without running anything.
            approve: the human in the loop for ``ask``; without one, ``ask`` does not run.
        """
        ctx = dict(context or {})
        inv = Invocation(
            id=invocation_id_for(None, None, None),
            event="PreToolUse",
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=ctx.get("tool_use_id"),
            session_id=ctx.get("session_id"),
            client=ctx.get("client"),
            cwd=ctx.get("cwd"),
            model=ctx.get("model"),
            agent_id=ctx.get("agent_id"),
            context=ctx,
        )
        pre = self.run_pre(inv)
        run = pre.decision == "allow" or (
            pre.decision == "ask" and approve is not None and approve(inv, pre)
        )
        tool_input_used = pre.updated_input if pre.updated_input is not None else inv.tool_input
        result: Any = None
        error: str | None = None
        started = time.perf_counter_ns()
        if run and execute is not None:
            try:
                result = execute(dict(tool_input_used))
                outcome = "success"
            except LedgerError:
                raise
            except Exception as exc:  # noqa: BLE001 -- the tool's failure is an outcome
                outcome, error = "failure", f"{type(exc).__name__}: {_one_line(exc)}"
        else:
            outcome = "success" if run else "blocked"
        post_inv = inv._replace(
            event="PostToolUse" if outcome != "failure" else "PostToolUseFailure",
            tool_input=dict(tool_input_used),
            outcome=outcome,
            tool_response=result,
            error=error,
            duration_ms=(time.perf_counter_ns() - started) // 1_000_000,
        )
        post = self.run_post(post_inv)
        return InvocationResult(inv.id, pre, run, outcome, result, post)


def _call_quietly(fn: HookFn, inv: Invocation) -> None:
    # Async hooks are fire-and-forget by contract: their failure cannot change a decision.
    with contextlib.suppress(Exception):
        fn(inv)


def _crash_outcome(spec: HookSpec, exc: Exception, *, deny: bool) -> HookOutcome:
    message = (
        f"hook {spec.name} failed: {type(exc).__name__}: {_one_line(exc)}; run `ledger "
        f"doctor`, and fix or switch off {spec.name} in .orchestration/hooks.yaml"
    )
    error = hook_error(
        HOOK_ERROR_CODES.HOOK_ERROR, message, meta={"hook": spec.name}, error_type="hook_error"
    )
    if deny:  # PreToolUse fails closed by default
        return HookOutcome(decision="deny", reason=message, error=error)
    return HookOutcome(error=error)


def _one_line(exc: object) -> str:
    text = " ".join(str(exc).split())
    return text[:300]
