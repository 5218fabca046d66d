"""Exit codes, and the one place that turns a :class:`~ledger.LedgerError` into one.

======  ==========================================================================
 code    meaning
======  ==========================================================================
  0      success; for ``verify``: the ledger is intact
  1      integrity problem: the evidence is bad (tampering, torn tail, checkpoint
         mismatch, repair refused)
  2      could not check or could not run: missing key, unreadable or unwritable
         file, no workspace, bad command-line usage
  3      invalid input: malformed or non-UTF-8 JSON, floats, oversized body
 141     the reader of standard output went away (``ledger log | head``): 128 + SIGPIPE,
         as for a command the signal ended; nothing is printed
======  ==========================================================================

Hook commands (``ledger hook <client>``) answer in their client's protocol instead.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import Final, TextIO

from ledger import InputError, IntegrityError, LedgerError

OK: Final = 0
INTEGRITY: Final = 1
UNVERIFIABLE: Final = 2
INVALID_INPUT: Final = 3
READER_GONE: Final = 141


def reader_gone() -> int:
    """Standard output's reader went away: say nothing more and exit as ``SIGPIPE`` would.

    stdout is pointed at ``/dev/null`` so that the interpreter's final flush does not fail a
    second time (the recipe of the Python docs' ``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # no real descriptor (in-process)
        pass
    return READER_GONE


EXIT_CODES_HELP: Final = (
    "Exit codes: 0 ok/intact; 1 integrity problem (tampering, torn tail, checkpoint "
    "mismatch); 2 could not check (missing key, unreadable file, no workspace, bad usage); "
    "3 invalid input (malformed JSON, floats, oversized body)."
)


def exit_code_for(error: LedgerError) -> int:
    """The documented exit code of an error family."""
    if isinstance(error, IntegrityError):
        return INTEGRITY
    if isinstance(error, InputError):
        return INVALID_INPUT
    return UNVERIFIABLE


class UsageError(Exception):
    """Bad command-line usage: one line, then optionally a ``hint: ...`` line (exit 2)."""


class NotServedError(ValueError):
    """The resident decider does not answer this command line (help, a usage error it cannot
    word the caller's way, ``log --follow``): the caller runs it in its own process."""


def guarded(action: Callable[[], int], err: TextIO | None = None) -> int:
    """Run ``action``; a :class:`LedgerError` becomes one line on ``err`` (default stderr) and
    its exit code, a :class:`UsageError` one line and a hint (exit 2).

    No traceback is printed for user errors, and none ever shows locals.
    """
    stream = sys.stderr if err is None else err
    try:
        return action()
    except UsageError as error:
        message, _, hint = str(error).partition("\n")
        print(f"ledger: error: {message}", file=stream)
        if hint:
            print(hint, file=stream)
        return UNVERIFIABLE
    except LedgerError as error:
        print(f"ledger: error: {error}", file=stream)
        return exit_code_for(error)
    except KeyboardInterrupt:
        print("ledger: interrupted", file=stream)
        return 130
