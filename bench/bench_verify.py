"""Full-ledger verify: rate on all cores and peak memory, vs. raw Ed25519 throughput.

1. Generate a ledger of N hook-event records (default 1,000,000) with ``Ledger.append_many`` in
   big batches (progress on stderr; roughly 100 s per million records on a 2-core machine).
2. Run ``Ledger.verify()`` (all cores) in a fresh subprocess, ``--reps`` times over the full
   ledger (default 3; the rate reported is the median). The child times ``verify()`` itself and
   reports its peak RSS (``VmHWM``) and its workers' (``getrusage(RUSAGE_CHILDREN).ru_maxrss``);
   meanwhile this process samples the whole process tree's RSS and PSS four times a second.

Baselines, measured in the same run, interleaved with the verify repetitions:

* rate: raw ``Ed25519PublicKey.verify`` calls/s on one core over real record-signature
  statements (~160 bytes), times ``os.cpu_count()`` -- the ceiling for a verifier that must check
  every signature and has no batch API. Target: verify/(cores × raw) ≥ 0.8.
* memory: the same child with the same imports that opens the ledger and loads the keyring but
  does not verify (the interpreter floor). Target: the largest process of the verify tree stays
  < 200 MB, whatever the ledger's length.

    python bench/bench_verify.py [--records N] [--reps R] [--jobs J] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import (
    ACTOR,
    Figure,
    LoadMeter,
    Stopwatch,
    body_sizes,
    hook_bodies,
    isolate_this_process,
    isolated_env,
    machine,
    median,
    noise_line,
    rate,
    report,
    say,
    spread,
    verdict,
)

TARGET_RATIO = 0.8
TARGET_RSS_MB = 200
DISTINCT_BODIES = 2_000


# --- child: runs in its own process so its memory can be measured ----------------------------


def _vmhwm_kb() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(root: str, *, idle: bool, jobs: int | None) -> int:
    """Verify (or, with ``idle``, only open) the ledger at ``root``; print facts as JSON."""
    from ledger import Ledger  # noqa: PLC0415

    # what verify() loads, both modes
    for module in ("ledger._evidence.checkpoint", "ledger._evidence.verify_file"):
        importlib.import_module(module)

    with Stopwatch() as sw:
        led = Ledger.open(root)
        if idle:
            led.keyring()
            records, ok, summary = 0, True, "idle"
        else:
            result = led.verify(jobs=jobs)
            records, ok, summary = result.records, result.ok, result.summary()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "seconds": sw.seconds,
                "records": records,
                "ok": ok,
                "summary": summary,
                "self_hwm_kb": _vmhwm_kb(),
                "workers_maxrss_kb": kids.ru_maxrss,
                "cpu_self": me.ru_utime + me.ru_stime,
                "cpu_workers": kids.ru_utime + kids.ru_stime,
            }
        )
    )
    return 0


# --- parent -----------------------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    found, i = [pid], 0
    while i < len(found):
        task_dir = Path(f"/proc/{found[i]}/task")
        i += 1
        try:
            for task in task_dir.iterdir():
                found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _rollup_kb(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


class TreeSampler(threading.Thread):
    """Samples the summed RSS and PSS of a process and its descendants (4 Hz)."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss_kb = self.peak_pss_kb = self.peak_procs = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            pids = _descendants(self.pid)
            sizes = [_rollup_kb(p) for p in pids]
            self.peak_rss_kb = max(self.peak_rss_kb, sum(r for r, _ in sizes))
            self.peak_pss_kb = max(self.peak_pss_kb, sum(p for _, p in sizes))
            self.peak_procs = max(self.peak_procs, len(pids))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def run_child(root: Path, env: dict[str, str], *, idle: bool, jobs: int | None) -> dict[str, Any]:
    """Run the verify child; its JSON facts plus the sampled tree peaks and the wall time."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(root)]
    if idle:
        cmd.append("--idle")
    if jobs:
        cmd += ["--jobs", str(jobs)]
    with Stopwatch() as sw:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        out, err = proc.communicate()
        sampler.stop()
    if proc.returncode != 0:
        raise RuntimeError(f"verify child failed ({proc.returncode}): {err.decode()[-2000:]}")
    facts: dict[str, Any] = json.loads(out)
    facts.update(
        wall=sw.seconds,
        tree_rss_kb=sampler.peak_rss_kb,
        tree_pss_kb=sampler.peak_pss_kb,
        tree_procs=sampler.peak_procs,
    )
    return facts


def generate(root: Path, records: int, batch: int) -> tuple[float, int]:
    """A ledger of ``records`` records (genesis included); (records/s, file bytes)."""
    from ledger import Entry, Ledger  # noqa: PLC0415

    distinct = hook_bodies(min(DISTINCT_BODIES, records))
    low, mid, high = body_sizes(distinct)
    say(
        f"generating {records:,} records (bodies {low}-{high} B, median {mid} B) "
        f"with append_many, {batch:,} per batch ..."
    )
    led = Ledger.init(root)
    todo = records - 1  # genesis is record 0
    done, last = 0, time.perf_counter()
    with Stopwatch() as sw:
        while done < todo:
            n = min(batch, todo - done)
            led.append_many(
                [Entry("hook.pre", distinct[(done + i) % len(distinct)], ACTOR) for i in range(n)]
            )
            done += n
            now = time.perf_counter()
            if now - last >= 5 or done == todo:
                last = now
                elapsed = now - sw.start
                eta = elapsed / done * (todo - done)
                say(
                    f"  {done + 1:>10,}/{records:,} ({100 * (done + 1) / records:5.1f}%) "
                    f"{done / elapsed:,.0f} rec/s, eta {eta:,.0f} s"
                )
    return todo / sw.seconds, led.file.path.stat().st_size


def raw_verify_rate(seconds: float) -> tuple[float, float, int]:
    """Single-core ``Ed25519PublicKey.verify`` calls/s for about ``seconds``.

    The messages are real record-signature statements (``record_statement``: domain prefix and
    the canonical ``{hash, ledger, seq}``), 1,000 distinct ones cycled.

    Returns:
        (calls per wall second, calls per CPU second, message bytes).
    """
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    from ledger._evidence.record import record_statement  # noqa: PLC0415

    key = Ed25519PrivateKey.generate()
    public = Ed25519PublicKey.from_public_bytes(key.public_key().public_bytes_raw())
    ledger_id = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
    messages = [
        record_statement(
            ledger_id, 500_000 + seq, hashlib.sha256(seq.to_bytes(8, "big")).hexdigest()
        )
        for seq in range(1_000)
    ]
    pairs = [(key.sign(m), m) for m in messages]
    verify = public.verify
    count = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for sig, msg in pairs:
            verify(sig, msg)
        count += len(pairs)
        now = time.perf_counter()
        if now >= deadline:
            cpu = time.process_time() - cpu_start
            return count / (now - start), count / cpu, len(pairs[0][1])


def _raw_worker(seconds: float) -> float:
    return raw_verify_rate(seconds)[0]


def raw_verify_all_cores(seconds: float, cores: int) -> list[float]:
    """Raw verify rate of ``cores`` processes running at once (does the machine scale?)."""
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    with ctx.Pool(cores) as pool:
        return pool.map(_raw_worker, [seconds] * cores)


def mb(kb: float) -> float:
    """KiB → MiB."""
    return kb / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--records",
        type=int,
        default=1_000_000,
        help="ledger length, genesis included (default 1,000,000)",
    )
    parser.add_argument(
        "--reps",
        type=int,
        default=3,
        help="full-ledger verify runs; the median rate is reported (default 3)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="verify workers (default: all)")
    parser.add_argument("--batch", type=int, default=10_000, help="append_many batch (generate)")
    parser.add_argument(
        "--raw-seconds",
        type=float,
        default=2.0,
        help="duration of each raw Ed25519 baseline measurement",
    )
    parser.add_argument("--dir", help="parent directory for the temporary workspace")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20,000 records, 1 rep")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--idle", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, idle=args.idle, jobs=args.jobs)
    if args.quick:
        args.records, args.reps, args.raw_seconds = 20_000, 1, 0.5

    info = machine()
    cores = os.cpu_count() or 1
    jobs = args.jobs or cores
    runs: list[dict[str, Any]] = []
    idles: list[dict[str, Any]] = []
    raws: list[float] = []
    raws_cpu: list[float] = []
    all_core_raws: list[float] = []
    verify_meter, raw_meter = LoadMeter(), LoadMeter()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-verify-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        gen_rate, file_bytes = generate(root, args.records, args.batch)
        say(f"ledger: {file_bytes / 1e6:,.1f} MB; verifying {args.reps}x with {jobs} job(s)")
        msg_bytes = 0
        for rep in range(args.reps):
            # Alternate baseline-first and verify-first so drift hits both sides alike.
            for step in ("baseline", "verify") if rep % 2 == 0 else ("verify", "baseline"):
                if step == "baseline":
                    with raw_meter:
                        raw, raw_cpu, msg_bytes = raw_verify_rate(args.raw_seconds)
                        raws_cpu.append(raw_cpu)
                        all_core_raws.append(sum(raw_verify_all_cores(args.raw_seconds, cores)))
                    raws.append(raw)
                    continue
                idles.append(run_child(root, env, idle=True, jobs=args.jobs))
                meter = LoadMeter()
                with meter, verify_meter:
                    run = run_child(root, env, idle=False, jobs=args.jobs)
                if not run["ok"] or run["records"] != args.records:
                    raise RuntimeError(f"verify did not pass: {run['summary']}")
                run["other_cores"] = meter.other_cores
                runs.append(run)
            say(
                f"  rep {rep + 1}/{args.reps}: verify {run['records'] / run['seconds']:,.0f} "
                f"rec/s in {run['seconds']:.1f} s (other load {run['other_cores']:.2f} cores), "
                f"raw Ed25519 {raws[-1]:,.0f}/s on 1 core, {all_core_raws[-1]:,.0f}/s on "
                f"{cores}; largest process "
                f"{mb(max(run['self_hwm_kb'], run['workers_maxrss_kb'])):.0f} MB, "
                f"tree PSS {mb(run['tree_pss_kb']):.0f} MB"
            )

    rates = [r["records"] / r["seconds"] for r in runs]
    verify_rate, raw_rate = median(rates), median(raws)
    ceiling = cores * raw_rate
    largest = [mb(max(r["self_hwm_kb"], r["workers_maxrss_kb"])) for r in runs]
    peak_mb = max(largest)
    idle_mb = median([mb(i["self_hwm_kb"]) for i in idles])
    parent_mb = max(mb(r["self_hwm_kb"]) for r in runs)
    worker_mb = max(mb(r["workers_maxrss_kb"]) for r in runs)
    bound_mb = max(mb(r["self_hwm_kb"] + jobs * r["workers_maxrss_kb"]) for r in runs)
    tree_pss = max(mb(r["tree_pss_kb"]) for r in runs)
    tree_rss = max(mb(r["tree_rss_kb"]) for r in runs)
    cpu_us = median([1e6 * (r["cpu_self"] + r["cpu_workers"]) / r["records"] for r in runs])
    parent_cpu_us = median([1e6 * r["cpu_self"] / r["records"] for r in runs])
    busy_cores = median([(r["cpu_self"] + r["cpu_workers"]) / r["seconds"] for r in runs])
    all_core_raw = median(all_core_raws)
    raw_cpu_us = 1e6 / median(raws_cpu)
    quiet = min(runs, key=lambda r: r["other_cores"])
    quiet_rate = quiet["records"] / quiet["seconds"]
    figures = [
        Figure(
            figure=f"verify {args.records:,} records, {jobs} jobs (records/s)",
            ledger=verify_rate,
            ledger_text=rate(verify_rate),
            baseline=ceiling,
            baseline_text=f"{rate(ceiling, 'verif/s')} ({cores} × {raw_rate:,.0f} raw Ed25519)",
            ratio=verify_rate / ceiling,
            target=f"ratio ≥ {TARGET_RATIO:.2f}",
            status=verdict(verify_rate / ceiling >= TARGET_RATIO),
        ),
        Figure(
            figure=f"verify {args.records:,} records, peak RSS of largest process (MB)",
            ledger=peak_mb,
            ledger_text=f"{peak_mb:,.0f} MB",
            baseline=idle_mb,
            baseline_text=f"{idle_mb:,.0f} MB (same child, no verify)",
            ratio=peak_mb / idle_mb,
            target=f"< {TARGET_RSS_MB} MB",
            status=verdict(peak_mb < TARGET_RSS_MB),
        ),
    ]
    context = [
        f"rate: median of {args.reps} verify run(s) over the full ledger (reps "
        f"{spread(rates)} rec/s); verify() timed inside the child, interpreter start excluded "
        f"(wall with start-up: {median([r['wall'] for r in runs]):.1f} s); file in page cache",
        f"raw Ed25519 baseline: median of {args.reps} single-core runs of {args.raw_seconds:g} s "
        f"over {msg_bytes}-byte record-signature statements ({spread(raws)} verif/s); "
        f"raw Ed25519 on all {cores} cores at once, measured in the same reps: "
        f"{all_core_raw:,.0f} verif/s ({all_core_raw / ceiling:.2f} of cores × raw); "
        f"verify/that = {verify_rate / all_core_raw:.2f}",
        f"CPU per record: {cpu_us:.1f} µs in all processes ({parent_cpu_us:.1f} µs of it in the "
        f"parent) vs {raw_cpu_us:.1f} CPU-µs for one raw verify, so even with the cores to "
        f"itself verify could reach at most {raw_cpu_us / cpu_us:.2f} of cores × raw; "
        f"the verify tree kept {busy_cores:.2f} of {cores} cores busy",
        f"least-noisy rep (other load {quiet['other_cores']:.2f} cores): {rate(quiet_rate)}, "
        f"{quiet_rate / ceiling:.2f} of cores × raw",
        noise_line(verify_meter).replace("this benchmark measured", "verify ran")
        + f"; {raw_meter.other_cores:.2f} while the raw baseline ran",
        f"memory (max over reps): parent {parent_mb:,.0f} MB, largest worker {worker_mb:,.0f} MB; "
        f"whole tree sampled at 4 Hz: peak PSS {tree_pss:,.0f} MB, summed RSS {tree_rss:,.0f} MB; "
        f"bound parent + {jobs} × worker = {bound_mb:,.0f} MB "
        f"({verdict(bound_mb < TARGET_RSS_MB)} vs < {TARGET_RSS_MB} MB)",
        f"ledger: {args.records:,} records, {file_bytes / 1e6:,.1f} MB "
        f"({file_bytes / args.records:,.0f} B/record), generated at {gen_rate:,.0f} rec/s "
        f"with append_many({args.batch:,})",
    ]
    report(
        "bench_verify",
        figures,
        settings={
            "records": args.records,
            "reps": args.reps,
            "jobs": jobs,
            "raw_seconds": args.raw_seconds,
            "quick": args.quick,
        },
        context=context,
        raw={
            "runs": runs,
            "idle_runs": idles,
            "raw_verify_per_core": raws,
            "raw_verify_per_cpu_second": raws_cpu,
            "raw_verify_all_cores": all_core_raws,
            "generate_rate": gen_rate,
            "file_bytes": file_bytes,
            "statement_bytes": msg_bytes,
        },
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
