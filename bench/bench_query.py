"""Queries and exports over a big ledger, vs. raw DuckDB over the same file.

1. Build a ledger of N records (default 1,000,000) shaped like governed sessions (hook.pre and
   hook.post bodies as the hook service writes them, intent selections; ``_ledger_shapes``)
   once, into ``bench/out/ledger-<N>/`` (reused by later runs; ``--rebuild`` to redo it).
2. Alternating order, ``--reps`` times, each in a fresh process whose wall time and peak RSS
   (``/usr/bin/time``-style ``ru_maxrss`` of the child) are recorded:

   * query: ``ledger query --no-verify --format csv "SELECT decision, code, count(*) FROM
     decisions GROUP BY ALL"`` vs. raw DuckDB running the same aggregate over ``read_ndjson``
     of the same file (``kind`` and ``body`` declared, ``body->>'$.decision'``).
     Target: ≤ 1.3×.
   * export: ``ledger export --no-verify --format parquet`` (a full export: segment copy,
     Parquet hive-partitioned by ledger and date, keys, hashes, signed manifest) vs. raw DuckDB
     ``COPY (SELECT * FROM read_ndjson(...)) TO 'x.parquet'``. Target: ≤ 1.5×.

Verification is the subject of ``bench_verify.py``; here it is switched off on both sides (a
verified query or export adds one ``ledger verify`` of the ledger, reported as context when
``--with-verify`` is given).

    python bench/bench_query.py [--records N] [--reps R] [--quick] [--json] [--with-verify]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Figure,
    LoadMeter,
    isolated_env,
    machine,
    median,
    noise_line,
    precompile,
    report,
    say,
    verdict,
)
from _ledger_shapes import session_records

HERE = Path(__file__).resolve().parent
LEDGER_BIN = Path(sys.executable).parent / "ledger"
SQL = "SELECT decision, code, count(*) AS n FROM decisions GROUP BY ALL ORDER BY n DESC"

RAW_QUERY = """
import duckdb, sys
con = duckdb.connect()
rows = con.execute(\"\"\"SELECT body->>'$.decision' AS decision, body->>'$.error.code' AS code,
    count(*) AS n FROM read_ndjson(?, columns={'kind': 'VARCHAR', 'body': 'JSON'})
    WHERE kind = 'hook.pre' GROUP BY ALL ORDER BY n DESC\"\"\", [sys.argv[1]]).fetchall()
print(len(rows))
"""
RAW_COPY = """
import duckdb, sys
cols = {'v': 'BIGINT', 'ledger': 'VARCHAR', 'seq': 'BIGINT', 'prev': 'VARCHAR', 'ts': 'VARCHAR',
        'kind': 'VARCHAR', 'actor': 'STRUCT(agent VARCHAR, client VARCHAR, model VARCHAR, '
        'session VARCHAR)', 'body': 'JSON', 'key': 'VARCHAR', 'hash': 'VARCHAR', 'sig': 'VARCHAR'}
con = duckdb.connect()
con.execute(f"COPY (SELECT * FROM read_ndjson('{sys.argv[1]}', columns={cols})) "
            f"TO '{sys.argv[2]}' (FORMAT parquet, COMPRESSION zstd)")
"""


def build(root: Path, records: int) -> None:
    """The benchmark ledger, generated once (10,000 records per append batch)."""
    from ledger import Entry, Ledger  # noqa: PLC0415

    say(f"building {records:,} records into {root} (once; reused by later runs) ...")
    ledger = Ledger.init(root)
    rng = random.Random(20261123)  # noqa: S311 -- reproducible data, not crypto
    done, started = 1, time.perf_counter()
    while done < records:
        batch = session_records(rng, min(10_000, records - done))
        ledger.append_many([Entry(kind, body, actor) for kind, body, actor in batch])
        done += len(batch)
        if done % 100_000 < 10_000:
            say(f"  {done:>10,} records, {time.perf_counter() - started:,.0f} s")


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``cmd`` in a fresh helper process; (wall seconds, that command's peak RSS MB)."""
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "wall = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps([done.returncode, wall, rss, done.stderr.decode()[-2000:]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", helper, *cmd], env=env, capture_output=True, check=True, text=True
    )
    import json  # noqa: PLC0415

    code, wall, rss, err = json.loads(out.stdout)
    if code != 0:
        raise SystemExit(f"{cmd[:3]} failed: {err}")
    return float(wall), float(rss)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true", help="regenerate the ledger")
    parser.add_argument(
        "--with-verify",
        action="store_true",
        help="also time the default (verifying) query, as context",
    )
    parser.add_argument("--dir", help="parent of the temporary output directories")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20,000 records, 1 rep")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.reps = 20_000, 1
    precompile()
    out_dir = HERE / "out"
    root = out_dir / f"ledger-{args.records}"
    home = out_dir / f"ledger-{args.records}-home"
    env = isolated_env(home)
    os.environ["LEDGER_HOME"] = str(home)
    if args.rebuild:
        shutil.rmtree(root, ignore_errors=True)
    if not (root / ".orchestration" / "agent_trace.jsonl").exists():
        shutil.rmtree(root, ignore_errors=True)
        build(root, args.records)
    ledger_file = root / ".orchestration" / "agent_trace.jsonl"
    size_mb = ledger_file.stat().st_size / 1e6
    say(f"ledger: {args.records:,} records, {size_mb:,.0f} MB")

    results: dict[str, list[tuple[float, float]]] = {
        "query": [],
        "raw_query": [],
        "export": [],
        "raw_copy": [],
        "query_verified": [],
    }
    meter = LoadMeter()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-query-", dir=args.dir) as tmp:
        commands = {
            "query": [
                str(LEDGER_BIN),
                "query",
                "--no-verify",
                "--root",
                str(root),
                "--format",
                "csv",
                SQL,
            ],
            "raw_query": [sys.executable, "-c", RAW_QUERY, str(ledger_file)],
            "export": [
                str(LEDGER_BIN),
                "export",
                "--no-verify",
                "--root",
                str(root),
                "--format",
                "parquet",
                "--force",
                "--out",
                f"{tmp}/export",
            ],
            "raw_copy": [sys.executable, "-c", RAW_COPY, str(ledger_file), f"{tmp}/raw.parquet"],
        }
        if args.with_verify:
            commands["query_verified"] = [
                str(LEDGER_BIN),
                "query",
                "--root",
                str(root),
                "--format",
                "csv",
                SQL,
            ]
        for rep in range(args.reps):
            order = list(commands) if rep % 2 == 0 else list(reversed(commands))
            for name in order:
                with meter:
                    results[name].append(run_measured(commands[name], env))
                say(
                    f"  rep {rep + 1}: {name:<15} {results[name][-1][0]:6.2f} s, "
                    f"peak {results[name][-1][1]:,.0f} MB"
                )

    def med(name: str, index: int) -> float:
        return median([r[index] for r in results[name]])

    q, rq, e, rc = med("query", 0), med("raw_query", 0), med("export", 0), med("raw_copy", 0)
    figures = [
        Figure(
            "GROUP BY over decisions: ledger query vs raw DuckDB (median wall)",
            q,
            f"{q:.2f} s",
            rq,
            f"{rq:.2f} s",
            q / rq,
            "≤ 1.3×",
            verdict(q / rq <= 1.3),
        ),
        Figure(
            "full Parquet export vs raw DuckDB COPY (median wall)",
            e,
            f"{e:.2f} s",
            rc,
            f"{rc:.2f} s",
            e / rc,
            "≤ 1.5×",
            verdict(e / rc <= 1.5),
        ),
        Figure(
            "peak RSS: ledger query vs raw query",
            med("query", 1),
            f"{med('query', 1):,.0f} MB",
            med("raw_query", 1),
            f"{med('raw_query', 1):,.0f} MB",
            med("query", 1) / med("raw_query", 1),
            "—",
            "—",
        ),
        Figure(
            "peak RSS: ledger export vs raw COPY",
            med("export", 1),
            f"{med('export', 1):,.0f} MB",
            med("raw_copy", 1),
            f"{med('raw_copy', 1):,.0f} MB",
            med("export", 1) / med("raw_copy", 1),
            "—",
            "—",
        ),
    ]
    context = [
        f"ledger: {args.records:,} records, {size_mb:,.0f} MB of JSONL (bench/out/, built once)",
        "both sides are fresh processes (interpreter start-up included on both); verification "
        "off (--no-verify): `bench_verify.py` measures it",
        "the export also copies the raw segment (the whole file here), hashes every file and "
        "signs the manifest: work the raw COPY does not do",
        noise_line(meter),
    ]
    if args.with_verify:
        context.append(
            f"ledger query with verification (the default): {med('query_verified', 0):.2f} s"
        )
    raw: dict[str, Any] = {k: v for k, v in results.items() if v}
    report(
        "query and export",
        figures,
        settings={"records": args.records, "reps": args.reps},
        context=context,
        raw=raw,
        as_json=args.json,
        info=machine(),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
