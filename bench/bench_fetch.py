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

Memory (target ≤ 200 MB whatever the segment's shape): each fetch runs under a small parent
that reads ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` once it ends, the peak resident set of the
largest of ``ledger`` and the git processes it waited for. Two shapes: the ordinary ledger of
step 1, and a ``--segment-mb`` (default 300) segment that is one line, pushed raw under
``refs/ledger/<id>`` (what a hostile teammate could publish: fetch must refuse it without
reading it whole). The baseline row beside it is plain ``git fetch`` of the same ref, with
git's default settings.
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
MEMORY_TARGET_MB = 200
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


#: Runs argv, then prints its wall time, its exit code and the peak RSS (KiB) of the largest of
#: its process and the descendants each waited for (Linux ``ru_maxrss``).
_PEAK = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL).returncode\n"
    "took = time.perf_counter() - start\n"
    "print(took, code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def peak(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, float]:
    """``(seconds, exit code, peak MB)`` of one run of ``argv`` and its children."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, code, kib = done.stdout.split()
    return float(seconds), int(code), int(kib) / 1024


def one_line_remote(base: Path, megabytes: int) -> tuple[Path, str]:
    """A bare remote holding, loose, a segment that is one line of ``megabytes`` MB."""
    source, remote = base / "one-line-source", base / "one-line.git"
    source.mkdir()
    git(base, "init", "-q", "--bare", str(remote))
    git(source, "init", "-q")
    with (source / "agent_trace.jsonl").open("wb") as handle:
        for _ in range(megabytes):
            handle.write(b"a" * (1 << 20))
    git(source, "add", "agent_trace.jsonl")
    git(source, "commit", "-q", "-m", "segment")
    ref = "refs/ledger/0b5c0000-0000-4000-8000-000000000000"
    git(source, "push", "-q", str(remote), f"HEAD:{ref}")
    shutil.rmtree(source)
    return remote, ref


def one_line_peaks(base: Path, megabytes: int, env: dict[str, str]) -> tuple[float, int, float]:
    """``(ledger fetch's peak MB, its exit code, plain git fetch's peak MB)`` of the one-line
    segment, each into a fresh clone."""
    remote, ref = one_line_remote(base, megabytes)
    clones = []
    for name in ("ledger", "git"):
        clone = base / f"one-line-{name}"
        clone.mkdir()
        git(clone, "init", "-q")
        git(clone, "remote", "add", "origin", f"file://{remote}")
        clones.append(clone)
    timed([LEDGER, "init"], clones[0], env)
    _, code, ledger_mb = peak([LEDGER, "fetch"], clones[0], env)
    _, _, git_mb = peak(["git", "fetch", "-q", "origin", f"{ref}:refs/x/segment"], clones[1], env)
    for clone in (*clones, remote):
        shutil.rmtree(clone)
    return ledger_mb, code, git_mb


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
    parser.add_argument(
        "--segment-mb",
        type=int,
        default=300,
        help="the one-line segment's size for the memory figure (0: leave it out)",
    )
    args = parser.parse_args()
    if args.quick:
        args.records, args.runs, args.segment_mb = 10_000, 2, min(args.segment_mb, 32)
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
        fetch_mb: list[float] = []
        meter = LoadMeter()
        with meter:
            for run in range(args.runs):
                verify_s.append(timed([LEDGER, "verify"], clone_a, env_a))
                clone_b = base / f"b{run}"
                git(base, "clone", "-q", "-b", "main", str(bare), str(clone_b))
                timed([LEDGER, "init"], clone_b, env_b)
                seconds, code, megabytes = peak([LEDGER, "fetch"], clone_b, env_b)
                if code != 0:
                    raise SystemExit(f"ledger fetch failed (exit {code})")
                fetch_s.append(seconds)
                fetch_mb.append(megabytes)
                shutil.rmtree(clone_b)
                say(
                    f"  run {run + 1}: verify {verify_s[-1]:.2f} s, fetch {fetch_s[-1]:.2f} s, "
                    f"{fetch_mb[-1]:.0f} MB"
                )
            one_line: tuple[float, int, float] | None = None
            if args.segment_mb > 0:
                say(f"fetching a {args.segment_mb} MB one-line segment ...")
                one_line = one_line_peaks(base, args.segment_mb, isolated_env(base / "home-c"))
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
        ),
        Figure(
            f"peak memory of that fetch ({size / 1e6:.0f} MB ledger): ledger or a git child",
            max(fetch_mb),
            f"{max(fetch_mb):.0f} MB",
            None,
            "—",
            None,
            f"≤ {MEMORY_TARGET_MB} MB",
            verdict(max(fetch_mb) <= MEMORY_TARGET_MB),
        ),
    ]
    if one_line is not None:
        ledger_mb, code, git_mb = one_line
        figures.append(
            Figure(
                f"peak memory of `ledger fetch` of a {args.segment_mb} MB one-line segment "
                f"(exit {code})",
                ledger_mb,
                f"{ledger_mb:.0f} MB",
                git_mb,
                f"{git_mb:.0f} MB: plain `git fetch` of the same ref",
                ledger_mb / git_mb if git_mb else None,
                f"≤ {MEMORY_TARGET_MB} MB",
                verdict(ledger_mb <= MEMORY_TARGET_MB),
            )
        )
    report(
        "bench_fetch",
        figures,
        settings={
            "records": args.records,
            "kind": args.kind,
            "runs": args.runs,
            "ledger_bytes": size,
            "segment_mb": args.segment_mb,
        },
        context=[
            f"fetch {spread(fetch_s, '{:.2f}')} s, verify {spread(verify_s, '{:.2f}')} s",
            noise_line(meter),
        ],
        raw={
            "fetch_s": fetch_s,
            "verify_s": verify_s,
            "fetch_mb": fetch_mb,
            "one_line": None
            if one_line is None
            else dict(zip(("ledger_mb", "exit", "git_mb"), one_line, strict=True)),
        },
        as_json=args.json,
        info=machine(),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
