"""Running the real Codex CLI headless against the scripted model (findings §9)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._harness import LEDGER, Workspace
from ._server import ModelServer, Script, Step, codex_call_id

#: Hosts Codex 0.169.0 still tries with analytics off (update check, plugins, ChatGPT); the
#: proxy trap refuses them. A new host shows up as a failure of the recording check.
KNOWN_STRAY = frozenset(
    {"CONNECT github.com:443", "CONNECT api.github.com:443", "CONNECT chatgpt.com:443"}
)


@dataclass(frozen=True)
class CodexRun:
    """One ``codex exec`` run and what the model server saw."""

    returncode: int
    stdout: str
    stderr: str
    script: Script

    def denied(self) -> set[str]:
        """Call ids whose output told the model a PreToolUse hook blocked the command."""
        turns = [x for x in self.script.exchanges if x.step is not None]
        items = turns[-1].body.get("input", []) if turns else []
        return {
            str(item.get("call_id"))
            for item in items
            if isinstance(item, dict)
            and item.get("type") == "function_call_output"
            and "blocked by PreToolUse hook" in str(item.get("output"))
        }

    def stray(self) -> list[str]:
        """Requests for other hosts beyond the known, refused ones."""
        return [s for s in self.script.stray if s not in KNOWN_STRAY]


def call_id(step: int) -> str:
    return codex_call_id(step)


def run_codex(
    binary: Path,
    ws: Workspace,
    steps: list[Step],
    *,
    bypass_hook_trust: bool,
    prompt: str = "Work on the JWT hardening task.",
    timeout: float = 180,
) -> CodexRun:
    """Run ``codex exec`` in a trusted project (``--trust``); hooks run only when their
    per-hook trust is bypassed, as no person has reviewed them."""
    script = Script(steps)
    # Codex runs commands in a login shell (`bash -lc`) whose profile resets PATH: put the
    # venv's bin back first, so the agent's `ledger intent select` is the real `ledger` (a path
    # such as /venv/bin/ledger is another program to the policies: decision 0004).
    profile = f'export PATH="{LEDGER.parent}:$PATH"\n'
    for name in (".bash_profile", ".profile"):
        (ws.home / name).write_text(profile, encoding="utf-8")
    with ModelServer(script, "responses") as server:
        provider = (
            f'model_providers.mock={{name="mock", base_url="{server.url}/v1", '
            'wire_api="responses", env_key="MOCK_KEY"}'
        )
        args = [
            str(binary),
            "exec",
            "--skip-git-repo-check",
            "--trust",
            "-c",
            "model_provider=mock",
            "-c",
            provider,
            "-m",
            "gpt-5",
            # Codex's own sandbox needs its helper binary; ledger's hooks are under test.
            "--sandbox",
            "danger-full-access",
            "-c",
            "analytics.enabled=false",
            "-c",
            "check_for_update_on_startup=false",
        ]
        if bypass_hook_trust:
            args.append("--dangerously-bypass-hook-trust")
        env = ws.env(
            MOCK_KEY="conformance",
            HTTPS_PROXY=server.url,
            HTTP_PROXY=server.url,
            NO_PROXY="127.0.0.1,localhost",
        )
        done = subprocess.run(
            [*args, prompt],
            cwd=ws.root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    return CodexRun(done.returncode, done.stdout, done.stderr, script)
