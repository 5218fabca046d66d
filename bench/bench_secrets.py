"""Secret scanning: the time to scan 1 MiB, against a memcpy-class baseline of the same run.

Scans 1 MiB of ordinary source (ledger's own shell reader, repeated: full of ``key`` and
``token`` identifiers, so every generic rule is tried hundreds of times), once as it is (with
non-ASCII characters) and once ASCII-only, and 1 MiB holding 200 real-format tokens. The
baseline is ``text.encode()`` + ``bytes.lower()`` of the same text: the floor of any scanner
that looks at every byte case-insensitively. Target: the median scan ≤ 10 ms.

    python bench/bench_secrets.py [--reps R] [--json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import Figure, machine, median, ms, report, verdict

from ledger._evidence.secrets import find_secrets

_MIB = 1024 * 1024


def _mib(text: str) -> str:
    return (text * (_MIB // len(text) + 1))[:_MIB]


def _time(fn: object, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    source = (
        Path(__file__).resolve().parent.parent / "ledger/_governance/analysis/shell.py"
    ).read_text()
    token_line = "export GITHUB_TOKEN=ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6 # deploy\n"  # noqa: S105 -- made up
    cases = {
        "1 MiB source (non-ASCII)": _mib(source),
        "1 MiB source (ASCII)": _mib(source.encode("ascii", "replace").decode()),
        "1 MiB with 200 tokens": _mib(source[: _MIB // 200 - len(token_line)] + token_line),
    }
    figures = []
    raw = {}
    find_secrets(b"warm the automaton " * 4096)
    for name, text in cases.items():
        scans: list[float] = []
        floors: list[float] = []
        for _ in range(args.reps):  # interleaved: a noisy machine slows both alike
            scans += _time(lambda t=text: find_secrets(t.encode("utf-8", "surrogatepass")), 1)
            floors += _time(lambda t=text: t.encode("utf-8", "surrogatepass").lower(), 1)
        scan, floor = median(scans), median(floors)
        raw[name] = {"scan_s": scans, "floor_s": floors}
        figures.append(
            Figure(
                f"scan {name}",
                scan,
                ms(scan),
                floor,
                ms(floor),
                scan / floor,
                "≤ 10 ms",
                verdict(scan <= 0.010),
            )
        )
    report(
        "secret scanning",
        figures,
        settings={"reps": args.reps},
        context=["baseline: encode + lower of the same text (the floor of a byte scan)"],
        raw=raw,
        as_json=args.json,
        info=machine(),
    )


if __name__ == "__main__":
    main()
