"""Run every benchmark and print one Markdown table for the README's Performance section.

    python bench/run_all.py [--quick] [--verify-records N] [--verify-reps R] [--json]

Each benchmark runs as its own process (``--json``), one after the other, so they never compete
for the cores. Progress goes to stderr; the table (or, with ``--json``, every figure) to stdout.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import Figure, machine, machine_line, markdown_table, say

HERE = Path(__file__).resolve().parent


def run(script: str, extra: list[str]) -> dict[str, Any]:
    """Run one benchmark script with ``--json``; its parsed output."""
    cmd = [sys.executable, str(HERE / script), "--json", *extra]
    say(f"$ {' '.join(cmd)}")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} exited with {proc.returncode}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    parser.add_argument("--verify-records", type=int, help="bench_verify --records")
    parser.add_argument("--verify-reps", type=int, help="bench_verify --reps")
    parser.add_argument("--dir", help="parent directory for temporary workspaces")
    parser.add_argument("--json", action="store_true", help="print all results as JSON")
    args = parser.parse_args(argv)

    common = ["--quick"] if args.quick else []
    if args.dir:
        common += ["--dir", args.dir]
    verify_extra = list(common)
    if args.verify_records:
        verify_extra += ["--records", str(args.verify_records)]
    if args.verify_reps:
        verify_extra += ["--reps", str(args.verify_reps)]
    plan = [
        ("bench_append.py", common),
        ("bench_verify.py", verify_extra),
        ("bench_cli_append.py", common),
        ("bench_hook.py", common),
        ("bench_cli_start.py", common),
        ("bench_mcp.py", common),
        ("bench_query.py", common),
        ("bench_fetch.py", common),
        ("bench_decider.py", common),
        ("bench_blame_small.py", [*common, "--commits", "60"]),
    ]

    started = time.perf_counter()
    docs: list[dict[str, Any]] = []
    failed: list[str] = []
    for script, extra in plan:
        try:
            docs.append(run(script, extra))
        except (RuntimeError, ValueError) as exc:
            say(f"{script}: {exc}")
            failed.append(script)
    elapsed = time.perf_counter() - started

    info = machine()
    if args.json:
        print(
            json.dumps(
                {"machine": info, "elapsed_seconds": elapsed, "results": docs, "failed": failed},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 1 if failed else 0

    rows = [Figure(**f).cells() for doc in docs for f in doc["figures"]]
    rows += [[f"{name} (failed to run)", "—", "—", "—", "—", "**ERROR**"] for name in failed]
    print(markdown_table(rows))
    print()
    print(f"Machine: {machine_line(info)}.")
    print(
        f"Run: `python bench/run_all.py{' --quick' if args.quick else ''}` "
        f"took {elapsed:,.0f} s. Every baseline is measured in the same run, interleaved with "
        "the ledger measurement; figures are medians of repetitions."
    )
    for doc in docs:
        print()
        settings = ", ".join(f"{k}={v}" for k, v in doc["settings"].items())
        print(f"{doc['benchmark']} ({settings}):")
        for line in doc["context"]:
            print(f"- {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
