"""The work a warm process does per hook call (the resident decider, ``ledger mcp``'s hook tool):
this tree against the tree before (default: the merge base with ``main``).

Each tree runs in a warm process of its own, with the same interpreter and dependencies (the
tree first on ``PYTHONPATH``), in a workspace of its own set up by its own code (``ledger init``,
``ledger install claude``, an intent selected). Each round asks each process, in turn, for
``--calls`` governed tool calls: PreToolUse and PostToolUse of an in-scope Write, through
:func:`ledger.run_hook` exactly as the decider runs it (inside its after-the-answer contexts:
what the decider does once the caller has its answer is timed apart). Per tool call:

* **answer path**: wall and CPU time from the payload to the answer, Pre + Post;
* **after the answer**: what the decider still does before it is idle (the seal's ``fsync``,
  and in this tree the projection caches' writes).

The figure is the answer path's p50 against the tree before's, in the same rounds; two bare
``python3 -I -S -c pass`` starts are measured between the rounds as the unit the command
clients' per-call target is stated in (bench/bench_decider.py times the whole call through the
installed commands).

    python bench/bench_warm_call.py [--runs N] [--calls K] [--baseline-rev REV] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    add_workspaces_dir,
    baseline_tree,
    file_creation_line,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    percentile,
    report,
    say,
    two_bare_starts,
)

HERE = Path(__file__).resolve().parent.parent
INTENTS = """active_intents:
  - id: INT-001
    name: JWT hardening
    status: IN_PROGRESS
    owned_scope: ["src/**"]
"""
#: The warm process: reads a count per line, answers one JSON line of per-call timings.
CHILD = r"""
import contextlib, json, os, sys, time
from pathlib import Path

from ledger._hooks.service import run_hook
from ledger._hooks.tripwire import seal_sync_after_answer, sync_seals

try:
    from ledger._projections.cache import saves_after_answer, write_saved
except ImportError:  # a tree from before the caches were written after the answer

    def saves_after_answer():
        return contextlib.nullcontext([])

    def write_saved(pending):
        pass


try:  # what the tree's resident processes load as they start (orjson, from 2026-12-02)
    from ledger._hooks.service import warm_resident
except ImportError:
    pass
else:
    warm_resident()

root = Path(sys.argv[1])


def payload(event, n):
    target = root / "src" / f"f{n % 50}.ts"
    data = {
        "session_id": "bench", "transcript_path": "/home/dev/.claude/projects/-b/bench.jsonl",
        "cwd": str(root), "permission_mode": "default", "hook_event_name": event,
        "tool_name": "Write", "tool_use_id": f"toolu_{n}",
        "tool_input": {"file_path": str(target), "content": f"export const n = {n};\n"},
    }
    if event == "PostToolUse":
        data["tool_response"] = {
            "type": "create", "filePath": str(target), "content": f"export const n = {n};\n",
            "structuredPatch": [], "originalFile": None,
        }
    return json.dumps(data).encode()


def hook(event, raw):
    wall, cpu = time.perf_counter(), time.process_time()
    with seal_sync_after_answer() as seals, saves_after_answer() as caches:
        response = run_hook("claude", raw, expected_event=event)
    answered = (time.perf_counter() - wall, time.process_time() - cpu)
    after = time.perf_counter()
    write_saved(caches)
    sync_seals(seals)
    if response.exit_code or '"deny"' in response.stdout:
        raise SystemExit(f"{event}: {response.exit_code} {response.stdout[:300]}")
    return (*answered, time.perf_counter() - after)


n = 0
for line in sys.stdin:
    timings = []
    for _ in range(int(line)):
        pre = hook("PreToolUse", payload("PreToolUse", n))
        (root / "src" / f"f{n % 50}.ts").write_text(f"export const n = {n};\n")
        post = hook("PostToolUse", payload("PostToolUse", n))
        timings.append([a + b for a, b in zip(pre, post)])
        n += 1
    print(json.dumps(timings), flush=True)
"""


def _warm_process(tree: Path, base: Path, name: str) -> subprocess.Popen[str]:
    """A workspace set up by ``tree``'s own code, and a warm process of ``tree`` serving it."""
    home, root = base / f"{name}-home", base / f"{name}-ws"
    env = isolated_env(home)
    env.update({"PYTHONPATH": str(tree), "HOME": str(base / f"{name}-user")})
    (base / f"{name}-user").mkdir()
    launcher = [sys.executable, str(tree / "cli" / "_launcher.py")]
    subprocess.run(
        [*launcher, "init", "--root", str(root), "--parents"],
        env=env,
        check=True,
        capture_output=True,
    )
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    (root / "src").mkdir()
    subprocess.run(
        [*launcher, "install", "claude", "--root", str(root)],
        env=env,
        check=True,
        capture_output=True,
    )
    select = {
        "session_id": "bench",
        "transcript_path": "/home/dev/.claude/projects/-b/bench.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ledger intent select INT-001"},
        "tool_use_id": "toolu_select",
    }
    subprocess.run(
        [*launcher, "hook", "claude", "--event", "PreToolUse"],
        input=json.dumps(select).encode(),
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
    )
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)],
        env=env,
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _ask(process: subprocess.Popen[str], calls: int) -> list[list[float]]:
    stdin, stdout = process.stdin, process.stdout
    if stdin is None or stdout is None:
        raise SystemExit("the warm process has no pipes")
    stdin.write(f"{calls}\n")
    stdin.flush()
    line = stdout.readline()
    if not line:
        raise SystemExit(f"the warm process ended (exit {process.wait()})")
    return [list(map(float, row)) for row in json.loads(line)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10, help="tool calls per round")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--baseline-rev", default=None)
    add_workspaces_dir(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    info = machine()
    meter = LoadMeter()
    rows: dict[str, list[list[float]]] = {"now": [], "before": []}
    bare: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bwc-", dir=args.dir) as tmp:
        base = Path(tmp)
        rev, old_tree = baseline_tree(args.baseline_rev, base / "baseline")
        processes = {
            "before": _warm_process(old_tree, base, "before"),
            "now": _warm_process(HERE, base, "now"),
        }
        say(f"bench_warm_call: {args.warmup} warm-up + {args.runs} rounds against {rev[:12]}")
        try:
            with meter:
                for round_no in range(args.warmup + args.runs):
                    order = ["now", "before"] if round_no % 2 else ["before", "now"]
                    for name in order:
                        timings = _ask(processes[name], args.calls)
                        if round_no >= args.warmup:
                            rows[name].extend(timings)
                    if round_no >= args.warmup:
                        bare.append(two_bare_starts())
        finally:
            for process in processes.values():
                if process.stdin is not None:
                    process.stdin.close()
                process.wait(timeout=60)
    bare_p50 = median(bare)

    def column(name: str, index: int) -> list[float]:
        return [row[index] for row in rows[name]]

    figures = []
    for label, index in (("wall", 0), ("CPU", 1)):
        now, then = median(column("now", index)), median(column("before", index))
        figures.append(
            Figure(
                f"a warm process's answer path, Pre + Post of one in-scope Write, {label} (p50)",
                now,
                ms(now),
                then,
                f"{ms(then)} (before, {rev[:10]})",
                now / then,
                "",
                "—",
            )
        )
    now_wall = column("now", 0)
    context = [
        f"{args.runs} rounds × {args.calls} tool calls per tree, alternating, after "
        f"{args.warmup} warm-up round(s)",
        f"answer path p99: {ms(percentile(now_wall, 99))} "
        f"(before {ms(percentile(column('before', 0), 99))})",
        f"after the answer, p50: {ms(median(column('now', 2)))} "
        f"(before {ms(median(column('before', 2)))})",
        f"two bare `python3 -I -S` starts, p50: {ms(bare_p50)}; the answer path is "
        f"{median(now_wall) / bare_p50:.2f}× that (before "
        f"{median(column('before', 0)) / bare_p50:.2f}×)",
        file_creation_line(Path(args.dir)),
        noise_line(meter),
    ]
    report(
        "bench_warm_call",
        figures,
        settings={"runs": args.runs, "calls": args.calls, "baseline": rev},
        context=context,
        raw={name: [row[0] for row in values] for name, values in rows.items()},
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
