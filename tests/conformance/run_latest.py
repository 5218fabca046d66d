"""``python -m tests.conformance.run_latest [--pinned] [--save] [CLIENT ...]``.

Runs the conformance suite against the newest published version of each agent CLI (``npm view
<package> version``), or the pinned ones with ``--pinned``, and prints per client and version
which hook events the client sent and how many checks (tests) passed, plus any payload field the
adapter does not know. ``--save`` also writes the normalized payloads to
``tests/fixtures/payloads/real/<client>-<version>/``. Exit 0 when every check passed, 1
otherwise, 2 when a client could not be installed: simple enough for a nightly schedule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from ._clients import CLIENTS, ClientUnavailableError, ensure_client, latest_version

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _run(name: str, version: str, save: bool, out: Path) -> tuple[int, int, set[str], set[str]]:
    """Run one client's tests at ``version``: (passed, total, events seen, unknown fields)."""
    report, junit = out / f"{name}.jsonl", out / f"{name}.xml"
    env = {
        **os.environ,
        f"LEDGER_CONFORMANCE_{name.upper()}_VERSION": version,
        "LEDGER_CONFORMANCE_REPORT": str(report),
        "LEDGER_CONFORMANCE_REQUIRED": "1",
    }
    if save:
        env["LEDGER_CONFORMANCE_SAVE"] = "1"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            str(HERE / f"test_{name}.py"),
        ],
        cwd=REPO,
        env=env,
        check=False,
    )
    cases = ET.parse(junit).getroot().iter("testcase")  # noqa: S314 -- pytest's own output
    results: dict[str, bool] = {}
    for case in cases:
        key = f"{case.get('classname')}::{case.get('name')}"
        ok = not any(child.tag in ("failure", "error", "skipped") for child in case)
        results[key] = results.get(key, True) and ok  # a teardown error fails the test
    events: set[str] = set()
    unknown: set[str] = set()
    if report.exists():
        for line in report.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            events |= set(entry["events"])
            unknown |= set(entry["unknown"])
    return sum(results.values()), len(results), events, unknown


def main(argv: list[str]) -> int:
    """Run and print the table; see the module docstring."""
    pinned, save = "--pinned" in argv, "--save" in argv
    names = [a for a in argv if not a.startswith("--")] or list(CLIENTS)
    rows: list[tuple[str, str, str, str]] = []
    status = 0
    notes: dict[str, set[str]] = defaultdict(set)
    with tempfile.TemporaryDirectory(prefix="ledger-conformance-") as tmp:
        for name in names:
            spec = CLIENTS[name]
            try:
                version = spec.pinned if pinned else latest_version(spec)
                ensure_client(spec, version)
            except ClientUnavailableError as exc:
                sys.stderr.write(f"{spec.package}: {exc}\n")
                return 2
            passed, total, events, unknown = _run(name, version, save, Path(tmp))
            status = status or int(passed != total or total == 0)
            changed = "" if version == spec.pinned else f" (pinned {spec.pinned})"
            rows.append(
                (
                    f"{spec.package}",
                    f"{version}{changed}",
                    ", ".join(sorted(events)) or "none",
                    f"{passed}/{total}",
                )
            )
            notes[f"{spec.package}@{version}"] |= unknown
    sys.stdout.write(
        "\n| client | version | hook events seen | checks passed |\n|---|---|---|---|\n"
    )
    for row in rows:
        sys.stdout.write("| " + " | ".join(row) + " |\n")
    for client, fields in notes.items():
        for field in sorted(fields):
            sys.stdout.write(f"\n{client}: unknown payload fields: {field}")
    sys.stdout.write("\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
