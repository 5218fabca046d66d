"""Cost of the shell analysis on the hook path: this tree against a baseline tree, same run.

A Bash PreToolUse pays for ``classify_command`` once (the analysis is memoized per call) and for
importing the analysis modules once per process. Both are measured here, each in its own
subprocess per tree, round-robin, medians:

* per command: ``classify_command`` over the everyday corpus (tests/policy/shell_corpus.py,
  the baseline tree's own copy of the function on this tree's corpus), p50 over the corpus;
* per process: importing ``ledger._governance.analysis.shell`` in a fresh interpreter.

    python bench/bench_shell.py --baseline /path/to/worktree-of-main [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_PER_COMMAND = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from ledger._governance.analysis.shell import classify_command
from tests.policy.shell_corpus import EVERYDAY
times = []
for command in EVERYDAY:
    classify_command(command)
    start = time.perf_counter_ns()
    for _ in range(5):
        classify_command(command)
    times.append((time.perf_counter_ns() - start) / 5)
times.sort()
print(json.dumps({"p50_us": times[len(times) // 2] / 1000, "sum_ms": sum(times) / 1e6}))
"""

_IMPORT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter_ns()
import ledger._governance.analysis.shell
print((time.perf_counter_ns() - start) / 1e6)
"""


def _run(code: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    trees = {"baseline": str(options.baseline.resolve()), "this": str(HERE)}
    p50: dict[str, list[float]] = {name: [] for name in trees}
    imports: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(options.rounds):
        for name, tree in trees.items():
            p50[name].append(json.loads(_run(_PER_COMMAND, tree, str(HERE)))["p50_us"])
            imports[name].append(float(_run(_IMPORT, tree)))
    result = {
        name: {
            "classify_p50_us": round(statistics.median(p50[name]), 1),
            "import_ms": round(statistics.median(imports[name]), 2),
        }
        for name in trees
    }
    result["ratio"] = {
        "classify_p50": round(
            result["this"]["classify_p50_us"] / result["baseline"]["classify_p50_us"], 2
        ),
        "import": round(result["this"]["import_ms"] / result["baseline"]["import_ms"], 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
