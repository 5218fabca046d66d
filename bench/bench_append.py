"""In-process batch append rate: ``Ledger.append_many`` vs. the bare cost of signing.

Ledger: ``Ledger.append_many`` of N hook-event records (default 50,000) in batches of 1,000 into a
fresh workspace; each batch is one lock, one write and one fsync, as in production.

Baseline, measured in the same run and interleaved with the ledger repetitions: a bare loop over
the same bodies doing ``canonical_bytes(body)`` + ``hashlib.sha256`` + ``SigningKey.sign(digest)``
-- the minimum any signed log must do per record, with no envelope, chain, file or fsync.

Target: ≥ 10,000 records/s absolute. The ratio ledger/baseline says how much of the ceiling the
ledger's envelope, double encoding, parsing-back and I/O cost.

    python bench/bench_append.py [--records N] [--batch B] [--reps R] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
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
    machine,
    median,
    noise_line,
    rate,
    report,
    say,
    spread,
    verdict,
)

TARGET_RATE = 10_000
DISTINCT_BODIES = 2_000


def ledger_rep(
    root: Path, bodies: list[dict[str, Any]], batch: int, meter: LoadMeter
) -> tuple[float, int]:
    """Append every body into a fresh ledger at ``root``; (seconds, file bytes)."""
    from ledger import Entry, Ledger  # noqa: PLC0415

    led = Ledger.init(root)
    batches = [
        [Entry("hook.pre", body, ACTOR) for body in bodies[i : i + batch]]
        for i in range(0, len(bodies), batch)
    ]
    with meter, Stopwatch() as sw:
        for entries in batches:
            led.append_many(entries)
    return sw.seconds, led.file.path.stat().st_size


def baseline_rep(bodies: list[dict[str, Any]], meter: LoadMeter) -> float:
    """canonical_bytes + sha256 + Ed25519 sign over every body; seconds."""
    import orjson  # noqa: F401, PLC0415 -- loaded, it is what canonical_bytes encodes with (the fastest)

    from ledger import SigningKey, canonical_bytes  # noqa: PLC0415

    key = SigningKey.generate()
    sign, sha256 = key.sign, hashlib.sha256
    with meter, Stopwatch() as sw:
        for body in bodies:
            sign(sha256(canonical_bytes(body)).digest())
    return sw.seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=50_000, help="records per repetition")
    parser.add_argument("--batch", type=int, default=1_000, help="records per append_many call")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median is reported)")
    parser.add_argument("--dir", help="parent directory for the temporary workspaces")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3,000 records, 2 reps")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.reps = 3_000, 2

    info = machine()
    distinct = hook_bodies(min(DISTINCT_BODIES, args.records))
    bodies = [distinct[i % len(distinct)] for i in range(args.records)]
    low, mid, high = body_sizes(distinct)
    say(
        f"bench_append: {args.records:,} records x {args.reps} reps, batch {args.batch:,}, "
        f"bodies {low}-{high} B (median {mid} B)"
    )

    ledger_s: list[float] = []
    base_s: list[float] = []
    file_bytes = 0
    meter = LoadMeter()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-append-", dir=args.dir) as tmp:
        isolate_this_process(Path(tmp) / "home")
        for rep in range(args.reps):
            # Alternate which side goes first so drift (thermal, neighbours) hits both alike.
            order = ("ledger", "baseline") if rep % 2 == 0 else ("baseline", "ledger")
            for side in order:
                if side == "ledger":
                    seconds, file_bytes = ledger_rep(
                        Path(tmp) / f"ws{rep}", bodies, args.batch, meter
                    )
                    ledger_s.append(seconds)
                else:
                    base_s.append(baseline_rep(bodies, meter))
            say(
                f"  rep {rep + 1}/{args.reps}: ledger {args.records / ledger_s[-1]:,.0f} rec/s, "
                f"baseline {args.records / base_s[-1]:,.0f} rec/s"
            )

    ledger_rates = [args.records / s for s in ledger_s]
    base_rates = [args.records / s for s in base_s]
    led_rate, base_rate = median(ledger_rates), median(base_rates)
    figures = [
        Figure(
            figure=f"append_many, {args.batch:,}/batch (records/s)",
            ledger=led_rate,
            ledger_text=rate(led_rate),
            baseline=base_rate,
            baseline_text=f"{rate(base_rate)} (canonical+sha256+sign loop)",
            ratio=led_rate / base_rate,
            target=f"≥ {TARGET_RATE:,} rec/s",
            status=verdict(led_rate >= TARGET_RATE),
        )
    ]
    line_bytes = file_bytes / (args.records + 1)
    context = [
        f"median of {args.reps} reps of {args.records:,} records; ledger reps "
        f"{spread(ledger_rates)} rec/s, baseline reps {spread(base_rates)} rec/s",
        f"per record: ledger {1e6 / led_rate:.1f} µs, baseline {1e6 / base_rate:.1f} µs "
        f"(ledger overhead {1e6 / led_rate - 1e6 / base_rate:.1f} µs: envelope, second encoding, "
        "parse-back into Record, write, fsync per batch)",
        f"bodies: {len(distinct):,} distinct, canonical {low}-{high} B (median {mid} B); "
        f"stored line {line_bytes:,.0f} B on average",
        f"fsyncs: one per batch ({-(-args.records // args.batch):,} per rep)",
        noise_line(meter),
    ]
    report(
        "bench_append",
        figures,
        settings={
            "records": args.records,
            "batch": args.batch,
            "reps": args.reps,
            "quick": args.quick,
        },
        context=context,
        raw={
            "ledger_seconds": ledger_s,
            "baseline_seconds": base_s,
            "line_bytes": line_bytes,
            "other_cores": meter.other_cores,
            "body_bytes": [low, mid, high],
            "cpu_count": os.cpu_count(),
        },
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
