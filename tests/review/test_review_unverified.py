"""Evidence that does not verify here never counts as agent: a teammate's fetched ledger
whose kept ref was moved to doctored evidence is named, line by line, as unverified."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

from ledger._review import build_review, render_review_markdown, render_review_sarif
from ledger._review.schema import review_schema
from tests.blame._clones import Clones
from tests.blame._world import git
from tests.cli.inprocess import run_in_process
from tests.review._support import cli, commit


def _git_in(root: Path, data: bytes, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], input=data, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def _shared(tmp_path: Path) -> Clones:
    """A's agent writes two lines and a person one; B fetched code and evidence."""
    clones = Clones(tmp_path)
    (clones.a.root / "README").write_text("hello\n", encoding="utf-8")
    commit(clones.a, "base")
    clones.a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    (clones.a.root / "README").write_text("hello\nby a person\n", encoding="utf-8")
    commit(clones.a)
    assert clones.push()
    clones.pull()
    return clones


def _doctor(clones: Clones, how: str) -> str:
    """Move B's kept ref of A's ledger to a commit whose segment was changed by hand."""
    ref = f"refs/ledger-remotes/origin/{clones.a_ledger.ledger_id}"
    good = git(clones.b_root, "rev-parse", ref).strip()
    segment = subprocess.run(
        ["git", "-C", str(clones.b_root), "cat-file", "blob", f"{good}:agent_trace.jsonl"],
        capture_output=True,
        check=True,
    ).stdout
    if how == "a record edited":
        forged = segment.replace(b'"session":"s1"', b'"session":"s9"')
    else:  # a line no parser reads, in the middle of the chain
        first_end = segment.index(b"\n") + 1
        forged = segment[:first_end] + b'{"kind":"hook.post", not json\n' + segment[first_end:]
    assert forged != segment
    blob = _git_in(clones.b_root, forged, "hash-object", "-w", "--stdin")
    note = git(clones.b_root, "rev-parse", f"{good}:checkpoint.note").strip()
    entries = f"100644 blob {blob}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
    tree = _git_in(clones.b_root, entries.encode(), "mktree")
    planted = git(clones.b_root, "commit-tree", tree, "-m", "x").strip()
    git(clones.b_root, "update-ref", ref, planted)
    return ref


@pytest.mark.parametrize("how", ["a record edited", "an unreadable line inserted"])
def test_a_doctored_fetched_segment_makes_its_lines_unverified_never_agent(
    tmp_path: Path, how: str
) -> None:
    clones = _shared(tmp_path)
    a_id = clones.a_ledger.ledger_id
    before = build_review("HEAD~1..HEAD", root=clones.b_root, environ=clones.b_env)
    assert (before["totals"]["agent"], before["totals"]["unverified"]) == (2, 0)
    ref = _doctor(clones, how)

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
    for step in teammate["fix"].split(" (")[0].split(" && "):
        if step.startswith("git "):
            git(clones.b_root, *step.split()[1:])
        else:
            assert step.startswith("ledger ")
            fetched = run_in_process(
                step.split()[1:], stdin=b"", cwd=clones.b_root, env={**os.environ, **clones.b_env}
            )
            assert fetched.returncode == 0, fetched.stderr
    fixed = json.loads(cli(clones.b_root, clones.b_env, "HEAD~1..HEAD", "--json").stdout)
    assert (fixed["totals"]["agent"], fixed["totals"]["unverified"]) == (2, 0)
