"""The real Gemini CLI, offline, against ledger's installed hooks (findings §10).

Gemini sends no tool-call id, so calls are named by their step: the n-th BeforeTool call is the
model's n-th step (every step here is one tool call).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._checks import allowed, recorded, refused
from ._gemini import run_gemini
from ._harness import make_workspace
from ._server import Call, Say

pytestmark = pytest.mark.conformance

SOURCE = "src/auth/token.ts"
SOURCE_TEXT = "export const alg = 'none';\nexport const issuer = '';\n"


def test_untrusted_folder_refuses_to_run_so_no_hook_ever_runs(
    gemini_binary: Path, tmp_path: Path
) -> None:
    # The trust gate: headless Gemini CLI in an untrusted folder stops before the model is
    # asked anything, so ledger's project hooks never run (and nothing is written either).
    ws = make_workspace(tmp_path, "gemini")
    run = run_gemini(
        gemini_binary,
        ws,
        [Call("write_file", {"file_path": str(ws.path("src/auth/new.ts")), "content": "x\n"})],
        trusted=False,
    )
    assert run.returncode != 0
    assert "trusted" in run.stderr
    assert run.script.exchanges == []
    assert ws.hook_calls() == []
    assert ws.read("src/auth/new.ts") is None


def test_trusted_folder_session_is_governed_and_recorded(
    gemini_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "gemini")
    intents = ws.read(".orchestration/active_intents.yaml")
    new, billing = ws.path("src/auth/new.ts"), ws.path("src/billing/invoice.ts")
    run = run_gemini(
        gemini_binary,
        ws,
        [
            Call("write_file", {"file_path": str(ws.path("src/auth/early.ts")), "content": "x\n"}),
            Call("run_shell_command", {"command": "ledger intent select INT-001"}),
            Call("write_file", {"file_path": str(new), "content": "export const ttl = 900;\n"}),
            Call("write_file", {"file_path": str(billing), "content": "export const fee = 1;\n"}),
            Call(
                "run_shell_command",
                {"command": "echo '  - id: INT-666' >> .orchestration/active_intents.yaml"},
            ),
            Call("run_shell_command", {"command": f"rm {SOURCE}"}),
            Say("Done."),
        ],
    )
    denied = run.denied()
    assert (
        refused(
            ws,
            denied,
            0,
            decision="deny",
            code="INTENT_REQUIRED",
            files={"src/auth/early.ts": None},
        )
        == []
    )
    assert allowed(ws, denied, 1, files={}) == []
    assert allowed(ws, denied, 2, files={"src/auth/new.ts": "export const ttl = 900;\n"}) == []
    assert (
        refused(
            ws,
            denied,
            3,
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
            4,
            decision="deny",
            code="ORCHESTRATION_PROTECTED",
            files={".orchestration/active_intents.yaml": intents},
        )
        == []
    )
    # Gemini CLI has no "ask": ledger turns it into a deny that says a human must approve.
    assert (
        refused(ws, denied, 5, decision="deny", code="DESTRUCTIVE", files={SOURCE: SOURCE_TEXT})
        == []
    )
    assert recorded(ws, run.script.stray) == []
