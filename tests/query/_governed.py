"""A governed Claude Code session recorded through the real (in-process) hook path.

Two sessions under INT-001: denials (no intent, out of scope, protected path, stale file), a
destructive command sent to a human, an Edit and a Write with line attribution.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from tests.hooks._support import (
    Session,
    Workspace,
    edit_response,
    make_workspace,
    write_response,
)

MIDDLEWARE = (
    'import jwt from "jsonwebtoken";\n\nexport function requireAuth(token) {\n'
    "  return jwt.verify(token, secret);\n}\n"
)
ALICE = "a11ce0de-7b4d-4e8a-9c51-2d6f0b8e4a17"
BOB = "b0b5e551-0000-4e8a-9c51-2d6f0b8e4a17"


class Governed(NamedTuple):
    ws: Workspace
    ledger_path: Path


def governed_workspace(tmp_path: Path) -> Governed:
    ws = make_workspace(tmp_path)
    mw = ws.write("src/auth/middleware.ts", MIDDLEWARE)
    alice, bob = Session(ws, ALICE), Session(ws, BOB)
    alice.event("SessionStart", source="startup", model="claude-sonnet-4-5")
    assert (
        alice.pre("Write", {"file_path": str(ws.path("src/auth/t.ts")), "content": "x\n"}).code
        == "INTENT_REQUIRED"
    )
    alice.select("INT-001")
    alice.read("src/auth/middleware.ts")
    old, new = (
        "  return jwt.verify(token, secret);\n",
        ('  return jwt.verify(token, secret, { algorithms: ["HS256"] });\n'),
    )
    edit = {"file_path": str(mw), "old_string": old, "new_string": new}
    tool_use = alice.tool_use_id()
    assert alice.pre("Edit", edit, tool_use_id=tool_use).code is None
    mw.write_text(MIDDLEWARE.replace(old, new))
    alice.post(
        "Edit", edit, edit_response(mw, old, new, MIDDLEWARE), tool_use_id=tool_use, duration_ms=41
    )
    assert (
        alice.pre("Write", {"file_path": str(ws.path("docs/a.md")), "content": "# A\n"}).code
        == "SCOPE_VIOLATION"
    )
    assert alice.pre("Bash", {"command": "rm -f src/auth/legacy.ts"}).code == "DESTRUCTIVE_COMMAND"
    assert (
        alice.pre("Bash", {"command": "echo x > .orchestration/agent_trace.jsonl"}).code
        == "ORCHESTRATION_PROTECTED"
    )
    bob.event("SessionStart", source="startup", model="claude-opus-4-1")
    bob.select("INT-001")
    alice.event("UserPromptSubmit", prompt="Keep going.")
    bob.read("src/auth/middleware.ts")
    before = mw.read_text()
    content = before + "// reviewed\n"
    write = {"file_path": str(mw), "content": content}
    tool_use = bob.tool_use_id()
    assert bob.pre("Write", write, tool_use_id=tool_use).code is None
    mw.write_text(content)
    bob.post("Write", write, write_response(mw, content, before), tool_use_id=tool_use)
    assert (
        alice.pre("Edit", {"file_path": str(mw), "old_string": "}", "new_string": "};"}).code
        == "STALE_FILE"
    )
    alice.event("SessionEnd", reason="prompt_input_exit")
    return Governed(ws, ws.orchestration / "agent_trace.jsonl")
