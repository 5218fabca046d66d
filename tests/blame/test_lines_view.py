"""The query layer's `lines` view is the blame projection: agent lines name their call, and a
file changed on disk since its last record is unknown, never still credited to the agent."""

from __future__ import annotations

from pathlib import Path

from ledger import QuerySession
from tests.blame._world import World


def _lines(world: World) -> list[tuple[str, int, str, str | None]]:
    sql = "SELECT path, line, status, tool FROM lines ORDER BY path, line"
    with QuerySession([world.ws.source], sql) as session:
        return [tuple(row) for row in session.run().fetchall()]


def test_lines_view_credits_agent_lines_and_drops_credit_after_an_outside_edit(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    world.write("alpha", "src/auth/a.ts", "one\ntwo\n")
    assert _lines(world) == [
        ("src/auth/a.ts", 1, "agent", "Write"),
        ("src/auth/a.ts", 2, "agent", "Write"),
    ]
    (world.root / "src/auth/a.ts").write_text("one\nTWO by a person\n", encoding="utf-8")
    assert [status for _, _, status, _ in _lines(world)] == ["unknown", "unknown"]
