"""Running the real Gemini CLI headless against the scripted model (findings §10)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._harness import Workspace
from ._server import ModelServer, Script, Step

#: User settings: API-key auth (no Google login), and no usage statistics or telemetry, which
#: would otherwise try to reach play.googleapis.com.
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


@dataclass(frozen=True)
class GeminiRun:
    """One ``gemini -p`` run and what the model server saw."""

    returncode: int
    stdout: str
    stderr: str
    script: Script

    def denied(self) -> set[int]:
        """Steps whose tool call came back to the model as an error (a blocked call)."""
        turns = [x for x in self.script.exchanges if x.step is not None]
        if not turns:
            return set()
        contents = turns[-1].body.get("contents", [])
        denied, step = set(), -1
        for content in contents:
            if content.get("role") == "model":
                step += 1
                continue
            for part in content.get("parts", []):
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict) and "error" in (response.get("response") or {}):
                    denied.add(step)
        return denied


def run_gemini(
    binary: Path,
    ws: Workspace,
    steps: list[Step],
    *,
    trusted: bool = True,
    prompt: str = "Work on the JWT hardening task.",
    timeout: float = 180,
) -> GeminiRun:
    """Run one headless ``--yolo`` session (every tool approved, so ledger is the only gate)."""
    settings = ws.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    script = Script(steps)
    with ModelServer(script, "gemini") as server:
        env = ws.env(
            GOOGLE_GEMINI_BASE_URL=server.url,
            GEMINI_API_KEY="conformance",
            HTTPS_PROXY=server.url,
            HTTP_PROXY=server.url,
            NO_PROXY="127.0.0.1,localhost",
        )
        if trusted:
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        done = subprocess.run(
            [str(binary), "-p", prompt, "--yolo", "-m", "gemini-2.5-pro"],
            cwd=ws.root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    return GeminiRun(done.returncode, done.stdout, done.stderr, script)
