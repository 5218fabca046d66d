"""``ledger query --fetched``: the teammates' ledgers ``ledger fetch`` kept are queried beside
this clone's own, each verified here, with the disclosures fetched with them: the ``content``
view and ``decisions.reason`` say disclosed, withheld or forgotten as for local records, and rows
carry ``ledger_id``.

Attacks are named after what they break: a doctored fetched disclosure must never be queried
as a value; a fetched ref moved to records that do not verify must never be queried as
evidence (left out, with a warning naming the command that fetches it again).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger import ForgetSelector, Ledger, fetch_evidence, fetched_sources, push_evidence
from ledger._evidence.disclosure import FETCHED_DISCLOSURES_DIR
from ledger._evidence.ledger import forget
from tests.cli.inprocess import run_in_process
from tests.evidence.test_disclosure_sharing import COMMAND, PROMPT, REASON, _session
from tests.evidence.test_fetched_readers import doctor_fetched_ref
from tests.evidence.test_remote import Team, home

CONTENT = "SELECT ledger_id, field, disclosure, value FROM content ORDER BY ledger_id, field"


def _shared(tmp_path: Path) -> tuple[Team, Ledger, dict[str, str]]:
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger)
    fetch_evidence(team.b)
    return team, ledger, {**home(team.base / "hb"), "HOME": str(tmp_path / "user")}


def _query(
    team: Team, env: dict[str, str], sql: str, *extra: str
) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, Any]]]:
    done = run_in_process(
        ["query", "--fetched", "--format", "json", *extra, sql], stdin=b"", cwd=team.b_root, env=env
    )
    rows = json.loads(done.stdout) if done.returncode == 0 else []
    assert isinstance(rows, list)
    return done, rows


def _fields(rows: list[dict[str, Any]], ledger_id: str) -> dict[str, tuple[str, str]]:
    return {r["field"]: (r["disclosure"], r["value"]) for r in rows if r["ledger_id"] == ledger_id}


def test_query_fetched_reads_a_teammates_records_with_their_fetched_disclosures(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    done, rows = _query(team, env, "SELECT DISTINCT ledger_id FROM events ORDER BY 1")
    assert done.returncode == 0, done.stderr
    assert {r["ledger_id"] for r in rows} == {ledger.ledger_id, team.b.ledger_id}
    done, rows = _query(team, env, CONTENT)
    assert done.returncode == 0, done.stderr
    assert _fields(rows, ledger.ledger_id) == {
        "prompt": ("withheld", "[withheld]"),
        "reason": ("disclosed", REASON),
        "tool_input.command": ("disclosed", COMMAND),
        "tool_input.content": ("withheld", "[withheld]"),
    }
    assert PROMPT.encode() not in done.stdout
    # Without --fetched, this clone's own ledger only, as before.
    own = run_in_process(
        ["query", "--format", "json", CONTENT], stdin=b"", cwd=team.b_root, env=env
    )
    assert own.returncode == 0, own.stderr
    assert COMMAND.encode() not in own.stdout


def test_query_fetched_says_forgotten_after_the_teammate_erased_and_fetched_again(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    assert forget(ledger, ForgetSelector(match="deploy-staging")).fields >= 1
    push_evidence(ledger)
    fetch_evidence(team.b)
    done, rows = _query(team, env, CONTENT)
    assert done.returncode == 0, done.stderr
    fields = _fields(rows, ledger.ledger_id)
    assert fields["tool_input.command"] == ("forgotten", "[forgotten]")
    assert COMMAND.encode() not in done.stdout


def test_a_doctored_fetched_disclosure_is_never_queried_as_a_value(tmp_path: Path) -> None:
    team, ledger, env = _shared(tmp_path)
    kept = team.b_root / ".git" / FETCHED_DISCLOSURES_DIR / "origin" / f"{ledger.ledger_id}.jsonl"
    kept.write_bytes(kept.read_bytes().replace(REASON.encode(), b"approved by security"))
    done, rows = _query(team, env, CONTENT)
    assert done.returncode == 0, done.stderr
    assert b"approved by security" not in done.stdout
    assert _fields(rows, ledger.ledger_id)["reason"] == ("withheld", "[withheld]")


def test_a_fetched_ledger_that_does_not_verify_is_left_out_with_its_way_out(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    ref = doctor_fetched_ref(team, ledger.ledger_id)
    done, rows = _query(team, env, "SELECT DISTINCT ledger_id FROM events")
    assert done.returncode == 0, done.stderr
    assert [r["ledger_id"] for r in rows] == [team.b.ledger_id]
    err = done.stderr.decode()
    assert "does not verify here and is left out" in err
    assert f"git update-ref -d {ref} && ledger fetch origin" in err
    with fetched_sources(team.b_root, environ=home(team.base / "hb")) as (sources, warnings):
        assert sources == []
        assert len(warnings) == 1


def test_fetched_sources_are_verified_and_removed_after_the_query(tmp_path: Path) -> None:
    team, ledger, _ = _shared(tmp_path)
    with fetched_sources(team.b_root, environ=home(team.base / "hb")) as (sources, warnings):
        [source] = sources
        assert warnings == []
        assert source.label == f"origin/{ledger.ledger_id}"
        assert source.verify().state == "verified"
        assert source.ledger_id == ledger.ledger_id
        copy = source.jsonl
        assert copy.read_bytes() == ledger.file.path.read_bytes()
    assert not copy.exists()


@pytest.mark.parametrize("extra", [["--ledgers", "*"]], ids=["with-ledgers"])
def test_fetched_with_ledgers_is_one_line_and_exit_3(tmp_path: Path, extra: list[str]) -> None:
    team, _, env = _shared(tmp_path)
    done, _ = _query(team, env, "SELECT 1", *extra)
    assert done.returncode == 3, done.stdout
    assert done.stderr.decode().count("\n") == 1
    assert "--fetched" in done.stderr.decode()


def test_fetched_with_nothing_fetched_queries_the_own_ledger_and_says_so(tmp_path: Path) -> None:
    team = Team(tmp_path)
    env = {**home(team.base / "hb"), "HOME": str(tmp_path / "user")}
    done, rows = _query(team, env, "SELECT DISTINCT ledger_id FROM events")
    assert done.returncode == 0, done.stderr
    assert [r["ledger_id"] for r in rows] == [team.b.ledger_id]
    assert "no teammate's ledger is fetched here (run `ledger fetch` first)" in done.stderr.decode()


def _report(
    team: Team, env: dict[str, str], *extra: str
) -> tuple[subprocess.CompletedProcess[bytes], dict[str, Any]]:
    done = run_in_process(["report", "--json", *extra], stdin=b"", cwd=team.b_root, env=env)
    data = json.loads(done.stdout) if done.returncode == 0 else {}
    assert isinstance(data, dict)
    return done, data


def test_report_fetched_includes_the_teammates_verified_ledgers(tmp_path: Path) -> None:
    team, ledger, env = _shared(tmp_path)
    own_done, own = _report(team, env)
    assert own_done.returncode == 0, own_done.stderr
    assert own["overview"]["ledgers"] == [team.b.ledger_id]

    out = tmp_path / "html"
    done, data = _report(team, env, "--fetched", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(data["overview"]["ledgers"]) == sorted([ledger.ledger_id, team.b.ledger_id])
    assert data["overview"]["records"] > own["overview"]["records"]
    name = f"origin/{ledger.ledger_id}"
    [teammate] = [item for item in data["ledgers"] if item["label"] == name]
    assert teammate["verification"] == "verified"
    assert data["left_out"] == []
    page = (out / "report.html").read_text(encoding="utf-8")
    assert name in page
    assert "left out" not in page
    assert "<span class=ok>✓</span>" in page
    assert PROMPT not in page  # the teammate's prompt was never published: still a digest


def test_report_fetched_leaves_out_a_ledger_that_does_not_verify_and_says_so(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    ref = doctor_fetched_ref(team, ledger.ledger_id)
    out = tmp_path / "html"
    done, data = _report(team, env, "--fetched", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert data["overview"]["ledgers"] == [team.b.ledger_id]  # none of its records read
    assert [item["label"] for item in data["ledgers"]] == [str(team.b_root)]
    [why] = data["left_out"]
    fix = f"git update-ref -d {ref} && ledger fetch origin"
    assert fix in why
    assert fix in done.stderr.decode()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<span class=bad>✗</span>" in page  # the page does not call the evidence verified
    assert f"left out: origin/{ledger.ledger_id} does not verify here" in page
    text = run_in_process(["report", "--fetched"], stdin=b"", cwd=team.b_root, env=env)
    assert text.returncode == 0, text.stderr
    assert f"  left out: origin/{ledger.ledger_id}" in text.stdout.decode()
