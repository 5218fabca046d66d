"""The MCP SDK is paid by ``ledger mcp`` only: a hook call, even the one that selects an intent
through ``select_active_intent``, never imports it (decision 0015)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hooks._support import claude_payload, clean_env, make_workspace

SDK = {"mcp", "mcp_types", "anyio", "starlette", "httpx2", "uvicorn"}


def test_the_selecting_hook_call_imports_no_mcp_sdk(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    payload = claude_payload(
        "PreToolUse",
        ws,
        "s-light",
        tool_name="mcp__ledger__select_active_intent",
        tool_input={"intent_id": "INT-001"},
        tool_use_id="toolu_light",
    )
    # sys.modules at exit: ledger's public names load lazily, so only the table tells the truth.
    probe = (
        "import sys; from cli._entry import main; code = main(sys.argv[1:]); "
        "print(chr(10).join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "hook", "claude", "--event", "PreToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=False,
        env=clean_env(ws.home),
        cwd=ws.root,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    imported = set(done.stderr.decode().split())
    assert "ledger._governance.analysis.ledger_mcp" in imported  # the MCP branch really ran
    assert {m for m in imported if m.split(".")[0] in SDK} == set()
    assert "ledger._mcp" not in imported
