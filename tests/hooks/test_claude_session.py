"""A whole Claude Code session through the real `ledger hook claude --event <Event>` processes."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ledger import Revealer
from ledger._clients import MAX_PAYLOAD_BYTES

from ._support import (
    INTENTS_YAML,
    LEDGER,
    clean_env,
    edit_response,
    read_response,
    run_cli,
    write_response,
    written_ranges,
)

pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5-20250929"
STRING_LIMIT = 10_000
TOP_LEVEL_KEYS = {
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
    "terminalSequence",
}
PRE_SPECIFIC_KEYS = {
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
}
BLOCK_DECISION_EVENTS = {
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
}
CONTEXT_EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "SubagentStop",
}
MIDDLEWARE = """\
import type { NextFunction, Request, Response } from "express";
import jwt from "jsonwebtoken";

import { config } from "../config";

export function requireAuth(req: Request, res: Response, next: NextFunction) {
  const header = req.headers.authorization;
  if (!header) {
    return res.status(401).json({ error: "missing_token" });
  }
  const token = header.slice("Bearer ".length);
  try {
    const payload = jwt.verify(token, config.jwtSecret) as { sub: string };
    res.locals.user = payload.sub;
    return next();
  } catch (err) {
    return res.status(401).json({ error: "invalid_token" });
  }
}
"""


class Answer(NamedTuple):
    """One hook process: what Claude Code would read."""

    event: str
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        value = json.loads(self.stdout)
        assert isinstance(value, dict)
        return value

    @property
    def specific(self) -> dict[str, Any]:
        value = self.json.get("hookSpecificOutput", {})
        assert isinstance(value, dict), self.stdout
        return value

    @property
    def permission(self) -> str | None:
        if self.exit_code == 2:
            return "deny"
        return self.specific.get("permissionDecision")

    @property
    def reason(self) -> str:
        if self.exit_code == 2:
            return self.stderr
        return str(self.specific.get("permissionDecisionReason", ""))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def check_protocol(answer: Answer) -> None:
    """What hook-protocols.md §1.7-1.8 allows Claude Code to be given."""
    assert "Traceback" not in answer.stdout + answer.stderr
    assert answer.exit_code in (0, 2), answer
    if answer.exit_code == 2:
        assert answer.event == "PreToolUse"
        assert answer.stderr.strip()
        return
    text = answer.stdout
    assert text.lstrip().startswith("{"), text
    assert text.endswith("\n")
    assert text.count("\n") == 1  # one JSON object, nothing else
    out = answer.json
    assert set(out) <= TOP_LEVEL_KEYS, out
    assert all(len(s) <= STRING_LIMIT for s in _strings(out))
    specific = out.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == answer.event
        if "additionalContext" in specific:
            assert answer.event in CONTEXT_EVENTS
    if answer.event == "PreToolUse":
        assert "decision" not in out  # PreToolUse decides through hookSpecificOutput
        if specific is not None:
            assert set(specific) <= PRE_SPECIFIC_KEYS
            assert specific.get("permissionDecision") in (None, "allow", "deny", "ask")
            if specific.get("permissionDecision") in ("deny", "ask"):
                assert specific["permissionDecisionReason"].strip()
    else:
        assert "permissionDecision" not in (specific or {})
        if "decision" in out:
            assert out["decision"] == "block"
            assert answer.event in BLOCK_DECISION_EVENTS


class Claude:
    """Plays Claude Code: builds payloads per hook-protocols §1.3-1.6 and runs the hook CLI."""

    def __init__(self, root: Path, env: dict[str, str], session: str | None = None) -> None:
        self.root = root
        self.env = env
        self.session = session or str(uuid.uuid4())
        self.prompt_id: str | None = None
        self._n = 0

    def _common(self, event: str) -> dict[str, Any]:
        payload: dict[str, Any] = {"session_id": self.session}
        if self.prompt_id is not None and event not in ("SessionStart", "SessionEnd"):
            payload["prompt_id"] = self.prompt_id
        encoded = str(self.root).replace("/", "-")
        payload["transcript_path"] = f"/home/dev/.claude/projects/{encoded}/{self.session}.jsonl"
        payload["cwd"] = str(self.root)
        if event not in ("SessionStart", "SessionEnd"):
            payload["permission_mode"] = "default"
        payload["hook_event_name"] = event
        return payload

    def tool_use_id(self) -> str:
        self._n += 1
        return f"toolu_01{uuid.uuid5(uuid.NAMESPACE_URL, f'{self.session}/{self._n}').hex[:22]}"

    def send(
        self,
        event: str,
        payload: dict[str, Any] | bytes,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Answer:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        done = run_cli(
            ["hook", "claude", "--event", event], env or self.env, cwd=cwd or self.root, stdin=data
        )
        answer = Answer(event, done.returncode, done.stdout.decode(), done.stderr.decode())
        check_protocol(answer)
        return answer

    def event(self, event: str, **fields: Any) -> Answer:
        return self.send(event, {**self._common(event), **fields})

    def pre(self, tool: str, tool_input: dict[str, Any], tool_use_id: str) -> Answer:
        return self.event(
            "PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=tool_use_id
        )

    def post(
        self, tool: str, tool_input: dict[str, Any], tool_response: Any, tool_use_id: str
    ) -> Answer:
        answer = self.event(
            "PostToolUse",
            tool_name=tool,
            tool_input=tool_input,
            tool_response=tool_response,
            tool_use_id=tool_use_id,
            duration_ms=12,
        )
        assert answer.exit_code == 0
        assert "decision" not in answer.json  # PostToolUse never blocks here
        return answer

    def tool(self, tool: str, tool_input: dict[str, Any], run: Any = None) -> tuple[Answer, str]:
        """PreToolUse; if allowed, run the tool (``run`` returns the response) and PostToolUse."""
        tool_use_id = self.tool_use_id()
        answer = self.pre(tool, tool_input, tool_use_id)
        if answer.permission in (None, "allow") and run is not None:
            self.post(tool, tool_input, run(), tool_use_id)
        return answer, tool_use_id


def allowed(answer: Answer) -> bool:
    return answer.exit_code == 0 and answer.permission in (None, "allow")


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "app"
    root.mkdir()
    env = clean_env(tmp_path / "home")
    done = run_cli(["init", "--root", str(root)], env)
    assert done.returncode == 0, done.stderr
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS_YAML, encoding="utf-8")
    (root / "src" / "auth").mkdir(parents=True)
    (root / "src" / "auth" / "middleware.ts").write_text(MIDDLEWARE, encoding="utf-8")
    (root / "src" / "auth" / "old.ts").write_text("export const legacy = true;\n", encoding="utf-8")
    return root, env


def ledger_lines(root: Path) -> list[bytes]:
    data = (root / ".orchestration" / "agent_trace.jsonl").read_bytes()
    assert data.endswith(b"\n")  # never a partial line
    lines = data.split(b"\n")[:-1]
    for line in lines:
        json.loads(line)
    return lines


def verify(root: Path, env: dict[str, str]) -> None:
    done = run_cli(["verify", "--root", str(root)], env)
    assert done.returncode == 0, done.stdout + done.stderr


def log(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = run_cli(["log", "--json", "-n", "1000", "--root", str(root)], env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def test_whole_claude_code_session(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    a = Claude(root, env)
    middleware = root / "src" / "auth" / "middleware.ts"

    start = a.event("SessionStart", source="startup", model=MODEL)
    assert start.exit_code == 0
    assert "decision" not in start.json

    a.prompt_id = str(uuid.uuid4())
    prompt = a.event(
        "UserPromptSubmit",
        prompt="Harden the JWT check in src/auth/middleware.ts: pin HS256 and verify the issuer.",
    )
    assert prompt.exit_code == 0
    assert "decision" not in prompt.json

    # 1. Write before selecting an intent.
    tokens = root / "src" / "auth" / "tokens.ts"
    write_tokens = {"file_path": str(tokens), "content": "export const ttl = 900;\n"}
    early, early_id = a.tool("Write", write_tokens)
    assert early.permission == "deny"
    assert early.reason.startswith("INTENT_REQUIRED")
    error = json.loads(early.reason.splitlines()[-1])
    assert error["code"] == "INTENT_REQUIRED"
    assert error["type"] == "tool_error"
    assert error["meta"]["tool"] == "Write"
    assert not tokens.exists()

    # 2. Select the intent through Bash.
    select_input = {"command": "ledger intent select INT-001", "description": "Select intent"}
    select, select_id = a.tool(
        "Bash",
        select_input,
        run=lambda: {
            "stdout": "<intent_context>…</intent_context>\n",
            "stderr": "",
            "interrupted": False,
        },
    )
    assert select.permission == "allow"
    context = select.specific["additionalContext"]
    assert "<intent_context>" in context
    assert "<id>INT-001</id>" in context
    assert "<glob>src/auth/**</glob>" in context

    # 3. Read, 4. Edit in scope (+ PostToolUse Edit).
    read, _ = a.tool(
        "Read", {"file_path": str(middleware)}, run=lambda: read_response(middleware, MIDDLEWARE)
    )
    assert allowed(read)
    old = "    const payload = jwt.verify(token, config.jwtSecret) as { sub: string };\n"
    new = (
        "    const payload = jwt.verify(token, config.jwtSecret, {\n"
        '      algorithms: ["HS256"],\n      issuer: config.jwtIssuer,\n'
        "    }) as { sub: string };\n"
    )
    edit_input = {
        "file_path": str(middleware),
        "old_string": old,
        "new_string": new,
        "replace_all": False,
    }

    def do_edit() -> dict[str, Any]:
        before = middleware.read_text(encoding="utf-8")
        middleware.write_text(before.replace(old, new, 1), encoding="utf-8")
        return edit_response(middleware, old, new, before)

    edited, edit_id = a.tool("Edit", edit_input, run=do_edit)
    assert allowed(edited), edited
    assert "jwtIssuer" in middleware.read_text(encoding="utf-8")

    # 5. Write out of scope.
    billing = {"file_path": str(root / "src" / "billing" / "invoice.ts"), "content": "x\n"}
    outside, _ = a.tool("Write", billing)
    assert outside.permission == "deny"
    assert outside.reason.startswith("SCOPE_VIOLATION")
    assert json.loads(outside.reason.splitlines()[-1])["meta"]["intent_id"] == "INT-001"

    # 6. Destructive Bash in scope: ask a human.
    rm_input = {"command": "rm -rf src/auth/old.ts", "description": "Remove legacy module"}
    rm, rm_id = a.tool("Bash", rm_input)
    assert rm.permission == "ask"
    assert rm.reason.startswith("DESTRUCTIVE")
    assert "src/auth/old.ts" in rm.reason
    assert "INT-001" in rm.reason
    assert (root / "src" / "auth" / "old.ts").exists()

    # 7. A second session edits the same file.
    b = Claude(root, env)
    b.event("SessionStart", source="startup", model=MODEL)
    b_select, _ = b.tool("Bash", {"command": "ledger intent select INT-001"})
    assert b_select.permission == "allow"
    current = middleware.read_text(encoding="utf-8")
    b.tool("Read", {"file_path": str(middleware)}, run=lambda: read_response(middleware, current))
    rewritten = current.replace('"missing_token"', '"token_required"')
    write_input = {"file_path": str(middleware), "content": rewritten}

    def do_write() -> dict[str, Any]:
        middleware.write_text(rewritten, encoding="utf-8")
        return write_response(middleware, rewritten, current)

    b_write, b_write_id = b.tool("Write", write_input, run=do_write)
    assert allowed(b_write)

    # 8. The first session's next Edit of that file is stale.
    stale_input = {
        "file_path": str(middleware),
        "old_string": "issuer: config.jwtIssuer",
        "new_string": "issuer: config.issuer",
        "replace_all": False,
    }
    stale, stale_id = a.tool("Edit", stale_input)
    assert stale.permission == "deny"
    assert stale.reason.startswith("STALE_FILE")
    assert '+    return res.status(401).json({ error: "token_required" });' in stale.reason

    stop = a.event(
        "Stop",
        stop_hook_active=False,
        last_assistant_message="Done.",
        background_tasks=[],
        session_crons=[],
    )
    assert stop.exit_code == 0
    assert "decision" not in stop.json
    end = a.event("SessionEnd", reason="prompt_input_exit")
    assert end.exit_code == 0

    # The ledger: intact, and it tells the story.
    ledger_lines(root)
    verify(root, env)
    records = log(root, env)
    assert records[0]["kind"] == "ledger.genesis"
    mine = [r for r in records if r["actor"].get("session") == a.session]
    theirs = [r for r in records if r["actor"].get("session") == b.session]
    assert all(r["actor"]["client"] == "claude-code" for r in mine + theirs)

    def pre_of(tool_use_id: str) -> dict[str, Any]:
        found = [
            r
            for r in mine + theirs
            if r["kind"] == "hook.pre" and r["body"]["tool_use_id"] == tool_use_id
        ]
        assert len(found) == 1
        return found[0]

    assert pre_of(early_id)["body"]["decision"] == "deny"
    assert pre_of(early_id)["body"]["error"]["code"] == "INTENT_REQUIRED"
    assert pre_of(select_id)["body"]["decision"] == "allow"
    assert pre_of(rm_id)["body"]["decision"] == "ask"
    assert pre_of(stale_id)["body"]["decision"] == "deny"
    assert pre_of(stale_id)["body"]["error"]["code"] == "STALE_FILE"
    assert pre_of(b_write_id)["actor"]["session"] == b.session
    assert [r["body"]["decision"] for r in mine if r["kind"] == "hook.pre"] == [
        "deny",
        "allow",
        "allow",
        "allow",
        "deny",
        "ask",
        "deny",
    ]
    assert [r["body"]["decision"] for r in theirs if r["kind"] == "hook.pre"] == [
        "allow",
        "allow",
        "allow",
    ]
    assert pre_of(edit_id)["actor"]["model"] == MODEL  # remembered from SessionStart

    selected = [r for r in records if r["kind"] == "intent.selected"]
    assert [(r["body"]["session"], r["body"]["intent_id"]) for r in selected] == [
        (a.session, "INT-001"),
        (b.session, "INT-001"),
    ]

    edit_post = [
        r for r in mine if r["kind"] == "hook.post" and r["body"]["tool_use_id"] == edit_id
    ]
    assert len(edit_post) == 1
    assert edit_post[0]["body"]["invocation"] == pre_of(edit_id)["body"]["invocation"]
    assert written_ranges(edit_post[0]["body"]) == {"src/auth/middleware.ts": [[13, 16]]}
    lines = MIDDLEWARE.replace(old, new).splitlines()
    assert lines[12].startswith("    const payload = jwt.verify(token, config.jwtSecret, {")
    assert lines[15] == "    }) as { sub: string };"
    assert [r["kind"] for r in mine if r["kind"].startswith("hook.")].count("hook.post") == 3
    assert {r["body"]["event"] for r in mine if r["kind"] == "hook.event"} == {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
    }
    prompt_record = next(r for r in mine if r["body"].get("event") == "UserPromptSubmit")
    assert set(prompt_record["body"]["prompt"]) == {"commitment"}  # the chain holds a digest
    revealer = Revealer.beside(root / ".orchestration" / "agent_trace.jsonl")
    assert "Harden the JWT check" in revealer.record(prompt_record)["body"]["prompt"]


# --- failures: fail closed on PreToolUse, never block PostToolUse ------------------------------


def _payload(root: Path, event: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": "/home/dev/t.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Write",
        "tool_use_id": "toolu_01Broken",
        "tool_input": {"file_path": str(root / "src" / "auth" / "x.ts"), "content": "x"},
    }
    if event == "PostToolUse":
        base["tool_response"] = {
            "type": "create",
            "filePath": base["tool_input"]["file_path"],
            "content": "x",
            "structuredPatch": [],
            "originalFile": None,
        }
    base.update(fields)
    return base


def _case(
    name: str, root: Path, tmp_path: Path, env: dict[str, str], event: str
) -> tuple[bytes, dict[str, str], Path]:
    """(stdin, env, cwd) for one broken situation."""
    if name == "malformed-json":
        return b'{"hook_event_name": "' + event.encode() + b'", "tool_name": ', env, root
    if name == "non-utf8":
        raw = json.dumps(_payload(root, event)).encode().replace(b"x.ts", b"\xff\xfe.ts")
        return raw, env, root
    if name == "oversized":
        # Over the limit by one byte; built as bytes (a str of 256 MiB would triple the cost).
        big = _payload(root, event)
        big["tool_input"]["content"] = "@FILL@"
        before, after = json.dumps(big).encode().split(b"@FILL@")
        fill = MAX_PAYLOAD_BYTES + 1 - len(before) - len(after)
        return before + b"A" * fill + after, env, root
    if name == "no-orchestration":
        bare = tmp_path / "bare"
        bare.mkdir(exist_ok=True)
        return json.dumps(_payload(bare, event)).encode(), env, bare
    if name == "bad-hooks-yaml":
        (root / ".orchestration" / "hooks.yaml").write_text(
            "policies:\n  destructive: [\n", encoding="utf-8"
        )
        return json.dumps(_payload(root, event)).encode(), env, root
    assert name == "no-private-key"
    return (
        json.dumps(_payload(root, event)).encode(),
        {**env, "LEDGER_HOME": str(tmp_path / "empty-home")},
        root,
    )


CASES = [
    "malformed-json",
    "non-utf8",
    "oversized",
    "no-orchestration",
    "no-private-key",
    "bad-hooks-yaml",
]


@pytest.mark.parametrize("case", CASES)
def test_broken_pre_tool_use_fails_closed(
    workspace: tuple[Path, dict[str, str]], tmp_path: Path, case: str
) -> None:
    root, env = workspace
    before = ledger_lines(root)
    stdin, run_env, cwd = _case(case, root, tmp_path, env, "PreToolUse")
    claude = Claude(root, run_env)
    answer = claude.send("PreToolUse", stdin, env=run_env, cwd=cwd)
    assert answer.permission == "deny"
    if answer.exit_code == 0:
        reason_line = answer.reason.splitlines()[0]
        assert "fail-closed" in reason_line or "HOOK_ERROR" in answer.reason
        error = json.loads(answer.reason.splitlines()[-1])
        assert error["code"] == "HOOK_ERROR"
        assert len(answer.reason.splitlines()) == 2  # one-line reason + the error object
    assert answer.stderr.count("\n") <= 1  # one line, no traceback
    after = ledger_lines(root)
    assert after[: len(before)] == before
    new = [json.loads(line)["kind"] for line in after[len(before) :]]
    assert new in ([], ["hook.error"])
    verify(root, env)


@pytest.mark.parametrize("case", CASES)
def test_broken_post_tool_use_never_blocks(
    workspace: tuple[Path, dict[str, str]], tmp_path: Path, case: str
) -> None:
    root, env = workspace
    before = ledger_lines(root)
    stdin, run_env, cwd = _case(case, root, tmp_path, env, "PostToolUse")
    answer = Claude(root, run_env).send("PostToolUse", stdin, env=run_env, cwd=cwd)
    assert answer.exit_code == 0
    assert "decision" not in answer.json
    assert "hookSpecificOutput" not in answer.json or "permissionDecision" not in answer.specific
    assert answer.stderr.count("\n") <= 1
    after = ledger_lines(root)
    assert after[: len(before)] == before
    assert [json.loads(line)["kind"] for line in after[len(before) :]] in ([], ["hook.error"])
    verify(root, env)


def test_hook_error_record_describes_the_failure(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    answer = Claude(root, env).send("PreToolUse", b"{oops")
    assert answer.permission == "deny"
    record = log(root, env)[-1]
    assert record["kind"] == "hook.error"
    assert record["body"]["client"] == "claude"
    assert record["body"]["payload_bytes"] == 5
    assert "JSON" in record["body"]["message"]


def test_parallel_post_tool_use_processes(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    # The first call arms the tripwire (one more record); the parallel ones then add one each.
    warm = _payload(root, "SessionStart", session_id="parallel-warm")
    subprocess.run(
        [str(LEDGER), "hook", "claude", "--event", "SessionStart"],
        input=json.dumps(warm).encode(),
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
    )
    before = len(ledger_lines(root))
    procs = []
    for i in range(8):
        target = root / "src" / "auth" / f"p{i}.ts"
        target.write_text(f"export const p = {i};\n", encoding="utf-8")
        payload = _payload(
            root,
            "PostToolUse",
            session_id=f"parallel-{i}",
            tool_use_id=f"toolu_01Par{i}",
            tool_input={"file_path": str(target), "content": f"{i}"},
        )
        proc = subprocess.Popen(
            [str(LEDGER), "hook", "claude", "--event", "PostToolUse"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=root,
        )
        procs.append((proc, json.dumps(payload).encode()))
    for proc, data in procs:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    for proc, _data in procs:
        assert proc.wait(timeout=60) == 0
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert json.loads(proc.stdout.read()) == {}
        assert proc.stderr.read() == b""
        proc.stdout.close()
        proc.stderr.close()
    lines = ledger_lines(root)
    new = [json.loads(line) for line in lines[before:]]
    assert len(new) == 8
    assert {r["kind"] for r in new} == {"hook.post"}
    assert sorted(r["body"]["tool_use_id"] for r in new) == [f"toolu_01Par{i}" for i in range(8)]
    assert [r["seq"] for r in new] == list(range(before, before + 8))
    verify(root, env)


def test_oversized_payload_is_described_truthfully(
    workspace: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = workspace
    stdin, run_env, cwd = _case("oversized", root, tmp_path, env, "PreToolUse")
    answer = Claude(root, run_env).send("PreToolUse", stdin, env=run_env, cwd=cwd)
    assert answer.permission == "deny"
    assert f"is {MAX_PAYLOAD_BYTES + 1} bytes" not in answer.reason
