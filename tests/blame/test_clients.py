"""Attribution at record time for every client: exact hunks where the old side is known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledger import Ledger
from ledger._clients import parse_payload
from ledger._hooks.service import handle_event
from tests.blame._world import World


def _fire(world: World, client: str, payload: dict[str, Any]) -> None:
    event = parse_payload(client, json.dumps(payload).encode())
    decision = handle_event(event, environ=world.ws.env)
    assert decision.permission != "deny", decision


def _select(world: World, session: str) -> None:
    Ledger.open(world.root, environ=world.ws.env).append(
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


def test_a_shell_command_with_unknown_previous_content_leaves_unknown_lines(tmp_path: Path) -> None:
    """A generator script rewrites a file the analyzer cannot name: the stat snapshot sees
    the change, the old bytes were not kept, so every line is unknown (with the reason)."""
    from tests.blame.test_fuzz import Fuzz  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 5)
    w = fuzz.world
    w.write("s1", "gen.txt", "old 1\nold 2\n")
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
