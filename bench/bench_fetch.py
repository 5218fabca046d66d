"""``ledger fetch`` of a teammate's evidence, verify included, against ``ledger verify`` of the
same records (decision 0018: target ≤ 1.2×).

1. Clone A makes a ledger of N records (default 100,000: a governed session's hook.pre and
   hook.post records with line attribution, which ``ledger fetch`` also folds for blame in any
   clone; ``--kind app`` for ``ledger append`` records) and ``ledger push``es it to a bare
   remote in a temporary directory.
2. Each repetition, interleaved: ``ledger verify`` in clone A (the baseline), then
   ``ledger fetch`` in a fresh clone B of the remote (the objects cross the transport, are
   written out and verified, every time).

Both run as the installed command, in the same isolated environment; figures are medians.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Figure,
    LoadMeter,
    hook_bodies,
    isolated_env,
    machine,
    median,
    noise_line,
    precompile,
    report,
    say,
    spread,
    verdict,
)

TARGET = 1.2
LEDGER = str(Path(sys.executable).with_name("ledger"))


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
    return seconds


def _hook_records(led: Any, records: int) -> None:
    """A governed session's records: a hook.pre and a hook.post with line attribution per
    write, 200 files (``bench_blame``'s history), written as the hook service writes them."""
    from bench_blame import _records  # noqa: PLC0415

    from ledger._evidence.ledger import Entry, append_reserved  # noqa: PLC0415

    entries = [Entry(k, body, actor) for k, body, actor in _records((records - 1) // 2, 200)]
    for start in range(0, len(entries), 5000):
        append_reserved(led, entries[start : start + 5000])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="10,000 records, 2 runs")
    parser.add_argument("--dir", help="Where to make the temporary clones (default: $TMPDIR).")
    parser.add_argument(
        "--kind",
        choices=("hook", "app"),
        default="hook",
        help="hook: a governed session's hook.pre/hook.post records with line attribution "
        "(what fetch also folds for blame in any clone; default); app: ledger append records",
    )
    args = parser.parse_args()
    if args.quick:
        args.records, args.runs = 10_000, 2
    precompile()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-fetch-", dir=args.dir) as folder:
        base = Path(folder)
        env_a = isolated_env(base / "home-a")
        env_b = isolated_env(base / "home-b")
        bare, clone_a = base / "remote.git", base / "a"
        git(base, "init", "-q", "--bare", str(bare))
        clone_a.mkdir()
        git(clone_a, "init", "-q")
        say(f"generating {args.records:,} records in clone A ...")
        from ledger import Ledger  # noqa: PLC0415

        led = Ledger.init(clone_a, environ=env_a)
        if args.kind == "hook":
            _hook_records(led, args.records)
        else:
            bodies = hook_bodies(1000)
            done = 1
            while done < args.records:
                n = min(5000, args.records - done)
                led.append_many([("app.event", bodies[(done + i) % len(bodies)]) for i in range(n)])
                done += n
        git(clone_a, "add", ".orchestration")
        git(clone_a, "commit", "-q", "-m", "keys")
        git(clone_a, "remote", "add", "origin", str(bare))
        git(clone_a, "push", "-q", "origin", "HEAD:refs/heads/main")
        timed([LEDGER, "push"], clone_a, env_a)
        size = led.file.path.stat().st_size
        verify_s: list[float] = []
        fetch_s: list[float] = []
        meter = LoadMeter()
        with meter:
            for run in range(args.runs):
                verify_s.append(timed([LEDGER, "verify"], clone_a, env_a))
                clone_b = base / f"b{run}"
                git(base, "clone", "-q", "-b", "main", str(bare), str(clone_b))
                timed([LEDGER, "init"], clone_b, env_b)
                fetch_s.append(timed([LEDGER, "fetch"], clone_b, env_b))
                shutil.rmtree(clone_b)
                say(f"  run {run + 1}: verify {verify_s[-1]:.2f} s, fetch {fetch_s[-1]:.2f} s")
    ratio = median(fetch_s) / median(verify_s)
    figures = [
        Figure(
            f"`ledger fetch` + verify of a teammate's {args.records:,} records, fresh clone",
            median(fetch_s),
            f"{median(fetch_s):.2f} s",
            median(verify_s),
            f"{median(verify_s):.2f} s: `ledger verify` of the same records",
            ratio,
            f"≤ {TARGET}×",
            verdict(ratio <= TARGET),
        )
    ]
    report(
        "bench_fetch",
        figures,
        settings={
            "records": args.records,
            "kind": args.kind,
            "runs": args.runs,
            "ledger_bytes": size,
        },
        context=[
            f"fetch {spread(fetch_s, '{:.2f}')} s, verify {spread(verify_s, '{:.2f}')} s",
            noise_line(meter),
        ],
        raw={"fetch_s": fetch_s, "verify_s": verify_s},
        as_json=args.json,
        info=machine(),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
