"""Finding ledgers to query together: workspaces and export directories (``--ledgers GLOB``)."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from ledger._errors import InputError
from ledger._query.sources import LedgerSource
from ledger._workspace import LEDGER_FILE, ORCHESTRATION_DIR

__all__ = ["discover_sources"]


def _source_for(path: Path) -> LedgerSource | None:
    from ledger._export.layout import MANIFEST, SEGMENT  # noqa: PLC0415

    if (path / MANIFEST).is_file() and (path / SEGMENT).is_file():
        from ledger._export.verify import export_source  # noqa: PLC0415

        return export_source(path)
    if (path / ORCHESTRATION_DIR / LEDGER_FILE).is_file():
        return LedgerSource.workspace(path)
    if path.name == LEDGER_FILE and path.parent.name == ORCHESTRATION_DIR:
        return LedgerSource.workspace(path.parent.parent)
    return None


def discover_sources(pattern: str) -> list[LedgerSource]:
    """Every workspace root or export directory matching a glob (``**`` allowed).

    Raises:
        InputError: nothing matches.
    """
    found: list[LedgerSource] = []
    seen: set[Path] = set()
    # glob.glob, not Path.glob: the pattern may be absolute.
    for name in sorted(glob.glob(os.path.expanduser(pattern), recursive=True)):  # noqa: PTH207, PTH111
        source = _source_for(Path(name))
        if source is not None and source.jsonl.resolve() not in seen:
            seen.add(source.jsonl.resolve())
            found.append(source)
    if not found:
        raise InputError(
            f"--ledgers {pattern!r} matches no workspace (a directory holding "
            f"{ORCHESTRATION_DIR}/{LEDGER_FILE}) and no export directory"
        )
    return found
