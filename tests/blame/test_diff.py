"""The record-time diff is git's: the same hunks as ``git diff -U0`` (indent heuristic on, as
git's default), including where equal lines let a change slide: the choices ``git blame``
makes too (tests/blame/test_git_oracle.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._governance.attribution import Hunk, diff_hunks

LINES = st.sampled_from(["}", "", "    pass", "    return x", "def f():", "a", "b"])
_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def _git_hunks(folder: Path, old: list[str], new: list[str]) -> list[Hunk]:
    (folder / "old").write_text("".join(f"{x}\n" for x in old), encoding="utf-8")
    (folder / "new").write_text("".join(f"{x}\n" for x in new), encoding="utf-8")
    out = subprocess.run(
        ["git", "-c", "core.quotepath=false", "diff", "--no-index", "-U0", "old", "new"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return [
        Hunk(int(a), int(b) if b else 1, int(c), int(d) if d else 1)
        for a, b, c, d in _HEADER.findall(out)
    ]


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(old=st.lists(LINES, max_size=12), new=st.lists(LINES, max_size=12))
def test_hunks_are_gits(tmp_path: Path, old: list[str], new: list[str]) -> None:
    assert diff_hunks(old, new) == _git_hunks(tmp_path, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["def f():", "    pass", "", "def g():", "    pass"], ["def f():", "    pass", ""] * 2),
        (["a", "}", "b"], ["a", "}", "}", "b"]),
        (["", "a", ""], ["", "a", "", "a", ""]),
    ],
)
def test_a_change_that_can_slide_is_placed_as_git_places_it(
    tmp_path: Path, old: list[str], new: list[str]
) -> None:
    assert diff_hunks(old, new) == _git_hunks(tmp_path, old, new)
