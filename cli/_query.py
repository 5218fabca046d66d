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

from cli._exit import EXIT_CODES_HELP, INTEGRITY, OK, guarded
from cli._progress import progress_bars
from ledger import (
    EXPORT_FORMATS,
    QUERY_FORMATS,
    ExportOptions,
    InputError,
    Ledger,
    LedgerSource,
    QuerySession,
    discover_sources,
    export_ledger,
    verify_export,
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

    @app.command(name="export", epilog=EXIT_CODES_HELP)
    def export_cmd(
        out: Annotated[Path, typer.Option("--out", "-o", help="Directory to create.")],
        fmt: Annotated[str, typer.Option(
            "--format", help=f"Data format: {'|'.join(EXPORT_FORMATS)}.")] = "parquet",
        since: Annotated[str | None, typer.Option(
            help="Records at or after this time (YYYY-MM-DD or RFC 3339, UTC).")] = None,
        until: Annotated[str | None, typer.Option(
            help="Records before this time; a date includes that whole day.")] = None,
        intent: Annotated[str | None, typer.Option(help="Only this intent's records.")] = None,
        session: Annotated[str | None, typer.Option(help="Only this session's records.")
                           ] = None,
        retention_months: Annotated[int, typer.Option(
            help="Retention period written to the manifest (EU AI Act Art. 19: at least 6; "
            "PCI DSS 10.5.1: 12).")] = 6,
        verify: Annotated[bool, typer.Option(
            "--verify/--no-verify", help="Verify the whole ledger first (default); the result "
            "goes into the manifest.")] = True,
        force: ForceOption = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the manifest.")] = False,
        root: RootOption = None,
    ) -> None:
        """Export records with the raw ledger segment they came from, the public keys and a
        signed manifest, for auditors (check it with `ledger verify-export DIR`)."""

        def action() -> int:
            options = ExportOptions(out, fmt, since, until, intent, session, force, verify,
                                    retention_months)
            ledger = Ledger.open(root)
            with progress_bars() as progress:
                result = export_ledger(ledger, options, progress)
            manifest = result.manifest
            if as_json:
                print(json.dumps(manifest, indent=2, sort_keys=True))
            else:
                seg = manifest["segment"]
                data = [f for f in manifest["files"] if f["role"] == "data"]
                print(f"exported {manifest['selected_records']} records of ledger "
                      f"{manifest['ledger_id']} to {result.directory}")
                print(f"  segment seqs {seg['first_seq']}..{seg['last_seq']}, "
                      f"{len(data)} data file(s), gaps: {manifest['gaps']['state']}, "
                      f"verification: {manifest['verification']['state']}")
                print(f"  signed by {manifest['signing_key']}; check with: ledger verify-export "
                      f"{result.directory}")
            if manifest["verification"]["state"] == "failed":
                _warn(f"the ledger failed verification: {manifest['verification']['summary']}")
            return OK

        _run(action)

    @app.command(name="verify-export", epilog=EXIT_CODES_HELP)
    def verify_export_cmd(
        directory: Annotated[Path, typer.Argument(help="An export directory.")],
        trusted_key: Annotated[list[str] | None, typer.Option(
            "--trusted-key", help="Key id the manifest must be signed by (repeatable); pin "
            "the organisation's key ids you got out of band.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Check an export on its own: manifest signature, every file's hash and row count,
        the raw segment's chain, and every exported row against the segment. Exit 0 intact,
        1 problems found, 2 could not check."""

        def action() -> int:
            with progress_bars() as progress:
                check = verify_export(
                    directory, trusted_keys=frozenset(trusted_key or ()),
                    progress=None if progress is None else
                    (lambda done, total: progress("verify", done, total)))
            if as_json:
                print(json.dumps(check.to_json(), indent=2, sort_keys=True))
            else:
                print(check.summary())
                for problem in check.problems:
                    print(f"  {problem.path}: {problem.code}: {problem.message}")
            return OK if check.ok else INTEGRITY

        _run(action)


__all__ = ["register"]
