"""``ledger query``, ``ledger export``, ``ledger verify-export`` and ``ledger report``.

Registered on the app by :func:`register`; every command is a thin shell over ``ledger``'s
public API.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from cli._exit import EXIT_CODES_HELP, INTEGRITY, OK
from cli._options import ForceOption, RootOption, run_action
from cli._progress import progress_bars
from ledger import (
    DEFAULT_QUERY_MEMORY,
    DEFAULT_QUERY_TIMEOUT,
    EXPORT_FORMATS,
    QUERY_FORMATS,
    ExportOptions,
    InputError,
    Ledger,
    LedgerSource,
    QuerySession,
    StorageError,
    Verification,
    Workspace,
    build_report,
    discover_sources,
    export_ledger,
    fetched_sources,
    find_root,
    render_report_html,
    verify_export,
    view_schema_json,
    view_schema_text,
)

_run = run_action


def _warn(message: str) -> None:
    print(f"ledger: warning: {message}", file=sys.stderr)


def _sources(root: str | None, ledgers: str | None) -> list[LedgerSource]:
    if ledgers is not None and root is not None:
        raise InputError("pass either --root or --ledgers, not both")
    return discover_sources(ledgers) if ledgers is not None else [LedgerSource.workspace(root)]


def _with_fetched(
    stack: contextlib.ExitStack, root: str | None, ledgers: str | None
) -> tuple[list[LedgerSource], list[str]]:
    """``--fetched``: this workspace's own ledger (when it has one) and the teammates' ledgers
    ``ledger fetch`` kept, each verified here; one that does not verify is left out, with a
    warning naming the command that fetches it again (printed, and returned)."""
    if ledgers is not None:
        raise InputError("pass --fetched with the workspace (--root), not --ledgers")
    workspace = Workspace(find_root(root))
    own = [LedgerSource.workspace(workspace.root)] if workspace.ledger_path.exists() else []
    fetched, warnings = stack.enter_context(fetched_sources(workspace.root))
    for warning in warnings:
        _warn(warning)
    if not fetched:
        _warn("no teammate's ledger is fetched here (run `ledger fetch` first)")
    if not own + fetched:
        raise InputError(
            "no ledger to read here: no ledger of this clone's own (`ledger init`) and no "
            "teammate's that verifies (`ledger fetch`)"
        )
    return own + fetched, warnings


_FETCHED_HELP = (
    "the teammates' ledgers `ledger fetch` kept, each verified here, with their fetched "
    "disclosures (rows carry ledger_id; one that does not verify is left out, with a warning)."
)


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
    'GROUP BY code"\n\n'
)


def query(
    sql: Annotated[str | None, typer.Argument(help="One SELECT statement.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", help=f"Output format: {'|'.join(QUERY_FORMATS)}.")
    ] = "table",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the result to this file (required for parquet)."),
    ] = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the views and their columns, then exit.")
    ] = False,
    ledgers: Annotated[
        str | None,
        typer.Option(
            "--ledgers",
            help="Glob of workspaces or export directories to query together "
            "(rows carry ledger_id).",
        ),
    ] = None,
    fetched: Annotated[
        bool,
        typer.Option(
            "--fetched",
            help=f"Also query {_FETCHED_HELP}",
        ),
    ] = False,
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Verify each ledger first (default).")
    ] = True,
    force: ForceOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --schema: print the schema as JSON.")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            envvar="LEDGER_QUERY_TIMEOUT",
            help="Stop the query after this many seconds.",
        ),
    ] = DEFAULT_QUERY_TIMEOUT,
    memory_limit: Annotated[
        str,
        typer.Option(
            "--memory-limit",
            envvar="LEDGER_QUERY_MEMORY",
            help="DuckDB's memory limit (e.g. 512MB, 4GB); it spills at most 4x that to disk.",
        ),
    ] = DEFAULT_QUERY_MEMORY,
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
            raise InputError(f"unknown format {fmt!r}; use one of: {', '.join(QUERY_FORMATS)}")
        with contextlib.ExitStack() as stack:
            sources = _with_fetched(stack, root, ledgers)[0] if fetched else _sources(root, ledgers)
            _check_sources(sources, verify)
            with QuerySession(sources, sql, timeout=timeout, memory_limit=memory_limit) as session:
                for warning in session.warnings:
                    _warn(warning)
                session.output(fmt, out, force=force)  # type: ignore[arg-type]
        return OK

    _run(action)


def export_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to create.")],
    fmt: Annotated[
        str, typer.Option("--format", help=f"Data format: {'|'.join(EXPORT_FORMATS)}.")
    ] = "parquet",
    since: Annotated[
        str | None,
        typer.Option(help="Records at or after this time (YYYY-MM-DD or RFC 3339, UTC)."),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Records before this time; a date includes that whole day.")
    ] = None,
    intent: Annotated[str | None, typer.Option(help="Only this intent's records.")] = None,
    session: Annotated[str | None, typer.Option(help="Only this session's records.")] = None,
    retention_months: Annotated[
        int,
        typer.Option(
            help="Retention period written to the manifest (EU AI Act Art. 19: at least 6; "
            "PCI DSS 10.5.1: 12)."
        ),
    ] = 6,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify/--no-verify",
            help="Verify the whole ledger first (default); the result goes into the manifest.",
        ),
    ] = True,
    disclose: Annotated[
        str,
        typer.Option(
            "--disclose",
            help="none: digests only, no prompt, command or file content (default); policy: "
            "also the disclosures of the fields hooks.yaml's disclose: names, as `ledger push` "
            "publishes them; all: every disclosure of the selected records (disclosures.jsonl; "
            "secrets are never in them).",
        ),
    ] = "none",
    publish_verbatim_content: Annotated[
        bool,
        typer.Option(
            "--publish-verbatim-content",
            help="Export records from before format v3 too, whose content is in the chain "
            "verbatim (refused without it).",
        ),
    ] = False,
    force: ForceOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest.")] = False,
    root: RootOption = None,
) -> None:
    """Export records with the raw ledger segment they came from, the public keys and a
    signed manifest, for auditors (check it with `ledger verify-export DIR`). The export
    carries no prompt, command line or file content unless --disclose policy or all."""

    def action() -> int:
        options = ExportOptions(
            out,
            fmt,
            since,
            until,
            intent,
            session,
            force,
            verify,
            retention_months,
            disclose,  # type: ignore[arg-type]  # export_ledger names the modes when it is not one
            publish_verbatim_content,
        )
        ledger = Ledger.open(root)
        with progress_bars() as progress:
            result = export_ledger(ledger, options, progress)
        manifest = result.manifest
        if as_json:
            print(json.dumps(manifest, indent=2, sort_keys=True))
        else:
            seg = manifest["segment"]
            data = [f for f in manifest["files"] if f["role"] == "data"]
            print(
                f"exported {manifest['selected_records']} records of ledger "
                f"{manifest['ledger_id']} to {result.directory}"
            )
            print(
                f"  segment seqs {seg['first_seq']}..{seg['last_seq']}, "
                f"{len(data)} data file(s), gaps: {manifest['gaps']['state']}, "
                f"verification: {manifest['verification']['state']}"
            )
            carried = [f for f in manifest["files"] if f["role"] == "disclosures"]
            fields = manifest.get("disclosed_fields")
            named = "every field" if fields is None else ", ".join(fields) or "no field"
            print(
                "  content: "
                + (
                    f"{carried[0]['rows']} disclosure line(s) in {carried[0]['path']} "
                    f"(--disclose {manifest['disclose']}: {named})"
                    if carried
                    else "none (digests only; --disclose policy|all includes the disclosures)"
                )
            )
            print(
                f"  signed by {manifest['signing_key']}; check with: ledger verify-export "
                f"{result.directory}"
            )
        if manifest["verification"]["state"] == "failed":
            _warn(f"the ledger failed verification: {manifest['verification']['summary']}")
        return OK

    _run(action)


def verify_export_cmd(
    directory: Annotated[Path, typer.Argument(help="An export directory.")],
    trusted_key: Annotated[
        list[str] | None,
        typer.Option(
            "--trusted-key",
            help="Key id the manifest must be signed by (repeatable); pin "
            "the organisation's key ids you got out of band.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check an export on its own: manifest signature, every file's hash and row count,
    the raw segment's chain, every exported row against the segment, and every disclosure
    it carries against its commitment. Exit 0 intact, 1 problems found, 2 could not check."""

    def action() -> int:
        with progress_bars() as progress:
            check = verify_export(
                directory,
                trusted_keys=frozenset(trusted_key or ()),
                progress=None
                if progress is None
                else (lambda done, total: progress("verify", done, total)),
            )
        if as_json:
            print(json.dumps(check.to_json(), indent=2, sort_keys=True))
        else:
            print(check.summary())
            for problem in check.problems:
                print(f"  {problem.path}: {problem.code}: {problem.message}")
        return OK if check.ok else INTEGRITY

    _run(action)


def report(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Also write DIR/report.html (self-contained, no network)."
        ),
    ] = None,
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option(
            "--checkpoint", help="Stored checkpoint to compare (repeatable; with --root)."
        ),
    ] = None,
    ledgers: Annotated[
        str | None,
        typer.Option(
            "--ledgers", help="Glob of workspaces or export directories to report on together."
        ),
    ] = None,
    fetched: Annotated[
        bool, typer.Option("--fetched", help=f"Also report on {_FETCHED_HELP}")
    ] = False,
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Verify each ledger (default).")
    ] = True,
    force: ForceOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report data.")] = False,
    root: RootOption = None,
    range_spec: Annotated[
        str | None,
        typer.Option("--range", help="Report a git range as `ledger review` sees it (BASE..HEAD)."),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by", help="With --range: chart the shares by week, intent, model, client or author."
        ),
    ] = None,
) -> None:
    """Summarise decisions, denials, human approvals, sessions, files and verification;
    --out DIR adds a report.html with charts for reviewers."""

    def action() -> int:
        if range_spec is not None:
            from cli._review import review_report  # noqa: PLC0415

            return review_report(
                range_spec, by=by, out=out, force=force, as_json=as_json, root=root
            )
        with contextlib.ExitStack() as stack:
            sources, left_out = (
                _with_fetched(stack, root, ledgers) if fetched else (_sources(root, ledgers), [])
            )
            if out is not None:
                check_report_dir(out, force=force)
            verifications, checkpoints = _report_checks(sources, root, checkpoint, verify)
            with progress_bars() as progress:
                data = build_report(
                    sources,
                    verifications=verifications,
                    checkpoints=checkpoints,
                    progress=progress,
                    left_out=left_out,
                )
        if out is not None:
            write_report_dir(out, render_report_html(data))
        if as_json:
            print(json.dumps(data, indent=2, sort_keys=True, default=str))
        else:
            for line in report_text(data):
                print(line)
            if out is not None:
                print(f"\nwrote {out / 'report.html'}")
        return OK

    _run(action)


def register(app: typer.Typer) -> None:
    """Add the commands of this module to ``app``."""
    views = "\n\n".join(view_schema_text(compact=True).splitlines())
    app.command(
        help=f"{QUERY_HELP}Views and their columns (types: --schema):\n\n{views}",
        epilog=EXIT_CODES_HELP,
    )(query)
    app.command(name="export", epilog=EXIT_CODES_HELP)(export_cmd)
    app.command(name="verify-export", epilog=EXIT_CODES_HELP)(verify_export_cmd)
    app.command(epilog=EXIT_CODES_HELP)(report)


def _report_checks(
    sources: list[LedgerSource], root: str | None, checkpoint: list[Path] | None, verify: bool
) -> tuple[list[Verification] | None, list[dict[str, object]]]:
    if checkpoint:
        if len(sources) != 1:
            raise InputError("--checkpoint compares one workspace: use it with --root")
        stored = []
        for path in checkpoint:
            try:
                stored.append((str(path), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                raise StorageError(f"cannot read checkpoint {path}: {exc}") from None
        result = Ledger.open(root).verify(checkpoints=stored)
        state: Literal["verified", "failed"] = "verified" if result.ok else "failed"
        return (
            [Verification(state, result.summary())],
            [{"name": c.name, "ok": c.ok, "message": c.message} for c in result.checkpoints],
        )
    if not verify:
        return None, []
    return [source.verify() for source in sources], []


def check_report_dir(out: Path, *, force: bool) -> None:
    """Refuse an existing output directory unless ``force``."""
    if out.exists() and not force:
        raise InputError(f"{out} exists; pass --force to replace its report.html")
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} exists and is not a directory")


def write_report_dir(out: Path, page: str) -> None:
    """Write ``out/report.html`` through a temporary file (nothing half-written)."""
    import os  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    try:
        out.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".report.", suffix=".tmp", dir=out)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(page)
        Path(name).chmod(0o644)
        Path(name).replace(out / "report.html")
    except OSError as exc:
        raise StorageError(f"cannot write {out / 'report.html'}: {exc.strerror or exc}") from None


def report_text(data: dict[str, object]) -> list[str]:
    """The terminal form of the report."""
    from ledger import format_table  # noqa: PLC0415

    def table(rows: object, columns: list[str]) -> list[str]:
        items = rows if isinstance(rows, list) else []
        return list(format_table(columns, [[r.get(c) for c in columns] for r in items]))

    overview = data["overview"]
    assert isinstance(overview, dict)  # noqa: S101 -- build_report's shape
    lines = [
        f"ledger report: {overview['records']} records, {overview['first_ts']} .. "
        f"{overview['last_ts']}"
    ]
    lines += [
        f"  {item['label']}: {item['verification']}: {item['summary']}"
        for item in data["ledgers"]  # type: ignore[attr-defined]
    ]
    lines += [
        f"  checkpoint {cp['name']}: {'ok' if cp['ok'] else 'FAILED'}: {cp['message']}"
        for cp in data["checkpoints"]  # type: ignore[attr-defined]
    ]
    lines += [f"  left out: {why}" for why in data.get("left_out") or []]  # type: ignore[attr-defined]
    sections = [
        ("Decisions by code", "decisions_by_code", ["decision", "code", "n"]),
        ("Per intent", "per_intent", ["intent", "calls", "denials", "asks", "codes"]),
        (
            "Destructive commands and human approvals",
            "destructive",
            ["ts", "session", "intent", "paths", "outcome"],
        ),
        (
            "Sessions",
            "sessions",
            ["session", "client", "models", "intents", "calls", "denials", "asks", "lines_written"],
        ),
        ("Most-touched files", "top_files", ["path", "writes", "lines_written", "sessions"]),
        (
            f"Lines by status per directory ({data['lines_basis']})",
            "lines_by_directory",
            ["directory", "agent", "human", "unknown"],
        ),
    ]
    for title, key, columns in sections:
        lines += ["", title, *table(data[key], columns)]
    return lines


__all__ = ["register"]


def demo_finale(workspace: Path, base: Path, environ: dict[str, str]) -> None:
    """The end of ``ledger demo``: a query, a report and an export that verify-export accepts."""
    print("\n== ledger query  (DuckDB over the ledger, locked: it can read nothing else)")
    sql = "SELECT decision, code, count(*) AS n FROM decisions GROUP BY ALL ORDER BY n DESC, code"
    print(f"  {sql}")
    with QuerySession([LedgerSource.workspace(workspace, environ=environ)], sql) as session:
        from ledger import format_table  # noqa: PLC0415

        relation = session.run()
        for line in format_table(relation.columns, relation.fetchall()):
            print(f"  {line}")
    source = LedgerSource.workspace(workspace, environ=environ)
    data = build_report([source], verifications=[source.verify()])
    write_report_dir(base / "report", render_report_html(data))
    print(f"\n== ledger report --out {base / 'report'}  (open report.html in a browser)")
    print(
        f"  {len(data['sessions'])} sessions, "
        f"{sum(r['n'] for r in data['decisions_by_code'] if r['decision'] == 'deny')} denials"
    )
    out = base / "export"
    ledger = Ledger.open(workspace, environ=environ)
    result = export_ledger(ledger, ExportOptions(out, "agent-trace"))
    print(f"\n== ledger export --format agent-trace --out {out}")
    print(
        f"  {result.manifest['selected_records']} records, segment seqs "
        f"{result.manifest['segment']['first_seq']}..{result.manifest['segment']['last_seq']}"
        f", signed by {result.manifest['signing_key']}"
    )
    print(f"\n== ledger verify-export {out}  (what an auditor runs, without the workspace)")
    print(f"  {verify_export(out).summary()}")
