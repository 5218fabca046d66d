"""ledger blame end to end: agent lines, git lines, unknown lines, never a wrong one."""

from __future__ import annotations

from pathlib import Path

from tests.blame._world import World, git


def test_agent_git_and_human_lines(tmp_path: Path) -> None:
    w = World(tmp_path)
    (w.root / "app.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    git(w.root, "add", "-A")
    git(w.root, "commit", "-qm", "base")
    w.edit("s1", "app.py", "two\n", "TWO\nand more\n")
    w.write("s2", "new.py", "alpha\nbeta\n")
    report = w.blame("app.py")
    assert [x.status for x in report.lines] == ["git", "agent", "agent", "git"]
    assert report.fast_path
    assert report.lines[1].facts["session_id"] == "s1"
    assert report.lines[1].facts["intent_id"] == "INT-001"
    assert report.lines[0].facts["author"] == "Ann"
    # a human edit on disk: the changed line is unknown, the others keep their answer
    (w.root / "app.py").write_text("one\nTWO\nhuman\nthree\n", encoding="utf-8")
    report = w.blame("app.py")
    assert [x.status for x in report.lines] == ["git", "agent", "unknown", "git"]
    assert "changed on disk" in report.lines[2].facts["reason"]
    assert [x.status for x in w.blame("new.py").lines] == ["agent", "agent"]
    assert w.blame("new.py").lines[0].facts["session_id"] == "s2"
