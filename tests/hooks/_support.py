"""Shared helpers: isolated workspaces, Claude Code payloads, in-process and CLI hook calls."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ledger._clients import HookDecision, HookResponse, parse_payload, render_response
from ledger._evidence.ledger import Ledger
from ledger._evidence.record import Record
from ledger._hooks.service import handle_event

if TYPE_CHECKING:
    from ledger import LedgerSource

LEDGER = Path(sys.executable).parent / "ledger"

#: Variables that would make a test use the developer's real key, root or session.
LEAKY_ENV = (
    "LEDGER_SIGNING_KEY",
    "LEDGER_ROOT",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_SESSION_ID",
    "GEMINI_SESSION_ID",
    "CURSOR_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "LEDGER_HOME",
)

INTENTS_YAML = """\
intents:
  - id: INT-001
    name: JWT hardening
    status: active
    owned_scope: ["src/auth/**"]
    constraints: ["keep the public API of src/auth stable"]
    acceptance_criteria: ["auth tests pass"]
  - id: INT-002
    name: Billing cleanup
    status: active
    owned_scope: ["src/billing/**"]
    constraints: []
    acceptance_criteria: []
  - id: INT-009
    name: Old work
    status: done
    owned_scope: ["legacy/**"]
"""


def short_folder(prefix: str = "ld-") -> Path:
    """A new 0700 folder with a short path, for a decider's socket (``sun_path`` is 108 bytes,
    and pytest's tmp paths are longer): inside the suite's runtime folder, which the suite
    removes at its end (tests/conftest.py), so one a test does not remove is not left behind."""
    import tempfile  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("LEDGER_TEST_RUNTIME")))
    folder.chmod(0o700)
    return folder


def clean_env(home: Path) -> dict[str, str]:
    """The environment for a subprocess: no developer key/root/session, an isolated home."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV and not k.startswith("GIT_")}
    env["LEDGER_HOME"] = str(home)
    return env


class Workspace(NamedTuple):
    """An initialised workspace under tmp_path."""

    root: Path
    home: Path

    @property
    def env(self) -> dict[str, str]:
        """The environ for in-process calls (key lookup only)."""
        return {"LEDGER_HOME": str(self.home)}

    @property
    def proc_env(self) -> dict[str, str]:
        """The environment for subprocesses."""
        return clean_env(self.home)

    @property
    def source(self) -> LedgerSource:
        """This workspace's ledger as the query layer reads it, under its own ledger home."""
        from ledger import LedgerSource  # noqa: PLC0415 -- the query layer's, not the hooks'

        return LedgerSource.workspace(self.root, environ=self.env)

    @property
    def orchestration(self) -> Path:
        return self.root / ".orchestration"

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str) -> Path:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def records(self) -> list[Record]:
        return list(Ledger.open(self.root, environ=self.env).records())

    def ledger_bytes(self) -> bytes:
        return (self.orchestration / "agent_trace.jsonl").read_bytes()


def make_workspace(tmp_path: Path, *, intents: str | None = INTENTS_YAML) -> Workspace:
    """``Ledger.init`` in ``tmp_path/ws`` with a private key under ``tmp_path/home``."""
    root = tmp_path / "ws"
    root.mkdir()
    home = tmp_path / "home"
    Ledger.init(root, environ={"LEDGER_HOME": str(home)})
    if intents is not None:
        (root / ".orchestration" / "active_intents.yaml").write_text(intents, encoding="utf-8")
    return Workspace(root, home)


def claude_payload(event: str, ws: Workspace | Path, session: str, **fields: Any) -> dict[str, Any]:
    """A payload shaped like hook-protocols.md §1.3-1.6 (common fields first, as documented)."""
    root = ws.root if isinstance(ws, Workspace) else ws
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-ws/{session}.jsonl",
        "cwd": str(fields.pop("cwd", root)),
    }
    if event not in ("SessionStart", "SessionEnd"):
        payload["permission_mode"] = "default"
    payload["hook_event_name"] = event
    payload.update(fields)
    return payload


class Fired(NamedTuple):
    """One in-process hook call: the neutral decision and the rendered Claude answer."""

    decision: HookDecision
    response: HookResponse

    @property
    def out(self) -> dict[str, Any]:
        value = json.loads(self.response.stdout)
        assert isinstance(value, dict)
        return value

    @property
    def permission(self) -> str | None:
        permission: str | None = self.out.get("hookSpecificOutput", {}).get("permissionDecision")
        return permission

    @property
    def code(self) -> str | None:
        return (self.decision.error or {}).get("code")

    @property
    def reason(self) -> str:
        """The decision's one-line reason; fails the test if the decision carries none."""
        assert self.decision.reason is not None, self.decision
        return self.decision.reason

    @property
    def error(self) -> dict[str, Any]:
        """The decision's standardized error object; fails the test if there is none."""
        assert self.decision.error is not None, self.decision
        return self.decision.error


def fire(ws: Workspace, payload: dict[str, Any]) -> Fired:
    """Run one payload through parse_payload → handle_event → render_response, in-process."""
    event = parse_payload("claude", json.dumps(payload).encode())
    decision = handle_event(event, environ=ws.env)
    return Fired(decision, render_response("claude", event, decision))


class Session:
    """A Claude Code session driving the in-process hook path."""

    def __init__(self, ws: Workspace, session_id: str) -> None:
        self.ws = ws
        self.id = session_id
        self._n = 0

    def tool_use_id(self) -> str:
        self._n += 1
        digest = hashlib.sha256(f"{self.id}/{self._n}".encode()).hexdigest()[:24]
        return f"toolu_01{digest}"

    def pre(
        self, tool: str, tool_input: dict[str, Any], *, tool_use_id: str | None = None, **extra: Any
    ) -> Fired:
        return fire(
            self.ws,
            claude_payload(
                "PreToolUse",
                self.ws,
                self.id,
                tool_name=tool,
                tool_input=tool_input,
                tool_use_id=tool_use_id or self.tool_use_id(),
                **extra,
            ),
        )

    def post(
        self,
        tool: str,
        tool_input: dict[str, Any],
        tool_response: Any,
        *,
        tool_use_id: str | None = None,
        **extra: Any,
    ) -> Fired:
        return fire(
            self.ws,
            claude_payload(
                "PostToolUse",
                self.ws,
                self.id,
                tool_name=tool,
                tool_input=tool_input,
                tool_use_id=tool_use_id or self.tool_use_id(),
                tool_response=tool_response,
                **extra,
            ),
        )

    def event(self, event: str, **fields: Any) -> Fired:
        return fire(self.ws, claude_payload(event, self.ws, self.id, **fields))

    def select(self, intent_id: str = "INT-001") -> Fired:
        return self.pre(
            "Bash",
            {"command": f"ledger intent select {intent_id}", "description": "Select the intent"},
        )

    def read(self, relative: str) -> Fired:
        path = self.ws.path(relative)
        content = path.read_text(encoding="utf-8")
        return self.post("Read", {"file_path": str(path)}, read_response(path, content))


def read_response(path: Path, content: str) -> dict[str, Any]:
    """``FileReadOutput`` (hook-protocols §1.6)."""
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    return {
        "type": "text",
        "file": {
            "filePath": str(path),
            "content": content,
            "numLines": lines,
            "startLine": 1,
            "totalLines": lines,
        },
    }


def structured_patch(old: str, new: str, context: int = 3) -> list[dict[str, Any]]:
    """jsdiff-style ``structuredPatch`` hunks (1-based, file-absolute, 3 lines of context)."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [f" {x}" for x in a[a1:a2]]
                continue
            lines += [f"-{x}" for x in a[a1:a2]]
            lines += [f"+{x}" for x in b[b1:b2]]
        hunks.append(
            {
                "oldStart": i1 + 1,
                "oldLines": i2 - i1,
                "newStart": j1 + 1,
                "newLines": j2 - j1,
                "lines": lines,
            }
        )
    return hunks


def added_ranges(patch: list[dict[str, Any]]) -> list[list[int]]:
    """Added line ranges in the new file, walked from each hunk's newStart (§1.6)."""
    ranges: list[list[int]] = []
    for hunk in patch:
        line = hunk["newStart"]
        for text in hunk["lines"]:
            if text.startswith("+"):
                if ranges and ranges[-1][1] == line - 1:
                    ranges[-1][1] = line
                else:
                    ranges.append([line, line])
                line += 1
            elif text.startswith(" "):
                line += 1
    return ranges


def edit_response(
    path: Path, old_string: str, new_string: str, original: str, *, replace_all: bool = False
) -> dict[str, Any]:
    """``FileEditOutput`` (hook-protocols §1.6), with a real structuredPatch."""
    updated = (
        original.replace(old_string, new_string)
        if replace_all
        else original.replace(old_string, new_string, 1)
    )
    return {
        "filePath": str(path),
        "oldString": old_string,
        "newString": new_string,
        "originalFile": original,
        "structuredPatch": structured_patch(original, updated),
        "userModified": False,
        "replaceAll": replace_all,
    }


def write_response(path: Path, content: str, original: str | None) -> dict[str, Any]:
    """``FileWriteOutput`` (hook-protocols §1.6)."""
    return {
        "type": "create" if original is None else "update",
        "filePath": str(path),
        "content": content,
        "structuredPatch": [] if original is None else structured_patch(original, content),
        "originalFile": original,
        "userModified": False,
    }


def sha256_hex(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_cli(
    args: list[str],
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """Run the installed ``ledger`` script."""
    return subprocess.run(
        [str(LEDGER), *args],
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def error_json_from_reason(reason: str) -> dict[str, Any]:
    """The standardized error object the adapter appends as the reason's last line."""
    value = json.loads(reason.rsplit("\n", 1)[-1])
    assert isinstance(value, dict)
    return value


def written_ranges(body: dict[str, Any]) -> dict[str, list[list[int]]]:
    """Path → the 1-based inclusive line ranges a ``hook.post`` body's attribution says were
    written (format v2's ``attribution.files[].hunks``, as ``[start, end]`` pairs)."""
    return {
        change["path"]: [
            [h["new_start"], h["new_start"] + h["new_lines"] - 1]
            for h in change["hunks"]
            if h["new_lines"]
        ]
        for change in (body.get("attribution") or {"files": []})["files"]
    }


def file_sha256_after(body: dict[str, Any]) -> str:
    """The SHA-256 the attribution records for the one file a ``hook.post`` body changed."""
    (change,) = body["attribution"]["files"]
    return str(change["sha256"])
