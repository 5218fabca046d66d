"""The hook path does each piece of work once: one normalization per path, one read per file.

Counted, not timed (issue 6): every policy that needs a path's resolution or a file's content
asks the per-call memo of :class:`ledger._governance.policies.Governance`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ledger._governance import policies
from ledger._governance.analysis import paths

from ._support import Session, make_workspace

AUTH_FILE = "src/auth/middleware.ts"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {"normalize": Counter(), "open": Counter()}
    real_normalize, real_open = paths.normalize_path, policies._open_regular

    def normalize(path: str, **kwargs: Any) -> paths.NormalizedPath:
        counts["normalize"][path] += 1
        return real_normalize(path, **kwargs)

    def open_regular(path: str) -> int | None:
        counts["open"][path] += 1
        return real_open(path)

    monkeypatch.setattr(policies, "normalize_path", normalize)
    monkeypatch.setattr(paths, "normalize_path", normalize)
    monkeypatch.setattr(policies, "_open_regular", open_regular)
    return counts


def test_an_edit_in_scope_normalizes_its_path_once_and_reads_the_file_once(
    tmp_path: Path, counted: dict[str, Counter[str]]
) -> None:
    ws = make_workspace(tmp_path)
    target = ws.write(AUTH_FILE, "export const a = 1;\nexport const b = 2;\n")
    session = Session(ws, "counted")
    session.select()
    session.read(AUTH_FILE)
    for counter in counted.values():
        counter.clear()
    edit = {
        "file_path": str(target),
        "old_string": "export const a = 1;\n",
        "new_string": "export const a = 10;\n",
        "replace_all": False,
    }
    fired = session.pre("Edit", edit)
    assert fired.permission in (None, "allow")
    # protected-path check, scope, stale file and mutation class all needed the path and the
    # file: the memo answered all but the first.
    assert counted["normalize"] == {str(target): 1}
    assert counted["open"] == {str(target): 1}
