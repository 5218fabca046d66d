"""``ledger verify`` with commitments: every disclosure present, all withheld, against plain.

Three ledgers of the same N hook-shaped records (``_common.hook_bodies``), verified in turn, in
one run:

* baseline: the content plain in the bodies, as records were before commitments;
* disclosed: the prompt-like and command-like fields committed, every disclosure present (verify
  opens each one);
* withheld: the same ledger with its disclosure store deleted.

Targets: disclosed ≥ 0.95 × the baseline's rate; withheld no slower than the baseline.

    python bench/bench_verify_disclosures.py [--records N] [--reps R] [--json]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Figure,
    hook_bodies,
    isolate_this_process,
    machine,
    median,
    rate,
    report,
    say,
    verdict,
)

from ledger import Entry, Ledger
from ledger._evidence.disclosure import Content

_CONTENT_KEYS = ("input", "tool_input", "reason", "prompt", "edit")


def _committed(body: dict[str, Any]) -> dict[str, Any]:
    return {k: Content(v) if k in _CONTENT_KEYS and v is not None else v for k, v in body.items()}


def _build(root: Path, bodies: list[dict[str, Any]], commit: bool) -> Ledger:
    ledger = Ledger.init(root)
    batch = 2000
    for start in range(0, len(bodies), batch):
        entries = [
            Entry("hook.pre", _committed(b) if commit else b, {"client": "claude-code"})
            for b in bodies[start : start + batch]
        ]
        ledger._append_entries(entries, internal=True)
    return ledger


def _timed_verify(ledger: Ledger) -> float:
    start = time.perf_counter()
    report = ledger.verify(stored_checkpoints=False)
    elapsed = time.perf_counter() - start
    if not report.ok:
        raise RuntimeError(report.summary())
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    bodies = hook_bodies(args.records)
    with tempfile.TemporaryDirectory(prefix="ledger-bench-vd-") as tmp:
        base = Path(tmp)
        isolate_this_process(base / "home")
        say(f"bench_verify_disclosures: building 3 ledgers of {args.records} records")
        plain = _build(base / "plain", bodies, commit=False)
        disclosed = _build(base / "disclosed", bodies, commit=True)
        shutil.copytree(base / "disclosed", base / "withheld")
        withheld = Ledger.open(base / "withheld")
        withheld.disclosures.path.unlink()
        fields = sum(1 for _ in disclosed.disclosures.lines())
        times: dict[str, list[float]] = {"plain": [], "disclosed": [], "withheld": []}
        for _ in range(args.reps):
            for name, ledger in (
                ("plain", plain),
                ("disclosed", disclosed),
                ("withheld", withheld),
            ):
                times[name].append(_timed_verify(ledger))
    n = args.records
    plain_rate = n / median(times["plain"])
    figures = [
        Figure(
            f"verify, {fields} disclosures present and opened",
            n / median(times["disclosed"]),
            rate(n / median(times["disclosed"])),
            plain_rate,
            f"{rate(plain_rate)} (content plain)",
            median(times["plain"]) / median(times["disclosed"]),
            "≥ 0.95×",
            verdict(median(times["plain"]) / median(times["disclosed"]) >= 0.95),
        ),
        Figure(
            "verify, every field withheld (store deleted)",
            n / median(times["withheld"]),
            rate(n / median(times["withheld"])),
            plain_rate,
            f"{rate(plain_rate)} (content plain)",
            median(times["plain"]) / median(times["withheld"]),
            "≥ 1.00× (no slower)",
            verdict(median(times["withheld"]) <= median(times["plain"]) * 1.02),
        ),
    ]
    report(
        "verify with disclosures",
        figures,
        settings={"records": n, "reps": args.reps},
        context=["rate = records / median wall time of Ledger.verify() (all cores)"],
        raw=times,
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
