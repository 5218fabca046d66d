"""The record-time diff is git's: the same hunks as ``git diff -U0`` (indent heuristic on, as
git's default), including where equal lines let a change slide: the choices ``git blame``
makes too (tests/blame/test_git_oracle.py)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._governance.attribution import Hunk, diff_hunks, use_git_diff

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


_PAIR = Path(__file__).parent / "data" / "repeated_block_pair.json"


@pytest.fixture
def diff_engine() -> Iterator[None]:
    yield
    use_git_diff(None)


def test_repeated_blocks_align_as_git_aligns_them_where_libgit2_does_not(
    tmp_path: Path, diff_engine: None
) -> None:
    """findings-2026-11-24.md §0: on this pair libgit2's xdiff places the inserted lines
    elsewhere than git does, so blame disagreed with ``git blame`` (decision 0010)."""
    pair = json.loads(_PAIR.read_text(encoding="utf-8"))
    expected = _git_hunks(tmp_path, pair["old"], pair["new"])
    use_git_diff(False)
    assert diff_hunks(pair["old"], pair["new"]) != expected  # the pair still tells them apart
    use_git_diff(None)
    assert diff_hunks(pair["old"], pair["new"]) == expected


def test_without_git_on_path_libgit2_diffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, diff_engine: None
) -> None:
    pair = json.loads(_PAIR.read_text(encoding="utf-8"))
    use_git_diff(False)
    libgit2 = diff_hunks(pair["old"], pair["new"])
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    use_git_diff(None)
    assert diff_hunks(pair["old"], pair["new"]) == libgit2


def test_planted_git_config_cannot_move_hunks_or_run_a_diff_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, diff_engine: None
) -> None:
    """An agent's shell can write ``~/.gitconfig``: another algorithm, no indent heuristic,
    colour, an external diff. The hunks stay git's defaults and nothing is run."""
    old, new = ["    return x", "", "b", "b", "a", "def f():"], ["a", "    return x", "b"]
    expected = _git_hunks(tmp_path, old, new)
    home = tmp_path / "home"
    home.mkdir()
    marker = tmp_path / "ran"
    (home / ".gitconfig").write_text(
        "[diff]\n\talgorithm = patience\n\tindentHeuristic = false\n"
        f"\texternal = touch {marker}\n\tnoprefix = true\n[color]\n\tdiff = always\n"
        "[core]\n\tpager = touch " + str(marker) + "\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    use_git_diff(True)
    assert diff_hunks(old, new) == expected
    assert not marker.exists()
