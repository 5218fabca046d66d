"""Intent state: `ledger intents`, `ledger intent show`, `ledger map`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ledger._projections.intent_state import intent_summaries
from tests.blame._world import World
from tests.hooks._support import LEDGER


def test_intent_state_and_map(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.write("s1", "a.py", "a1\na2\n")
    w.session("s2", "INT-002")
    w.write("s2", "b.py", "b1\n")
    w.edit("s2", "a.py", "a2\n", "a2 by s2\n")
    denied = w.session("s3", "INT-NARROW")
    assert (
        denied.pre("Write", {"file_path": str(w.root / "c.py"), "content": "x\n"}).permission
        == "deny"
    )
    by_id = {s["id"]: s for s in intent_summaries(w.root, environ=w.ws.env)}
    one, two, narrow = by_id["INT-001"], by_id["INT-002"], by_id["INT-NARROW"]
    assert one["sessions"] == ["s1"]
    assert one["lines"] == {"a.py": [[1, 1]]}
    assert two["lines"] == {"a.py": [[2, 2]], "b.py": [[1, 1]]}
    assert two["lines_attributed"] == 2
    assert two["files_touched"] == ["a.py", "b.py"]
    assert narrow["decisions"] == {"allowed": 1, "SCOPE_VIOLATION": 1}  # its select, its write
    assert narrow["lines_attributed"] == 0
    assert one["decisions"]["allowed"] >= 1
    done = subprocess.run(
        [str(LEDGER), "map"],
        cwd=w.root,
        env=w.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = (w.root / ".orchestration/intent_map.md").read_text(encoding="utf-8")
    assert "## INT-002: Also everything (active)" in text
    assert "- `a.py`: lines 2" in text
    shown = subprocess.run(
        [str(LEDGER), "intent", "show", "INT-002", "--json"],
        cwd=w.root,
        env=w.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(shown.stdout)["lines_attributed"] == 2
    table = subprocess.run(
        [str(LEDGER), "intents"],
        cwd=w.root,
        env=w.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert "INT-NARROW" in table
    missing = subprocess.run(
        [str(LEDGER), "intent", "show", "INT-404"],
        cwd=w.root,
        env=w.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("ledger: error: no intent INT-404")
