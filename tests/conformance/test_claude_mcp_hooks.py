"""The real Claude Code CLI on the ``mcp_tool`` transport: its hooks answered by ``ledger mcp``.

With the client on the installer's ``PATH`` (2.1.295 or later), ``ledger install claude``
writes ``mcp_tool`` hooks with ``onFailure: "block"`` into ledger's own MCP server for the gating
events. These scenarios check, against the real client, that the decisions are the command
hooks' (a write in scope lands, one outside is refused, every call is recorded) and that a
server which cannot start, or dies mid-session, lets no gated action through.

The harness captures command hooks only, so what ledger decided is read from the records.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ._checks import files_are
from ._claude import SELECT_ONLY, ClaudeRun, run_claude
from ._harness import SETTINGS, Workspace, make_workspace
from ._server import Call, Say, anthropic_tool_use_id

pytestmark = pytest.mark.conformance

SELECT = Call(
    "Bash", {"command": "ledger intent select INT-001", "description": "Select the intent"}
)


def tid(step: int) -> str:
    return anthropic_tool_use_id(step)


def mcp_workspace(base: Path, binary: Path) -> Workspace:
    ws = make_workspace(base, "claude", binary=binary)
    settings = json.loads(ws.read(SETTINGS["claude"]) or "{}")
    (pre,) = [h for group in settings["hooks"]["PreToolUse"] for h in group["hooks"]]
    assert (pre["type"], pre["onFailure"]) == ("mcp_tool", "block"), pre
    return ws


def pre_decisions(ws: Workspace) -> dict[str, str]:
    """tool_use_id -> ledger's decision at PreToolUse, from the records."""
    return {
        str(r["body"].get("tool_use_id")): str(r["body"].get("decision"))
        for r in ws.records()
        if r["kind"] == "hook.pre"
    }


def verified(ws: Workspace) -> list[str]:
    done = ws.ledger("verify", check=False)
    return [] if done.returncode == 0 else [f"ledger verify: {(done.stdout + done.stderr)[-300:]}"]


def test_decisions_and_records_through_the_mcp_tool_hooks(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = mcp_workspace(tmp_path, claude_binary)
    inside, outside = ws.path("src/auth/session.ts"), ws.path("src/billing/invoice.ts")
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call("Write", {"file_path": str(inside), "content": "export const ttl = 900;\n"}),
            Call("Write", {"file_path": str(outside), "content": "export const fee = 1;\n"}),
            Say("Done."),
        ],
    )
    decided = pre_decisions(ws)
    problems = [] if decided.get(tid(1)) == "allow" else [f"in scope: {decided.get(tid(1))}"]
    if decided.get(tid(2)) != "deny" or tid(2) not in run.denied():
        problems.append(f"out of scope: {decided.get(tid(2))}, denied {run.denied()}")
    problems += files_are(
        ws, {"src/auth/session.ts": "export const ttl = 900;\n", "src/billing/invoice.ts": None}
    )
    posts = {r["body"].get("tool_use_id") for r in ws.records() if r["kind"] == "hook.post"}
    if tid(1) not in posts:
        problems.append("the in-scope write's PostToolUse was not recorded")
    selected = [r for r in ws.records() if r["kind"] == "intent.selected"]
    if [r["actor"]["session"] for r in selected] != [run.session_id]:
        problems.append(f"selection: {selected}")
    assert problems + verified(ws) + [f"stray: {s}" for s in run.script.stray] == []


def ran_undecided(ws: Workspace, run: ClaudeRun, steps: range) -> list[str]:
    """The calls of ``steps`` that ran without ledger's allow on the record."""
    decided = pre_decisions(ws)
    return [
        f"{tid(s)} ran without ledger's allow ({decided.get(tid(s))})"
        for s in steps
        if tid(s) not in run.denied()
        and decided.get(tid(s)) != "allow"
        and any(e.step == s + 1 for e in run.script.exchanges)  # the client answered it
    ]


def test_a_server_that_cannot_start_lets_no_gated_call_through(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = mcp_workspace(tmp_path, claude_binary)
    mcp = json.loads(ws.read(".mcp.json") or "{}")
    mcp["mcpServers"]["ledger"]["command"] = str(tmp_path / "moved-venv" / "ledger")
    ws.write(".mcp.json", json.dumps(mcp))
    target = "src/auth/new.ts"
    run = run_claude(
        claude_binary,
        ws,
        [
            Call("Bash", {"command": f"touch {target}", "description": "Create"}),
            Call("Write", {"file_path": str(ws.path(target)), "content": "x\n"}),
            Say("Done."),
        ],
        allowed_tools="Bash,Write",
    )
    # Whether the model is asked at all (the prompt's command hook lets it through): each call
    # it proposes is blocked at PreToolUse, whose tool hook has no server.
    asked = [e for e in run.script.exchanges if e.step is not None]
    problems = files_are(ws, {target: None}) + ran_undecided(ws, run, range(2))
    if asked and not {tid(0), tid(1)} <= run.denied():
        problems.append(f"the model was asked and its calls were not blocked: {run.denied()}")
    assert problems + verified(ws) == [], run.result


def _servers_of(ws: Workspace) -> list[int]:
    """Pids of the ``ledger mcp --root <this workspace>`` processes (this test's only)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv]
        if "mcp" in words and "--root" in words and str(ws.root) in words:
            found.append(int(entry.name))
    return found


def test_a_server_killed_mid_session_blocks_the_calls_it_cannot_decide(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = mcp_workspace(tmp_path, claude_binary)
    killed: list[int] = []
    stop = threading.Event()

    def keep_killing() -> None:
        # Until the model's next step: Claude Code starts a new server as soon as it sees the
        # old one gone, which could otherwise answer the very call this test is about.
        while not stop.is_set():
            for pid in _servers_of(ws):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            stop.wait(0.01)

    def kill_server() -> None:
        threading.Thread(target=keep_killing, daemon=True).start()

    target = "src/auth/after.ts"
    run = run_claude(
        claude_binary,
        ws,
        [
            SELECT,
            Call(
                "Write",
                {"file_path": str(ws.path(target)), "content": "x\n"},
                before=kill_server,
            ),
            Call("Bash", {"command": f"touch {target}", "description": "Create"}, before=stop.set),
            Say("Done."),
        ],
        allowed_tools=f"{SELECT_ONLY},Bash,Write",
    )
    stop.set()
    assert killed, "no ledger mcp server was running for this workspace"
    results: list[Any] = run.script.tool_results()
    # The call the dead server could not decide is blocked, and the person is told where to
    # look (Claude Code's own words name /mcp). Claude Code then starts the server again: a
    # later call runs only with the new server's decision on the record.
    problems = [] if tid(1) in run.denied() else ["the write after the kill was not blocked"]
    problems += ran_undecided(ws, run, range(3))
    if ws.read(target) not in (None, ""):
        problems.append(f"{target} holds the blocked write")
    if not any('onFailure is "block"' in r and "/mcp" in r for r in results):
        problems.append("no block naming /mcp reached the model")
    assert problems + verified(ws) == [], results


def test_the_server_process_is_gone_when_the_session_ends(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = mcp_workspace(tmp_path, claude_binary)
    run_claude(claude_binary, ws, [SELECT, Say("Selected.")])
    leftover = _servers_of(ws)
    for pid in leftover:  # leave nothing running, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert leftover == []


#: An MCP server named ``ledger`` that answers every hook call with ``{}`` (no objection) and
#: logs the calls it gets: what an agent would put in ``.mcp.json`` to govern itself.
ALLOW_ALL_SERVER = Path(__file__).resolve().parents[2] / "bench" / "mcp_floor_server.py"


@pytest.mark.parametrize("config", ["kept", "broken"])
def test_a_swapped_ledger_server_lets_no_call_of_this_session_or_the_next_through(
    claude_binary: Path, tmp_path: Path, config: str
) -> None:
    """What got past layers 1 and 2 (here: done behind the session's back) rewrites the
    ``ledger`` server in ``.mcp.json`` to one that allows everything, and kills the running
    one. Claude Code restarts the server it started with, which finds the change; the next
    session starts the swap, whose tool hooks never reach ledger, but its prompt does, by
    the command hook, and is blocked while the tampering is pending (decision 0021). With
    ``hooks.yaml`` broken too, ledger cannot decide the prompt, which blocks it all the same."""
    ws = mcp_workspace(tmp_path, claude_binary)
    fake, log = ALLOW_ALL_SERVER, tmp_path / "allow_all.log"

    def swap_and_kill() -> None:
        mcp = json.loads(ws.read(".mcp.json") or "{}")
        mcp["mcpServers"]["ledger"] = {"command": sys.executable, "args": [str(fake), str(log)]}
        ws.write(".mcp.json", json.dumps(mcp))
        if config == "broken":
            ws.write(".orchestration/hooks.yaml", "policies: [unclosed\n")
        for pid in _servers_of(ws):
            os.kill(pid, signal.SIGKILL)

    outside = "src/billing/invoice.ts"
    write = Call("Write", {"file_path": str(ws.path(outside)), "content": "x\n"})
    swapped = Call("Bash", {"command": "true", "description": "x"}, before=swap_and_kill)
    first = run_claude(
        claude_binary,
        ws,
        [SELECT, swapped, write, Say("Done.")],
        allowed_tools=f"{SELECT_ONLY},Bash,Write",
    )
    problems = [] if tid(2) in first.denied() else ["this session's write was not blocked"]
    second = run_claude(
        claude_binary, ws, [write, Say("Done.")], allowed_tools=f"{SELECT_ONLY},Bash,Write"
    )
    if any(e.step is not None for e in second.script.exchanges):
        problems.append("the next session's prompt reached the model")
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    problems += [f"the swapped server decided: {c[:200]}" for c in calls if "ToolUse" in c]
    problems += files_are(ws, {outside: None})
    if config == "kept" and not any(r["kind"] == "governance.tamper" for r in ws.records()):
        problems.append("no tampering recorded")
    assert problems + verified(ws) == [], (first.result, second.result)
