"""``ledger doctor``: check the workspace, one line per check: OK, or what to do."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO

from cli._exit import INTEGRITY, OK
from ledger import Check, StorageError, run_checks

_LABEL = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
_COLOR = {"ok": "32", "warn": "33", "fail": "31"}


def render(checks: list[Check], *, color: bool = False) -> str:
    """The report for a person: status, check, finding; the fix indented below it."""
    width = max(len(check.name) for check in checks)
    lines = []
    for check in checks:
        label = _LABEL[check.status]
        if color:
            label = f"\x1b[{_COLOR[check.status]}m{label}\x1b[0m"
        lines.append(f"{label}  {check.name:<{width}}  {check.message}")
        if check.fix:
            lines.append(f"      {'':<{width}}  -> {check.fix}")
    return "\n".join(lines)


def run(
    root: str | None, checkpoints: list[Path], as_json: bool, out: IO[str] | None = None
) -> int:
    """Run every check; exit 1 when one failed (warnings alone exit 0)."""
    from cli._log import color_enabled  # noqa: PLC0415

    stream = out or sys.stdout
    given = []
    for path in checkpoints:
        try:
            given.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read checkpoint {path}: {exc}") from None
    checks = run_checks(root, checkpoints=given)
    failed = any(check.status == "fail" for check in checks)
    if as_json:
        print(
            json.dumps(
                {"checks": [c.to_json() for c in checks], "ok": not failed},
                indent=2,
                sort_keys=True,
            ),
            file=stream,
        )
    else:
        print(render(checks, color=color_enabled(stream)), file=stream)
    return INTEGRITY if failed else OK
