"""Fetch memory stays bounded whatever the segment's shape: git's own children included.

A remote on this machine (a ``file://`` or path remote) runs its sending side here, with the
remote repository's configuration: its ``pack-objects`` read a large loose blob whole. The
fetch tells it to stream (``upload-pack`` with ``core.bigFileThreshold``); the receiving side
streams too. Measured in a child process, whose ``RUSAGE_CHILDREN`` is the peak of git's
processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ledger._evidence.remote import _upload_pack

_SIZE_MB = 96

_FETCH = r"""
import json, resource, sys
from pathlib import Path
from ledger._evidence.remote import _fetch_all, _Git
_fetch_all(_Git(Path(sys.argv[1])), "origin", "refs/ledger-incoming/origin/")
print(json.dumps(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
"""


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout.strip()


@pytest.fixture
def remote_with_one_long_line(tmp_path: Path) -> Path:
    """A bare remote holding, loose, a segment that is one line of ``_SIZE_MB`` MB."""
    source, remote = tmp_path / "source", tmp_path / "remote.git"
    source.mkdir()
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    _git(source, "init", "-q")
    with (source / "agent_trace.jsonl").open("wb") as handle:
        for _ in range(_SIZE_MB):
            handle.write(b"a" * (1 << 20))
    _git(source, "add", "agent_trace.jsonl")
    _git(source, "commit", "-qm", "segment")
    ref = "refs/ledger/0b5c0000-0000-4000-8000-000000000000"
    _git(source, "push", "-q", str(remote), f"HEAD:{ref}")
    return remote


def test_fetching_a_long_one_line_segment_keeps_gits_memory_bounded(
    tmp_path: Path, remote_with_one_long_line: Path
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    _git(clone, "init", "-q")
    _git(clone, "remote", "add", "origin", f"file://{remote_with_one_long_line}")
    done = subprocess.run(
        [sys.executable, "-c", _FETCH, str(clone)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    peak_mb = json.loads(done.stdout)
    # Without streaming on both sides, one of git's processes holds the whole blob.
    assert peak_mb < _SIZE_MB // 2, peak_mb
    assert _git(clone, "for-each-ref", "refs/ledger-incoming/")


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("file:///srv/team.git", True),
        ("/srv/team.git", True),
        ("../team.git", True),
        ("git@github.com:org/repo.git", False),
        ("ssh://git@host/org/repo.git", False),
        ("https://github.com/org/repo.git", False),
    ],
)
def test_only_a_remote_on_this_machine_is_told_to_stream(url: str, local: bool) -> None:
    option = _upload_pack(url)
    assert option.startswith("--upload-pack=")
    assert ("bigFileThreshold" in option) is local
