"""The real Claude Code, headless, with and without ledger: added wall time per tool call.

The conformance harness drives the real ``claude -p`` (the pinned version, installed from npm by
``tests/conformance``) against its scripted stand-in for the model API. Three workspaces, each
running the same scripted sessions, round-robin:

* ``bare``: no ledger at all (no hooks, no MCP server);
* ``mcp_tool``: ``ledger install claude`` with the client on PATH, so the gating events go
  through ``ledger mcp``'s hook tool (the transport of Claude Code 2.1.295 and later);
* ``command``: the same install without the client's version, so every hook is a command.

Each session reads ``--calls`` different files (a Read is gated by PreToolUse and PostToolUse);
a second, two-call session is timed beside it, and the difference of the two removes what a
session pays once (the client's start, the MCP server's start, SessionStart ... SessionEnd).
Added per call = ((ledger long - ledger short) - (bare long - bare short)) / (calls - 2).

Baseline, measured in the same run between the sessions: two bare ``python3 -I -S -c pass``
starts (what the issue measures a tool call against). Target (issue 26): mcp_tool added per
call ≤ 0.5× the baseline.

    python bench/bench_claude_hooks.py [--calls 22] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import Figure, LoadMeter, machine, median, ms, noise_line, report, say, verdict

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conformance._claude import run_claude  # noqa: E402
from tests.conformance._clients import CLIENTS, ensure_client, version_of  # noqa: E402
from tests.conformance._harness import Workspace, make_workspace  # noqa: E402
from tests.conformance._server import Call, Say  # noqa: E402

SHORT = 2


def _bare(base: Path) -> Workspace:
    ws = Workspace("claude", base)
    for folder in (ws.root, ws.home, ws.captures, base / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    return ws


def _governed(base: Path, binary: Path | None) -> Workspace:
    ws = make_workspace(base, "claude", binary=binary, scope='"**"')
    ws.ledger("install", "claude")  # again: the harness's capture wrapper off the commands
    return ws


def _session(binary: Path, ws: Workspace, calls: int) -> float:
    files = [ws.write(f"src/auth/f{i}.ts", f"export const f{i} = {i};\n") for i in range(calls)]
    steps: list[Any] = [Call("Read", {"file_path": str(f)}) for f in files]
    started = time.perf_counter()
    run = run_claude(binary, ws, [*steps, Say("Read them.")], allowed_tools="Read")
    took = time.perf_counter() - started
    if run.denied():
        raise SystemExit(f"a Read was denied in {ws.base.name}: {run.denied()}")
    return took


def _two_starts() -> float:
    # This interpreter itself, never `python3` from PATH: a pyenv shim there is a shell script that
    # costs several times a bare start, which would flatter every ratio against it.
    started = time.perf_counter()
    for _ in range(2):
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=22)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    spec = CLIENTS["claude"]
    binary = ensure_client(spec)
    meter = LoadMeter()
    added: dict[str, list[float]] = {"mcp_tool": [], "command": []}
    baseline: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bch-", dir="/tmp") as folder:
        base = Path(folder)
        spaces = {
            "bare": _bare(base / "bare"),
            "mcp_tool": _governed(base / "mcp", binary),
            "command": _governed(base / "cmd", None),
        }
        with meter:
            for run in range(ns.runs):
                say(f"run {run + 1}/{ns.runs}")
                slope: dict[str, float] = {}
                for name, ws in spaces.items():
                    long = _session(binary, ws, ns.calls)
                    short = _session(binary, ws, SHORT)
                    slope[name] = (long - short) / (ns.calls - SHORT)
                    baseline.extend(_two_starts() for _ in range(10))
                for name, found in added.items():
                    found.append(slope[name] - slope["bare"])
    base_s = median(baseline)
    figures = []
    for name, target in (("mcp_tool", 0.5), ("command", None)):
        value = median(added[name])
        ratio = value / base_s
        figures.append(
            Figure(
                f"added per tool call, {name} transport",
                value,
                ms(value),
                base_s,
                ms(base_s),
                ratio,
                f"≤ {target}×" if target else "",
                verdict(ratio <= target) if target else "—",
            )
        )
    report(
        "Real Claude Code with ledger: added wall time per tool call",
        figures,
        settings={
            "client": f"{spec.package}@{version_of(spec)}",
            "calls": ns.calls,
            "runs": ns.runs,
        },
        context=[
            "per run: "
            + ", ".join(f"{n} {', '.join(ms(v) for v in vs)}" for n, vs in added.items()),
            "baseline: two `python3 -I -S -c pass` starts, median of "
            f"{len(baseline)} measured between the sessions",
            noise_line(meter),
        ],
        raw={"added": added, "baseline": baseline},
        as_json=ns.json,
        info=machine(),
    )


if __name__ == "__main__":
    main()
