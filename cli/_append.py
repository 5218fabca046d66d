"""``ledger append``: one JSON body on stdin → one signed record.

This is a hot path for scripts, so it is parsed by hand and imported without Typer or
pydantic (``cli._entry`` routes here directly). The Typer command of the same name calls
:func:`run` with the same options, so both paths behave identically.
"""

from __future__ import annotations

import json
import sys
from typing import BinaryIO, Final, NamedTuple, TextIO

from cli._exit import OK, UNVERIFIABLE, guarded
from ledger import APPEND_RESERVED_PREFIXES, MAX_RECORD_BYTES, InputError, Ledger, loads_ledger_json

#: ``ledger append``'s options (flag -> (metavar, or None for a flag; help)), their one
#: declaration: :func:`parse_args` reads them, and the Typer command (``cli/_app.py``, for
#: ``--help`` and completion) is declared from them.
OPTIONS: Final[dict[str, tuple[str | None, str]]] = {
    "--kind": ("KIND", "Record kind, e.g. app.deploy."),
    "--root": ("DIR", "Workspace root (default: nearest parent holding .orchestration/)."),
    "--json": (None, "Print machine-readable JSON."),
    "--client": ("C", "Actor: client name."),
    "--session": ("S", "Actor: session id."),
    "--agent": ("A", "Actor: agent id."),
    "--model": ("M", "Actor: model."),
}
USAGE: Final = (
    "usage: ledger append "
    + " ".join(
        f"[{flag}{f' {metavar}' if metavar else ''}]" for flag, (metavar, _) in OPTIONS.items()
    )
    + " < body.json"
)
_VALUE_OPTIONS: Final = tuple(flag[2:] for flag, (metavar, _) in OPTIONS.items() if metavar)


class UsageError(Exception):
    """Bad command-line usage (exit 2, like every other command's usage errors)."""


class AppendOptions(NamedTuple):
    """Options of ``ledger append``."""

    kind: str = "app.event"
    root: str | None = None
    as_json: bool = False
    client: str | None = None
    session: str | None = None
    agent: str | None = None
    model: str | None = None


def parse_args(args: list[str]) -> AppendOptions:
    """Parse ``ledger append`` arguments (``--opt value`` and ``--opt=value``).

    Raises:
        UsageError: an unknown option or a missing value.
    """
    values: dict[str, str] = {}
    as_json = False
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        option = name[2:] if name.startswith("--") else ""
        if arg == "--json":
            as_json = True
        elif option in _VALUE_OPTIONS:
            if eq:
                values[option] = inline
            elif i + 1 < len(args):
                i += 1
                values[option] = args[i]
            else:
                raise UsageError(f"{name} needs a value; {USAGE}")
        else:
            raise UsageError(f"unexpected argument {arg!r}; {USAGE}")
        i += 1
    return AppendOptions(as_json=as_json, **values)


def read_body(stream: BinaryIO) -> dict[str, object]:
    """Read and validate one JSON object from ``stream`` (bounded by the record limit).

    Raises:
        InputError: oversized, not UTF-8, malformed, floats, or not an object.
    """
    data = stream.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise InputError(f"body on stdin exceeds {MAX_RECORD_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"body on stdin is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise InputError("no JSON body on stdin")
    try:
        body = loads_ledger_json(text)
    except ValueError as exc:
        reason = str(exc).splitlines()[0]
        if reason.startswith("float"):
            reason += " is not allowed: ledger records hold no floats (use integer units)"
        raise InputError(f"body on stdin is not valid ledger JSON: {reason}") from None
    except RecursionError:
        raise InputError("body on stdin nests too deeply") from None
    if type(body) is not dict:
        raise InputError("body on stdin must be a JSON object")
    return body


def check_kind(kind: str) -> None:
    """Refuse the kinds ledger itself and its governance path write.

    ``ledger append`` is what any script -- and an agent's shell -- can run; a record of a
    governance kind written through it would be indistinguishable from the real one (a forged
    ``intent.scope_expanded`` granted scope).

    Raises:
        InputError: the kind is reserved.
    """
    if kind.startswith(APPEND_RESERVED_PREFIXES):
        reserved = ", ".join(f"{p}*" for p in APPEND_RESERVED_PREFIXES)
        raise InputError(
            f"kind {kind!r} is reserved ({reserved}); choose an application kind such as app.deploy"
        )


def run(options: AppendOptions, stdin: BinaryIO, stdout: TextIO | None = None) -> int:
    """Append the body from ``stdin``; print the record summary (or the record with --json)."""
    out = stdout or sys.stdout
    check_kind(options.kind)
    body = read_body(stdin)
    actor = {
        "client": options.client,
        "session": options.session,
        "agent": options.agent,
        "model": options.model,
    }
    record = Ledger.open(options.root).append(options.kind, body, actor=actor)
    if options.as_json:
        print(json.dumps(record.data, sort_keys=True), file=out)
    else:
        print(f"seq {record.seq} {record.hash[:16]} {record.kind}", file=out)
    return OK


def main(args: list[str]) -> int:
    """Entry point of the fast path."""

    try:
        options = parse_args(args)
    except UsageError as exc:
        print(f"ledger: error: {exc}", file=sys.stderr)
        return UNVERIFIABLE
    return guarded(lambda: run(options, sys.stdin.buffer))
