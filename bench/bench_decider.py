"""The resident decider (decision 0014): one governed tool call through the installed command lines.

A tool call is two hook processes, PreToolUse and PostToolUse. Each is run exactly as a command
client runs it: ``sh -c '<the command ledger install claude wrote>'`` with the payload on stdin
(Claude Code's command hooks, as installed where its version is below 2.1.295 or unknown: the
same command every command client gets, ``<python> -I -S cli/_thin.py <ledger> hook ...``).

* **Decider up:** ``LEDGER_DECIDER=on``, a decider running: the thin client, started without
  ``site``, forwards the event.
* **Decider up, the ``ledger`` script:** the same command without the site-free runner (what
  every hook paid before), in the same rounds.
* **Decider down:** ``LEDGER_DECIDER=off``: the one-shot path (decides in its own process).
* **Transport floor:** the same installed commands into ``bench/decider_floor_server.py``, which
  speaks the decider's protocol with its proofs and answers ``{}`` at once (its own ledger home
  and socket folder): what the command transport costs before any decision.
* **Baseline**, measured in the same rounds: two bare Python starts (``python3 -I -S -c pass``).

Targets (command clients, decider warm): PreToolUse + PostToolUse of one in-scope Write, p50 ≤
1.5× two bare starts and p99 ≤ 2× (the p99 against the bare starts' p50); decider down ≤ 1.3×
``bench/floor_append.py`` (python + key load + flock + sign + fsync append) per hook. Also: 16
concurrent sessions × N tool calls through the decider make one chain with no lost or
duplicated record and ``verify`` ok; the decider's RSS after serving 10 workspaces ≤ 60 MB.

    python bench/bench_decider.py [--runs N] [--quick] [--sessions 16] [--calls 500] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    add_workspaces_dir,
    file_creation_line,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    percentile,
    precompile,
    report,
    running_decider,
    say,
    verdict,
)
from bench_cli_append import FLOOR, find_ledger_bin

INTENTS = """active_intents:
  - id: INT-001
    name: JWT hardening
    status: IN_PROGRESS
    owned_scope: ["src/**"]
"""
UP_TARGET, UP_P99_TARGET, DOWN_TARGET, RSS_TARGET_MB = 1.5, 2.0, 1.3, 60.0


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--calls", type=int, default=500, help="tool calls per session")
    parser.add_argument("--quick", action="store_true", help="12 runs, 16 × 20 calls")
    parser.add_argument("--ledger-bin")
    add_workspaces_dir(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.warmup, args.calls = 12, 1, 20
    return args


def _workspace(base: Path, ledger: str, env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """An initialised workspace with Claude Code's hooks installed; returns it and the hook
    commands by event, as ``ledger install claude`` wrote them."""
    root = base / "app"
    (root / "src").mkdir(parents=True)
    subprocess.run([ledger, "init"], cwd=root, env=env, check=True, capture_output=True)
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    subprocess.run(
        [ledger, "install", "claude", "--root", str(root)], env=env, check=True, capture_output=True
    )
    settings = json.loads((root / ".claude" / "settings.local.json").read_text(encoding="utf-8"))
    commands = {
        event: groups[0]["hooks"][0]["command"]
        for event, groups in settings["hooks"].items()
        if event in ("PreToolUse", "PostToolUse")
    }
    return root, commands


def _target(root: Path, session: str, n: int) -> Path:
    """Each session writes its own files: two sessions editing one file is a stale write."""
    return root / "src" / session / f"f{n % 50}.ts"


def _payload(root: Path, event: str, session: str, tool_use_id: str, n: int) -> bytes:
    target = _target(root, session, n)
    data: dict[str, object] = {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-bench/{session}.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Write",
        "tool_input": {"file_path": str(target), "content": f"export const n = {n};\n"},
        "tool_use_id": tool_use_id,
    }
    if event == "PostToolUse":
        data["tool_response"] = {
            "type": "create",
            "filePath": str(target),
            "content": f"export const n = {n};\n",
            "structuredPatch": [],
            "originalFile": None,
        }
    return json.dumps(data).encode()


def _select(root: Path, session: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/dev/.claude/projects/-bench/{session}.jsonl",
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ledger intent select INT-001"},
            "tool_use_id": f"toolu_select_{session}",
        }
    ).encode()


def _call(command: str, env: dict[str, str], data: bytes, cwd: Path) -> None:
    done = subprocess.run(
        ["sh", "-c", command], input=data, env=env, cwd=cwd, capture_output=True, check=False
    )
    if done.returncode != 0 or b'"deny"' in done.stdout:
        raise RuntimeError(
            f"hook failed: {done.returncode} {done.stdout[-300:]!r} {done.stderr[-300:]!r}"
        )


def _through_the_script(commands: dict[str, str]) -> dict[str, str]:
    """The installed commands without the site-free runner: the ``ledger`` script itself."""
    return {
        event: command[command.index("/_thin.py") :].split(" ", 1)[1]
        for event, command in commands.items()
    }


def _tool_call(
    commands: dict[str, str], env: dict[str, str], root: Path, session: str, n: int
) -> None:
    tool_use_id = f"toolu_{session}_{n}"
    target = _target(root, session, n)
    target.parent.mkdir(exist_ok=True)
    _call(commands["PreToolUse"], env, _payload(root, "PreToolUse", session, tool_use_id, n), root)
    target.write_text(f"export const n = {n};\n", encoding="utf-8")
    _call(
        commands["PostToolUse"], env, _payload(root, "PostToolUse", session, tool_use_id, n), root
    )


_CANDIDATES = {
    "python_client": "`sh -c` + the environment's Python with `site` (what the `ledger` "
    "script pays before its first line)",
    "site_free_client": "`sh -c` + the environment's Python with `-I -S` (what the installed "
    "command pays before its first line)",
    "shell_client": "`sh -c` + `cat` + `mkfifo` + `openssl dgst -hmac` (the least a POSIX "
    "shell client must run to stay fail-closed: keep the payload for the in-process fallback, "
    "a reply FIFO, check the answer's MAC)",
}


def _client_floors(base: Path) -> dict[str, list[str]]:
    """The per-hook floors of the two client candidates decision 0014 names, before any exchange
    with the decider: a Python client, and a POSIX shell path."""
    floors = {
        "python_client": ["sh", "-c", f"'{sys.executable}' -c pass"],
        "site_free_client": ["sh", "-c", f"'{sys.executable}' -I -S -c pass"],
    }
    if shutil.which("openssl") and shutil.which("mkfifo"):
        spool = base / "spool"
        floors["shell_client"] = [
            "sh",
            "-c",
            f'cat > "{spool}.$$" && mkfifo "{spool}.f$$" && printf x | openssl dgst -sha256 '
            f'-hmac k >/dev/null; rm -f "{spool}.$$" "{spool}.f$$"',
        ]
    return floors


@contextlib.contextmanager
def _floor_decider(env: dict[str, str]) -> Iterator[Callable[[], int]]:
    """``bench/decider_floor_server.py`` serving ``env``'s socket while the block runs; yields
    what tells, once the block is done, how many hook calls it served."""
    Path(env["XDG_RUNTIME_DIR"]).mkdir(mode=0o700, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("decider_floor_server.py"))],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    stdout = proc.stdout
    if stdout is None or stdout.readline().strip() != "ready":
        proc.kill()
        raise SystemExit("the floor decider did not start")
    counted: list[int] = []
    try:
        yield lambda: counted[0] if counted else -1
    finally:
        proc.terminate()
        counted.append(int(stdout.read().strip() or -1))
        proc.wait(timeout=30)


def _status(ledger: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [ledger, "serve", "--status", "--json"], env=env, capture_output=True, check=True
    )
    return dict(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    ledger = find_ledger_bin(args.ledger_bin)
    precompile()
    info = machine()
    meter = LoadMeter()
    with tempfile.TemporaryDirectory(prefix="bd-", dir=args.dir) as tmp:
        base = Path(tmp)
        runtime = base / "run"
        runtime.mkdir(mode=0o700)
        env = isolated_env(base / "home")
        env.update({"XDG_RUNTIME_DIR": str(runtime), "HOME": str(base / "userhome")})
        root, commands = _workspace(base / "one", ledger, env)
        up = {**env, "LEDGER_DECIDER": "on"}
        down = {**env, "LEDGER_DECIDER": "off"}
        floor_env = isolated_env(base / "floor-home")
        floor_env.update(
            {"XDG_RUNTIME_DIR": str(base / "floor-run"), "HOME": str(base / "userhome")}
        )
        floor_env["LEDGER_DECIDER"] = "on"
        with running_decider(ledger, env), _floor_decider(floor_env) as floor_served:
            _call(commands["PreToolUse"], up, _select(root, "bench"), root)
            counter = iter(range(10**9))

            def tool_call(which: dict[str, str]) -> None:
                _tool_call(commands, which, root, "bench", next(counter))

            say(f"bench_decider: {args.warmup} warm-up + {args.runs} rounds")
            bare = [sys.executable, "-I", "-S", "-c", "pass"]
            candidates = _client_floors(base)
            times: dict[str, list[float]] = {
                name: []
                for name in ("up", "script", "transport", "down", "bare2", "floor", *candidates)
            }
            script_commands = _through_the_script(commands)
            key = next((base / "home" / "keys").glob("*.pem"))
            floor_cmd = [sys.executable, str(FLOOR), str(key), str(base / "floor.jsonl")]
            for round_no in range(args.warmup + args.runs):
                order = list(times)
                order = order[round_no % len(order) :] + order[: round_no % len(order)]
                for name in order:
                    meter.__enter__()
                    start = time.perf_counter()
                    if name == "up":
                        tool_call(up)
                    elif name == "script":
                        _tool_call(script_commands, up, root, "bench", next(counter))
                    elif name == "transport":
                        _tool_call(commands, floor_env, root, "floor", next(counter))
                    elif name == "down":
                        tool_call(down)
                    elif name == "bare2":
                        subprocess.run(bare, check=True)
                        subprocess.run(bare, check=True)
                    elif name in candidates:  # what each client candidate pays per hook
                        for _hook in range(2):
                            subprocess.run(candidates[name], input=b'{"a":1}', check=True)
                    else:
                        subprocess.run(floor_cmd, input=b'{"a":1}\n', env=env, check=True)
                    elapsed = time.perf_counter() - start
                    meter.__exit__()
                    if round_no >= args.warmup:
                        times[name].append(elapsed)

            # Concurrency: S sessions × N tool calls at once, through the decider.
            say(f"bench_decider: {args.sessions} sessions × {args.calls} tool calls, concurrently")
            croot, ccommands = _workspace(base / "many", ledger, env)
            errors: list[str] = []

            def session(k: int) -> None:
                sid = f"s{k}"
                try:
                    _call(ccommands["PreToolUse"], up, _select(croot, sid), croot)
                    for n in range(args.calls):
                        _tool_call(ccommands, up, croot, sid, k * 100_000 + n)
                except RuntimeError as exc:
                    errors.append(str(exc))

            started = time.perf_counter()
            threads = [threading.Thread(target=session, args=(k,)) for k in range(args.sessions)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            concurrent_s = time.perf_counter() - started
            records = [
                json.loads(line)
                for line in (croot / ".orchestration" / "agent_trace.jsonl")
                .read_bytes()
                .splitlines()
            ]
            hook_ids = [
                (r["kind"], r["body"].get("tool_use_id"))
                for r in records
                if r["kind"] in ("hook.pre", "hook.post")
            ]
            expected = args.sessions * (1 + 2 * args.calls)
            verified = (
                subprocess.run(
                    [ledger, "verify", "--root", str(croot)],
                    env=env,
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            )
            chain_ok = not errors and len(hook_ids) == len(set(hook_ids)) == expected and verified

            # Memory: 10 workspaces served.
            for k in range(8):
                wroot, wcommands = _workspace(base / f"w{k}", ledger, env)
                _call(wcommands["PreToolUse"], up, _select(wroot, f"m{k}"), wroot)
                _tool_call(wcommands, up, wroot, f"m{k}", 1)
            time.sleep(2.5)  # a quiet moment: the decider gives back what the burst left
            status = _status(ledger, env)

    served = floor_served()
    rounds = args.warmup + args.runs
    if served != 2 * rounds:  # each floor call must have been the stub's, not an in-process one
        raise SystemExit(f"the floor decider served {served} of {2 * rounds} hook calls")
    up_p50, down_p50 = median(times["up"]), median(times["down"])
    transport_p50, transport_p99 = median(times["transport"]), percentile(times["transport"], 99)
    bare_p50, floor_p50 = median(times["bare2"]), median(times["floor"])
    up_p99, script_p50 = percentile(times["up"], 99), median(times["script"])
    rss_mb = int(str(status.get("rss_kb") or 0)) / 1024
    figures = [
        Figure(
            "Pre + Post of one in-scope Write through the installed commands, decider up (p50)",
            up_p50,
            ms(up_p50),
            bare_p50,
            f"{ms(bare_p50)} (two `python3 -I -S -c pass`)",
            up_p50 / bare_p50,
            f"≤ {UP_TARGET}×",
            verdict(up_p50 / bare_p50 <= UP_TARGET),
        ),
        Figure(
            "the same, decider up (p99)",
            up_p99,
            ms(up_p99),
            bare_p50,
            f"{ms(bare_p50)} (two bare starts, p50)",
            up_p99 / bare_p50,
            f"≤ {UP_P99_TARGET}×",
            verdict(up_p99 / bare_p50 <= UP_P99_TARGET),
        ),
        Figure(
            "the same, decider down (`LEDGER_DECIDER=off`), per hook (p50)",
            down_p50 / 2,
            ms(down_p50 / 2),
            floor_p50,
            f"{ms(floor_p50)} (floor_append.py)",
            down_p50 / 2 / floor_p50,
            f"≤ {DOWN_TARGET}×",
            verdict(down_p50 / 2 / floor_p50 <= DOWN_TARGET),
        ),
        Figure(
            f"{args.sessions} concurrent sessions × {args.calls} tool calls via the decider",
            concurrent_s,
            f"{concurrent_s:.1f} s, {len(hook_ids):,} hook records",
            None,
            f"{expected:,} expected",
            None,
            "one chain, none lost or duplicated, verify ok",
            verdict(chain_ok),
        ),
        Figure(
            "decider RSS after serving 10 workspaces (and the concurrent run), 2.5 s idle",
            rss_mb,
            f"{rss_mb:.1f} MB",
            None,
            "—",
            None,
            f"≤ {RSS_TARGET_MB:.0f} MB",
            verdict(0 < rss_mb <= RSS_TARGET_MB),
        ),
    ]
    context = [
        f"{args.runs} timed rounds of each, rotating order, after {args.warmup} warm-up round(s)",
        f"decider down, Pre + Post p50: {ms(down_p50)} "
        f"({down_p50 / bare_p50:.1f}× two bare starts)",
        f"the same commands into a decider answering at once (bench/decider_floor_server.py), "
        f"Pre + Post p50: {ms(transport_p50)} ({transport_p50 / bare_p50:.2f}× two bare starts): "
        f"the command transport's own cost; ledger's decisions add {ms(up_p50 - transport_p50)}; "
        f"its p99 {ms(transport_p99)} ({transport_p99 / bare_p50:.2f}× two bare starts' p50)",
        f"decider up, through the `ledger` script (with site), Pre + Post p50: {ms(script_p50)} "
        f"({script_p50 / bare_p50:.2f}× two bare starts)",
        f"decider up p90 {ms(percentile(times['up'], 90))}; "
        f"bare start ×2 p99 {ms(percentile(times['bare2'], 99))}; decider up p99 against it: "
        f"{up_p99 / percentile(times['bare2'], 99):.2f}×",
        *(
            f"client floor, {_CANDIDATES[name]}, ×2: {ms(median(times[name]))} "
            f"({median(times[name]) / bare_p50:.2f}× two bare starts)"
            for name in candidates
        ),
        f"the decider served {status.get('requests')} calls "
        f"from {status.get('workspaces')} workspaces",
        *([f"errors: {errors[:3]}"] if errors else []),
        file_creation_line(Path(args.dir)),
        noise_line(meter),
    ]
    report(
        "bench_decider",
        figures,
        settings={"runs": args.runs, "sessions": args.sessions, "calls": args.calls},
        context=context,
        raw=dict(times),
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
