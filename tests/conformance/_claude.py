"""Running the real Claude Code CLI headless against the scripted model (findings §8)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._harness import Workspace
from ._server import ModelServer, Script, Step

#: The shell permission the findings used so selection runs without an interactive prompt.
SELECT_ONLY = "Bash(ledger intent select:*)"


@dataclass(frozen=True)
class ClaudeRun:
    """One ``claude -p`` run: its JSON result and what the model server saw."""

    returncode: int
    result: dict[str, Any]
    stderr: str
    script: Script

    @property
    def session_id(self) -> str:
        return str(self.result.get("session_id", ""))

    def denied(self) -> set[str]:
        """The tool_use ids Claude Code reports in ``permission_denials``."""
        return {str(d.get("tool_use_id")) for d in self.result.get("permission_denials", [])}


def claude_env(ws: Workspace, server: ModelServer) -> dict[str, str]:
    """The environment of a Claude Code run in ``ws`` whose model is the stand-in ``server``."""
    return ws.env(
        ANTHROPIC_BASE_URL=server.url,
        ANTHROPIC_API_KEY="sk-ant-conformance",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        # Anything that is not the model API goes to the stand-in too, which refuses it and
        # logs it as stray (asserted empty by every scenario).
        HTTPS_PROXY=server.url,
        HTTP_PROXY=server.url,
        NO_PROXY="127.0.0.1,localhost",
    )


def run_claude(
    binary: Path,
    ws: Workspace,
    steps: list[Step],
    *,
    allowed_tools: str = SELECT_ONLY,
    session_id: str | None = None,
    resume: str | None = None,
    prompt: str = "Work on the JWT hardening task.",
    timeout: float = 120,
) -> ClaudeRun:
    """Run one headless session of ``binary`` in ``ws``, the model playing ``steps``."""
    script = Script(steps)
    args = [
        str(binary),
        "-p",
        prompt,
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        allowed_tools,
        "--model",
        "claude-sonnet-4-5",
    ]
    if session_id:
        args += ["--session-id", session_id]
    if resume:
        args += ["--resume", resume]
    with ModelServer(script, "anthropic") as server:
        env = claude_env(ws, server)
        done = subprocess.run(
            args, cwd=ws.root, env=env, capture_output=True, text=True, check=False, timeout=timeout
        )
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except ValueError:
        result = {}
    if not result:
        raise AssertionError(
            f"claude printed no JSON result (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return ClaudeRun(done.returncode, result, done.stderr, script)
