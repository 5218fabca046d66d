"""Blame is as honest as review about evidence that does not verify here: a line a doctored
fetched ledger claims is never agent and never silently git, but ``unverified``, with the one
command that fetches that ledger again (the same rule and words as ``ledger review``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ledger._projections.blame_schema import blame_schema
from ledger._review import build_review
from tests.cli.inprocess import run_in_process
from tests.review._support import doctor_teammate_ref, run_fix, shared_clones


def _blame(root: Path, env: dict[str, str], *args: str) -> str:
    done = run_in_process(["blame", *args], stdin=b"", cwd=root, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


@pytest.mark.parametrize("how", ["a record edited", "an unreadable line inserted"])
def test_a_doctored_fetched_ledger_makes_blame_say_unverified_never_agent_nor_git(
    tmp_path: Path, how: str
) -> None:
    clones = shared_clones(tmp_path)
    a_id = clones.a_ledger.ledger_id
    before = json.loads(_blame(clones.b_root, clones.b_env, "src/app.py", "--json"))
    assert [x["status"] for x in before["lines"]] == ["agent", "agent"]
    ref = doctor_teammate_ref(clones, how)

    data = json.loads(_blame(clones.b_root, clones.b_env, "src/app.py", "--json"))
    jsonschema.validate(data, blame_schema())
    assert [(x["status"], x["unverified"]) for x in data["lines"]] == [("unknown", True)] * 2
    assert data["summary"]["unverified"] == {"lines": 2, "percent": 100.0}
    assert data["summary"]["unknown"]["lines"] == 2
    assert data["summary"]["git"]["lines"] == data["summary"]["agent"]["lines"] == 0
    for line in data["lines"]:
        assert line["ledger_id"] == a_id  # whose claim it is, named and not trusted
        assert line["commit"]  # the line is committed: git's facts stay
        assert f"fix: git update-ref -d {ref} && ledger fetch origin" in line["reason"]

    # the same words as the review of the same lines, from the one rule
    review = build_review("HEAD~1..HEAD", root=clones.b_root, environ=clones.b_env)
    [run] = next(f for f in review["files"] if f["path"] == "src/app.py")["runs"]
    assert run["reason"] == data["lines"][0]["reason"]

    text = _blame(clones.b_root, clones.b_env, "src/app.py")
    rows, summary, fix = text.splitlines()[:2], text.splitlines()[2], text.splitlines()[3:]
    assert all(" unverified " in row and " agent" not in row for row in rows)
    assert "0 agent (0.0%), 0 git (0.0%), 2 unknown (100.0%), 2 of them unverified" in summary
    [line] = fix
    assert line.startswith(f"-- unverified: evidence not verified: the ledger {a_id}")
    assert f"fix: git update-ref -d {ref} && ledger fetch origin" in line

    porcelain = _blame(clones.b_root, clones.b_env, "src/app.py", "--porcelain")
    assert porcelain.count("x-ledger-status unknown") == 2
    assert porcelain.count("x-ledger-unverified True") == 2
    assert "Not Committed Yet" not in porcelain  # git's commit stays named

    # a person's line in the same clone is still git: only the broken claim changes
    readme = json.loads(_blame(clones.b_root, clones.b_env, "README", "--json"))
    assert [x["status"] for x in readme["lines"]] == ["git", "git"]

    # the fix it prints works as written
    run_fix(clones, line.split("fix: ", 1)[1])
    fixed = json.loads(_blame(clones.b_root, clones.b_env, "src/app.py", "--json"))
    assert [x["status"] for x in fixed["lines"]] == ["agent", "agent"]
    assert fixed["summary"]["unverified"]["lines"] == 0
