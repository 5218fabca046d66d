"""The real Claude Code CLI, offline, against ledger's installed hooks (decision 0019, findings §8).

Each scenario builds a fresh workspace (``ledger init`` + ``ledger install claude``), lets the
scripted model drive ``claude -p`` through it, and returns the violations its checks found; the
tests assert there are none. Claude Code builds every hook payload and enforces every answer
itself, so these are the policies as a user gets them.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from ._checks import allowed, attributed, files_are, pre_answer, recorded, refused
from ._claude import SELECT_ONLY, ClaudeRun, run_claude
from ._harness import SETTINGS, Workspace, make_workspace
from ._server import Call, Say, anthropic_tool_use_id

pytestmark = pytest.mark.conformance

SELECT = Call(
    "Bash", {"command": "ledger intent select INT-001", "description": "Select the intent"}
)
SOURCE = "src/auth/token.ts"
HOOKS_FILE = SETTINGS["claude"]
SOURCE_TEXT = "export const alg = 'none';\nexport const issuer = '';\n"


def tid(step: int) -> str:
    """The tool_use id the stand-in gives the call at ``step``."""
    return anthropic_tool_use_id(step)


def selected(ws: Workspace, run: ClaudeRun, step: int) -> list[str]:
    """Selection through the shell ran and bound INT-001 to this session in the ledger."""
    problems = allowed(ws, run.denied(), tid(step), files={})
    if not any(
        r["kind"] == "intent.selected"
        and r["body"].get("intent_id") == "INT-001"
        and r["actor"]["session"] == run.session_id
        for r in ws.records()
    ):
        problems.append("no intent.selected record for INT-001 in this session")
    return problems


def scenario_intent_required(binary: Path, base: Path) -> list[str]:
    ws = make_workspace(base, "claude")
    target = ws.path("src/auth/new.ts")
    run = run_claude(binary, ws, [Call("Write", {"file_path": str(target), "content": "x\n"})])
    return refused(
        ws,
        run.denied(),
        tid(0),
        decision="deny",
        code="INTENT_REQUIRED",
        files={"src/auth/new.ts": None},
    ) + recorded(ws, run.script.stray)


def scenario_in_scope(binary: Path, base: Path) -> list[str]:
    ws = make_workspace(base, "claude")
    token, session = ws.path(SOURCE), ws.path("src/auth/session.ts")
    run = run_claude(
        binary,
        ws,
        [
            SELECT,
            Call("Read", {"file_path": str(token)}),
            Call(
                "Edit", {"file_path": str(token), "old_string": "'none'", "new_string": "'HS256'"}
            ),
            Call("Write", {"file_path": str(session), "content": "export const ttl = 900;\n"}),
            Call("Bash", {"command": "cat src/auth/missing.ts", "description": "Show a file"}),
            Say("Pinned the algorithm."),
        ],
        allowed_tools=f"{SELECT_ONLY},Bash(cat:*)",
    )
    problems = selected(ws, run, 0)
    problems += allowed(
        ws, run.denied(), tid(2), files={SOURCE: SOURCE_TEXT.replace("'none'", "'HS256'")}
    )
    problems += allowed(
        ws, run.denied(), tid(3), files={"src/auth/session.ts": "export const ttl = 900;\n"}
    )
    edits = {
        r["body"]["tool_use_id"]: r["body"].get("edit")
        for r in ws.records()
        if r["kind"] == "hook.post"
    }
    for step in (2, 3):
        if not edits.get(tid(step)):
            problems.append(f"hook.post of {tid(step)} records no edit")
    # Attribution: blame names the real client's tool call for every line it wrote, and no
    # call for the line it left alone.
    problems += attributed(ws, SOURCE, {1: tid(2), 2: None})
    problems += attributed(ws, "src/auth/session.ts", {1: tid(3)})
    # A command that fails reaches PostToolUseFailure, recorded with outcome "failure".
    outcomes = [
        r["body"].get("outcome")
        for r in ws.records()
        if r["kind"] == "hook.post" and r["body"]["tool_use_id"] == tid(4)
    ]
    if outcomes != ["failure"]:
        problems.append(f"the failed cat was recorded with outcomes {outcomes}")
    return problems + recorded(ws, run.script.stray)


def scenario_out_of_scope(binary: Path, base: Path, hooks_yaml: str | None = None) -> list[str]:
    ws = make_workspace(base, "claude", hooks_yaml=hooks_yaml)
    target = ws.path("src/billing/invoice.ts")
    run = run_claude(
        binary,
        ws,
        [SELECT, Call("Write", {"file_path": str(target), "content": "export const fee = 1;\n"})],
    )
    return (
        selected(ws, run, 0)
        + refused(
            ws,
            run.denied(),
            tid(1),
            decision="deny",
            code="SCOPE_VIOLATION",
            files={"src/billing/invoice.ts": None},
        )
        + recorded(ws, run.script.stray)
    )


def test_write_before_intent_selection_is_refused(claude_binary: Path, tmp_path: Path) -> None:
    assert scenario_intent_required(claude_binary, tmp_path) == []


def test_selection_through_the_shell_then_in_scope_write_and_edit_land(
    claude_binary: Path, tmp_path: Path
) -> None:
    assert scenario_in_scope(claude_binary, tmp_path) == []


def test_out_of_scope_write_is_refused(claude_binary: Path, tmp_path: Path) -> None:
    assert scenario_out_of_scope(claude_binary, tmp_path) == []


def test_scope_policy_switched_off_is_caught_by_the_out_of_scope_check(
    claude_binary: Path, tmp_path: Path
) -> None:
    # The suite has teeth: with the scope policy off, the very same scenario must report the
    # write that got through (ledger did not deny it, and the file is on disk).
    problems = scenario_out_of_scope(
        claude_binary, tmp_path, hooks_yaml="policies: {scope: false}\n"
    )
    assert any("expected deny with SCOPE_VIOLATION" in p for p in problems), problems
    assert any(p.startswith("src/billing/invoice.ts holds") for p in problems), problems


def test_shell_write_into_orchestration_is_refused(claude_binary: Path, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, "claude")
    intents = ws.read(".orchestration/active_intents.yaml")
    # Bash is allowed outright, so only ledger's hook stands between the command and the file.
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call(
                "Bash",
                {
                    "command": "echo '  - id: INT-666' >> .orchestration/active_intents.yaml",
                    "description": "Add an intent",
                },
            ),
        ],
        allowed_tools="Bash",
    )
    assert (
        refused(
            ws,
            run.denied(),
            tid(1),
            decision="deny",
            code="ORCHESTRATION_PROTECTED",
            files={".orchestration/active_intents.yaml": intents},
        )
        == []
    )
    assert recorded(ws, run.script.stray) == []


def test_destructive_rm_is_not_run_in_headless_mode(claude_binary: Path, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, "claude")
    # ledger answers `ask`; with nobody to ask, headless Claude Code must not run it, even
    # though its own rules allow every Bash command here.
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call("Bash", {"command": f"rm {SOURCE}", "description": "Remove the token"}),
        ],
        allowed_tools="Bash",
    )
    assert (
        refused(
            ws,
            run.denied(),
            tid(1),
            decision="ask",
            code="DESTRUCTIVE",
            files={SOURCE: SOURCE_TEXT},
        )
        == []
    )
    assert recorded(ws, run.script.stray) == []


def test_stale_file_after_a_human_edit_between_read_and_edit_is_refused(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "claude")
    human = SOURCE_TEXT.replace("issuer = ''", "issuer = 'https://id.example'")
    token = ws.path(SOURCE)
    # An Edit, not a Write: Claude Code's own read-state check refuses a Write over a changed
    # file before any hook runs, whereas an Edit reaches PreToolUse first.
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call("Read", {"file_path": str(token)}),
            Call(
                "Edit",
                {"file_path": str(token), "old_string": "'none'", "new_string": "'HS256'"},
                before=lambda: ws.write(SOURCE, human),
            ),
        ],
    )
    assert (
        refused(ws, run.denied(), tid(2), decision="deny", code="STALE_FILE", files={SOURCE: human})
        == []
    )
    assert recorded(ws, run.script.stray) == []


def test_stale_file_after_another_session_edited_it_is_refused(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "claude")
    token = str(ws.path(SOURCE))
    first = str(uuid.uuid4())
    read = Call("Read", {"file_path": token})
    a1 = run_claude(claude_binary, ws, [SELECT, read, Say("Read it.")], session_id=first)
    theirs = SOURCE_TEXT.replace("issuer = ''", "issuer = 'b'")
    b = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            read,
            Call(
                "Edit",
                {"file_path": token, "old_string": "issuer = ''", "new_string": "issuer = 'b'"},
            ),
            Say("Set the issuer."),
        ],
    )
    assert allowed(ws, b.denied(), tid(2), files={SOURCE: theirs}) == []
    # Session A resumes: the conversation holds its three earlier assistant turns, so the
    # stand-in continues at step 3 with an Edit over what it read before B's change.
    a2 = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            read,
            Say("Read it."),
            Call("Edit", {"file_path": token, "old_string": "'none'", "new_string": "'HS256'"}),
        ],
        resume=first,
        prompt="Now pin the algorithm.",
    )
    assert a1.session_id == a2.session_id == first
    assert (
        refused(ws, a2.denied(), tid(3), decision="deny", code="STALE_FILE", files={SOURCE: theirs})
        == []
    )
    assert recorded(ws, a1.script.stray + b.script.stray + a2.script.stray) == []


def test_client_settings_file_is_protected_from_the_agent(
    claude_binary: Path, tmp_path: Path
) -> None:
    # The file that holds ledger's hook commands (settings.local.json since hooks moved to the
    # machine-local file): an agent that rewrites it switches its own hooks off.
    ws = make_workspace(tmp_path, "claude")
    settings = ws.read(HOOKS_FILE)
    path = str(ws.path(HOOKS_FILE))
    # Read first: Claude Code refuses a Write over a file it has not read before any hook runs.
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call("Read", {"file_path": path}),
            Call("Write", {"file_path": path, "content": "{}\n"}),
        ],
    )
    assert (
        refused(
            ws,
            run.denied(),
            tid(2),
            decision="deny",
            code="ORCHESTRATION_PROTECTED",
            files={HOOKS_FILE: settings},
        )
        == []
    )
    assert recorded(ws, run.script.stray) == []


def test_client_settings_file_stays_protected_when_the_intent_owns_everything(
    claude_binary: Path, tmp_path: Path
) -> None:
    # With owned_scope "**" the scope policy has nothing to object to; the protected-path
    # policy still denies both the file tool and the shell redirect.
    ws = make_workspace(tmp_path, "claude", scope='"**"')
    settings = ws.read(HOOKS_FILE)
    path = str(ws.path(HOOKS_FILE))
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call("Read", {"file_path": path}),
            Call("Write", {"file_path": path, "content": "{}\n"}),
            Call(
                "Bash", {"command": f"echo '{{}}' > {HOOKS_FILE}", "description": "Reset settings"}
            ),
        ],
        allowed_tools="Bash",
    )
    assert files_are(ws, {HOOKS_FILE: settings}) == []
    assert {tid(2), tid(3)} <= run.denied()
    assert [pre_answer(ws, tid(step))[0] for step in (2, 3)] == ["deny", "deny"]
    assert recorded(ws, run.script.stray) == []


def prompt_refused(ws: Workspace, run: ClaudeRun, files: dict[str, str | None]) -> list[str]:
    """Ledger could not decide the prompt and blocked it (the prompt's hook fails closed,
    decision 0021): the model was never asked, so no tool call was proposed, and the files are
    as they were."""
    prompts = [c for c in ws.hook_calls() if c.event == "UserPromptSubmit"]
    problems = [
        f"the prompt was answered {c.exit_code} {c.stdout[:200]!r}, not blocked"
        for c in prompts
        if c.answer.get("decision") != "block" or "fail-closed" not in str(c.answer.get("reason"))
    ]
    if not prompts:
        problems.append("no UserPromptSubmit hook call")
    if any(e.step is not None for e in run.script.exchanges):
        problems.append("the model was asked")
    return problems + files_are(ws, files)


def test_torn_ledger_makes_the_hook_fail_closed(claude_binary: Path, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, "claude")
    with ws.trace.open("ab") as trace:
        trace.write(b'{"v":1,"seq":')  # a crash mid-append: every append is now refused
    before = ws.trace.read_bytes()
    target = ws.path("src/auth/new.ts")
    run = run_claude(
        claude_binary, ws, [SELECT, Call("Write", {"file_path": str(target), "content": "x\n"})]
    )
    assert prompt_refused(ws, run, {"src/auth/new.ts": None}) == []
    assert ws.trace.read_bytes() == before  # nothing appended behind a torn tail
    assert (
        "torn-tail"
        in ws.ledger("verify", check=False).stdout + ws.ledger("verify", check=False).stderr
    )
    ws.ledger("repair")
    assert ws.ledger("verify", check=False).returncode == 0


def test_broken_hook_configuration_makes_the_hook_fail_closed(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "claude", hooks_yaml="policies: [this is not a mapping\n")
    target = ws.path("src/auth/new.ts")
    run = run_claude(
        claude_binary, ws, [SELECT, Call("Write", {"file_path": str(target), "content": "x\n"})]
    )
    assert prompt_refused(ws, run, {"src/auth/new.ts": None}) == []
    errors = [r for r in ws.records() if r["kind"] == "hook.error"]
    failed = [c for c in ws.hook_calls() if c.event in ("SessionStart", "UserPromptSubmit")]
    assert len(errors) >= len(failed) >= 2  # each failure is itself on the record
    assert ws.ledger("verify", check=False).returncode == 0
