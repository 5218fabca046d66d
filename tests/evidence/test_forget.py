"""``ledger forget``: erasure that keeps verify green.

Attacks are named after what they break: forget racing hook appends in other processes must
lose no record and no other disclosure; the erased plaintext must be in no file ledger keeps;
the signed record of the erasure must not itself carry the content (nor the text matched).
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from ledger import Ledger
from ledger._evidence.disclosure import FORGOTTEN, Content, DisclosureStore, ForgetSelector
from ledger._evidence.ledger import forget
from tests.evidence.test_disclosure import TOKEN, run_cli
from tests.hooks._support import Session, Workspace, make_workspace

PROMPT = "refactor the billing module, codename BLUEHERON"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def _session(ws: Workspace, session_id: str = "s-forget") -> Session:
    session = Session(ws, session_id)
    session.event("UserPromptSubmit", prompt=PROMPT)
    session.select()
    session.pre("Bash", {"command": "grep -rn BLUEHERON src/"})
    return session


def _prompt_seq(ws: Workspace) -> int:
    return next(r.seq for r in ws.records() if r.body.get("event") == "UserPromptSubmit")


def _store_text(ws: Workspace) -> str:
    path = ws.orchestration / "disclosures.jsonl"
    return path.read_text() if path.exists() else ""


def test_forget_seq_erases_the_plaintext_and_verify_stays_green(ws: Workspace) -> None:
    _session(ws)
    seq = _prompt_seq(ws)
    done = run_cli(ws, "forget", str(seq), "--yes")
    assert done.returncode == 0, done.stderr
    assert "forgot 1 field(s) of 1 record(s)" in done.stdout
    assert PROMPT not in _store_text(ws)
    leftovers = [p.name for p in ws.orchestration.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    verified = run_cli(ws, "verify")
    assert verified.returncode == 0, verified.stderr
    assert "1 fields withheld (1 forgotten)" in verified.stdout
    assert FORGOTTEN in run_cli(ws, "show", str(seq)).stdout


def test_the_forgotten_record_names_commitments_never_content(ws: Workspace) -> None:
    _session(ws)
    done = run_cli(ws, "forget", "--match", "BLUEHERON", "--yes")
    assert done.returncode == 0, done.stderr
    record = ws.records()[-1]
    assert record.kind == "ledger.forgotten"
    assert record.body["by"] == ["match"]
    assert record.body["fields"] == 2  # the prompt and the command line
    assert len(record.body["commitments"]) == 2
    assert b"BLUEHERON" not in ws.ledger_bytes()
    assert "BLUEHERON" not in _store_text(ws)
    assert Ledger.open(ws.root, environ=ws.env).verify().ok


def test_forget_one_field_keeps_the_others(ws: Workspace) -> None:
    _session(ws)
    pre = next(r for r in ws.records() if r.kind == "hook.pre" and r.body.get("tool") == "Bash")
    fields = {
        line["field"]
        for line in DisclosureStore.beside(ws.orchestration / "agent_trace.jsonl").lines()
        if line.get("seq") == pre.seq
    }
    assert "tool_input.command" in fields
    done = run_cli(ws, "forget", f"{pre.seq}.tool_input.command", "--yes")
    assert done.returncode == 0, done.stderr
    left = {
        line["field"]
        for line in DisclosureStore.beside(ws.orchestration / "agent_trace.jsonl").lines()
        if line.get("seq") == pre.seq and "forgotten" not in line
    }
    assert left == fields - {"tool_input.command"}


def test_forget_by_session_and_by_age(ws: Workspace) -> None:
    _session(ws, "s-one")
    _session(ws, "s-two")
    by_session = run_cli(ws, "forget", "--session", "s-one", "--yes")
    assert by_session.returncode == 0, by_session.stderr
    sessions = {
        line.get("session") for line in json_lines(_store_text(ws)) if "forgotten" not in line
    }
    assert sessions == {"s-two"}
    assert run_cli(ws, "forget", "--older-than", "1d", "--yes").stdout.startswith("nothing")
    everything = run_cli(ws, "forget", "--older-than", "0m", "--yes")
    assert everything.returncode == 0, everything.stderr
    assert PROMPT not in _store_text(ws)


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line]


@pytest.mark.parametrize(
    "args",
    [["99999"], ["12.x", "99999.prompt"], ["not-a-seq"], [], ["--older-than", "soon"]],
)
def test_bad_forget_is_one_line_exit_2(ws: Workspace, args: list[str]) -> None:
    _session(ws)
    before = ws.ledger_bytes()
    done = run_cli(ws, "forget", *args, "--yes")
    assert done.returncode == 2
    assert done.stderr.startswith("ledger: error: ")
    assert "Traceback" not in done.stderr
    assert ws.ledger_bytes() == before


def _append_with_content(root: str, home: str, count: int) -> None:
    ledger = Ledger.open(root, environ={"LEDGER_HOME": home})
    for i in range(count):
        ledger._append_entries(
            [("app.note", {"text": Content(f"note {i} {TOKEN}")})], internal=False
        )


def _forget_repeatedly(root: str, home: str, rounds: int) -> None:
    ledger = Ledger.open(root, environ={"LEDGER_HOME": home})
    for _ in range(rounds):
        forget(ledger, ForgetSelector(match="forget me"))


def test_forget_racing_appends_in_other_processes_loses_nothing(ws: Workspace) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    for i in range(20):
        ledger._append_entries([("app.note", {"text": Content(f"forget me {i}")})], internal=False)
    context = multiprocessing.get_context("fork")
    writers = [
        context.Process(target=_append_with_content, args=(str(ws.root), str(ws.home), 40))
        for _ in range(2)
    ]
    eraser = context.Process(target=_forget_repeatedly, args=(str(ws.root), str(ws.home), 15))
    for process in (*writers, eraser):
        process.start()
    for process in (*writers, eraser):
        process.join(120)
        assert process.exitcode == 0
    report = ledger.verify()
    assert report.ok, report.summary()
    notes = [r for r in ledger.records() if r.kind == "app.note"]
    assert len(notes) == 20 + 2 * 40
    disclosed, forgotten = DisclosureStore.beside(ledger.workspace.ledger_path).load()
    assert len(forgotten) == 20
    # Every appended note's disclosure survived the rewrites.
    assert len(disclosed) == 2 * 40
    assert report.disclosures is not None
    assert (report.disclosures.withheld, report.disclosures.forgotten) == (20, 20)
    assert TOKEN not in _store_text(ws)
