"""Evidence that does not verify here never counts as agent: a teammate's fetched ledger
whose kept ref was moved to doctored evidence is named, line by line, as unverified."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ledger._review import build_review, render_review_markdown, render_review_sarif
from ledger._review.schema import review_schema
from tests.review._support import cli, doctor_teammate_ref, run_fix, shared_clones


@pytest.mark.parametrize("how", ["a record edited", "an unreadable line inserted"])
def test_a_doctored_fetched_segment_makes_its_lines_unverified_never_agent(
    tmp_path: Path, how: str
) -> None:
    clones = shared_clones(tmp_path)
    a_id = clones.a_ledger.ledger_id
    before = build_review("HEAD~1..HEAD", root=clones.b_root, environ=clones.b_env)
    assert (before["totals"]["agent"], before["totals"]["unverified"]) == (2, 0)
    ref = doctor_teammate_ref(clones, how)

    review = build_review("HEAD~1..HEAD", root=clones.b_root, environ=clones.b_env)
    jsonschema.validate(review, review_schema())
    totals = review["totals"]
    assert (totals["agent"], totals["git"], totals["unknown"], totals["unverified"]) == (0, 1, 2, 2)
    files = {f["path"]: f for f in review["files"]}
    assert files["src/app.py"]["lines"]["unverified"] == 2
    assert files["README"]["lines"]["unverified"] == 0
    [run] = files["src/app.py"]["runs"]
    assert (run["status"], run["unverified"], run["ledger_id"]) == ("unknown", True, a_id)
    assert "does not verify here" in run["reason"]
    assert "ledger fetch origin" in run["reason"]
    teammate = next(e for e in review["evidence"] if e["ledger_id"] == a_id)
    assert teammate["verified"] is False
    assert (teammate["lines"], teammate["unverified_lines"]) == (0, 2)
    assert teammate["fix"].startswith(f"git update-ref -d {ref} && ledger fetch origin")
    assert review["intents"] == []  # no agent line: no intent is credited with them

    # the comment and SARIF, which ask git less, count and show the same
    quick = build_review("HEAD~1..HEAD", root=clones.b_root, environ=clones.b_env, git_facts=False)
    assert quick["totals"] == totals
    [result] = render_review_sarif(quick)["runs"][0]["results"]
    assert result["ruleId"] == "ledger/unverified"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/app.py"
    markdown = render_review_markdown(quick)
    assert "| added/changed | 0 (0%) | 1 (33.33%) | 2 (66.67%) | 2 | 3 |" in markdown
    text = cli(clones.b_root, clones.b_env, "HEAD~1..HEAD").stdout.decode()
    assert "2 of them unverified" in text

    # the gate sees them, in one line
    done = cli(clones.b_root, clones.b_env, "HEAD~1..HEAD", "--fail-on", "unverified")
    assert done.returncode == 1
    [line] = done.stderr.decode().splitlines()
    assert f"unverified (2 lines; ledger {a_id[:8]} does not verify)" in line

    # the fix it names works as written
    run_fix(clones, teammate["fix"])
    fixed = json.loads(cli(clones.b_root, clones.b_env, "HEAD~1..HEAD", "--json").stdout)
    assert (fixed["totals"]["agent"], fixed["totals"]["unverified"]) == (2, 0)
