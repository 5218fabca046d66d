"""Attacks on ``ledger review``: what an agent's shell could plant for the person or the CI job
that reviews its work."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.blame._world import git
from tests.blame.test_planted_git_config import _plant
from tests.hooks._support import LEDGER
from tests.review._support import based_world, commit


def test_planted_git_config_does_not_run_when_a_range_is_reviewed(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    world, _ = based_world(tmp_path / "w")
    world.write("s1", "app.py", "one\ntwo\n")
    (world.root / "notes.md").write_text("a\n", encoding="utf-8")
    commit(world)
    marker = tmp_path / "ran"
    marker.mkdir()
    _plant(world.root, marker)
    for args in (["--markdown"], ["--by", "author", "--json"], ["--sarif"]):
        done = subprocess.run(
            [str(LEDGER), "review", "HEAD~1..HEAD", *args],
            cwd=world.root,
            env={**world.ws.proc_env, "HOME": str(world.root), "PAGER": "cat"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in marker.iterdir()) == []
    assert git(world.root, "rev-parse", "HEAD")  # the repository is still usable


def test_a_range_spelled_as_an_option_is_never_passed_to_git_as_one(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    out = tmp_path / "written-by-git"
    done = subprocess.run(
        [str(LEDGER), "review", "--", f"--output={out}..HEAD"],
        cwd=world.root,
        env=world.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a range" in done.stderr
    assert not out.exists()
