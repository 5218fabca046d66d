"""What sharing disclosures costs ``ledger push`` and ``ledger fetch``.

1. Clone A makes a ledger of N records (default 10,000), each committing a prompt, a command
   and a file's content (three disclosures a record), and pushes it to two bare remotes: one
   with ``--disclose all`` (every disclosure published), one with ``--disclose none``.
2. push, each repetition, interleaved: ``ledger push --disclose none`` (the baseline: the
   evidence is current, nothing else is published) then ``ledger push --disclose all`` to the
   same remote (a fresh disclosures commit of every disclosure, force-pushed).
3. fetch, each repetition, interleaved, in fresh clones: ``ledger fetch`` from the remote
   without disclosures (the baseline: the chain is verified, as before) and from the remote
   with them (the chain verified, then every disclosure checked against its commitment and
   kept).

Both run as the installed command, in the same isolated environment; figures are medians.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

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
    spread,
    verdict,
)
from bench_fetch import git, timed

LEDGER = str(Path(sys.executable).with_name("ledger"))
PUSH_TARGET = 2.0
FETCH_TARGET = 1.5


def _records(clone: Path, env: dict[str, str], records: int) -> int:
    from ledger import Ledger  # noqa: PLC0415
    from ledger._evidence.disclosure import Content  # noqa: PLC0415

    led = Ledger.init(clone, environ=env)
    for start in range(0, records - 1, 2000):
        entries = [
            (
                "app.call",
                {
                    "prompt": Content(f"prompt {n}: make the parser accept trailing commas"),
                    "tool_input": {
                        "command": Content(f"pytest -q tests/test_parser.py -k case_{n}"),
                        "content": Content(f"def case_{n}():\n    return parse('[1, 2,]')\n" * 4),
                    },
                },
            )
            for n in range(start, min(start + 2000, records - 1))
        ]
        led._append_entries(entries, internal=False)  # content marked, as the hook service does
    return led.file.path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dir", help="Where to make the temporary clones (default: $TMPDIR).")
    args = parser.parse_args()
    precompile()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-share-", dir=args.dir) as folder:
        base = Path(folder)
        env_a, env_b = isolated_env(base / "home-a"), isolated_env(base / "home-b")
        clone_a = base / "a"
        clone_a.mkdir()
        git(clone_a, "init", "-q")
        say(f"generating {args.records:,} records in clone A ...")
        size = _records(clone_a, env_a, args.records)
        git(clone_a, "add", ".orchestration")
        git(clone_a, "commit", "-q", "-m", "keys")
        for name in ("shared", "plain"):
            git(base, "init", "-q", "--bare", str(base / f"{name}.git"))
            git(clone_a, "remote", "add", name, str(base / f"{name}.git"))
            git(clone_a, "push", "-q", name, "HEAD:refs/heads/main")
        timed([LEDGER, "push", "shared", "--disclose", "all"], clone_a, env_a)
        timed([LEDGER, "push", "plain", "--disclose", "none"], clone_a, env_a)
        none_s: list[float] = []
        all_s: list[float] = []
        plain_s: list[float] = []
        shared_s: list[float] = []
        meter = LoadMeter()
        with meter:
            for run in range(args.runs):
                none_s.append(
                    timed([LEDGER, "push", "shared", "--disclose", "none"], clone_a, env_a)
                )
                all_s.append(timed([LEDGER, "push", "shared", "--disclose", "all"], clone_a, env_a))
                for remote, times in (("plain", plain_s), ("shared", shared_s)):
                    clone_b = base / f"b-{remote}-{run}"
                    git(
                        base, "clone", "-q", "-b", "main", str(base / f"{remote}.git"), str(clone_b)
                    )
                    timed([LEDGER, "init"], clone_b, env_b)
                    times.append(timed([LEDGER, "fetch", "origin"], clone_b, env_b))
                    shutil.rmtree(clone_b)
                say(
                    f"  run {run + 1}: push none {none_s[-1]:.2f} s, all {all_s[-1]:.2f} s; "
                    f"fetch plain {plain_s[-1]:.2f} s, shared {shared_s[-1]:.2f} s"
                )
    disclosures = 3 * (args.records - 1)
    push_ratio = median(all_s) / median(none_s)
    fetch_ratio = median(shared_s) / median(plain_s)
    figures = [
        Figure(
            f"`ledger push --disclose all`, {disclosures:,} disclosures",
            median(all_s),
            f"{median(all_s):.2f} s",
            median(none_s),
            f"{median(none_s):.2f} s: `--disclose none`",
            push_ratio,
            f"≤ {PUSH_TARGET}×",
            verdict(push_ratio <= PUSH_TARGET),
        ),
        Figure(
            f"`ledger fetch` of {args.records:,} records with their {disclosures:,} disclosures",
            median(shared_s),
            f"{median(shared_s):.2f} s",
            median(plain_s),
            f"{median(plain_s):.2f} s: the same records, none disclosed",
            fetch_ratio,
            f"≤ {FETCH_TARGET}×",
            verdict(fetch_ratio <= FETCH_TARGET),
        ),
    ]
    report(
        "bench_disclosure_sharing",
        figures,
        settings={"records": args.records, "runs": args.runs, "ledger_bytes": size},
        context=[
            f"push none {spread(none_s, '{:.2f}')} s, all {spread(all_s, '{:.2f}')} s",
            f"fetch plain {spread(plain_s, '{:.2f}')} s, shared {spread(shared_s, '{:.2f}')} s",
            noise_line(meter),
        ],
        raw={
            "push_none_s": none_s,
            "push_all_s": all_s,
            "fetch_plain_s": plain_s,
            "fetch_shared_s": shared_s,
        },
        as_json=args.json,
        info=machine(),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
