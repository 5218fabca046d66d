"""Attribution at record time for every client: exact hunks where the old side is known."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger._clients import parse_payload
from ledger._hooks.service import handle_event
from tests.blame._world import World
from tests.reserved import as_ledger_itself


def _fire(world: World, client: str, payload: dict[str, Any]) -> None:
    event = parse_payload(client, json.dumps(payload).encode())
    decision = handle_event(event, environ=world.ws.env)
    assert decision.permission != "deny", decision


def _select(world: World, session: str) -> None:
    as_ledger_itself(Ledger.open(world.root, environ=world.ws.env)).append(
        "intent.selected", {"intent_id": "INT-001", "session": session, "via": "cli"}
    )


def _last_attribution(world: World) -> dict[str, Any]:
    records = [
        json.loads(x)
        for x in (world.root / ".orchestration/agent_trace.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    post = [r for r in records if r["kind"] == "hook.post"][-1]
    attribution = post["body"]["attribution"]
    assert isinstance(attribution, dict)
    return attribution


def _statuses(world: World, relative: str) -> list[tuple[str, str | None]]:
    return [(x.status, x.facts.get("session_id")) for x in world.blame(relative).lines]


def test_codex_apply_patch_update_and_move(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("claude", "src/m.ts", "a\nb\nc\n")
    _select(w, "codex-1")
    patch = (
        "*** Begin Patch\n*** Update File: src/m.ts\n*** Move to: src/n.ts\n@@\n a\n-b\n"
        "+B\n c\n*** End Patch\n"
    )
    common = {
        "session_id": "codex-1",
        "cwd": str(w.root),
        "model": "gpt-5-codex",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_use_id": "call_1",
        "transcript_path": None,
        "permission_mode": "default",
    }
    _fire(w, "codex", {**common, "hook_event_name": "PreToolUse"})
    (w.root / "src/m.ts").unlink()
    (w.root / "src/n.ts").write_text("a\nB\nc\n", encoding="utf-8")
    _fire(w, "codex", {**common, "hook_event_name": "PostToolUse", "tool_response": "Success."})
    (change,) = _last_attribution(w)["files"]
    assert change["change"] == "renamed"
    assert change["previous_path"] == "src/m.ts"
    assert change["exact"] is True
    assert [
        (h["old_start"], h["old_lines"], h["new_start"], h["new_lines"]) for h in change["hunks"]
    ] == [(2, 1, 2, 1)]
    assert _statuses(w, "src/n.ts") == [
        ("agent", "claude"),
        ("agent", "codex-1"),
        ("agent", "claude"),
    ]


def test_cursor_after_file_edit_reversed_from_its_edits(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("claude", "x.py", "keep 1\nold 2\nkeep 3\nold 4\n")
    _select(w, "cursor-1")
    (w.root / "x.py").write_text("keep 1\nnew 2\nkeep 3\nnew 4a\nnew 4b\n", encoding="utf-8")
    _fire(
        w,
        "cursor",
        {
            "conversation_id": "cursor-1",
            "generation_id": "g1",
            "model": "m",
            "hook_event_name": "afterFileEdit",
            "workspace_roots": [str(w.root)],
            "file_path": str(w.root / "x.py"),
            "edits": [
                {"old_string": "old 2", "new_string": "new 2"},
                {"old_string": "old 4", "new_string": "new 4a\nnew 4b"},
            ],
        },
    )
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    assert [s for s, _ in _statuses(w, "x.py")] == ["agent"] * 5
    assert [who for _, who in _statuses(w, "x.py")] == [
        "claude",
        "cursor-1",
        "claude",
        "cursor-1",
        "cursor-1",
    ]


def test_gemini_replace_uses_the_pre_hook_copy(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("claude", "g.py", "one\ntwo\nthree\n")
    _select(w, "gem-1")
    common = {
        "session_id": "gem-1",
        "cwd": str(w.root),
        "transcript_path": None,
        "timestamp": "2026-05-01T10:00:00.000Z",
        "tool_name": "replace",
        "tool_input": {"file_path": str(w.root / "g.py"), "old_string": "two", "new_string": "TWO"},
    }
    _fire(w, "gemini", {**common, "hook_event_name": "BeforeTool"})
    (w.root / "g.py").write_text("one\nTWO\nthree\n", encoding="utf-8")
    _fire(
        w,
        "gemini",
        {
            **common,
            "hook_event_name": "AfterTool",
            "tool_response": {"llmContent": "ok", "returnDisplay": "ok"},
        },
    )
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    assert change["old_sha256"] is not None
    assert [who for _, who in _statuses(w, "g.py")] == ["claude", "gem-1", "claude"]


def test_unknown_old_side_is_never_guessed(tmp_path: Path) -> None:
    """An Edit whose new text occurs twice and no pre copy: exact false, no replay."""
    w = World(tmp_path)
    w.write("claude", "d.py", "x\ny\n")
    (w.root / "d.py").write_text("x\ndup\ny\ndup\n", encoding="utf-8")  # outside the ledger
    s = w.session("s9")
    s.post(
        "Edit",
        {"file_path": str(w.root / "d.py"), "old_string": "q\n", "new_string": "dup\n"},
        {"filePath": str(w.root / "d.py")},
    )
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is False  # "dup" occurs twice: which one was the edit?
    rows = w.blame("d.py").lines
    # which "dup" the edit wrote is not certain: no line is claimed for anyone
    assert [x.status for x in rows] == ["unknown"] * 4


def test_a_shell_command_that_rewrites_an_unnamed_file_is_credited_with_its_lines(
    tmp_path: Path,
) -> None:
    """A generator script rewrites a file the analyzer cannot name: the pre hook kept no copy,
    but the stat tuple before the command is the one the last record left, so that version is
    the old side (decision 0009): the line the script changed is the Bash call's, the line it
    kept stays the Write's."""
    from tests.blame.test_fuzz import Fuzz  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 5)
    w = fuzz.world
    w.write("s1", "gen.txt", "old 1\nold 2\n")
    (w.root / "gen.sh").write_text("printf 'made 1\\nold 2\\n' > gen.txt\n", encoding="utf-8")
    fuzz.shell("s2", "bash gen.sh")
    change = next(f for f in _last_attribution(w)["files"] if f["path"] == "gen.txt")
    assert change["exact"] is True
    rows = w.blame("gen.txt").lines
    assert [(x.status, x.facts.get("tool"), x.facts.get("session_id")) for x in rows] == [
        ("agent", "Bash", "s2"),
        ("agent", "Write", "s1"),
    ]


def test_a_shell_command_with_unknown_previous_content_leaves_unknown_lines(tmp_path: Path) -> None:
    """The same script after a person changed the file: neither a kept copy nor the recorded
    version is the old side, so every line is unknown (with the reason), never a guess."""
    from tests.blame.test_fuzz import Fuzz  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 5)
    w = fuzz.world
    w.write("s1", "gen.txt", "old 1\nold 2\n")
    (w.root / "gen.txt").write_text("old 1\nold 2\nperson 3\n", encoding="utf-8")
    (w.root / "gen.sh").write_text("printf 'made 1\\nold 2\\n' > gen.txt\n", encoding="utf-8")
    fuzz.shell("s1", "bash gen.sh")
    change = next(f for f in _last_attribution(w)["files"] if f["path"] == "gen.txt")
    assert change["exact"] is False
    rows = w.blame("gen.txt").lines
    assert [x.status for x in rows] == ["unknown", "unknown"]
    assert "previous content was not captured" in rows[0].facts["reason"]


def test_snapshot_budget_is_reported(tmp_path: Path) -> None:
    from ledger._governance.snapshot import stat_snapshot  # noqa: PLC0415

    for i in range(5):
        (tmp_path / f"f{i}").write_text("x", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "skipped").write_text("x", encoding="utf-8")
    assert stat_snapshot(str(tmp_path), max_files=2).complete is False
    full = stat_snapshot(str(tmp_path))
    assert full.complete is True
    assert sorted(full.files) == [f"f{i}" for i in range(5)]


def test_snapshot_budget_exceeded_is_recorded_and_blamed_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk before a shell command stops at its budget: a file it did not reach may have
    existed, so what the command left there is unknown, and the record and blame say why."""
    from ledger._governance import observer, pre_policies  # noqa: PLC0415
    from ledger._governance.snapshot import StatSnapshot, stat_snapshot  # noqa: PLC0415
    from tests.blame.test_fuzz import Fuzz  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 5)
    w = fuzz.world
    for i in range(4):
        (w.root / f"pad{i}.txt").write_text("x\n", encoding="utf-8")
    walks: Iterator[Callable[[str], StatSnapshot]] = iter(
        [functools.partial(stat_snapshot, max_files=1), stat_snapshot]
    )

    def walk(root: str) -> StatSnapshot:  # before the command: over budget; after: complete
        return next(walks)(root)

    # The walk before the command is the pre-call policies'; the one after, the observer's.
    monkeypatch.setattr(pre_policies, "stat_snapshot", walk)
    monkeypatch.setattr(observer, "stat_snapshot", walk)
    fuzz.shell("s1", "printf 'made 1\\nmade 2\\n' > zz-made.txt")
    change = next(f for f in _last_attribution(w)["files"] if f["path"] == "zz-made.txt")
    assert change["exact"] is False
    assert "snapshot budget exceeded" in change["unknown_reason"]
    rows = w.blame("zz-made.txt").lines
    assert [x.status for x in rows] == ["unknown", "unknown"]
    assert "snapshot budget exceeded" in rows[0].facts["reason"]


def test_a_file_a_complete_snapshot_did_not_have_was_created_by_the_command(
    tmp_path: Path,
) -> None:
    from tests.blame.test_fuzz import Fuzz  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 5)
    fuzz.shell("s1", "printf 'made 1\\nmade 2\\n' > zz-made.txt")
    change = next(f for f in _last_attribution(fuzz.world)["files"] if f["path"] == "zz-made.txt")
    assert (change["exact"], change["change"]) == (True, "created")
    assert "unknown_reason" not in change
    assert _statuses(fuzz.world, "zz-made.txt") == [("agent", "s1"), ("agent", "s1")]


def test_claude_replace_all_gives_several_hunks(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("s1", "r.py", "x = 1\nkeep a\nx = 1\nkeep b\nx = 1\n")
    w.edit("s2", "r.py", "x = 1", "x = 2", replace_all=True)
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    assert [(h["new_start"], h["new_lines"]) for h in change["hunks"]] == [(1, 1), (3, 1), (5, 1)]
    assert [who for _, who in _statuses(w, "r.py")] == ["s2", "s1", "s2", "s1", "s2"]


def test_claude_replace_all_without_an_old_side_claims_nothing(tmp_path: Path) -> None:
    """No originalFile and no pre copy: which lines replace_all wrote is not certain when its
    new text occurs more than once, so no line is claimed."""
    w = World(tmp_path)
    w.write("s1", "r.py", "x = 1\nkeep a\nx = 1\n")
    (w.root / "r.py").write_text("x = 2\nkeep a\nx = 2\n", encoding="utf-8")
    w.session("s2").post(
        "Edit",
        {
            "file_path": str(w.root / "r.py"),
            "old_string": "x = 1",
            "new_string": "x = 2",
            "replace_all": True,
        },
        {"filePath": str(w.root / "r.py"), "replaceAll": True},
    )
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is False
    assert [s for s, _ in _statuses(w, "r.py")] == ["unknown"] * 3


def _cline(world: World, hook: str, tool: str, parameters: dict[str, Any]) -> None:
    key = "preToolUse" if hook == "PreToolUse" else "postToolUse"
    body: dict[str, Any] = {"toolName": tool, "parameters": parameters}
    if hook == "PostToolUse":
        body.update(result="ok", success=True, executionTimeMs=3)
    _fire(
        world,
        "cline",
        {
            "clineVersion": "3.36.0",
            "hookName": hook,
            "timestamp": "1746093600000",
            "taskId": "cline-1",
            "workspaceRoots": [str(world.root)],
            "userId": "u",
            key: body,
        },
    )


CLINE_DIFF = (
    "------- SEARCH\nold 2\n=======\nnew 2a\nnew 2b\n+++++++ REPLACE\n\n"
    "------- SEARCH\nold 4\n=======\nnew 4\n+++++++ REPLACE"
)


def test_cline_replace_in_file_with_several_blocks(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("claude", "c.ts", "keep 1\nold 2\nkeep 3\nold 4\n")
    _select(w, "cline-1")
    parameters = {"path": "c.ts", "diff": CLINE_DIFF}
    _cline(w, "PreToolUse", "replace_in_file", parameters)
    (w.root / "c.ts").write_text("keep 1\nnew 2a\nnew 2b\nkeep 3\nnew 4\n", encoding="utf-8")
    _cline(w, "PostToolUse", "replace_in_file", parameters)
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    assert len(change["hunks"]) == 2
    assert [who for _, who in _statuses(w, "c.ts")] == [
        "claude",
        "cline-1",
        "cline-1",
        "claude",
        "cline-1",
    ]


def test_cline_replace_in_file_reversed_from_its_blocks(tmp_path: Path) -> None:
    """No pre copy (the pre hook never ran): each REPLACE text occurs once, so the blocks are
    reversed exactly and the diff is still exact."""
    w = World(tmp_path)
    w.write("claude", "c.ts", "keep 1\nold 2\nkeep 3\nold 4\n")
    _select(w, "cline-1")
    (w.root / "c.ts").write_text("keep 1\nnew 2a\nnew 2b\nkeep 3\nnew 4\n", encoding="utf-8")
    _cline(w, "PostToolUse", "replace_in_file", {"path": "c.ts", "diff": CLINE_DIFF})
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    assert [who for _, who in _statuses(w, "c.ts")] == [
        "claude",
        "cline-1",
        "cline-1",
        "claude",
        "cline-1",
    ]


def _notebook(*sources: str) -> str:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source.splitlines(True)}
        for i, source in enumerate(sources)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}, indent=1) + "\n"


def test_notebook_edit_attributes_the_cells_lines(tmp_path: Path) -> None:
    """NotebookEdit: the pre hook keeps the notebook, so the diff of the .ipynb text is exact:
    the edited cell's source lines are the call's, the rest keep their attribution."""
    w = World(tmp_path)
    w.write("s1", "n.ipynb", _notebook("a = 1\nb = 2\n", "print(a)\n"))
    s = w.session("s2")
    s.read("n.ipynb")
    tool_input = {
        "notebook_path": str(w.root / "n.ipynb"),
        "cell_id": "c1",
        "new_source": "print(a + b)\n",
        "edit_mode": "replace",
    }
    tid = s.tool_use_id()
    assert s.pre("NotebookEdit", tool_input, tool_use_id=tid).permission != "deny"
    (w.root / "n.ipynb").write_text(_notebook("a = 1\nb = 2\n", "print(a + b)\n"), "utf-8")
    s.post("NotebookEdit", tool_input, {"new_source": "print(a + b)\n"}, tool_use_id=tid)
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is True
    rows = w.blame("n.ipynb").lines
    edited = [x.facts.get("session_id") for x in rows if "print(a + b)" in x.text]
    assert edited == ["s2"]
    assert {x.facts.get("session_id") for x in rows if "print(a + b)" not in x.text} == {"s1"}


def test_notebook_edit_without_the_pre_copy_claims_nothing(tmp_path: Path) -> None:
    """Without the pre hook's copy the old notebook is unknown, and a cell's source is
    JSON-encoded in the file, so its text cannot be located either: every line is unknown,
    with the reason."""
    w = World(tmp_path)
    w.write("s1", "n.ipynb", _notebook("a = 1\n", "print(a)\n"))
    (w.root / "n.ipynb").write_text(_notebook("a = 1\n", "print(a + 1)\n"), "utf-8")
    w.session("s2").post(
        "NotebookEdit",
        {
            "notebook_path": str(w.root / "n.ipynb"),
            "cell_id": "c1",
            "new_source": "print(a + 1)\n",
            "edit_mode": "replace",
        },
        {"new_source": "print(a + 1)\n"},
    )
    (change,) = _last_attribution(w)["files"]
    assert change["exact"] is False
    rows = w.blame("n.ipynb").lines
    assert {x.status for x in rows} == {"unknown"}
    assert "NotebookEdit" in rows[0].facts["reason"]
