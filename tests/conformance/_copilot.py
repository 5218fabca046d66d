"""Running the real GitHub Copilot CLI headless against the scripted model.

Copilot CLI takes a model provider of one's own (BYOK, `copilot help providers`): with
``COPILOT_PROVIDER_BASE_URL`` pointing at the stand-in (Anthropic's Messages API) and
``COPILOT_OFFLINE=true`` it needs no GitHub sign-in and reaches nothing else. ``--trust-folder``
trusts the workspace for this one prompt-mode session, so the repository's hooks
(``.github/hooks/ledger.json``) and MCP servers (``.github/mcp.json``) load.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._harness import Workspace
from ._server import ModelServer, Script, Step, anthropic_tool_use_id

#: How Copilot CLI 1.0.102 reports a call its preToolUse hook refused, to the model.
DENIED_PREFIX = "Denied by preToolUse hook"


@dataclass(frozen=True)
class CopilotRun:
    """One ``copilot -p`` run and what the model server saw."""

    returncode: int
    stdout: str
    stderr: str
    script: Script

    def results(self) -> dict[str, str]:
        """tool_use id -> the tool result text the client sent back to the model."""
        found: dict[str, str] = {}
        for exchange in self.script.exchanges:
            for message in exchange.body.get("messages", []):
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        text = block.get("content")
                        found[str(block.get("tool_use_id"))] = (
                            text if isinstance(text, str) else str(text)
                        )
        return found

    def denied(self) -> set[int]:
        """Steps whose call the client reported to the model as refused by the hook (Copilot
        sends no tool call id to hooks, so calls are named by their step)."""
        results = self.results()
        return {
            step
            for step in range(len(self.script.steps))
            if results.get(anthropic_tool_use_id(step), "").startswith(DENIED_PREFIX)
        }


def run_copilot(
    binary: Path,
    ws: Workspace,
    steps: list[Step],
    *,
    prompt: str = "Work on the JWT hardening task.",
    timeout: float = 180,
) -> CopilotRun:
    """Run one headless ``copilot -p`` session in ``ws``, the model playing ``steps``."""
    script = Script(steps)
    with ModelServer(script, "anthropic") as server:
        env = ws.env(
            COPILOT_PROVIDER_BASE_URL=server.url,
            COPILOT_PROVIDER_TYPE="anthropic",
            COPILOT_PROVIDER_API_KEY="conformance",
            COPILOT_MODEL="claude-sonnet-4.5",
            COPILOT_OFFLINE="true",
            HTTPS_PROXY=server.url,
            HTTP_PROXY=server.url,
            NO_PROXY="127.0.0.1,localhost",
        )
        done = subprocess.run(
            [
                str(binary),
                "-p",
                prompt,
                "--trust-folder",
                # Every tool allowed by Copilot itself: ledger's hooks are the only gate.
                "--allow-all-tools",
                "--disable-client-telemetry",
            ],
            cwd=ws.root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    return CopilotRun(done.returncode, done.stdout, done.stderr, script)
