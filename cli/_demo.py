"""``ledger demo``: the main job on a throwaway workspace, narrated.

A governed Claude Code session (every hook through the real ``ledger hook claude`` command),
then what verification catches. A private ``LEDGER_HOME`` keeps the demo away from the user's
keys.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from cli._exit import OK
from ledger import Entry, Ledger


def _say(text: str = "") -> None:
    print(text, flush=True)


def _step(title: str) -> None:
    _say()
    _say(f"== {title}")


def run_demo(directory: Path | None, *, keep: bool = False) -> int:
    """Create a workspace, record an agent session, verify it, then show what verify catches."""
    base = Path(tempfile.mkdtemp(prefix="ledger-demo-")) if directory is None else directory
    base.mkdir(parents=True, exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if k != "LEDGER_SIGNING_KEY"}
    environ["LEDGER_HOME"] = str(base / "home")  # the demo's private key stays in here
    # Every hook decides in its own process: a decider the demo started would outlive it by
    # its idle half hour, holding the demo's environment (and a deleted ledger home).
    environ["LEDGER_DECIDER"] = "off"
    workspace = base / "workspace"
    if directory is None and not keep:
        _say(
            f"A throwaway workspace in {base}, deleted at the end: `ledger demo --keep` keeps "
            "it, with its report.html to open in a browser."
        )
    try:
        _run(workspace, base, environ)
    finally:
        if directory is None and not keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            _say(
                f"\nworkspace kept at {workspace}, its report at {base / 'report' / 'report.html'};"
                " look around with:\n"
                f"  LEDGER_HOME={environ['LEDGER_HOME']} ledger log --root {workspace}\n"
                f"  LEDGER_HOME={environ['LEDGER_HOME']} ledger doctor --root {workspace}"
            )
    return OK


_INTENTS = """\
active_intents:
    - id: "INT-001"
      name: "JWT hardening"
      status: "IN_PROGRESS"
      owned_scope:
          - "src/auth/**"
      constraints:
          - "Pin the JWT algorithm to HS256"
          - "Verify the issuer from config"
      acceptance_criteria:
          - "npm test -- src/auth passes"
    - id: "INT-002"
      name: "API docs"
      status: "PLANNED"
      owned_scope:
          - "docs/**"
"""
#: What the words in the answers mean, said once, the first time each appears.
_GLOSSARY = {
    "INTENT_REQUIRED": "a tool that changes files needs an IN_PROGRESS intent selected first",
    "SCOPE_VIOLATION": "the file is outside what the selected intent owns (its owned_scope)",
    "DESTRUCTIVE": "the command deletes or overwrites files, so a person decides",
    "INTENT_EVOLUTION": "mutation class: the change alters what the code offers (public "
    "definitions added, removed or changed; a file deleted), not just how it reads "
    "(AST_REFACTOR)",
    "ORCHESTRATION_PROTECTED": "agents may never write .orchestration/, where the ledger, its "
    "keys and the intents live",
    "STALE_FILE": "the file changed since this session read it; it must read it again",
}
_NEXT_STEPS = """\
next, in a real project:
  cd your-project && ledger init           # this clone's ledger and signing key
  $EDITOR .orchestration/active_intents.yaml   # what agents may work on (docs/governance.md)
  ledger install claude                    # or cursor, gemini, codex, cline
  ledger doctor                            # checks the ledger, key, intents and hooks
  ... work with your agent, then:
  ledger log --decision deny               # what was it blocked on?
  ledger checkpoint -o ../audit/ledger.ckpt   # keep it off this machine"""
_MIDDLEWARE = (
    'import jwt from "jsonwebtoken";\n'
    "\n"
    "export function requireAuth(token: string) {\n"
    "  const payload = jwt.verify(token, config.jwtSecret);\n"
    "  return payload;\n"
    "}\n"
)


class _Agent:
    """Sends Claude Code hook payloads (docs/architecture.md) through `ledger hook claude`."""

    def __init__(self, workspace: Path, session: str, environ: dict[str, str]) -> None:
        self.workspace = workspace
        self.session = session
        self.environ = environ
        self.calls = 0
        self.last_pre: str | None = None

    def send(self, event: str, **fields: object) -> dict[str, object]:
        self.calls += 1
        payload = {
            "session_id": self.session,
            "cwd": str(self.workspace),
            "transcript_path": f"~/.claude/projects/demo/{self.session}.jsonl",
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
        if "tool_name" in fields:
            # A post carries its pre's tool_use_id, as Claude Code sends them (blame pairs them).
            if event != "PreToolUse" and self.last_pre is not None:
                payload.setdefault("tool_use_id", self.last_pre)
            payload.setdefault("tool_use_id", f"toolu_{self.session[:4]}{self.calls:04d}")
            self.last_pre = str(payload["tool_use_id"]) if event == "PreToolUse" else None
        done = subprocess.run(  # noqa: S603 -- our own CLI, as Claude Code would run it
            [sys.executable, "-m", "cli._entry", "hook", "claude", "--event", event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=self.environ,
            check=False,
        )
        out = done.stdout.decode().strip()
        answer = json.loads(out) if out.startswith("{") else {}
        specific = answer.get("hookSpecificOutput", {}) if isinstance(answer, dict) else {}
        return {
            "exit": done.returncode,
            "decision": specific.get("permissionDecision"),
            "reason": specific.get("permissionDecisionReason"),
            "context": specific.get("additionalContext"),
        }

    def tool(self, label: str, tool: str, tool_input: Mapping[str, object]) -> dict[str, object]:
        answer = self.send("PreToolUse", tool_name=tool, tool_input=tool_input)
        # No opinion and an explicit allow both let the call through: one label for both.
        decision = str(answer["decision"] or "allow")
        _say(f"  [{self.session[:8]}] {label:<46} -> {decision}")
        reason = str(answer["reason"] or "").splitlines()[0] if answer["reason"] else ""
        reason = reason.replace(f"{self.workspace}/", "")  # paths as the labels show them
        if reason and decision != "allow":
            _wrapped(reason)
            for term, meaning in _GLOSSARY.items():
                if term in reason and term not in _glossed:
                    _glossed.add(term)
                    _wrapped(f"({term}: {meaning})")
        return answer


_glossed: set[str] = set()


def _wrapped(text: str, indent: int = 6) -> None:
    """``text`` wrapped to the terminal, indented, never cut in the middle of a word."""
    import textwrap  # noqa: PLC0415

    width = max(shutil.get_terminal_size((100, 24)).columns, 60) - 1
    for line in textwrap.wrap(
        text, width=width - indent, break_long_words=False, break_on_hyphens=False
    ):
        _say(" " * indent + line)


def _run(workspace: Path, base: Path, environ: dict[str, str]) -> None:
    ledger = _setup(workspace, environ)
    _session(workspace, environ)
    _integrity(ledger, base, workspace, environ)
    from cli._query import demo_finale  # noqa: PLC0415 -- query lane: query, report, export

    demo_finale(workspace, base, environ)
    _blame(workspace, environ)


def _setup(workspace: Path, environ: dict[str, str]) -> Ledger:
    _step(f"ledger init  ({workspace})")
    ledger = Ledger.init(workspace, environ=environ)
    genesis = next(ledger.records())
    _say(f"ledger id {genesis.ledger_id}; signing key {genesis.key}")
    _say(
        f"private key: {environ['LEDGER_HOME']}/keys/{genesis.key}.pem (mode 0600, outside "
        "the workspace); public key pinned in .orchestration/keys/"
    )
    (workspace / ".orchestration" / "active_intents.yaml").write_text(_INTENTS)
    (workspace / "src" / "auth").mkdir(parents=True)
    (workspace / "src" / "auth" / "middleware.ts").write_text(_MIDDLEWARE)
    (workspace / "src" / "auth" / "legacy.ts").write_text("export const legacy = true;\n")
    _say("wrote .orchestration/active_intents.yaml (INT-001 owns src/auth/**) and src/auth/")

    _step("ledger install claude  (merges hooks into .claude/settings.json)")
    from ledger import install  # noqa: PLC0415

    path, changes = install("claude", root=workspace, ledger_cmd=f"{sys.executable} -m cli._entry")
    _say(f"  {path.relative_to(workspace)}: {len(changes)} hook entries added")
    return ledger


def _session(workspace: Path, environ: dict[str, str]) -> None:
    _step("a Claude Code session, every hook through `ledger hook claude`")
    _say("  allow: ledger lets the call through (the agent's own permission rules still apply);")
    _say("  deny: blocked, with the reason the agent is shown; ask: a person decides.")
    env = {**environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    alice = _Agent(workspace, "a11ce0de-7b4d-4e8a-9c51-2d6f0b8e4a17", env)
    bob = _Agent(workspace, "b0b5e551-0000-4e8a-9c51-2d6f0b8e4a17", env)
    mw = str(workspace / "src" / "auth" / "middleware.ts")
    alice.send("SessionStart", source="startup", model="claude-sonnet-4-5")
    alice.send("UserPromptSubmit", prompt="Pin the JWT algorithm to HS256.")
    alice.tool(
        "Write src/auth/tokens.ts (no intent yet)",
        "Write",
        {"file_path": str(workspace / "src/auth/tokens.ts"), "content": "x\n"},
    )
    answer = alice.tool(
        "Bash: ledger intent select INT-001", "Bash", {"command": "ledger intent select INT-001"}
    )
    _wrapped(
        "the agent is handed the intent as context: <intent_context> (id, name, scope, "
        "constraints, acceptance criteria) </intent_context>"
    )
    alice.tool("Read src/auth/middleware.ts", "Read", {"file_path": mw})
    alice.send(
        "PostToolUse",
        tool_name="Read",
        tool_input={"file_path": mw},
        tool_response={"type": "text", "file": {"filePath": mw}},
    )
    old = "  const payload = jwt.verify(token, config.jwtSecret);\n"
    new = '  const payload = jwt.verify(token, config.jwtSecret, { algorithms: ["HS256"] });\n'
    edit = {"file_path": mw, "old_string": old, "new_string": new}
    alice.tool("Edit src/auth/middleware.ts (in scope)", "Edit", edit)
    (workspace / "src/auth/middleware.ts").write_text(_MIDDLEWARE.replace(old, new))
    alice.send(
        "PostToolUse",
        tool_name="Edit",
        tool_input=edit,
        tool_response={
            "filePath": mw,
            "oldString": old,
            "newString": new,
            "originalFile": _MIDDLEWARE,
            "structuredPatch": [
                {
                    "oldStart": 3,
                    "oldLines": 3,
                    "newStart": 3,
                    "newLines": 3,
                    "lines": [
                        " export function requireAuth(token: string) {",
                        "-" + old.rstrip("\n"),
                        "+" + new.rstrip("\n"),
                        "   return payload;",
                    ],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
        duration_ms=41,
    )
    alice.tool(
        "Write docs/auth.md (out of scope)",
        "Write",
        {"file_path": str(workspace / "docs/auth.md"), "content": "# Auth\n"},
    )
    alice.tool(
        "Write ../outside.txt (escapes workspace)",
        "Write",
        {"file_path": str(workspace / ".." / "outside.txt"), "content": "x"},
    )
    alice.tool(
        "Bash: rm -f src/auth/legacy.ts (destructive)",
        "Bash",
        {"command": "rm -f src/auth/legacy.ts"},
    )
    alice.tool(
        "Bash: echo x > .orchestration/agent_trace.jsonl",
        "Bash",
        {"command": "echo x > .orchestration/agent_trace.jsonl"},
    )

    bob.send("SessionStart", source="startup", model="claude-opus-4-1")
    bob.tool(
        "Bash: ledger intent select INT-001", "Bash", {"command": "ledger intent select INT-001"}
    )
    edited = _MIDDLEWARE.replace(old, new) + "// reviewed by bob\n"
    bob.tool(
        "Write src/auth/middleware.ts (second session)",
        "Write",
        {"file_path": mw, "content": edited},
    )
    (workspace / "src/auth/middleware.ts").write_text(edited)
    bob.send(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": mw, "content": edited},
        tool_response={
            "type": "update",
            "filePath": mw,
            "content": edited,
            "structuredPatch": [],
            "originalFile": _MIDDLEWARE,
        },
    )
    answer = alice.tool(
        "Edit src/auth/middleware.ts again (now stale)",
        "Edit",
        {
            "file_path": mw,
            "old_string": "return payload;",
            "new_string": "return payload as Claims;",
        },
    )
    preview = [line for line in str(answer["reason"]).splitlines()[1:] if line.strip()][:6]
    for line in preview:
        if not line.startswith("{"):
            _say(f"        {line}")
    alice.send("Stop", stop_hook_active=False)
    alice.send("SessionEnd", reason="prompt_input_exit")
    bob.send("SessionEnd", reason="prompt_input_exit")


def _integrity(ledger: Ledger, base: Path, workspace: Path, environ: dict[str, str]) -> None:
    _step("ledger verify")
    report = ledger.verify()
    kinds: dict[str, int] = {}
    for record in ledger.records():
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    _say(f"  {report.summary()}")
    _say("  records: " + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items())))

    _step("ledger checkpoint  (keep it off this machine: git, CI artifacts)")
    checkpoint = ledger.checkpoint()
    _say("  " + checkpoint.text().replace("\n", "\n  ").rstrip())

    _step("tampering: flip one decision in a copy (deny -> allow)")
    tampered = _copy(workspace, base / "tampered")
    _edit_first(tampered, b'"decision":"deny"', b'"decision":"allow"')
    report = Ledger.open(tampered, environ=environ).verify()
    _say(f"  {report.summary()}")

    _step("truncation: delete the last two records in a copy")
    truncated = _copy(workspace, base / "truncated")
    _truncate_lines(truncated, 2)
    copy = Ledger.open(truncated, environ=environ)
    _say(f"  without a checkpoint: {copy.verify().summary()}")
    _say("  (a hash chain cannot prove its own tail; that is what checkpoints are for)")
    report = copy.verify(checkpoints=[("ledger.ckpt", checkpoint.text())])
    _say(f"  with the checkpoint:  {report.summary()}")

    _step("crash mid-append: a torn last line, then ledger repair")
    with ledger.file.path.open("ab") as handle:
        handle.write(b'{"actor":{"agent":null,"client":"claude-co')
    _say(f"  verify: {ledger.verify().summary()}")
    result = ledger.repair()
    _say(f"  repair: moved {result.removed_bytes} bytes to {result.quarantine_file}")
    _say(f"  verify: {ledger.verify().summary()}")

    _step("throughput on this machine")
    started = time.perf_counter()
    body = {"tool": "Edit", "file": "src/auth/middleware.ts", "decision": "allow"}
    ledger.append_many([Entry("app.event", body, {"client": "demo"})] * 2000)
    appended = time.perf_counter() - started
    started = time.perf_counter()
    report = ledger.verify()
    verified = time.perf_counter() - started
    _say(
        f"  appended 2000 records in {appended * 1000:.0f} ms (one fsync); "
        f"verified {report.records} in {verified * 1000:.0f} ms: {report.summary()}"
    )
    _say()
    _say(_NEXT_STEPS)


def _edit_first(workspace: Path, old: bytes, new: bytes) -> None:
    path = workspace / ".orchestration" / "agent_trace.jsonl"
    path.write_bytes(path.read_bytes().replace(old, new, 1))


def _copy(workspace: Path, target: Path) -> Path:
    shutil.copytree(workspace, target)
    return target


def _truncate_lines(workspace: Path, count: int) -> None:
    path = workspace / ".orchestration" / "agent_trace.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join(lines[:-count]) + b"\n")


def _blame(workspace: Path, environ: dict[str, str]) -> None:
    """Blame lane: a shell command and a human edit on top of the two sessions' lines."""
    from cli._blame import run as blame_run  # noqa: PLC0415

    _step("a shell command (sed -i, approved) and a human edit, then ledger blame")
    env = {**environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    bob = _Agent(workspace, "b0b5e551-0000-4e8a-9c51-2d6f0b8e4a17", env)
    bob.calls = 100  # tool_use_ids after the session's own
    command = {
        "command": "sed -i 's/return payload;/return Object.freeze(payload);/' "
        "src/auth/middleware.ts"
    }
    bob.tool("Bash: sed -i ... src/auth/middleware.ts", "Bash", command)
    subprocess.run(["bash", "-c", str(command["command"])], cwd=workspace, check=True)  # noqa: S603, S607
    bob.send(
        "PostToolUse",
        tool_name="Bash",
        tool_input=command,
        tool_response={"stdout": "", "stderr": "", "interrupted": False},
    )
    path = workspace / "src/auth/middleware.ts"
    path.write_text(path.read_text() + "// TODO(human): rotate the secret\n")
    _say("  a person appended a line in their editor")
    _say("$ ledger blame src/auth/middleware.ts")
    cwd = Path.cwd()
    try:
        os.chdir(workspace)
        old = os.environ.get("LEDGER_HOME")
        os.environ["LEDGER_HOME"] = environ["LEDGER_HOME"]
        blame_run("src/auth/middleware.ts", root=str(workspace))
    finally:
        os.chdir(cwd)
        if old is None:
            os.environ.pop("LEDGER_HOME", None)
        else:
            os.environ["LEDGER_HOME"] = old
