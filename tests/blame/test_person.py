"""Attribution that survives the person (decision 0009): a person's edit between two agent
calls, a move or copy through the shell, and a shell command's own lines."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ledger._governance.snapshot import recorded_version, remember_recorded
from tests.blame.test_fuzz import Fuzz


def _posts(fuzz: Fuzz) -> list[dict[str, Any]]:
    text = (fuzz.world.root / ".orchestration/agent_trace.jsonl").read_text(encoding="utf-8")
    records = [json.loads(x) for x in text.splitlines()]
    return [r for r in records if r["kind"] == "hook.post"]


def _who(fuzz: Fuzz, relative: str) -> list[tuple[str, str | None, str | None]]:
    return [
        (row.status, row.facts.get("session_id"), row.facts.get("tool"))
        for row in fuzz.world.blame(relative).lines
    ]


def _cache(fuzz: Fuzz) -> Path:
    return fuzz.world.root / ".orchestration/.cache"


def test_lines_a_person_left_alone_keep_their_agent_after_the_next_call(tmp_path: Path) -> None:
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "f.py", "a1\na2\na3\na4\n")
    (w.root / "f.py").write_text("a1\nperson\na3\na4\n", encoding="utf-8")
    w.edit("s2", "f.py", "a4\n", "b4\n")
    (change,) = _posts(fuzz)[-1]["body"]["attribution"]["files"]
    assert change["drift"]["hunks"][0]["new_lines"] == 1  # the person's one line
    assert _who(fuzz, "f.py") == [
        ("agent", "s1", "Write"),
        ("unknown", None, None),
        ("agent", "s1", "Write"),
        ("agent", "s2", "Edit"),
    ]
    row = w.blame("f.py").lines[1]
    assert "changed by no recorded tool call" in row.facts["reason"]


def test_a_person_typing_an_agents_line_again_does_not_make_it_theirs(tmp_path: Path) -> None:
    """The person deletes an agent's line and types the same text elsewhere: the diff from
    the recorded version says which line moved, and the moved one is nobody's."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "f.py", "a1\nunique\na3\na4\n")
    (w.root / "f.py").write_text("a1\na3\na4\nunique\n", encoding="utf-8")
    w.edit("s2", "f.py", "a1\n", "b1\n")
    assert _who(fuzz, "f.py") == [
        ("agent", "s2", "Edit"),
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("unknown", None, None),
    ]


def test_a_move_through_the_shell_after_a_person_edit_keeps_attribution(tmp_path: Path) -> None:
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "old.py", "a1\na2\na3\n")
    (w.root / "old.py").write_text("a1\nperson\na3\n", encoding="utf-8")
    fuzz.shell("s2", "mv old.py new.py")
    assert _who(fuzz, "new.py") == [
        ("agent", "s1", "Write"),
        ("unknown", None, None),
        ("agent", "s1", "Write"),
    ]


def test_a_copy_keeps_the_writers_of_its_lines_and_a_persons_lines_stay_nobodys(
    tmp_path: Path,
) -> None:
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "src.py", "a1\na2\na3\n")
    (w.root / "src.py").write_text("a1\na2\na3\nperson\n", encoding="utf-8")
    fuzz.shell("s2", "cp src.py copy.py")
    (change,) = _posts(fuzz)[-1]["body"]["attribution"]["files"]
    assert change["copied_from"] == "src.py"
    assert _who(fuzz, "copy.py") == [
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("unknown", None, None),
    ]


def test_a_copy_in_a_later_call_than_the_delete_keeps_attribution(tmp_path: Path) -> None:
    """A client's own move in two calls: the file is removed, then written back elsewhere
    with the same content (the model of the removed file is kept for it)."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "a.py", "a1\na2\n")
    (w.root / "keep").mkdir()
    fuzz.shell("s2", "cp a.py keep/a.py.bak && rm a.py")
    fuzz.shell("s2", "mv keep/a.py.bak b.py")
    assert _who(fuzz, "b.py") == [("agent", "s1", "Write"), ("agent", "s1", "Write")]


def test_a_move_and_an_edit_in_one_command_credit_the_command_with_its_line_only(
    tmp_path: Path,
) -> None:
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "a.py", "a1\na2\na3\n")
    fuzz.shell("s2", "mv a.py b.py && sed -i 's/^a2$/b2/' b.py")
    (change,) = _posts(fuzz)[-1]["body"]["attribution"]["files"]
    assert change["previous_path"] == "a.py"
    rows = w.blame("b.py").lines
    assert [(r.status, r.facts.get("session_id"), r.facts.get("tool")) for r in rows] == [
        ("agent", "s1", "Write"),
        ("agent", "s2", "Bash"),
        ("agent", "s1", "Write"),
    ]
    assert rows[1].facts["command"] == "mv a.py b.py && sed -i 's/^a2$/b2/' b.py"
    assert "command" not in rows[0].facts


def test_a_stale_recorded_pointer_cannot_move_attribution(tmp_path: Path) -> None:
    """The pointer to the last recorded version is a cache an agent's shell can rewrite: one
    naming another version the records hold only costs attribution, it never moves it."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "f.py", "x1\nx2\n")
    first = recorded_version(_cache(fuzz), "f.py")
    assert first is not None
    w.write("s2", "f.py", "y1\ny2\nx2\n")
    remember_recorded(_cache(fuzz), "f.py", first.sha256, None)  # stale: s1's version
    (w.root / "f.py").write_text("y1\nperson\nx2\n", encoding="utf-8")
    w.edit("s1", "f.py", "x2\n", "z2\n")
    for row in w.blame("f.py").lines:
        truth = {"y1": "s2", "z2": "s1"}.get(row.text)
        if row.status == "agent":
            assert row.facts["session_id"] == truth, row


def test_a_stat_tuple_from_the_same_timestamp_tick_is_not_trusted(tmp_path: Path) -> None:
    """git's racy-git problem: a change within the tick of the recorded write could keep the
    stat tuple, so a pointer written in that tick keeps no stat (the old side stays unknown)."""
    future = time.time_ns() + 10**12
    remember_recorded(tmp_path, "f.py", "a" * 64, (future, 3, 1))
    found = recorded_version(tmp_path, "f.py")
    assert found is not None
    assert found.stat is None
    past = time.time_ns() - 10**10
    remember_recorded(tmp_path, "f.py", "a" * 64, (past, 3, 1))
    found = recorded_version(tmp_path, "f.py")
    assert found is not None
    assert found.stat == (past, 3, 1)


def test_a_shell_edit_of_a_file_it_does_not_name_is_the_commands(tmp_path: Path) -> None:
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "f.py", "a1\na2\na3\n")
    # A hook process records ~50 ms after the write; in process it may be the same timestamp
    # tick, which the pointer rightly distrusts: make the write a second older.
    found = recorded_version(_cache(fuzz), "f.py")
    assert found is not None
    st = (w.root / "f.py").stat()
    os.utime(w.root / "f.py", ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
    st = (w.root / "f.py").stat()
    remember_recorded(_cache(fuzz), "f.py", found.sha256, (st.st_mtime_ns, st.st_size, st.st_ino))
    (w.root / "gen.sh").write_text("sed -i 's/^a3$/gen/' f.py\n", encoding="utf-8")
    fuzz.shell("s2", "bash gen.sh")
    rows = w.blame("f.py").lines
    assert [(r.status, r.facts.get("session_id"), r.facts.get("tool")) for r in rows] == [
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("agent", "s2", "Bash"),
    ]
    assert rows[2].facts["command"] == "bash gen.sh"


def test_a_multi_line_command_keeps_porcelain_one_header_per_line(tmp_path: Path) -> None:
    from cli._blame import _porcelain  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    command = "printf 'x1\\n' > f.py\nprintf 'x2\\n' >> f.py"  # two lines
    fuzz.shell("s1", command)
    out = _porcelain(w.blame("f.py"))
    commands = [line for line in out.split("\n") if line.startswith("x-ledger-command ")]
    assert commands == [f"x-ledger-command {json.dumps(command)}"] * 2


def test_a_copy_over_a_file_that_already_held_that_content_takes_the_sources_lines(
    tmp_path: Path,
) -> None:
    """Minimized from the tier-2 fuzzer (seed 204): ``git checkout`` had already brought the
    copy's content back, so ``cp`` rewrote the same bytes; the lines are still the source's."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "b.py", "x1\nx2\n")
    (w.root / "c.py").write_text("x1\nx2\n", encoding="utf-8")  # as a checkout left it
    fuzz.shell("s2", "cp b.py c.py")
    assert _who(fuzz, "c.py") == [("agent", "s1", "Write"), ("agent", "s1", "Write")]


def test_lines_a_shell_command_concatenates_keep_their_writers_not_the_command(
    tmp_path: Path,
) -> None:
    """``cat a b > c``: c is most like a (a copy of it), b's lines come from b's model line by
    line (a person's line in b stays nobody's), and the command wrote none of them."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "a.py", "a1\na2\na3\n")
    w.write("s2", "b.py", "b1\nb2\n")
    (w.root / "b.py").write_text("b1\nb2\nperson\n", encoding="utf-8")
    fuzz.shell("s1", "cat a.py b.py > c.py")
    assert _who(fuzz, "c.py") == [
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("agent", "s1", "Write"),
        ("agent", "s2", "Write"),
        ("agent", "s2", "Write"),
        ("unknown", None, None),
    ]


def test_a_line_whose_text_two_files_share_is_not_given_to_either(tmp_path: Path) -> None:
    """Which file a shared line (``}``, a blank) was copied from is not certain: unknown."""
    fuzz = Fuzz(tmp_path, 1)
    w = fuzz.world
    w.write("s1", "x.py", "x1\nx2\nx3\nx4\n")
    w.write("s1", "a.py", "shared\n")
    w.write("s2", "b.py", "shared\n")
    fuzz.shell("s1", "cat x.py a.py b.py > c.py")
    assert _who(fuzz, "c.py") == [("agent", "s1", "Write")] * 4 + [("unknown", None, None)] * 2
