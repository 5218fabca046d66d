"""A teammate's fetched ledger in the readers: ``ledger show origin/<id>:SEQ`` and ``ledger log
--ledger origin/<id>`` against the same commands on the ledger's own clone, in one run.

Clone A's ledger holds N records (default 20,000) whose prompt, command and reason are committed;
``ledger push`` publishes the command and the reason (the default policy), and clone B's
``ledger fetch`` keeps them. Timed, round robin: in B, ``show`` of the middle record and ``log -n
20`` of A's fetched ledger (the evidence commit known verified: ``ledger fetch`` sealed it); in
A, the same two commands on its own ledger (the baseline); and in B a ``show`` whose reader
verifies the fetched records again (its sealed index removed first: the first read after a ref
moved, or with no cache).

    python bench/bench_fetched_readers.py [--records N] [--runs R] [--json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    Figure,
    LoadMeter,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    report,
    say,
)
from bench_cli_append import round_robin

from ledger import Ledger, fetch_evidence, push_evidence
from ledger._evidence.disclosure import Content

HERE = Path(__file__).resolve().parent.parent
_GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "commit.gpgsign=false"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=cwd, check=True, capture_output=True)


def _team(base: Path, records: int) -> tuple[Ledger, Path, Path]:
    """A's ledger of ``records`` content-bearing records pushed, B's clone fetched."""
    bare, a_root, b_root = base / "remote.git", base / "a", base / "b"
    _git(base, "init", "-q", "--bare", str(bare))
    a_root.mkdir()
    _git(a_root, "init", "-q")
    a_env = {"LEDGER_HOME": str(base / "ha")}
    ledger = Ledger.init(a_root, environ=a_env)
    _git(a_root, "add", ".orchestration")
    _git(a_root, "commit", "-q", "-m", "ledger keys")
    _git(a_root, "remote", "add", "origin", str(bare))
    _git(a_root, "push", "-q", "origin", "HEAD:refs/heads/main")
    _git(base, "clone", "-q", "-b", "main", str(bare), str(b_root))
    b = Ledger.init(b_root, environ={"LEDGER_HOME": str(base / "hb")})
    for start in range(0, records, 1000):
        ledger._append_entries(
            [
                (
                    "app.call",
                    {
                        "prompt": Content(f"prompt number {i} about the launch plan"),
                        "tool_input": {"command": Content(f"make target-{i} --verbose")},
                        "reason": Content(f"reason {i}: inside the intent's scope"),
                    },
                )
                for i in range(start, min(records, start + 1000))
            ],
            internal=False,
        )
    push_evidence(ledger, environ=a_env)
    fetch_evidence(b, environ={"LEDGER_HOME": str(base / "hb")})
    return ledger, a_root, b_root


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-fetched-") as tmp:
        base = Path(tmp)
        say(f"bench_fetched_readers: a ledger of {args.records} records, pushed and fetched")
        ledger, a_root, b_root = _team(base, args.records)
        name = f"origin/{ledger.ledger_id}"
        seq = args.records // 2
        launcher = [sys.executable, str(HERE / "cli" / "_launcher.py")]
        a_env = isolated_env(base / "ha")
        b_env = isolated_env(base / "hb")
        sealed = b_root / ".orchestration" / ".cache" / "projections" / "foreign" / ledger.ledger_id
        cold = f"rm -rf '{sealed}' && exec \"$@\""
        commands: dict[str, tuple[list[str], bytes]] = {
            "show fetched": ([*launcher, "show", f"{name}:{seq}", "--root", str(b_root)], b""),
            "show own": ([*launcher, "show", str(seq), "--root", str(a_root)], b""),
            "log fetched": (
                [*launcher, "log", "-n", "20", "--ledger", name, "--root", str(b_root)],
                b"",
            ),
            "log own": ([*launcher, "log", "-n", "20", "--root", str(a_root)], b""),
            "show fetched, verifying": (
                ["sh", "-c", cold, "sh", *launcher, "show", f"{name}:{seq}", "--root", str(b_root)],
                b"",
            ),
        }
        envs = {n: a_env if n.endswith("own") else b_env for n in commands}
        say(f"bench_fetched_readers: {args.warmup} warm-up + {args.runs} rounds")
        meter = LoadMeter()
        times = round_robin(
            commands, b_env, warmup=args.warmup, runs=args.runs, meter=meter, envs=envs
        )
    figures = []
    for what, own in (
        ("show fetched", "show own"),
        ("log fetched", "log own"),
        ("show fetched, verifying", "show own"),
    ):
        now, then = median(times[what]), median(times[own])
        figures.append(
            Figure(
                f"ledger {what} (p50, {args.records:,} records)",
                now,
                ms(now),
                then,
                f"{ms(then)} ({own}: the same command in A's clone)",
                now / then,
                "reported",
                "",
            )
        )
    raw: dict[str, Any] = dict(times)
    report(
        "a teammate's fetched ledger in ledger show and ledger log",
        figures,
        settings={"records": args.records, "runs": args.runs},
        context=[noise_line(meter)],
        raw=raw,
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
