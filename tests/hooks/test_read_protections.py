"""The person's read protections hold everywhere, and what reaches the person is bounded.

The pre hook's copy of ``.env`` in ``.orchestration/.cache/blobs/`` was world-readable and
``cat .orchestration/.cache/blobs/*`` was quiet; ``mcp__ledger__explain_line`` returned any
workspace line, ``.env`` included; a 20 MB MCP argument hung ``ledger mcp``; the
scope-expansion reason reached the person's prompt unfiltered.
"""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger._errors import InputError
from ledger._governance.vocabulary import for_person
from ledger._mcp import McpTools

from ._support import Session, Workspace, make_workspace

AUTH = "src/auth/login.ts"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    ws.write(AUTH, "export const login = 1;\n")
    ws.write(".env", "API_TOKEN=hunter2\n")
    return ws


def _blob_written(ws: Workspace) -> Path:
    session = Session(ws, "agent")
    session.select()
    target = ws.path(AUTH)
    session.pre("Write", {"file_path": str(target), "content": "export const login = 2;\n"})
    blobs = sorted((ws.orchestration / ".cache" / "blobs").iterdir())
    assert blobs
    return blobs[0]


def test_the_blob_cache_is_this_users_alone(ws: Workspace) -> None:
    blob = _blob_written(ws)
    assert stat.S_IMODE(blob.stat().st_mode) & 0o077 == 0
    assert stat.S_IMODE(blob.parent.stat().st_mode) & 0o077 == 0


@pytest.mark.parametrize(
    "command",
    [
        "cat .orchestration/.cache/blobs/*",
        "head -5 .orchestration/.cache/blobs/*",
        "grep -r TOKEN .orchestration/.cache",
        "cat .orch*/.cache/blobs/*",
        "cd .orchestration/.cache && cat blobs/*",
    ],
)
def test_the_shell_cannot_read_the_blob_cache(ws: Workspace, command: str) -> None:
    _blob_written(ws)
    fired = Session(ws, "agent").pre("Bash", {"command": command})
    assert fired.permission in ("deny", "ask"), (command, fired.reason)


def test_the_read_tool_cannot_read_the_blob_cache(ws: Workspace) -> None:
    blob = _blob_written(ws)
    fired = Session(ws, "agent").pre("Read", {"file_path": str(blob)})
    assert fired.permission == "deny", fired.reason


def test_explain_line_answers_nothing_about_a_file_the_persons_read_rule_denies(
    ws: Workspace,
) -> None:
    ws.write(".claude/settings.json", json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    tools = McpTools(str(ws.root), ws.env)
    with pytest.raises(InputError, match=r"read rule") as refused:
        tools.explain_line(".env", 1)
    assert "hunter2" not in str(refused.value)
    assert "login" in tools.explain_line(AUTH, 1)  # a readable file still answers


@pytest.mark.parametrize(
    "path", [".orchestration/agent_trace.jsonl", ".orchestration/.cache/blobs/x", "../outside"]
)
def test_explain_line_answers_nothing_about_ledgers_files_or_outside(
    ws: Workspace, path: str
) -> None:
    (ws.root.parent / "outside").write_text("secret\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"answers nothing"):
        McpTools(str(ws.root), ws.env).explain_line(path, 1)


@pytest.mark.parametrize("tool", ["explain", "expand", "select"])
def test_a_20mb_mcp_argument_is_one_line_at_once(ws: Workspace, tool: str) -> None:
    big = "a" * (20 * 1024 * 1024)
    tools = McpTools(str(ws.root), ws.env)
    calls = {
        "explain": lambda: tools.explain_line(big, 1),
        "expand": lambda: tools.request_scope_expansion("INT-001", ["docs/**"], big),
        "select": lambda: tools.select_active_intent(big),
    }
    started = time.monotonic()
    with pytest.raises(InputError) as refused:
        calls[tool]()
    assert time.monotonic() - started < 2
    assert "\n" not in str(refused.value)
    assert len(str(refused.value)) < 200


def test_the_scope_expansion_reason_reaches_the_person_cleaned_and_capped(ws: Workspace) -> None:
    session = Session(ws, "agent")
    session.select()
    reason = "needed\x1b[2J\x1b[1;1H\u202eAPPROVED\x07" + "x" * 5000
    fired = session.pre(
        "mcp__ledger__request_scope_expansion",
        {"intent_id": "INT-001", "globs": ["docs/**"], "reason": reason},
    )
    assert fired.permission == "ask"
    shown = fired.reason.split("\n")[0]
    assert not {"\x1b", "\u202e", "\x07"} & set(shown)
    assert len(shown) < 1000


@given(st.text(), st.integers(min_value=1, max_value=500))
def test_text_for_a_person_has_no_control_characters_and_keeps_its_cap(
    text: str, limit: int
) -> None:
    import unicodedata  # noqa: PLC0415

    shown = for_person(text, limit)
    assert len(shown) <= limit
    assert "\n" not in shown
    assert all(unicodedata.category(c) not in ("Cc", "Cf") for c in shown)
