"""``ledger._git.run_bounded``: ``subprocess.run`` with a deadline but without CPython's
sleep-polling wait (every git call of blame and of an ambiguous edit's diff goes through it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ledger._git import run_bounded


def test_it_answers_what_subprocess_run_answers() -> None:
    argv = [
        sys.executable,
        "-c",
        "import sys; d = sys.stdin.read(); print(d.upper()); sys.stderr.write('e'); sys.exit(3)",
    ]
    mine = run_bounded(argv, data=b"abc", env=os.environ, timeout=30)
    theirs = subprocess.run(argv, input=b"abc", capture_output=True, check=False, timeout=30)
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert mine.returncode == 3


def test_a_child_past_its_deadline_is_killed_and_said_to_have_expired() -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(
            [sys.executable, "-c", "import time; time.sleep(30)"], env=os.environ, timeout=0.5
        )
    assert time.monotonic() - started < 10


def test_a_program_that_cannot_start_is_an_os_error() -> None:
    with pytest.raises(FileNotFoundError):
        run_bounded(["/nonexistent/git"], env=os.environ, timeout=5)
