"""What a scenario asserts, as functions that return the violations they find (empty: passed).

Returning violations instead of asserting lets one test prove the checks have teeth: with a
policy switched off, the same check must report what went wrong (test_policy_off_is_caught).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ledger import parse_payload

from ._harness import Workspace

PRE_EVENTS = frozenset({"PreToolUse", "BeforeTool", "preToolUse"})
HOOK_KINDS = frozenset({"hook.pre", "hook.post", "hook.event", "hook.error"})


def pre_answer(ws: Workspace, tool_use_id: str | int) -> tuple[str | None, str]:
    """ledger's decision and reason for the pre-tool hook call of ``tool_use_id`` (or the n-th
    pre-tool call, for clients that send no id): ``allow``, ``deny``, ``ask``, ``abstain``
    (answered without a decision), or None (no such call)."""
    pre = [call for call in ws.hook_calls() if call.event in PRE_EVENTS]
    for n, call in enumerate(pre):
        if (n if isinstance(tool_use_id, int) else call.payload.get("tool_use_id")) != tool_use_id:
            continue
        if call.exit_code == 2:
            return "deny", call.stderr
        answer = call.answer
        # Claude Code and Codex nest the decision; Copilot CLI's is top level.
        specific = answer.get("hookSpecificOutput") or answer
        if "permissionDecision" in specific:
            return specific["permissionDecision"], str(specific.get("permissionDecisionReason"))
        if answer.get("decision") in ("deny", "block"):
            return "deny", str(answer.get("reason"))
        return "abstain", ""
    return None, f"no pre-tool hook call for {tool_use_id}"


def files_are(ws: Workspace, expected: Mapping[str, str | None]) -> list[str]:
    """Each path holds exactly the expected text (``None``: does not exist)."""
    problems = []
    for relative, text in expected.items():
        actual = ws.read(relative)
        if actual != text:
            state = "missing" if actual is None else f"holds {actual[:80]!r}"
            want = "absent" if text is None else f"to hold {text[:80]!r}"
            problems.append(f"{relative} {state}, expected it {want}")
    return problems


def refused(
    ws: Workspace,
    denied_by_client: Iterable[str | int],
    tool_use_id: str | int,
    *,
    decision: str,
    code: str,
    files: Mapping[str, str | None],
) -> list[str]:
    """The call was answered ``decision`` naming ``code``, the client did not run it, and the
    files it would have changed are as they were."""
    problems = []
    answered, reason = pre_answer(ws, tool_use_id)
    if answered != decision or code not in reason:
        problems.append(
            f"{tool_use_id}: ledger answered {answered!r} ({reason[:200]!r}), "
            f"expected {decision} with {code}"
        )
    if tool_use_id not in set(denied_by_client):
        problems.append(f"{tool_use_id}: the client did not report the call as denied")
    return problems + files_are(ws, files)


def allowed(
    ws: Workspace,
    denied_by_client: Iterable[str | int],
    tool_use_id: str | int,
    *,
    files: Mapping[str, str | None],
) -> list[str]:
    """The call ran (not denied by ledger or the client) and left the files as expected."""
    problems = []
    answered, reason = pre_answer(ws, tool_use_id)
    if answered not in ("allow", "abstain"):
        problems.append(f"{tool_use_id}: ledger answered {answered} ({reason[:200]!r})")
    if tool_use_id in set(denied_by_client):
        problems.append(f"{tool_use_id}: the client reported the call as denied")
    return problems + files_are(ws, files)


def _payload_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def recorded(ws: Workspace, stray: Iterable[str] = ()) -> list[str]:
    """Every hook call the client made has its record, nothing else claims to be one, the
    ledger verifies, and nothing tried to leave the machine."""
    problems = [f"network request to somewhere other than the stand-in: {s}" for s in stray]
    calls = ws.hook_calls()
    if not calls:
        problems.append("the client made no hook calls at all (hooks not loaded?)")
    captured: Counter[tuple[str, str | None, str | None]] = Counter()
    for call in calls:
        event = parse_payload(ws.client, _payload_bytes(call.payload), expected_event=call.event)
        captured[(event.client_event, event.session_id, event.tool_use_id)] += 1
    written: Counter[tuple[str, str | None, str | None]] = Counter()
    for record in ws.records():
        if record["kind"] in HOOK_KINDS:
            body = record["body"]
            written[
                (
                    body.get("client_event") or body.get("event"),
                    record["actor"]["session"],
                    body.get("tool_use_id"),
                )
            ] += 1
    for key, count in (captured - written).items():
        problems.append(f"hook call not in the ledger ({count}x): {key}")
    for key, count in (written - captured).items():
        problems.append(f"ledger record without a hook call ({count}x): {key}")
    verify = ws.ledger("verify", check=False)
    if verify.returncode != 0:
        problems.append(
            f"ledger verify exited {verify.returncode}: {(verify.stdout + verify.stderr)[-500:]}"
        )
    return problems


def attributed(ws: Workspace, path: str, expected: Mapping[int, str | None]) -> list[str]:
    """``ledger blame --json`` names, for each line number in ``expected``, the tool call the
    real client made (its ``tool_use_id``), or (``None``) says no agent call wrote it."""
    done = ws.ledger("blame", "--json", path, check=False)
    if done.returncode != 0:
        return [f"ledger blame {path} exited {done.returncode}: {done.stderr.strip()[:200]}"]
    lines = {item["line"]: item for item in json.loads(done.stdout)["lines"]}
    problems = []
    for number, tool_use_id in expected.items():
        item = lines.get(number)
        if item is None:
            problems.append(f"{path}:{number}: blame has no such line")
        elif tool_use_id is None and item["status"] == "agent":
            problems.append(
                f"{path}:{number}: credited to {item.get('tool_use_id')}, "
                "but no agent call wrote it"
            )
        elif tool_use_id is not None and (item["status"], item.get("tool_use_id")) != (
            "agent",
            tool_use_id,
        ):
            problems.append(
                f"{path}:{number}: blame says {item['status']} "
                f"{item.get('tool_use_id')}, the client's call was {tool_use_id}"
            )
    return problems
