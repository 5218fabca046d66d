"""The hook engine (ordering, matchers, once, merging, execute_tool) and the external executors."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ledger._errors import LedgerError, PolicyError
from ledger._governance.engine import (
    HookEngine,
    HookFn,
    HookOutcome,
    Invocation,
    RecordFn,
    invocation_id_for,
    merge_outcomes,
)
from ledger._governance.executors import CommandHook, HttpHook, PromptHook, parse_hook_output
from ledger._governance.vocabulary import Permission

from ._support import Session, make_workspace

PY = sys.executable


def inv(
    tool: str | None = "Write",
    tool_input: dict[str, Any] | None = None,
    *,
    session: str | None = "s1",
    event: str = "PreToolUse",
    cwd: str | None = "/ws",
    **extra: Any,
) -> Invocation:
    tool_use_id = extra.pop("tool_use_id", None)
    return Invocation(
        id=invocation_id_for("claude", session, tool_use_id),
        event=event,
        tool_name=tool,
        tool_input=tool_input or {},
        tool_use_id=tool_use_id,
        session_id=session,
        cwd=cwd,
        client=extra.pop("client", None),
        **extra,
    )


def recorder() -> tuple[list[tuple[str, dict[str, Any], Invocation]], RecordFn]:
    seen: list[tuple[str, dict[str, Any], Invocation]] = []

    def record(kind: str, body: dict[str, Any], invocation: Invocation) -> None:
        seen.append((kind, body, invocation))

    return seen, record


def say(decision: Permission | None = None, **fields: Any) -> HookFn:
    return lambda _inv: HookOutcome(decision=decision, **fields)


def crash(_inv: Invocation) -> None:
    """A hook with a bug in it."""
    raise ZeroDivisionError("division by zero")


# --- ordering -------------------------------------------------------------------------------


def test_pre_hooks_run_in_registration_order() -> None:
    calls: list[str] = []
    engine = HookEngine()
    for name in ("c", "a", "b", "z", "m"):

        def hook(_inv: Invocation, n: str = name) -> None:
            calls.append(n)

        engine.register_pre_hook(name, hook)
    merged = engine.run_pre(inv())
    assert calls == ["c", "a", "b", "z", "m"]
    assert [h["name"] for h in merged.hooks] == ["c", "a", "b", "z", "m"]
    assert [h.name for h in engine.hooks] == ["c", "a", "b", "z", "m"]


def test_hooks_of_other_events_do_not_run() -> None:
    calls: list[str] = []
    engine = HookEngine()
    engine.register_pre_hook("pre", lambda _i: calls.append("pre"))
    engine.register_post_hook("post", lambda _i: calls.append("post"))
    engine.register_hook("SessionStart", "start", lambda _i: calls.append("start"))
    engine.run_pre(inv())
    assert calls == ["pre"]
    engine.run_event(inv(None, event="SessionStart"))
    assert calls == ["pre", "start"]


def test_duplicate_name_for_an_event_is_refused_but_allowed_for_another_event() -> None:
    engine = HookEngine()
    engine.register_pre_hook("x", say())
    with pytest.raises(PolicyError):
        engine.register_pre_hook("x", say())
    engine.register_post_hook("x", say())  # another event: fine
    with pytest.raises(PolicyError):
        engine.register_pre_hook("y", say(), mode="later")
    with pytest.raises(PolicyError):
        engine.register_pre_hook("z", say(), matcher="Edit(")


# --- matchers -------------------------------------------------------------------------------

MATCHER_CASES = [
    (None, "Write", {}, True),
    ("", "Write", {}, True),
    ("*", "mcp__memory__create", {}, True),
    ("Write", "Write", {}, True),
    ("Write", "Edit", {}, False),
    ("Write", "WriteFile", {}, False),
    ("Edit|Write", "Write", {}, True),
    ("Edit|Write", "Edit", {}, True),
    ("Edit|Write", "MultiEdit", {}, False),
    ("Edit.*", "NotebookEdit", {}, True),  # unanchored regex
    ("^Edit$", "NotebookEdit", {}, False),
    ("mcp__memory__.*", "mcp__memory__create", {}, True),
    ("mcp__memory", "mcp__memory__create", {}, False),  # exact name, not a prefix
    ("Bash(git *)", "Bash", {"command": "git status"}, True),
    ("Bash(git *)", "Bash", {"command": "git"}, True),
    ("Bash(git *)", "Bash", {"command": "gitk"}, False),
    ("Bash(git *)", "Bash", {"command": "rm -rf /"}, False),
    ("Bash(git *)", "Write", {"command": "git status"}, False),
    ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/auth/a.ts"}, True),
    ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/a.ts"}, True),
    ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/auth/a.js"}, False),
    ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/lib/a.ts"}, False),
    ("Edit(src/**/*.ts)", "Edit", {"file_path": "/elsewhere/src/a.ts"}, False),
    ("Edit(src/**/*.ts)", "Write", {"file_path": "/ws/src/a.ts"}, False),
]


@pytest.mark.parametrize(("matcher", "tool", "tool_input", "fires"), MATCHER_CASES)
def test_matchers_select_the_hooks_that_run(
    matcher: str | None, tool: str, tool_input: dict[str, Any], fires: bool
) -> None:
    calls: list[str] = []
    engine = HookEngine()
    engine.register_pre_hook("always", lambda _i: calls.append("always"))
    engine.register_pre_hook("matched", lambda _i: calls.append("matched"), matcher=matcher)
    engine.run_pre(inv(tool, tool_input, cwd="/ws"))
    assert calls == (["always", "matched"] if fires else ["always"])


def test_matcher_is_ignored_for_events_without_a_tool() -> None:
    calls: list[str] = []
    engine = HookEngine()
    engine.register_hook("Stop", "stop", lambda _i: calls.append("stop"), matcher="Write")
    engine.run_event(inv(None, event="Stop"))
    assert calls == ["stop"]


# --- once -------------------------------------------------------------------------------------


def test_once_fires_at_most_once_per_session() -> None:
    calls: list[str | None] = []
    engine = HookEngine()
    engine.register_pre_hook("greet", lambda i: calls.append(i.session_id), once=True)
    engine.register_pre_hook("every", lambda _i: None)
    for _ in range(3):
        engine.run_pre(inv(session="s1"))
    engine.run_pre(inv(session="s2"))
    engine.run_pre(inv(session="s2"))
    assert calls == ["s1", "s2"]


def test_once_survives_across_engine_instances_via_fired_once() -> None:
    calls: list[str | None] = []
    seen, record = recorder()
    first = HookEngine(record=record)
    first.register_pre_hook("greet", lambda i: calls.append(i.session_id), once=True)
    first.run_pre(inv(session="s1"))
    fired = [(i.session_id, h["name"]) for _k, body, i in seen for h in body["hooks"]]
    assert ("s1", "greet") in fired

    second = HookEngine(fired_once=fired)  # a later hook process, state from the ledger
    second.register_pre_hook("greet", lambda i: calls.append(i.session_id), once=True)
    second.run_pre(inv(session="s1"))
    second.run_pre(inv(session="s3"))
    assert calls == ["s1", "s3"]


def test_once_across_hook_processes_through_the_ledger(tmp_path: Path) -> None:
    """A hooks.yaml ``once`` hook runs once per session although every call is a new engine."""
    ws = make_workspace(tmp_path)
    counter = tmp_path / "counter.txt"
    script = tmp_path / "count.py"
    script.write_text(f"open({str(counter)!r}, 'a').write('x\\n')\n", encoding="utf-8")
    (ws.orchestration / "hooks.yaml").write_text(
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n"
        f"        - type: command\n          command: {PY} {script}\n          once: true\n",
        encoding="utf-8",
    )
    first, second = Session(ws, "sess-1"), Session(ws, "sess-2")
    for _ in range(3):
        first.event("UserPromptSubmit", prompt="hello")
    second.event("UserPromptSubmit", prompt="hello")
    second.event("UserPromptSubmit", prompt="again")
    assert counter.read_text(encoding="utf-8").count("x") == 2


# --- merging --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        ([], "allow"),
        ([None, None], "allow"),
        (["allow", "allow"], "allow"),
        (["allow", "ask"], "ask"),
        (["ask", "allow"], "ask"),
        (["allow", "ask", "deny"], "deny"),
        (["deny", "ask"], "deny"),
        (["ask", None, "allow"], "ask"),
    ],
)
def test_merge_most_restrictive_wins(decisions: list[Permission | None], expected: str) -> None:
    merged = merge_outcomes(
        (f"h{i}", HookOutcome(decision=d, reason=f"r{i}")) for i, d in enumerate(decisions)
    )
    assert merged.decision == expected
    if expected != "allow" or "allow" in decisions:
        assert merged.reason == f"r{decisions.index(expected)}"
    assert merged.explicit == any(d is not None for d in decisions)


def test_merge_context_concatenated_and_last_updated_input_wins() -> None:
    merged = merge_outcomes(
        [
            ("a", HookOutcome(additional_context="first", updated_input={"v": 1})),
            ("b", HookOutcome(decision="allow")),
            ("c", HookOutcome(additional_context="second\nline", updated_input={"v": 3})),
            ("d", HookOutcome(additional_context="")),
        ]
    )
    assert merged.additional_context == "first\nsecond\nline"
    assert merged.updated_input == {"v": 3}
    assert merged.error is None


def test_merge_keeps_error_of_the_winning_decision() -> None:
    ask_error = {"code": "DESTRUCTIVE_COMMAND"}
    deny_error = {"code": "SCOPE_VIOLATION"}
    merged = merge_outcomes(
        [
            ("a", HookOutcome(decision="ask", error=ask_error)),
            ("b", HookOutcome(decision="deny", error=deny_error)),
        ]
    )
    assert merged.error == deny_error
    allowed = merge_outcomes([("a", HookOutcome(error={"code": "HOOK_ERROR"}))])
    assert allowed.decision == "allow"
    # Without a block the first error is kept as data for the record (e.g. HITL_REJECT);
    # it is never sent to the client as a refusal (see _governed._decision).
    assert allowed.error == {"code": "HOOK_ERROR"}
    assert allowed.hooks[0]["error"] == {"code": "HOOK_ERROR"}


def test_deny_stops_later_hooks() -> None:
    calls: list[str] = []
    engine = HookEngine()

    def hook(name: str, decision: Permission | None) -> HookFn:
        def run(_inv: Invocation) -> HookOutcome:
            calls.append(name)
            return HookOutcome(decision=decision, reason=name)

        return run

    engine.register_pre_hook("ctx", hook("ctx", None))
    engine.register_pre_hook("ask", hook("ask", "ask"))
    engine.register_pre_hook("deny", hook("deny", "deny"))
    engine.register_pre_hook("after", hook("after", "allow"))
    merged = engine.run_pre(inv())
    assert calls == ["ctx", "ask", "deny"]
    assert merged.decision == "deny"
    assert merged.reason == "deny"
    assert [h["name"] for h in merged.hooks] == ["ctx", "ask", "deny"]


def test_ask_does_not_stop_later_hooks_and_context_is_merged_in_order() -> None:
    engine = HookEngine()
    engine.register_pre_hook("a", say("ask", reason="why", additional_context="A"))
    engine.register_pre_hook("b", say(None, additional_context="B", updated_input={"x": 1}))
    engine.register_pre_hook("c", say("allow", updated_input={"x": 2}))
    merged = engine.run_pre(inv())
    assert merged.decision == "ask"
    assert merged.reason == "why"
    assert merged.additional_context == "A\nB"
    assert merged.updated_input == {"x": 2}


def test_hook_may_return_a_mapping_and_invalid_returns_fail_closed() -> None:
    engine = HookEngine()
    engine.register_pre_hook("dict", lambda _i: {"decision": "ask", "reason": "mapping"})
    assert engine.run_pre(inv()).decision == "ask"
    bad = HookEngine()
    bad.register_pre_hook("bogus", lambda _i: {"decision": "maybe"})
    merged = bad.run_pre(inv())
    assert merged.decision == "deny"
    assert merged.error is not None
    assert merged.error["code"] == "HOOK_ERROR"


# --- crashes and async ----------------------------------------------------------------------


def test_crashing_pre_hook_denies_with_hook_error() -> None:
    calls: list[str] = []
    engine = HookEngine()

    def boom(_inv: Invocation) -> None:
        raise RuntimeError("kaput\nsecond line")

    engine.register_pre_hook("boom", boom)
    engine.register_pre_hook("later", lambda _i: calls.append("later"))
    merged = engine.run_pre(inv())
    assert merged.decision == "deny"
    assert merged.error is not None
    assert merged.error["code"] == "HOOK_ERROR"
    assert merged.error["meta"]["hook"] == "boom"
    assert merged.reason is not None
    assert "RuntimeError" in merged.reason
    assert "kaput" in merged.reason
    assert "\n" not in merged.reason
    assert calls == []  # the deny stopped the chain


def test_crashing_pre_hook_with_fail_closed_off_does_not_block() -> None:
    engine = HookEngine(fail_closed=False)
    engine.register_pre_hook("boom", crash)
    merged = engine.run_pre(inv())
    assert merged.decision == "allow"
    assert merged.hooks[0]["error"]["code"] == "HOOK_ERROR"


def test_crashing_post_hook_never_blocks() -> None:
    calls: list[str] = []
    engine = HookEngine()
    engine.register_post_hook("boom", crash)
    engine.register_post_hook("deny", say("deny", reason="too late"))
    engine.register_post_hook("after", lambda _i: calls.append("after"))
    merged = engine.run_post(inv(event="PostToolUse", outcome="success"))
    assert merged.decision == "allow"
    assert merged.hooks[0]["error"]["code"] == "HOOK_ERROR"
    assert calls == ["after"]  # a post hook's "deny" is data, it stops nothing


def test_events_run_without_can_block_never_block() -> None:
    engine = HookEngine()
    engine.register_hook("SessionStart", "deny", say("deny"))
    engine.register_hook("Stop", "deny", say("deny"))
    assert engine.run_event(inv(None, event="SessionStart")).decision == "allow"
    assert engine.run_event(inv(None, event="Stop"), can_block=True).decision == "deny"


def test_async_hook_does_not_delay_the_decision_but_is_recorded_as_started() -> None:
    release, finished = threading.Event(), threading.Event()
    seen, record = recorder()
    engine = HookEngine(record=record)

    def slow(_inv: Invocation) -> HookOutcome:
        release.wait(10)
        finished.set()
        return HookOutcome(decision="deny")  # ignored: async hooks cannot decide

    def crashing(_inv: Invocation) -> None:
        raise RuntimeError("async crash is swallowed")

    engine.register_pre_hook("slow", slow, mode="async")
    engine.register_pre_hook("crash", crashing, mode="async")
    engine.register_pre_hook("sync", say("allow"))
    merged = engine.run_pre(inv())
    assert not finished.is_set()  # the decision came back while the async hook still waits
    assert merged.decision == "allow"
    assert merged.data["async:slow"] == "started"
    assert merged.data["async:crash"] == "started"
    assert seen[0][1]["data"]["async:slow"] == "started"
    release.set()
    engine.wait_async(10)
    assert finished.is_set()


# --- execute_tool ---------------------------------------------------------------------------


def test_execute_tool_runs_the_tool_when_allowed_and_links_records() -> None:
    seen, record = recorder()
    engine = HookEngine(record=record)
    engine.register_pre_hook("rewrite", say(None, updated_input={"file_path": "b.txt"}))
    engine.register_post_hook("observe", lambda i: HookOutcome(data={"outcome": i.outcome}))
    ran: list[dict[str, Any]] = []

    def write(data: dict[str, Any]) -> str:
        ran.append(data)
        return "written"

    result = engine.execute_tool(
        "Write",
        {"file_path": "a.txt"},
        {"session_id": "s1", "tool_use_id": "toolu_1", "client": "sdk", "cwd": "/ws"},
        execute=write,
    )
    assert ran == [{"file_path": "b.txt"}]
    assert result.executed
    assert result.outcome == "success"
    assert result.result == "written"
    assert result.post.data == {"outcome": "success"}
    assert [kind for kind, _b, _i in seen] == ["hook.pre", "hook.post"]
    (_k1, pre_body, pre_inv), (_k2, post_body, post_inv) = seen
    assert pre_inv.id == post_inv.id == result.invocation_id
    assert pre_inv.tool_use_id == post_inv.tool_use_id == "toolu_1"
    assert pre_inv.session_id == post_inv.session_id == "s1"
    assert pre_inv.event == "PreToolUse"
    assert post_inv.event == "PostToolUse"
    assert post_inv.outcome == "success"
    assert post_inv.tool_response == "written"
    assert post_inv.tool_input == {"file_path": "b.txt"}
    assert pre_body["decision"] == "allow"
    assert post_body["data"] == {"outcome": "success"}


def test_execute_tool_blocked_tool_does_not_run_but_post_hooks_do() -> None:
    seen, record = recorder()
    engine = HookEngine(record=record)
    engine.register_pre_hook("no", say("deny", reason="nope"))
    posts: list[str | None] = []
    engine.register_post_hook("observe", lambda i: posts.append(i.outcome))
    ran: list[Any] = []
    result = engine.execute_tool(
        "Bash", {"command": "rm -rf /"}, {"tool_use_id": "t9"}, execute=ran.append
    )
    assert ran == []
    assert not result.executed
    assert result.outcome == "blocked"
    assert result.pre.reason == "nope"
    assert posts == ["blocked"]
    assert seen[1][2].event == "PostToolUse"
    assert seen[0][2].id == seen[1][2].id
    assert seen[0][2].tool_use_id == seen[1][2].tool_use_id == "t9"


@pytest.mark.parametrize(("answer", "runs"), [(True, True), (False, False), (None, False)])
def test_execute_tool_ask_runs_only_if_the_approver_says_yes(
    answer: bool | None, runs: bool
) -> None:
    engine = HookEngine()
    engine.register_pre_hook("ask", say("ask", reason="human please"))
    asked: list[str | None] = []

    def approve(invocation: Invocation, pre: Any) -> bool:
        asked.append(pre.reason)
        assert invocation.tool_name == "Bash"
        return bool(answer)

    ran: list[Any] = []
    result = engine.execute_tool(
        "Bash", {"command": "rm x"}, execute=ran.append, approve=None if answer is None else approve
    )
    assert result.executed is runs
    assert (ran != []) is runs
    assert result.outcome == ("success" if runs else "blocked")
    assert asked == ([] if answer is None else ["human please"])


def test_execute_tool_failure_runs_post_hooks_with_outcome_failure() -> None:
    seen, record = recorder()
    engine = HookEngine(record=record)
    posts: list[tuple[str, str | None, str | None]] = []
    failures: list[str] = []
    engine.register_post_hook("observe", lambda i: posts.append((i.event, i.outcome, i.error)))
    engine.register_hook("PostToolUseFailure", "on-failure", lambda i: failures.append(i.event))

    def tool(_data: dict[str, Any]) -> None:
        raise OSError("disk full")

    result = engine.execute_tool("Write", {"file_path": "a"}, {"tool_use_id": "t1"}, execute=tool)
    assert result.executed
    assert result.outcome == "failure"
    assert posts == [("PostToolUseFailure", "failure", "OSError: disk full")]
    assert failures == ["PostToolUseFailure"]
    assert [k for k, _b, _i in seen] == ["hook.pre", "hook.post"]
    assert seen[0][2].id == seen[1][2].id


def test_execute_tool_failure_hooks_do_not_run_on_success() -> None:
    engine = HookEngine()
    failures: list[str] = []
    engine.register_hook("PostToolUseFailure", "on-failure", lambda i: failures.append(i.event))
    engine.execute_tool("Read", {"file_path": "a"}, execute=lambda _d: "ok")
    assert failures == []


def test_execute_tool_ledger_errors_from_the_tool_propagate() -> None:
    engine = HookEngine()
    with pytest.raises(LedgerError):
        engine.execute_tool(
            "Write", {}, execute=lambda _d: (_ for _ in ()).throw(LedgerError("storage gone"))
        )


def test_execute_tool_crashing_pre_hook_fails_closed() -> None:
    engine = HookEngine()
    engine.register_pre_hook("boom", crash)
    ran: list[Any] = []
    result = engine.execute_tool("Write", {"file_path": "a"}, execute=ran.append)
    assert ran == []
    assert result.outcome == "blocked"
    assert result.pre.error is not None
    assert result.pre.error["code"] == "HOOK_ERROR"


def test_invocation_ids_are_stable_per_tool_use_and_random_without() -> None:
    a = invocation_id_for("claude", "s1", "toolu_1")
    assert a == invocation_id_for("claude", "s1", "toolu_1")
    assert a != invocation_id_for("claude", "s2", "toolu_1")
    assert a != invocation_id_for("codex", "s1", "toolu_1")
    assert a[14] == "5"  # UUIDv5
    r1, r2 = invocation_id_for("claude", "s1", None), invocation_id_for("claude", "s1", None)
    assert r1 != r2
    assert r1[14] == "4"


# --- CommandHook ----------------------------------------------------------------------------


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text("import json, sys\n" + body, encoding="utf-8")
    return [PY, str(path)]


def test_command_hook_exit0_json_deny(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        "deny",
        (
            "payload = json.load(sys.stdin)\n"
            "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
            " 'permissionDecision': 'deny',"
            " 'permissionDecisionReason': 'no ' + payload['tool_name'],"
            " 'additionalContext': 'ctx'}}))\n"
        ),
    )
    outcome = CommandHook("deny", argv)(inv("Write", {"file_path": "/ws/a"}))
    assert outcome.decision == "deny"
    assert outcome.reason == "no Write"
    assert outcome.additional_context == "ctx"


def test_command_hook_exit2_blocks_with_stderr_reason(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        "block",
        ("sys.stderr.write('rm is not allowed here\\nsecond line\\n')\nsys.exit(2)\n"),
    )
    outcome = CommandHook("block", argv)(inv("Bash", {"command": "rm x"}))
    assert outcome.decision == "deny"
    assert outcome.reason == "rm is not allowed here"
    assert outcome.error is not None


def test_command_hook_exit1_is_a_non_blocking_error(tmp_path: Path) -> None:
    argv = script(tmp_path, "fail", "sys.stderr.write('oops\\n')\nsys.exit(1)\n")
    outcome = CommandHook("fail", argv)(inv())
    assert outcome.decision is None
    assert outcome.error is not None
    assert outcome.error["code"] == "HOOK_ERROR"
    assert "oops" in outcome.error["message"]


def test_command_hook_exit1_with_json_decision_still_decides(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        "deny1",
        (
            "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
            " 'permissionDecision': 'deny', 'permissionDecisionReason': 'policy says no'}}))\n"
            "sys.exit(1)\n"
        ),
    )
    outcome = CommandHook("deny1", argv)(inv())
    assert outcome.decision == "deny"


def test_command_hook_timeout_is_a_non_blocking_error(tmp_path: Path) -> None:
    argv = script(tmp_path, "slow", "import time\ntime.sleep(30)\n")
    outcome = CommandHook("slow", argv, timeout=0.5)(inv())
    assert outcome.decision is None
    assert outcome.error is not None
    assert "timed out" in outcome.error["message"]


def test_command_hook_legacy_decision_block_and_approve(tmp_path: Path) -> None:
    block = script(
        tmp_path,
        "legacy_block",
        "print(json.dumps({'decision': 'block', 'reason': 'legacy no'}))\n",
    )
    approve = script(tmp_path, "legacy_ok", "print(json.dumps({'decision': 'approve'}))\n")
    blocked = CommandHook("b", block)(inv())
    assert (blocked.decision, blocked.reason) == ("deny", "legacy no")
    assert CommandHook("a", approve)(inv()).decision == "allow"


def test_command_hook_shell_form_and_missing_command(tmp_path: Path) -> None:
    out = tmp_path / "stdin.json"
    shell = CommandHook("sh", f"cat > {out}; echo plain text, not JSON")
    outcome = shell(inv("Read", {"file_path": "/ws/a"}))
    assert outcome == HookOutcome()
    assert json.loads(out.read_text(encoding="utf-8"))["tool_input"] == {"file_path": "/ws/a"}
    missing = CommandHook("missing", [str(tmp_path / "does-not-exist")])(inv())
    assert missing.decision is None
    assert missing.error is not None
    with pytest.raises(PolicyError):
        CommandHook("empty", "")


CLAUDE_STYLE_HOOK = '''\
#!/usr/bin/env python3
"""An unchanged Claude Code PreToolUse hook: block rm -rf, nudge on tests."""
import json
import sys

data = json.load(sys.stdin)
if data.get("hook_event_name") != "PreToolUse" or data.get("tool_name") != "Bash":
    sys.exit(0)
command = data["tool_input"].get("command", "")
if "rm -rf" in command:
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"session {data['session_id']}: rm -rf is banned",
    }}))
elif command.startswith("npm test"):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "additionalContext": "tests run in CI too (" + data["transcript_path"] + ")",
    }}))
sys.exit(0)
'''


def test_unchanged_claude_code_hook_script_runs_under_the_engine(tmp_path: Path) -> None:
    path = tmp_path / "claude_hook.py"
    path.write_text(CLAUDE_STYLE_HOOK, encoding="utf-8")
    engine = HookEngine()
    engine.register_pre_hook(
        "claude-script", CommandHook("claude-script", [PY, str(path)]), matcher="Bash"
    )
    raw = {
        "session_id": "3f1c",
        "transcript_path": "/home/dev/t.jsonl",
        "cwd": "/ws",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build"},
        "tool_use_id": "toolu_01",
    }

    def from_raw(payload: dict[str, Any]) -> Invocation:
        return inv(
            "Bash",
            payload["tool_input"],
            session=payload["session_id"],
            client="claude",
            raw=payload,
            tool_use_id=payload["tool_use_id"],
        )

    denied = engine.run_pre(from_raw(raw))
    assert denied.decision == "deny"
    assert denied.reason == "session 3f1c: rm -rf is banned"
    allowed = engine.run_pre(from_raw({**raw, "tool_input": {"command": "npm test"}}))
    assert allowed.decision == "allow"
    assert allowed.additional_context == "tests run in CI too (/home/dev/t.jsonl)"
    # Without a client payload the engine builds a Claude-shaped one.
    stdin = tmp_path / "stdin.json"
    recorder_hook = CommandHook("tee", f"cat > {stdin}")
    engine.register_pre_hook("tee", recorder_hook)
    built = engine.run_pre(inv("Bash", {"command": "ls"}, session="sdk", tool_use_id="t2"))
    assert built.decision == "allow"
    assert not built.explicit
    payload = json.loads(stdin.read_text(encoding="utf-8"))
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["session_id"] == "sdk"
    assert payload["tool_input"] == {"command": "ls"}
    assert payload["tool_use_id"] == "t2"


@pytest.mark.parametrize(
    ("stdout", "decision", "is_error"),
    [
        ("", None, False),
        ("plain words", None, False),
        ("{not json", None, True),
        ('{"hookSpecificOutput": {"permissionDecision": "ask"}}', "ask", False),
        ('{"hookSpecificOutput": {"permissionDecision": "defer"}}', None, False),
        ('{"hookSpecificOutput": {"permissionDecision": "perhaps"}}', None, True),
        ('{"continue": false, "stopReason": "halt"}', "deny", False),
        ("[1, 2]", None, False),
    ],
)
def test_parse_hook_output(stdout: str, decision: str | None, is_error: bool) -> None:
    outcome = parse_hook_output(stdout, "h")
    assert outcome.decision == decision
    assert (outcome.error is not None) is is_error


# --- HttpHook --------------------------------------------------------------------------------


@pytest.fixture
def http_hook_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            command = body.get("tool_input", {}).get("command", "")
            if command == "explode":
                self.send_response(500)
                self.end_headers()
                return
            if command.startswith("rm"):
                answer = {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "http says no",
                    }
                }
            else:
                answer = {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "allow",
                    }
                }
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_http_hook_allow_deny_and_500(http_hook_server: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = http_hook_server
    hook = HttpHook("http", url, timeout=10)
    allowed = hook(inv("Bash", {"command": "ls"}, tool_use_id="toolu_http"))
    assert allowed.decision == "allow"
    assert received[0]["tool_name"] == "Bash"
    assert received[0]["hook_event_name"] == "PreToolUse"
    assert received[0]["session_id"] == "s1"
    denied = hook(inv("Bash", {"command": "rm -rf x"}))
    assert (denied.decision, denied.reason) == ("deny", "http says no")
    broken = hook(inv("Bash", {"command": "explode"}))
    assert broken.decision is None
    assert broken.error is not None
    assert "500" in broken.error["message"]


def test_http_hook_connection_refused_and_bad_url() -> None:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = HttpHook("gone", f"http://127.0.0.1:{port}/", timeout=5)(inv())
    assert outcome.decision is None
    assert outcome.error is not None
    with pytest.raises(PolicyError):
        HttpHook("ftp", "ftp://example.invalid/")


def test_http_hook_under_the_engine(http_hook_server: tuple[str, list[dict[str, Any]]]) -> None:
    url, _received = http_hook_server
    engine = HookEngine()
    engine.register_pre_hook("http", HttpHook("http", url, timeout=10))
    assert engine.run_pre(inv("Bash", {"command": "rm a"})).decision == "deny"
    assert engine.run_pre(inv("Bash", {"command": "explode"})).decision == "allow"


# --- PromptHook ------------------------------------------------------------------------------


def test_prompt_hook_with_a_judge() -> None:
    asked: list[tuple[str, str | None]] = []

    def judge(prompt: str, invocation: Invocation) -> HookOutcome | dict[str, Any] | None:
        asked.append((prompt, invocation.tool_name))
        if invocation.tool_name == "Bash":
            return {"decision": "ask", "reason": "judge unsure", "ignored": 1}
        if invocation.tool_name == "Write":
            return HookOutcome(decision="deny", reason="judge says no")
        return None

    hook = PromptHook("judge", "Is this safe?", judge)
    assert hook(inv("Bash", {"command": "x"})) == HookOutcome(decision="ask", reason="judge unsure")
    assert hook(inv("Write")).decision == "deny"
    assert hook(inv("Read")) == HookOutcome()
    assert asked == [
        ("Is this safe?", "Bash"),
        ("Is this safe?", "Write"),
        ("Is this safe?", "Read"),
    ]


def test_prompt_hook_without_a_judge_records_an_error_and_does_not_block() -> None:
    engine = HookEngine()
    engine.register_pre_hook("prompt", PromptHook("prompt", "judge me"))
    merged = engine.run_pre(inv())
    assert merged.decision == "allow"
    assert merged.hooks[0]["error"]["code"] == "HOOK_ERROR"
    assert "no prompt judge" in merged.hooks[0]["error"]["message"]


# --- external hooks configured in hooks.yaml --------------------------------------------------


def test_hooks_yaml_command_hook_governs_through_handle_event(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    path = tmp_path / "claude_hook.py"
    path.write_text(CLAUDE_STYLE_HOOK, encoding="utf-8")
    (ws.orchestration / "hooks.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        f"        - type: command\n          command: {PY} {path}\n",
        encoding="utf-8",
    )
    session = Session(ws, "yaml-sess")
    denied = session.pre("Bash", {"command": "echo rm -rf build"})  # SAFE for governance
    assert denied.permission == "deny"
    assert "rm -rf is banned" in str(denied.out)
    nudged = session.pre("Bash", {"command": "npm test"})
    assert nudged.permission == "allow"
    assert "tests run in CI too" in nudged.out["hookSpecificOutput"]["additionalContext"]
    record = ws.records()[-1]
    assert record.kind == "hook.pre"
    assert any(h["name"].startswith("PreToolUse.0.0") for h in record.body["hooks"])
