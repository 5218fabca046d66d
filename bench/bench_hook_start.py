"""What a new hook process costs, this tree against another: its CPU time, per event.

The same four hook calls as ``bench_commitments.py`` (a prompt, a PreToolUse Write, a quiet
PreToolUse Bash, a PostToolUse Edit), each tree in its own workspace, round robin in one run.
Per call it reports the hook process's own CPU time (user + system, from ``getrusage`` of the
finished child), and, once per round, the CPU time of a process that only imports the hook path
(``from ledger import run_hook`` with the collector off, as ``cli/_hook.py`` does): p50 of
``--runs`` rounds. CPU time is what a busy machine disturbs least: wall time there is mostly
waiting for a core (``bench_commitments.py`` gives the wall-time p50s, which need a quiet
machine; ``python -X importtime`` shows where an import's time goes).

    python bench/bench_hook_start.py [--runs N] [--baseline-rev REV] [--json]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    baseline_tree,
    machine,
    median,
    ms,
    noise_line,
    report,
    say,
)
from bench_commitments import _calls, _workspace

HERE = Path(__file__).resolve().parent.parent
#: What ``cli/_hook.py`` imports to decide in its own process, as it does (the collector off
#: while importing, and what was imported frozen, so the exit does not walk it).
IMPORT_ONLY = "import gc; gc.disable(); from ledger import run_hook; gc.freeze()"


def _cpu(cmd: list[str], env: dict[str, str], data: bytes) -> float:
    """CPU seconds (user + system) of one run of ``cmd``; raise if it fails or denies."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or b'"deny"' in proc.stdout:
        raise RuntimeError(
            f"{cmd[-1]} failed or denied: {proc.stdout[-300:]!r} {proc.stderr[-300:]!r}"
        )
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--baseline-rev", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    cpu: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ledger-bench-start-") as tmp:
        base = Path(tmp)
        rev, old_tree = baseline_tree(args.baseline_rev, base / "baseline")
        commands: dict[str, tuple[list[str], bytes, dict[str, str]]] = {}
        for name, tree in (("baseline", old_tree), ("now", HERE)):
            hook, env, root = _workspace(tree, base, name)
            for call, (cmd, data) in _calls(hook, root).items():
                commands[f"{name}:{call}"] = (cmd, data, env)
            # -P: the tree on PYTHONPATH, not the current directory, provides ledger.
            commands[f"{name}:import"] = ([sys.executable, "-P", "-c", IMPORT_ONLY], b"", env)
        say(f"bench_hook_start: {args.warmup} warm-up + {args.runs} rounds against {rev[:12]}")
        meter = LoadMeter()
        names = list(commands)
        for round_no in range(args.warmup + args.runs):
            shift = round_no % len(names)
            for name in names[shift:] + names[:shift]:
                cmd, data, env = commands[name]
                with meter:
                    seconds = _cpu(cmd, env, data)
                if round_no >= args.warmup:
                    cpu.setdefault(name, []).append(seconds)
    figures = []
    for call in ("prompt", "pre", "bash", "post", "import"):
        now, then = median(cpu[f"now:{call}"]), median(cpu[f"baseline:{call}"])
        what = "the hook path's imports alone" if call == "import" else f"hook {call}"
        figures.append(
            Figure(
                f"{what}, CPU time of the process (p50)",
                now,
                ms(now),
                then,
                f"{ms(then)} (before, {rev[:10]})",
                now / then,
                "—",
                "—",
            )
        )
    report(
        "a new hook process: CPU time",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "baseline": rev},
        context=[noise_line(meter)],
        raw=dict(cpu),
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
