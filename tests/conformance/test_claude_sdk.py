"""The real Claude Code CLI under the Claude Agent SDK, with ledger's in-process hooks.

The SDK's wheel bundles the CLI (2.1.332 in SDK 0.2.189, the version the conformance suite pins),
so this needs no npm: ``ClaudeSDKClient`` starts the bundled CLI against the scripted model
stand-in, with ``hooks=ledger.claude_sdk_hooks(...)`` and no hook installed in the workspace.
ledger decides in this process; what it decided is read from the records.

The workspace lies outside every folder on this interpreter's ``sys.path``: a program's own
folders are the hook's installation in-process, protected like ledger's own code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

import anyio  # noqa: E402 -- the SDK's own dependency

import ledger  # noqa: E402

from ._claude import claude_env  # noqa: E402
from ._harness import INTENTS_YAML, Workspace  # noqa: E402
from ._server import Call, ModelServer, Say, Script  # noqa: E402

pytestmark = pytest.mark.conformance


def sdk_workspace(base: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """``ledger init`` and the intents, no client hooks installed; this process's home is the
    workspace's (the key is found there, as in a program run by that user)."""
    ws = Workspace("claude", base)
    for directory in (ws.root, ws.home, base / "tmp"):
        directory.mkdir(parents=True, exist_ok=True)
    ws.ledger("init")
    ws.write(".orchestration/active_intents.yaml", INTENTS_YAML.format(scope='"src/auth/**"'))
    monkeypatch.setenv("HOME", str(ws.home))
    return ws


def session(ws: Workspace, steps: list[Any], hooks: dict[Any, Any]) -> tuple[Script, list[Any]]:
    """One SDK session of the bundled CLI in ``ws``, the model playing ``steps``."""
    script = Script(steps)
    messages: list[Any] = []

    async def run() -> None:
        with ModelServer(script, "anthropic") as server:
            env = claude_env(ws, server)
            options = claude_agent_sdk.ClaudeAgentOptions(
                cwd=str(ws.root),
                env=env,
                model="claude-sonnet-4-5",
                permission_mode="acceptEdits",
                allowed_tools=["Bash(ledger intent select:*)"],
                hooks=hooks,
            )
            with anyio.fail_after(180):
                async with claude_agent_sdk.ClaudeSDKClient(options) as client:
                    await client.query("Work on the JWT hardening task.")
                    messages.extend([m async for m in client.receive_response()])

    anyio.run(run)
    return script, messages


def steps_for(root: Path) -> list[Any]:
    return [
        Call("Bash", {"command": "ledger intent select INT-001", "description": "Select"}),
        Call("Write", {"file_path": str(root / "src/auth/jwt.ts"), "content": "export {};\n"}),
        Call("Write", {"file_path": str(root / "README.md"), "content": "outside\n"}),
        Say("done"),
    ]


def test_the_sdks_hooks_decide_and_record_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = sdk_workspace(tmp_path, monkeypatch)
    hooks = ledger.claude_sdk_hooks(cwd=str(ws.root))
    script, messages = session(ws, steps_for(ws.root), hooks)
    assert script.stray == []
    assert (ws.root / "src/auth/jwt.ts").read_text(encoding="utf-8") == "export {};\n"
    assert not (ws.root / "README.md").exists()  # outside the intent's scope
    records = ws.records()
    calls = [
        (r["kind"], r["body"].get("tool"), r["body"].get("decision"))
        for r in records
        if r["kind"] in ("hook.pre", "hook.post")
    ]
    assert calls == [
        ("hook.pre", "Bash", "allow"),
        ("hook.post", "Bash", "allow"),
        ("hook.pre", "Write", "allow"),
        ("hook.post", "Write", "allow"),
        ("hook.pre", "Write", "deny"),
    ]
    assert any(r["kind"] == "intent.selected" for r in records)
    [denied] = [r for r in records if r["kind"] == "hook.pre" and r["body"]["decision"] == "deny"]
    assert "SCOPE_VIOLATION" in json.dumps(denied["body"])
    assert [type(m).__name__ for m in messages][-1] == "ResultMessage"
    assert ws.ledger("verify", check=False).returncode == 0


def test_a_failing_callback_blocks_the_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """on_failure="block" against the real CLI: a PreToolUse callback that raises (ledger could
    not decide) lets no tool run, in scope or not."""
    ws = sdk_workspace(tmp_path, monkeypatch)
    hooks = ledger.claude_sdk_hooks(cwd=str(ws.root))

    async def broken(hook_input: Any, tool_use_id: str | None, context: Any) -> Any:
        raise RuntimeError("ledger could not decide")

    [matcher] = hooks["PreToolUse"]
    matcher.hooks = [broken]
    steps = [
        Call("Write", {"file_path": str(ws.root / "src/auth/jwt.ts"), "content": "export {};\n"}),
        # Allowed by the person's permission rule: only the failed hook stops it.
        Call("Bash", {"command": "ledger intent select INT-001", "description": "Select"}),
        Say("done"),
    ]
    script, _ = session(ws, steps, hooks)
    assert script.stray == []
    assert not (ws.root / "src/auth/jwt.ts").exists()
    results = script.tool_results()
    assert len(results) == 2, results  # both calls were answered, neither ran
    # Claude Code's own reason (the exception's text does not reach the model).
    assert all('blocking because onFailure is "block"' in text for text in results), results
    assert not any(r["kind"] == "intent.selected" for r in ws.records())
