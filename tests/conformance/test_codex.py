"""The real Codex CLI, offline, against ledger's installed hooks (findings §9).

Codex loads a project's hooks only in a trusted project, and runs a non-managed hook only after
a person trusted its exact definition. These tests pin both what that gate does today and what
the hooks enforce once it is passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._checks import allowed, recorded, refused
from ._codex import call_id, run_codex
from ._harness import make_workspace
from ._server import Call, Say

pytestmark = pytest.mark.conformance

SOURCE = "src/auth/token.ts"
SOURCE_TEXT = "export const alg = 'none';\nexport const issuer = '';\n"
SELECT = Call("exec_command", {"cmd": "ledger intent select INT-001"})


def test_untrusted_hooks_are_skipped_silently_and_the_session_runs_ungoverned(
    codex_binary: Path, tmp_path: Path
) -> None:
    # `ledger install codex` succeeded, the project is trusted, yet no hook runs: Codex skips
    # hooks nobody has reviewed, without a word. A write before any intent goes through.
    ws = make_workspace(tmp_path, "codex")
    run = run_codex(
        codex_binary,
        ws,
        [Call("exec_command", {"cmd": "echo x > src/auth/early.ts"}), Say("Done.")],
        bypass_hook_trust=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert ws.hook_calls() == []
    assert ws.read("src/auth/early.ts") == "x\n"
    assert [r["kind"] for r in ws.records()] == ["ledger.genesis"]


def test_with_hook_trust_bypassed_the_session_is_governed_and_recorded(
    codex_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "codex")
    (ws.root / "src" / "billing").mkdir(parents=True)
    intents = ws.read(".orchestration/active_intents.yaml")
    run = run_codex(
        codex_binary,
        ws,
        [
            Call("exec_command", {"cmd": "echo x > src/auth/early.ts"}),
            SELECT,
            Call("exec_command", {"cmd": "echo y > src/billing/invoice.ts"}),
            Call(
                "exec_command",
                {"cmd": "echo '  - id: INT-666' >> .orchestration/active_intents.yaml"},
            ),
            Say("Done."),
        ],
        bypass_hook_trust=True,
    )
    denied = run.denied()
    assert (
        refused(
            ws,
            denied,
            call_id(0),
            decision="deny",
            code="INTENT_REQUIRED",
            files={"src/auth/early.ts": None},
        )
        == []
    )
    assert allowed(ws, denied, call_id(1), files={}) == []
    assert (
        refused(
            ws,
            denied,
            call_id(2),
            decision="deny",
            code="SCOPE_VIOLATION",
            files={"src/billing/invoice.ts": None},
        )
        == []
    )
    assert (
        refused(
            ws,
            denied,
            call_id(3),
            decision="deny",
            code="ORCHESTRATION_PROTECTED",
            files={".orchestration/active_intents.yaml": intents},
        )
        == []
    )
    assert recorded(ws, run.stray()) == []


def test_codex_cannot_run_a_command_ledger_answered_ask(codex_binary: Path, tmp_path: Path) -> None:
    # ledger's decision is `ask` (a destructive command), but Codex 0.169.0 does not enforce
    # `ask` (it logged a failed hook and ran the command): the Codex adapter answers deny, with
    # a reason saying a human must approve, and the file stays.
    ws = make_workspace(tmp_path, "codex")
    original = ws.read(SOURCE)
    run = run_codex(
        codex_binary,
        ws,
        [SELECT, Call("exec_command", {"cmd": f"rm {SOURCE}"}), Say("Done.")],
        bypass_hook_trust=True,
    )
    assert (
        refused(
            ws,
            run.denied(),
            call_id(1),
            decision="deny",
            code="DESTRUCTIVE",
            files={SOURCE: original},
        )
        == []
    )
    (pre,) = [
        r
        for r in ws.records()
        if r["kind"] == "hook.pre" and r["body"]["tool_use_id"] == call_id(1)
    ]
    assert pre["body"]["decision"] == "ask"  # the governance decision; only the answer differs
    assert recorded(ws, run.stray()) == []
