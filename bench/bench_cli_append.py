"""Latency of one ``ledger append`` from the command line (fsync on), vs. a floor script.

Ledger: ``ledger append --root WS --kind app.event`` with a small JSON body on stdin, as a fresh
subprocess each time (what a shell hook pays per event).

Baseline (the floor), measured beside it: ``bench/floor_append.py`` run with the same interpreter
(``sys.executable``): import ``cryptography``, ``load_pem_private_key`` the same key, open a file
``O_APPEND``, ``flock`` it, sign one line, ``os.write`` + ``os.fsync``. For context also the bare
interpreter start-up, ``python -c pass``. The three commands run round-robin (rotating the order
each round) so noise hits them alike; the first rounds are warm-up and not counted.

Target: ledger p50 ≤ 1.3 × floor p50. p90 is printed too.

    python bench/bench_cli_append.py [--runs N] [--ledger-bin PATH] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    Stopwatch,
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

TARGET_RATIO = 1.3
BODY = b'{"event":"deploy","service":"billing-api","version":"1.4.2","ok":true,"attempt":1}\n'
FLOOR = Path(__file__).resolve().with_name("floor_append.py")


def find_ledger_bin(explicit: str | None) -> str:
    """The ``ledger`` console script next to this interpreter, else on PATH."""
    if explicit:
        return explicit
    beside = Path(sys.executable).with_name("ledger")
    if beside.exists():
        return str(beside)
    found = shutil.which("ledger")
    if not found:
        raise SystemExit("no `ledger` console script found; pass --ledger-bin")
    return found


def filesystem_of(path: Path) -> str:
    """Filesystem type and mount point holding ``path`` (fsync cost depends on it)."""
    best, kind = "", "unknown"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            mount = fields[1]
            if str(path).startswith(mount.rstrip("/") + "/") and len(mount) > len(best):
                best, kind = mount, fields[2]
    except (OSError, IndexError):
        pass
    return f"{kind} on {best or '?'}"


def timed(cmd: list[str], env: dict[str, str], stdin: bytes) -> float:
    """Wall seconds of one run of ``cmd``; raise if it fails."""
    with Stopwatch() as sw:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return sw.seconds


def fsync_once(path: Path, line: bytes) -> float:
    """Seconds for one in-process ``os.write`` + ``os.fsync`` of ``line`` to ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        with Stopwatch() as sw:
            os.write(fd, line)
            os.fsync(fd)
    finally:
        os.close(fd)
    return sw.seconds


def startup_args(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """Command line shared by the start-up benchmarks (this one and bench_hook.py)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs of each command")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--ledger-bin", help="the ledger console script (default: beside python)")
    parser.add_argument("--dir", help="parent directory for the temporary workspace")
    parser.add_argument("--quick", action="store_true", help="smoke run: 6 runs, 1 warm-up")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.warmup = 6, 1
    return args


def round_robin(
    commands: dict[str, tuple[list[str], bytes]],
    env: dict[str, str],
    *,
    warmup: int,
    runs: int,
    meter: LoadMeter,
    after_round: Callable[[], None] | None = None,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, list[float]]:
    """Time each command ``runs`` times, rotating the order every round so noise hits all
    alike; the first ``warmup`` rounds are not counted. ``envs`` gives some commands an
    environment of their own."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_no in range(warmup + runs):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            cmd, data = commands[name]
            own = (envs or {}).get(name, env)
            if round_no < warmup:
                timed(cmd, own, data)
                continue
            with meter:
                times[name].append(timed(cmd, own, data))
        if round_no >= warmup and after_round is not None:
            after_round()
    return times


def main(argv: list[str] | None = None) -> int:
    args = startup_args(__doc__ or "", argv)

    from ledger import Ledger  # noqa: PLC0415

    info = machine()
    precompile()
    ledger_bin = find_ledger_bin(args.ledger_bin)
    shebang = Path(ledger_bin).read_bytes()[:200].split(b"\n")[0].decode(errors="replace")
    fsyncs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ledger-bench-cli-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        kid = next(iter(Ledger.init(root).keyring())).kid
        pem = home / "keys" / f"{kid}.pem"
        if not pem.exists():
            raise SystemExit(f"expected the private key at {pem}")
        commands = {
            "ledger": ([ledger_bin, "append", "--root", str(root), "--kind", "app.event"], BODY),
            "floor": ([sys.executable, str(FLOOR), str(pem), str(Path(tmp) / "floor.jsonl")], BODY),
            "startup": ([sys.executable, "-c", "pass"], BODY),
        }
        say(
            f"bench_cli_append: {args.warmup} warm-up + {args.runs} timed rounds of "
            f"{', '.join(commands)}"
        )
        meter = LoadMeter()
        times = round_robin(
            commands,
            env,
            warmup=args.warmup,
            runs=args.runs,
            meter=meter,
            after_round=lambda: fsyncs.append(
                fsync_once(Path(tmp) / "fsync.jsonl", b"x" * 600 + b"\n")
            ),
        )
        result = Ledger.open(root).verify()
        expected = 1 + args.warmup + args.runs
        if not result.ok or result.records != expected:
            raise RuntimeError(f"ledger after the runs: {result.summary()} (want {expected})")
        fs = filesystem_of(Path(tmp).resolve())

    p50 = {k: median(v) for k, v in times.items()}
    p90 = {k: percentile(v, 90) for k, v in times.items()}
    figures = [
        Figure(
            figure="CLI `ledger append`, 1 record, fsync (p50)",
            ledger=p50["ledger"],
            ledger_text=ms(p50["ledger"]),
            baseline=p50["floor"],
            baseline_text=f"{ms(p50['floor'])} (floor_append.py)",
            ratio=p50["ledger"] / p50["floor"],
            target=f"≤ {TARGET_RATIO:.1f}× floor",
            status=verdict(p50["ledger"] <= TARGET_RATIO * p50["floor"]),
        ),
        Figure(
            figure="CLI `ledger append`, 1 record, fsync (p90)",
            ledger=p90["ledger"],
            ledger_text=ms(p90["ledger"]),
            baseline=p90["floor"],
            baseline_text=f"{ms(p90['floor'])} (floor_append.py)",
            ratio=p90["ledger"] / p90["floor"],
            target="—",
            status="—",
        ),
    ]
    above_ledger = p50["ledger"] - p50["startup"]
    above_floor = p50["floor"] - p50["startup"]
    context = [
        f"{args.runs} timed runs of each command, round-robin with rotating order, after "
        f"{args.warmup} warm-up round(s); body {len(BODY)} B on stdin",
        f"bare start-up `python -c pass`: p50 {ms(p50['startup'])}, p90 {ms(p90['startup'])}",
        f"above bare start-up (p50): ledger {ms(above_ledger)}, floor {ms(above_floor)}"
        + (f" ({above_ledger / above_floor:.2f}×)" if above_floor > 0 else ""),
        f"min: ledger {ms(min(times['ledger']))}, floor {ms(min(times['floor']))}, "
        f"start-up {ms(min(times['startup']))}",
        f"ledger script: {ledger_bin} ({shebang}); floor and start-up: {sys.executable}",
        f"filesystem of the temp dir: {fs}; one in-process 600-byte write + fsync there: "
        f"p50 {ms(median(fsyncs))}, p90 {ms(percentile(fsyncs, 90))} (both commands pay it)",
        noise_line(meter),
    ]
    report(
        "bench_cli_append",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "quick": args.quick},
        context=context,
        raw={
            "seconds": times,
            "fsync_seconds": fsyncs,
            "cpu_count": os.cpu_count(),
            "other_cores": meter.other_cores,
        },
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
