"""Run the ``ledger`` console script's entry point in this process, as its own process would.

Most CLI tests need what a command does with its arguments, environment, working directory and
standard streams, not a new interpreter: in-process they cost milliseconds instead of the
hundreds a fresh ``ledger`` process takes. Tests that must prove something about the installed
command itself (its exit code on a crash, no traceback, what it imports) still spawn it.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from cli._entry import main as entry_main


def run_in_process(
    args: list[str], *, stdin: bytes, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """Call the console script's entry point as its process would: with ``env`` as the whole
    environment, ``cwd`` as the working directory and fresh standard streams; the exit status is
    what ``sys.exit(main())`` would make of it. An exception escaping ``main`` fails the test,
    as the traceback it would print fails the subprocess tests."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_cwd, saved_env = Path.cwd(), dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        code = entry_main(args)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    finally:
        streams[1].flush()
        streams[2].flush()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["ledger", *args], code, out.getvalue(), err.getvalue())


def run_ledger(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``ledger ARGS`` in this process, as text: ``env`` is the whole environment (default: this
    process's), ``cwd`` the working directory (default: this one), stdin empty."""
    done = run_in_process(
        list(args), stdin=b"", cwd=cwd or Path.cwd(), env=dict(os.environ) if env is None else env
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8"),
        done.stderr.decode("utf-8", "backslashreplace"),
    )
