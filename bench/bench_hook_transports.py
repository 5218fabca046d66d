"""Claude Code's hook transports into a resident ledger: ``mcp_tool`` (stdio) against ``http``.

One gated call (a PreToolUse of ``Read``, decided and recorded) through each way a resident
process can answer it, round-robin, each call a new ``tool_use_id`` on one workspace:

* ``mcp_tool``: a ``tools/call`` of the hook tool on the real ``ledger mcp --root WS``, over its
  stdio pipe, with the arguments the installed handler's ``${field}`` interpolation gives;
* ``http``, new connection: a POST of the whole hook input to a loopback HTTP server (a
  stdlib ``ThreadingHTTPServer`` around the same :func:`ledger.run_hook`: the prototype the
  decision weighs, not shipped), one TCP connection per call;
* ``http``, kept alive: the same, on one HTTP/1.1 connection (the best case for ``http``);
* the decision alone, in this process (:func:`ledger.run_hook`): the floor both pay.

Baseline, measured between the rounds: two bare ``python3 -I -S -c pass`` starts (the unit of
the per-call targets).

    python bench/bench_hook_transports.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from _common import (
    Figure,
    LoadMeter,
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
)
from bench_cli_append import find_ledger_bin, startup_args, timed

INTENTS = """\
active_intents:
    - id: "INT-001"
      name: "Bench"
      status: "IN_PROGRESS"
      owned_scope: ["src/**"]
"""
HTTP_SERVER = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ledger import run_hook
from ledger._clients import claude  # noqa: F401 -- warm, as ledger mcp is
from ledger._governance import policies  # noqa: F401

ROOT = sys.argv[1]


class Hook(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        answer = run_hook("claude", body, expected_event="PreToolUse", root=ROOT)
        out = (answer.stdout or "{}").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def payload(root: Path, n: int) -> dict[str, Any]:
    return {
        "session_id": "bench-transports",
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(root / "src" / "app.py")},
        "tool_use_id": f"toolu_bench_{n}",
    }


def interpolated(hook_input: dict[str, Any]) -> dict[str, Any]:
    """The ``mcp_tool`` handler's ``input`` as Claude Code interpolates it (measured on
    2.1.332: strings as themselves, other values as compact JSON, missing ones as "")."""
    from ledger._clients.mcp_hook import hook_handler  # noqa: PLC0415

    out: dict[str, Any] = {}
    for key, template in hook_handler("PreToolUse")["input"].items():
        if isinstance(template, str) and template.startswith("${"):
            value = hook_input.get(template[2:-1])
            out[key] = (
                ""
                if value is None
                else value
                if isinstance(value, str)
                else json.dumps(value, separators=(",", ":"))
            )
        else:
            out[key] = template
    return out


class McpServer:
    def __init__(self, ledger_bin: str, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [ledger_bin, "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next = 0
        self.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next += 1
        self._send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        while True:
            message = json.loads(stdout.readline())
            if message.get("id") == self.next:
                return dict(message["result"])

    def hook(self, hook_input: dict[str, Any]) -> float:
        start = time.perf_counter()
        result = self.call("tools/call", {"name": "hook", "arguments": interpolated(hook_input)})
        took = time.perf_counter() - start
        if result.get("isError"):
            raise RuntimeError(f"the hook tool failed: {result}")
        return took

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class HttpServer:
    def __init__(self, python: str, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [python, "-c", HTTP_SERVER, str(root)], stdout=subprocess.PIPE, env=env
        )
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        self.port = int(stdout.readline())
        self.kept = http.client.HTTPConnection("127.0.0.1", self.port)

    def hook(self, hook_input: dict[str, Any], *, keep_alive: bool) -> float:
        body = json.dumps(hook_input, separators=(",", ":")).encode()
        start = time.perf_counter()
        connection = self.kept if keep_alive else http.client.HTTPConnection("127.0.0.1", self.port)
        connection.request("POST", "/hook", body, {"Content-Type": "application/json"})
        answer = connection.getresponse().read()
        took = time.perf_counter() - start
        if not keep_alive:
            connection.close()
        json.loads(answer)
        return took

    def close(self) -> None:
        self.kept.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    args = startup_args(__doc__ or "", argv)
    from ledger import Ledger, run_hook  # noqa: PLC0415

    info = machine()
    precompile()
    ledger_bin = find_ledger_bin(args.ledger_bin)
    python = str(Path(ledger_bin).with_name("python"))
    bare = [sys.executable, "-I", "-S", "-c", "pass"]
    with tempfile.TemporaryDirectory(prefix="ledger-bench-transports-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        Ledger.init(root)
        (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
        mcp = McpServer(ledger_bin, root, env)
        web = HttpServer(python, root, env)
        say(f"bench_hook_transports: {args.warmup} warm-up + {args.runs} timed rounds")
        meter = LoadMeter()
        times: dict[str, list[float]] = {
            "mcp_tool": [],
            "http, new connection": [],
            "http, kept alive": [],
            "in-process": [],
            "two bare starts": [],
        }
        n = 0

        def in_process(hook_input: dict[str, Any]) -> float:
            raw = json.dumps(hook_input, separators=(",", ":")).encode()
            start = time.perf_counter()
            run_hook("claude", raw, expected_event="PreToolUse", root=str(root))
            return time.perf_counter() - start

        try:
            for round_no in range(args.warmup + args.runs):
                order = list(times)
                shift = round_no % len(order)
                for name in order[shift:] + order[:shift]:
                    n += 1
                    hook_input = payload(root, n)
                    with meter:
                        if name == "mcp_tool":
                            took = mcp.hook(hook_input)
                        elif name == "http, new connection":
                            took = web.hook(hook_input, keep_alive=False)
                        elif name == "http, kept alive":
                            took = web.hook(hook_input, keep_alive=True)
                        elif name == "in-process":
                            took = in_process(hook_input)
                        else:
                            took = timed(bare, env, b"") + timed(bare, env, b"")
                    if round_no >= args.warmup:
                        times[name].append(took)
        finally:
            mcp.close()
            web.close()
        records = sum(1 for _ in Ledger.open(root).records())

    base = median(times["two bare starts"])
    figures = [
        Figure(
            figure=f"one gated call, {name} (p50)",
            ledger=median(values),
            ledger_text=f"{ms(median(values))} (p99 {ms(percentile(values, 99))})",
            baseline=base,
            baseline_text=f"{ms(base)} (two bare python3 -I -S starts)",
            ratio=median(values) / base,
            target="—",
            status="—",
        )
        for name, values in times.items()
        if name != "two bare starts"
    ]
    context = [
        f"{args.runs} timed rounds, round-robin, after {args.warmup} warm-up round(s); "
        f"{records} records at the end",
        f"mcp_tool minus http kept alive, p50: "
        f"{ms(median(times['mcp_tool']) - median(times['http, kept alive']))}",
        noise_line(meter),
    ]
    report(
        "bench_hook_transports",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup},
        context=context,
        raw=times,
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
