"""``ledger query``, ``ledger export``, ``ledger verify-export`` and ``ledger report``.

Registered on the app by :func:`register`; every command is a thin shell over ``ledger``'s
public API.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from cli._exit import EXIT_CODES_HELP, OK, guarded
from ledger import (
    QUERY_FORMATS,
    InputError,
    LedgerSource,
    QuerySession,
    discover_sources,
    view_schema_json,
    view_schema_text,
    write_result,
)

RootOption = Annotated[
    str | None,
    typer.Option("--root", envvar="LEDGER_ROOT",
                 help="Workspace root (default: nearest parent holding .orchestration/)."),
]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing output.")]


def _run(action: Callable[[], int]) -> None:
    code = guarded(action)
    if code != OK:
        raise typer.Exit(code)


def _warn(message: str) -> None:
    print(f"ledger: warning: {message}", file=sys.stderr)


def _sources(root: str | None, ledgers: str | None) -> list[LedgerSource]:
    if ledgers is not None and root is not None:
        raise InputError("pass either --root or --ledgers, not both")
    return discover_sources(ledgers) if ledgers is not None else [LedgerSource.workspace(root)]


def _check_sources(sources: list[LedgerSource], verify: bool) -> None:
    """Verify each source; a failure is a warning: the ledger still queries."""
    for source in sources:
        if not verify:
            _warn(f"{source.label}: not verified (--no-verify)")
            continue
        status = source.verify()
        if status.state != "verified":
            _warn(f"{source.label}: {status.state}: {status.summary}")


QUERY_HELP = (
    "Run one read-only SQL statement (DuckDB dialect) over the ledger's views.\n\n"
    "The JSONL ledger is the only source of truth: it is loaded into an in-memory DuckDB that "
    "then cannot read or write any file, install or load extensions, or change settings. A "
    "ledger that fails verification still queries, with a warning on stderr.\n\n"
    "Example: ledger query \"SELECT code, count(*) FROM decisions WHERE decision = 'deny' "
    "GROUP BY code\"\n\n"
)


def register(app: typer.Typer) -> None:
    """Add the commands of this module to ``app``."""

    @app.command(help=QUERY_HELP + "Views and their columns (types: --schema):\n\n"
                 + "\n\n".join(view_schema_text(compact=True).splitlines()),
                 epilog=EXIT_CODES_HELP)
    def query(
        sql: Annotated[str | None, typer.Argument(help="One SELECT statement.")] = None,
        fmt: Annotated[str, typer.Option(
            "--format", help=f"Output format: {'|'.join(QUERY_FORMATS)}.")] = "table",
        out: Annotated[Path | None, typer.Option(
            "--out", "-o", help="Write the result to this file (required for parquet).")
                       ] = None,
        schema: Annotated[bool, typer.Option(
            "--schema", help="Print the views and their columns, then exit.")] = False,
        ledgers: Annotated[str | None, typer.Option(
            "--ledgers", help="Glob of workspaces or export directories to query together "
            "(rows carry ledger_id).")] = None,
        verify: Annotated[bool, typer.Option(
            "--verify/--no-verify", help="Verify each ledger first (default).")] = True,
        force: ForceOption = False,
        as_json: Annotated[bool, typer.Option(
            "--json", help="With --schema: print the schema as JSON.")] = False,
        root: RootOption = None,
    ) -> None:
        def action() -> int:
            if schema:
                if as_json:
                    print(json.dumps(view_schema_json(), indent=2, sort_keys=True))
                else:
                    print(view_schema_text())
                return OK
            if sql is None or not sql.strip():
                raise InputError("no SQL given; see `ledger query --help` for the views")
            if fmt not in QUERY_FORMATS:
                raise InputError(f"unknown format {fmt!r}; use one of: "
                                 f"{', '.join(QUERY_FORMATS)}")
            sources = _sources(root, ledgers)
            _check_sources(sources, verify)
            with QuerySession(sources, sql) as session:
                for warning in session.warnings:
                    _warn(warning)
                write_result(session.run(), fmt, out, force=force)  # type: ignore[arg-type]
            return OK

        _run(action)


__all__ = ["register"]
