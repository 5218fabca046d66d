"""A workspace, a git repository and Claude sessions writing through the real hook path."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from ledger._projections.explain import BlameReport, blame_file
from tests.hooks._support import Session, Workspace, make_workspace

INTENTS = """\
intents:
  - id: INT-001
    name: Everything
    status: active
    owned_scope: ["**"]
  - id: INT-002
    name: Also everything
    status: active
    owned_scope: ["**"]
  - id: INT-NARROW
    name: Docs only
    status: active
    owned_scope: ["docs/**"]
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "Ann",
            "GIT_AUTHOR_EMAIL": "a@x",
            "GIT_COMMITTER_NAME": "Ann",
            "GIT_COMMITTER_EMAIL": "a@x",
            "PATH": "/usr/bin:/bin",
            "HOME": str(root),
        },
    ).stdout


class World:
    """The system under test, driven like a user would."""

    def __init__(self, tmp_path: Path) -> None:
        self.ws: Workspace = make_workspace(tmp_path, intents=INTENTS)
        self.root = self.ws.root
        git(self.root, "init", "-q", "-b", "main")
        (self.root / ".gitignore").write_text(".orchestration/\n", encoding="utf-8")
        self.sessions: dict[str, Session] = {}

    def session(self, name: str, intent: str = "INT-001") -> Session:
        if name not in self.sessions:
            session = Session(self.ws, name)
            assert session.select(intent).permission in (None, "allow")
            self.sessions[name] = session
        return self.sessions[name]

    def text(self, relative: str) -> str | None:
        path = self.root / relative
        return path.read_text(encoding="utf-8") if path.exists() else None

    def write(self, session: str, relative: str, content: str) -> str:
        """Claude Write (create or update), pre and post."""
        s = self.session(session)
        path = self.root / relative
        old = self.text(relative)
        if old is not None:
            s.read(relative)  # as agents do (and STALE_FILE requires) before a write
        tool_input = {"file_path": str(path), "content": content}
        tid = s.tool_use_id()
        pre = s.pre("Write", tool_input, tool_use_id=tid)
        assert pre.permission != "deny", pre.decision
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        response: dict[str, Any] = {
            "type": "update" if old is not None else "create",
            "filePath": str(path),
            "content": content,
            "structuredPatch": [],
            "originalFile": old,
        }
        s.post("Write", tool_input, response, tool_use_id=tid)
        return tid

    def edit(
        self,
        session: str,
        relative: str,
        old_string: str,
        new_string: str,
        *,
        replace_all: bool = False,
        send_original: bool = True,
    ) -> str:
        s = self.session(session)
        path = self.root / relative
        old = self.text(relative)
        assert old is not None
        assert old_string in old
        s.read(relative)
        tool_input = {
            "file_path": str(path),
            "old_string": old_string,
            "new_string": new_string,
            "replace_all": replace_all,
        }
        tid = s.tool_use_id()
        pre = s.pre("Edit", tool_input, tool_use_id=tid)
        assert pre.permission != "deny", pre.decision
        new = old.replace(old_string, new_string, -1 if replace_all else 1)
        path.write_text(new, encoding="utf-8")
        response: dict[str, Any] = {
            "filePath": str(path),
            "oldString": old_string,
            "newString": new_string,
            "replaceAll": replace_all,
        }
        if send_original:
            response["originalFile"] = old
        s.post("Edit", tool_input, response, tool_use_id=tid)
        return tid

    def blame(self, relative: str) -> BlameReport:
        return blame_file(str(self.root / relative), root=self.root, environ=self.ws.env)
