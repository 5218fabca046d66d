"""``ledger show SEQ`` on a large ledger with disclosures: the store's offset map against the
tree that read the whole store, in one run.

One ledger of N hook-shaped records (``_common.hook_bodies``; default 100,000) whose content is
committed, every disclosure present (~2 per record). Timed, round robin, each tree through its
own ``cli/_launcher.py`` (``PYTHONPATH``): ``ledger show`` of a record near the start, the
middle and the end. The baseline tree is ``git archive`` of ``--baseline-rev`` (default: the
merge base with ``main``, which reads the whole store for one record). The map is built by a
first ``show`` before the rounds (its one-time cost is reported too). In-process, the same
records revealed through the map and through the whole store (``Revealer``), without the
interpreter's start-up.

    python bench/bench_show_disclosures.py [--records N] [--runs R] [--baseline-rev REV] [--json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Figure,
    LoadMeter,
    baseline_tree,
    hook_bodies,
    isolate_this_process,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    report,
    say,
)
from bench_cli_append import round_robin, timed

from ledger import Entry, Ledger
from ledger._evidence.disclosure import Content, DisclosureStore, Revealer, reveal

HERE = Path(__file__).resolve().parent.parent
_CONTENT_KEYS = ("input", "tool_input", "reason", "prompt", "edit")


def _build(root: Path, count: int) -> Ledger:
    ledger = Ledger.init(root)
    batch = 2000
    bodies = hook_bodies(count)
    for start in range(0, count, batch):
        ledger._append_entries(
            [
                Entry(
                    "hook.pre",
                    {
                        k: Content(v) if k in _CONTENT_KEYS and v is not None else v
                        for k, v in b.items()
                    },
                    {"client": "claude-code"},
                )
                for b in bodies[start : start + batch]
            ],
            internal=True,
        )
    return ledger


def _in_process(ledger: Ledger, seqs: list[int], reps: int) -> dict[str, list[float]]:
    records = {r.seq: r.data for r in ledger.records() if r.seq in seqs}
    out: dict[str, list[float]] = {"map": [], "whole store": []}
    for _ in range(reps):
        for seq in seqs:
            start = time.perf_counter()
            Revealer(ledger.disclosures).record(records[seq])
            out["map"].append(time.perf_counter() - start)
            start = time.perf_counter()
            disclosed, forgotten = DisclosureStore(ledger.disclosures.path).load()
            reveal(records[seq]["body"], disclosed, forgotten)
            out["whole store"].append(time.perf_counter() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--baseline-rev", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-show-") as tmp:
        base = Path(tmp)
        isolate_this_process(base / "home")
        say(f"bench_show_disclosures: building a ledger of {args.records} records")
        ledger = _build(base / "ws", args.records)
        store = ledger.disclosures.path
        lines = sum(1 for _ in store.open("rb"))
        size = store.stat().st_size
        rev, old_tree = baseline_tree(args.baseline_rev, base / "baseline")
        env = isolated_env(base / "home")
        seqs = [10, args.records // 2, args.records - 1]
        commands: dict[str, tuple[list[str], bytes]] = {}
        envs: dict[str, dict[str, str]] = {}
        for name, tree in (("baseline", old_tree), ("now", HERE)):
            own = {**env, "PYTHONPATH": str(tree)}
            launcher = [sys.executable, str(tree / "cli" / "_launcher.py")]
            for seq in seqs:
                key = f"{name}:{seq}"
                commands[key] = ([*launcher, "show", str(seq), "--root", str(base / "ws")], b"")
                envs[key] = own
        first = timed(commands[f"now:{seqs[0]}"][0], envs[f"now:{seqs[0]}"], b"")  # builds the map
        say(
            f"bench_show_disclosures: {args.warmup} warm-up + {args.runs} rounds against {rev[:12]}"
        )
        meter = LoadMeter()
        times = round_robin(
            commands, env, warmup=args.warmup, runs=args.runs, meter=meter, envs=envs
        )
        inproc = _in_process(ledger, seqs, args.runs)
    figures = []
    raw: dict[str, Any] = dict(times)
    for seq in seqs:
        now, then = median(times[f"now:{seq}"]), median(times[f"baseline:{seq}"])
        figures.append(
            Figure(
                f"ledger show {seq} (p50, {args.records:,} records, {lines:,} disclosures)",
                now,
                ms(now),
                then,
                f"{ms(then)} (whole store, {rev[:10]})",
                now / then,
                "faster",
                "**PASS**" if now < then else "**MISS**",
            )
        )
    mapped, whole = median(inproc["map"]), median(inproc["whole store"])
    figures.append(
        Figure(
            "reveal one record in-process (p50)",
            mapped,
            ms(mapped),
            whole,
            f"{ms(whole)} (read the whole store)",
            mapped / whole,
            "O(1) reads",
            "**PASS**" if mapped < whole else "**MISS**",
        )
    )
    raw["in_process"] = inproc
    report(
        "ledger show with the disclosure store's offset map",
        figures,
        settings={
            "records": args.records,
            "disclosure_lines": lines,
            "store_bytes": size,
            "runs": args.runs,
            "baseline": rev,
            "first_show_building_the_map_s": first,
        },
        context=[noise_line(meter), f"first show (builds the map once): {ms(first)}"],
        raw=raw,
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
