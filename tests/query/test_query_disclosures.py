"""Queries and reports show committed content as a person reads it: the disclosed value where a
disclosure present opens the commitment, ``[withheld]`` or ``[forgotten]`` where none does, and
a column that says which. A doctored disclosure is never shown; an export queried with
``--ledgers`` shows what it carries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger import ExportOptions, ForgetSelector, Ledger, QuerySession, export_ledger
from ledger._evidence.ledger import forget
from ledger._query.report import build_report
from tests.cli.inprocess import run_ledger
from tests.hooks._support import Session, Workspace, make_workspace

PROMPT = "Ship the Bluefin migration before the ninth"
COMMAND = "rm -rf src/auth/legacy"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    alice = Session(ws, "alice")
    alice.event("UserPromptSubmit", prompt=PROMPT)
    alice.select("INT-001")
    assert alice.pre("Bash", {"command": COMMAND}).code == "DESTRUCTIVE_COMMAND"
    return ws


def _rows(ws: Workspace, sql: str) -> list[tuple[object, ...]]:
    with QuerySession([ws.source], sql) as session:
        return session.run().fetchall()


_DENIED = (
    "SELECT reason, reason_disclosure, reason_commitment FROM decisions "
    "WHERE code = 'DESTRUCTIVE_COMMAND'"
)
_PROMPT = "SELECT value, disclosure, commitment FROM content WHERE field = 'prompt'"


def test_a_committed_reason_is_shown_disclosed_with_its_state_and_digest(ws: Workspace) -> None:
    [(reason, state, digest)] = _rows(ws, _DENIED)
    assert isinstance(reason, str)
    assert reason.startswith("DESTRUCTIVE: rm removes files")
    assert state == "disclosed"
    assert isinstance(digest, str)
    assert len(digest) == 64
    assert digest in (ws.orchestration / "agent_trace.jsonl").read_text()
    # A plain field (the decision of an intent selection) has no state and no digest.
    plain = _rows(ws, "SELECT reason_disclosure FROM decisions WHERE decision = 'allow'")
    assert {row[0] for row in plain} <= {None, "disclosed"}


def test_the_content_view_lists_every_committed_field(ws: Workspace) -> None:
    [(value, state, digest)] = _rows(ws, _PROMPT)
    assert (value, state) == (PROMPT, "disclosed")
    fields = {row[0] for row in _rows(ws, "SELECT DISTINCT field FROM content")}
    assert {"prompt", "reason", "tool_input.command"} <= fields
    states = _rows(ws, "SELECT DISTINCT disclosure FROM content")
    assert states == [("disclosed",)]
    assert isinstance(digest, str)


def test_forgotten_and_withheld_fields_say_so(ws: Workspace) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    assert forget(ledger, ForgetSelector(match="Bluefin")).fields >= 1
    assert _rows(ws, _PROMPT)[0][:2] == ("[forgotten]", "forgotten")
    assert _rows(ws, _DENIED)[0][1] == "disclosed"  # only what was forgotten went
    (ws.orchestration / "disclosures.jsonl").unlink()
    assert _rows(ws, _DENIED)[0][:2] == ("[withheld]", "withheld")
    assert _rows(ws, _PROMPT)[0][:2] == ("[withheld]", "withheld")


def test_a_doctored_disclosure_is_never_shown(ws: Workspace) -> None:
    store = ws.orchestration / "disclosures.jsonl"
    store.write_text(store.read_text().replace(PROMPT, "Ship nothing, ever"))
    [(value, state, _)] = _rows(ws, _PROMPT)
    assert (value, state) == ("[withheld]", "withheld")


def test_an_export_shows_what_it_carries(ws: Workspace, tmp_path: Path) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    plain, full = tmp_path / "exports" / "plain", tmp_path / "exports" / "full"
    plain.parent.mkdir()
    export_ledger(ledger, ExportOptions(plain, "jsonl"))
    export_ledger(ledger, ExportOptions(full, "jsonl", disclose="all"))
    done = run_ledger(
        "query",
        "--ledgers",
        str(tmp_path / "exports" / "*"),
        "--format",
        "json",
        "SELECT value, disclosure FROM content WHERE field = 'prompt' ORDER BY value",
        env=ws.proc_env,
    )
    assert done.returncode == 0, done.stderr
    # The record is in both exports; the one that carries its disclosure opens it for both.
    assert json.loads(done.stdout) == [{"value": PROMPT, "disclosure": "disclosed"}] * 2
    alone = run_ledger(
        "query",
        "--ledgers",
        str(plain),
        "--format",
        "json",
        "SELECT value, disclosure FROM content WHERE field = 'prompt'",
        env=ws.proc_env,
    )
    assert json.loads(alone.stdout) == [{"value": "[withheld]", "disclosure": "withheld"}]


def test_the_report_shows_the_reason_and_its_json_the_digest(ws: Workspace) -> None:
    data = build_report([ws.source])
    [row] = data["destructive"]
    assert row["reason"].startswith("DESTRUCTIVE: rm removes files")
    assert row["reason_disclosure"] == "disclosed"
    assert len(row["reason_commitment"]) == 64
    (ws.orchestration / "disclosures.jsonl").unlink()
    [row] = build_report([ws.source])["destructive"]
    assert row["reason"] == "[withheld]"
    assert row["reason_commitment"] in (ws.orchestration / "agent_trace.jsonl").read_text()
