"""The real Claude Code, headless, with and without ledger: added wall time per tool call.

The conformance harness drives the real ``claude -p`` (the pinned version, installed from npm by
``tests/conformance``) against its scripted stand-in for the model API. Three workspaces, each
running the same scripted sessions, round-robin:

* ``bare``: no ledger at all (no hooks, no MCP server);
* ``mcp_tool``: ``ledger install claude`` with the client on PATH, so the gating events go
  through ``ledger mcp``'s hook tool (the transport of Claude Code 2.1.295 and later);
* ``command``: the same install without the client's version, so every hook is a command;
* ``floor``: the ``mcp_tool`` install with ``ledger mcp`` swapped for ``mcp_floor_server.py``,
  which answers every hook ``{}`` at once: what the client itself adds per ``mcp_tool`` hook
  pair, the floor under any server's figure.

Each session reads ``--calls`` different files (a Read is gated by PreToolUse and PostToolUse);
a second, two-call session is timed beside it, and the difference of the two removes what a
session pays once (the client's start, the MCP server's start, SessionStart ... SessionEnd).
Added per call = ((ledger long - ledger short) - (bare long - bare short)) / (calls - 2).

The p99 comes from per-call timestamps instead: the model stand-in notes when each request
arrives, and a tool call's wall time is its step's request to the next step's (the client
streams the answer, runs PreToolUse, the tool and PostToolUse, and asks again). Each call of a
governed long session, less the median of the bare long session's calls in the same run, is
one per-call added time; p50 and p99 are over every call of every run (the first call of a
session included: it is where a server's first call would show).

Baseline, measured in the same run between the sessions: two bare ``python3 -I -S -c pass``
starts (what the issue measures a tool call against). Targets: mcp_tool added per call ≤ 0.5×
the baseline, and its p99 ≤ 1×.

    python bench/bench_claude_hooks.py [--calls 22] [--runs 3] [--only floor] [--json]

``--only``: the named transports alone, beside ``bare`` (``--only floor --runs 10``: the client's
own floor, measured long enough to tell its median from its run-to-run swing).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Figure,
    LoadMeter,
    add_workspaces_dir,
    file_creation_line,
    machine,
    median,
    median_interval,
    ms,
    noise_line,
    percentile,
    report,
    say,
    two_bare_starts,
    verdict,
)

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conformance._claude import run_claude  # noqa: E402
from tests.conformance._clients import CLIENTS, ensure_client, version_of  # noqa: E402
from tests.conformance._harness import Workspace, make_workspace, stop_deciders  # noqa: E402
from tests.conformance._server import Call, Say  # noqa: E402

SHORT = 2
#: Each transport's targets (p50, p99 as multiples of the baseline); None: shown, not judged.
TRANSPORTS: dict[str, tuple[float | None, float | None]] = {
    "mcp_tool": (0.5, 1.0),
    "command": (None, None),
    "floor": (None, None),
}


def _bare(base: Path) -> Workspace:
    ws = Workspace("claude", base)
    for folder in (ws.root, ws.home, ws.captures, base / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    return ws


def _governed(base: Path, binary: Path | None) -> Workspace:
    ws = make_workspace(base, "claude", binary=binary, scope='"**"')
    ws.ledger("install", "claude")  # again: the harness's capture wrapper off the commands
    return ws


def _floor(base: Path, binary: Path) -> Workspace:
    """The mcp_tool install, its ``ledger`` server entry running the instant floor server."""
    ws = _governed(base, binary)
    registration = ws.root / ".mcp.json"
    servers = json.loads(registration.read_text(encoding="utf-8"))
    servers["mcpServers"]["ledger"] = {
        "command": sys.executable,
        "args": ["-I", "-S", str(Path(__file__).resolve().parent / "mcp_floor_server.py")],
    }
    registration.write_text(json.dumps(servers), encoding="utf-8")
    return ws


def _session(binary: Path, ws: Workspace, calls: int) -> tuple[float, list[float]]:
    """The session's wall time, and each tool call's (from the stand-in's timestamps)."""
    files = [ws.write(f"src/auth/f{i}.ts", f"export const f{i} = {i};\n") for i in range(calls)]
    steps: list[Any] = [Call("Read", {"file_path": str(f)}) for f in files]
    started = time.perf_counter()
    run = run_claude(binary, ws, [*steps, Say("Read them.")], allowed_tools="Read")
    took = time.perf_counter() - started
    if run.denied():
        raise SystemExit(f"a Read was denied in {ws.base.name}: {run.denied()}")
    arrived: dict[int, float] = {}
    for exchange in run.script.exchanges:  # a retried request keeps its first arrival
        if exchange.step is not None:
            arrived.setdefault(exchange.step, exchange.at)
    per_call = [
        arrived[k + 1] - arrived[k] for k in range(calls) if k + 1 in arrived and k in arrived
    ]
    return took, per_call


def _require_decided(ws: Workspace, name: str, reads: int) -> None:
    """Every Read of the governed sessions was decided and recorded by ledger, Pre and Post: a
    transport whose hooks never ran would cost nothing and pass."""
    recorded = sum(
        1
        for record in ws.records()
        if record.get("kind") in ("hook.pre", "hook.post")
        and (record.get("body") or {}).get("tool") == "Read"
    )
    if recorded < 2 * reads:
        raise SystemExit(f"{name}: {recorded} hook records of {2 * reads} Reads' Pre and Post")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=22)
    parser.add_argument("--runs", type=int, default=3)
    add_workspaces_dir(parser)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--only", nargs="+", choices=TRANSPORTS, default=list(TRANSPORTS), metavar="TRANSPORT"
    )
    ns = parser.parse_args()
    spec = CLIENTS["claude"]
    binary = ensure_client(spec)
    meter = LoadMeter()
    added: dict[str, list[float]] = {name: [] for name in ns.only}
    per_call: dict[str, list[float]] = {name: [] for name in ns.only}
    baseline: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bch-", dir=ns.dir) as folder:
        base = Path(folder)
        made = {
            "mcp_tool": lambda: _governed(base / "mcp", binary),
            "command": lambda: _governed(base / "cmd", None),
            "floor": lambda: _floor(base / "floor", binary),
        }
        spaces = {"bare": _bare(base / "bare"), **{name: made[name]() for name in ns.only}}
        with meter:
            for run in range(ns.runs):
                say(f"run {run + 1}/{ns.runs}")
                slope: dict[str, float] = {}
                calls: dict[str, list[float]] = {}
                # Each run starts with another workspace: a machine that slows down or speeds
                # up during a run shifts every transport alike, not always the same one.
                names = list(spaces)
                for name in names[run % len(names) :] + names[: run % len(names)]:
                    ws = spaces[name]
                    long, calls[name] = _session(binary, ws, ns.calls)
                    short, _ = _session(binary, ws, SHORT)
                    slope[name] = (long - short) / (ns.calls - SHORT)
                    baseline.extend(two_bare_starts() for _ in range(10))
                bare_call = median(calls["bare"])
                for name, found in added.items():
                    found.append(slope[name] - slope["bare"])
                    per_call[name].extend(c - bare_call for c in calls[name])
        for name, ws in spaces.items():
            if name in ("mcp_tool", "command"):
                _require_decided(ws, name, ns.runs * (ns.calls + SHORT))
        # The command hooks' last call can start a decider as the client exits: end the
        # deciders of these workspaces, as the conformance suite does (no process is left).
        stop_deciders()
    base_s = median(baseline)
    figures = []
    for name, (target, p99_target) in TRANSPORTS.items():
        if name not in added:
            continue
        value = median(added[name])
        ratio = value / base_s
        figures.append(
            Figure(
                f"added per tool call, {name} transport"
                + (" (a server answering at once)" if name == "floor" else ""),
                value,
                ms(value),
                base_s,
                ms(base_s),
                ratio,
                f"≤ {target}×" if target else "",
                verdict(ratio <= target) if target else "—",
            )
        )
        if not per_call[name]:
            continue
        p99 = percentile(per_call[name], 99)
        figures.append(
            Figure(
                f"the same, p99 over {len(per_call[name])} calls (per-call timestamps)",
                p99,
                ms(p99),
                base_s,
                ms(base_s),
                p99 / base_s,
                f"≤ {p99_target}×" if p99_target else "",
                verdict(p99 / base_s <= p99_target) if p99_target else "—",
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
            "95% interval of each median above (order statistics over the runs): "
            + ", ".join(
                f"{n} {ms(lo)} to {ms(hi)} ({lo / base_s:.2f}× to {hi / base_s:.2f}×)"
                for n, (lo, hi) in ((n, median_interval(vs)) for n, vs in added.items())
            ),
            "per-call timestamps, p50: "
            + ", ".join(f"{n} {ms(median(vs))}" for n, vs in per_call.items() if vs),
            "baseline: two `python3 -I -S -c pass` starts, median of "
            f"{len(baseline)} measured between the sessions",
            file_creation_line(Path(ns.dir)),
            noise_line(meter),
        ],
        raw={"added": added, "per_call": per_call, "baseline": baseline},
        as_json=ns.json,
        info=machine(),
    )


if __name__ == "__main__":
    main()
