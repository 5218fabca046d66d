"""``ledger forget``: erase disclosures (a prompt, a command line, a file's content) for good.

The chain keeps each value's salted commitment; deleting the salt and the value makes it
impossible to open or to guess, and every hash and signature still verifies. What was erased is
itself recorded, signed: the commitments and counts, never the content.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Annotated, Any

import typer

from cli._exit import OK, UsageError
from cli._intent import _workspace
from cli._options import JsonOption, RootOption, run_action

_TARGET = re.compile(r"(\d+)(?:\.(.+))?")


def parse_age(text: str) -> str:
    """``90d`` / ``12h`` / ``30m`` → the RFC 3339 UTC time that long ago."""
    from ledger import age_cutoff  # noqa: PLC0415

    cutoff = age_cutoff(text, time.time())
    if cutoff is None:
        raise UsageError(f"--older-than {text!r}: expected a number and a unit, e.g. 90d, 12h, 30m")
    return cutoff


def selector_for(
    targets: list[str],
    sessions: list[str],
    match: str | None,
    older_than: str | None,
) -> Any:  # noqa: ANN401 -- ForgetSelector, imported lazily
    """The selector of a command line, or the usage error that says what is wrong."""
    from ledger import ForgetSelector  # noqa: PLC0415

    seqs: set[int] = set()
    fields: set[tuple[int, str]] = set()
    for target in targets:
        found = _TARGET.fullmatch(target)
        if found is None:
            raise UsageError(
                f"{target!r}: expected SEQ or SEQ.FIELD (e.g. 42 or 42.prompt)\n"
                "hint: ledger log shows the seqs; ledger show SEQ the fields"
            )
        seq, field = int(found.group(1)), found.group(2)
        if field is None:
            seqs.add(seq)
        else:
            fields.add((seq, field))
    if match is not None and not match:
        raise UsageError("--match: give the text to look for")
    selector = ForgetSelector(
        seqs=frozenset(seqs),
        fields=frozenset(fields),
        sessions=frozenset(sessions),
        match=match,
        older_than=parse_age(older_than) if older_than is not None else None,
    )
    if not selector.how:
        raise UsageError(
            "say what to forget: SEQ, SEQ.FIELD, --session ID, --match TEXT or --older-than AGE"
        )
    return selector


def run_forget(
    targets: list[str],
    sessions: list[str],
    match: str | None,
    older_than: str | None,
    *,
    yes: bool,
    root: str | None,
    as_json: bool,
) -> int:
    """Erase what the selector picks, after a person's confirmation in a terminal."""
    selector = selector_for(targets, sessions, match, older_than)
    if not yes and sys.stdin.isatty():
        what = ", ".join(selector.how)
        typer.confirm(
            f"Erase the disclosures picked by {what}? Their content cannot be recovered.",
            abort=True,
        )
    from ledger import InputError  # noqa: PLC0415

    try:
        done = _workspace(root).forget(selector)
    except InputError as error:  # a seq the ledger does not hold: a usage error (exit 2)
        raise UsageError(str(error)) from None
    if as_json:
        print(json.dumps(done._asdict(), indent=2, sort_keys=True))
    elif done.seq is None:
        print("nothing to forget: no disclosure present matches")
    else:
        print(
            f"seq {done.seq}: forgot {done.fields} field(s) of {done.records} record(s); "
            "their commitments stay in the chain (`ledger verify` counts them as forgotten)"
        )
    return OK


def register(app: typer.Typer) -> None:
    """Add ``forget`` to the app."""

    @app.command("forget")
    def forget(
        targets: Annotated[
            list[str] | None,
            typer.Argument(
                help="SEQ (every field of a record) or SEQ.FIELD (one field).", show_default=False
            ),
        ] = None,
        session: Annotated[
            list[str] | None,
            typer.Option("--session", help="Every disclosure of this session (repeatable)."),
        ] = None,
        match: Annotated[
            str | None, typer.Option("--match", help="Every disclosure whose value holds TEXT.")
        ] = None,
        older_than: Annotated[
            str | None,
            typer.Option("--older-than", help="Disclosures of records older than AGE (90d, 12h)."),
        ] = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
        ] = False,
        root: RootOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Erase disclosures (salt and value); the chain keeps verifying. Records a signed
        ledger.forgotten (commitments and counts, never content). Refused inside an agent."""
        run_action(
            lambda: run_forget(
                targets or [],
                session or [],
                match,
                older_than,
                yes=yes,
                root=root,
                as_json=as_json,
            )
        )
