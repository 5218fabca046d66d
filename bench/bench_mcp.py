"""``ledger mcp``: server start to its first answer, and the first ``tools/call`` after it.

Ledger: ``ledger mcp --root WS`` as a fresh subprocess, spoken to as a client does over stdio
(newline-delimited JSON-RPC): the time from spawning it to the ``initialize`` response, then
(after ``notifications/initialized``) the time of the first ``tools/call``
(``select_active_intent``, which opens the workspace, reads the intents and renders the
``<intent_context>``), on a workspace whose ledger holds a governed session's worth of hook
records.

Baseline, measured beside it, round-robin: ``python -c 'import mcp'`` with the same interpreter
(what any server on the official SDK pays before it can answer), and ``python -c pass``.

Targets (decision 0015): start to first answer p50 ≤ 1.5 s; first ``tools/call`` p50 ≤ 50 ms.

    python bench/bench_mcp.py [--runs N] [--ledger-bin PATH] [--quick] [--json]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from _common import (
    Figure,
    LoadMeter,
    hook_bodies,
    isolate_this_process,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    percentile,
    precompile,
    report,
    say,
    verdict,
)
from bench_cli_append import find_ledger_bin, startup_args, timed

START_TARGET = 1.5
CALL_TARGET = 0.050
RECORDS = 2000
INTENTS = """\
active_intents:
    - id: "INT-001"
      name: "JWT Authentication Migration"
      status: "IN_PROGRESS"
      owned_scope: ["src/auth/**", "src/middleware/jwt.ts"]
      constraints: ["Must not use external auth providers"]
      acceptance_criteria: ["Unit tests in tests/auth/ pass"]
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench_mcp", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "select_active_intent", "arguments": {"intent_id": "INT-001"}},
}


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` (notifications and logs before it are skipped)."""
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the server closed its output before answering")
        message = json.loads(line)
        if isinstance(message, dict) and message.get("id") == request_id:
            return message


def one_session(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(start to the initialize answer, first tools/call) in seconds, for one fresh server."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    if proc.stdin is None or proc.stdout is None:  # PIPE always gives both
        raise RuntimeError("no pipes to the server")
    try:
        _send(proc.stdin, INITIALIZE)
        init = _answer(proc.stdout, 1)
        first = time.perf_counter() - start
        if "result" not in init:
            raise RuntimeError(f"initialize failed: {init}")
        _send(proc.stdin, INITIALIZED)
        called = time.perf_counter()
        _send(proc.stdin, CALL)
        answer = _answer(proc.stdout, 2)
        call = time.perf_counter() - called
        result = answer.get("result") or {}
        if result.get("isError") or "<intent_context>" not in json.dumps(result):
            raise RuntimeError(f"select_active_intent failed: {answer}")
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return first, call


def main(argv: list[str] | None = None) -> int:
    args = startup_args(__doc__ or "", argv)

    from ledger import Entry, Ledger  # noqa: PLC0415
    from ledger._evidence.ledger import append_reserved  # noqa: PLC0415

    info = machine()
    precompile()
    ledger_bin = find_ledger_bin(args.ledger_bin)
    python = str(Path(ledger_bin).with_name("python"))
    if not Path(python).exists():
        python = sys.executable
    with tempfile.TemporaryDirectory(prefix="ledger-bench-mcp-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        ledger = Ledger.init(root)
        (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
        rng = random.Random(7)  # noqa: S311 -- reproducible ids, not crypto
        session = f"{rng.getrandbits(128):032x}"
        # hook.* is reserved for ledger itself: written as the hook service writes it.
        append_reserved(
            ledger,
            (
                Entry("hook.pre", body, {"client": "claude-code", "session": session})
                for body in hook_bodies(RECORDS)
            ),
        )
        server = [ledger_bin, "mcp", "--root", str(root)]
        baselines = {
            "python -c 'import mcp'": [python, "-c", "import mcp"],
            "python -c pass": [python, "-c", "pass"],
        }
        say(f"bench_mcp: {args.warmup} warm-up + {args.runs} timed rounds")
        meter = LoadMeter()
        starts: list[float] = []
        calls: list[float] = []
        base: dict[str, list[float]] = {name: [] for name in baselines}
        for round_no in range(args.warmup + args.runs):
            order = ["server", *baselines]
            shift = round_no % len(order)
            for name in order[shift:] + order[:shift]:
                counted = round_no >= args.warmup
                with meter:
                    if name == "server":
                        first, call = one_session(server, env)
                        if counted:
                            starts.append(first)
                            calls.append(call)
                    else:
                        took = timed(baselines[name], env, b"")
                        if counted:
                            base[name].append(took)

    sdk = median(base["python -c 'import mcp'"])
    bare = median(base["python -c pass"])
    start_p50, call_p50 = median(starts), median(calls)
    figures = [
        Figure(
            figure="`ledger mcp` start to first answer (p50)",
            ledger=start_p50,
            ledger_text=ms(start_p50),
            baseline=sdk,
            baseline_text=f"{ms(sdk)} (python -c 'import mcp')",
            ratio=start_p50 / sdk,
            target=f"≤ {START_TARGET:.1f} s",
            status=verdict(start_p50 <= START_TARGET),
        ),
        Figure(
            figure="first `tools/call` after it (p50)",
            ledger=call_p50,
            ledger_text=ms(call_p50),
            baseline=bare,
            baseline_text=f"{ms(bare)} (python -c pass)",
            ratio=call_p50 / bare,
            target=f"≤ {CALL_TARGET * 1000:.0f} ms",
            status=verdict(call_p50 <= CALL_TARGET),
        ),
    ]
    context = [
        f"{args.runs} timed server sessions, round-robin with the baselines, after "
        f"{args.warmup} warm-up round(s); ledger of {RECORDS + 1:,} records",
        f"p90: start {ms(percentile(starts, 90))}, first call {ms(percentile(calls, 90))}",
        f"the server's start beyond importing the SDK: {ms(start_p50 - sdk)}",
        noise_line(meter),
    ]
    report(
        "bench_mcp",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "records": RECORDS},
        context=context,
        raw={"start": starts, "call": calls, **base},
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
