"""``ledger export``: data files, the raw segment they came from, keys, a signed manifest.

Everything is written into a temporary directory beside ``DIR`` and renamed into place at the
end, so a failure leaves nothing half-written. Layout (docs/auditors.md)::

    DIR/manifest.json      what is here, each file's sha256 and rows, filters, queries, gaps,
                           verification at export time, retention (schemas/export/)
    DIR/manifest.sig       base64 Ed25519 signature over the exact bytes of manifest.json
    DIR/segment/agent_trace.jsonl   the raw, contiguous ledger lines the export covers
    DIR/keys/<kid>.json    trusted public keys with validity windows (+ <kid>.pem for openssl)
    DIR/data/...           parquet: ledger_id=…/date=…/part-0.parquet; csv: events.csv;
                           jsonl: records.jsonl; agent-trace: agent-trace.jsonl
    DIR/disclosures.jsonl  only with ``disclose="policy"`` or ``"all"``: the disclosures of the
                           selected records' commitments that the mode lets out (the store's
                           lines as they are); the manifest names the fields

By default an export carries no prompt, command line or file content: format v3 records hold
salted digests of them, and their disclosures stay in the workspace. Records written before
format v3 hold content verbatim; an export that would include one is refused unless asked for
by name (``verbatim``, ``--publish-verbatim-content``).

A filtered export still ships the contiguous segment from its first to its last selected record,
so an auditor can check that what is missing from the data is only what the filters excluded.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ledger._errors import InputError, IntegrityError, NotInitializedError, StorageError
from ledger._evidence.disclosure import (
    COMMITMENT_BYTES,
    DISCLOSE_MODES,
    DiscloseMode,
    disclosed_fields,
    published_disclosures,
    verbatim_records,
)
from ledger._evidence.keys import KeyEntry
from ledger._export.agent_trace import trace_lines
from ledger._export.data import (
    EXPORT_FORMATS,
    ExportFilters,
    ExportFormat,
    file_query,
    parquet_select,
    segment_events,
    trace_rows,
)
from ledger._export.layout import DATA_DIR, DISCLOSURES, KEYS_DIR, MANIFEST, SEGMENT, SIGNATURE
from ledger._export.manifest import MANIFEST_FORMAT, ExportManifest
from ledger._query.engine import complete_extent, sandboxed_connection, snapshot_prefix
from ledger._query.views import ATTRIBUTION_RANGES_MACRO
from ledger._version import __version__
from ledger._workspace import utc_now

if TYPE_CHECKING:
    import duckdb

    from ledger._evidence.ledger import Ledger
    from ledger._evidence.verify import VerifyReport

__all__ = ["ExportOptions", "ExportResult", "export_ledger", "sha256_file"]

# The manifest's segment facts, in the order _segment_facts's query selects them.
_SEGMENT_FACTS: Final = (
    "first_seq",
    "last_seq",
    "first_prev",
    "first_hash",
    "last_hash",
    "records",
)

Progress = Callable[[str, int, int], None]
DEFAULT_RETENTION_MONTHS: Final = 6
RETENTION_BASIS: Final = (
    "EU AI Act Art. 19 and Art. 26(6): logs kept at least 6 months; PCI DSS v4.0 10.5.1 asks "
    "12 months (3 immediately available)"
)
_CHUNK: Final = 8 * 1024 * 1024


class ExportOptions(NamedTuple):
    """What to export and where."""

    out: Path
    format: str = "parquet"
    since: str | None = None
    until: str | None = None
    intent: str | None = None
    session: str | None = None
    force: bool = False
    verify: bool = True
    retention_months: int = DEFAULT_RETENTION_MONTHS
    disclose: DiscloseMode = "none"
    """``none``: digests only; ``policy``: also the selected records' disclosures of the fields
    ``policy`` names, as ``ledger push`` publishes; ``all``: every one of their disclosures."""
    verbatim: bool = False
    """Export records from before format v3, whose content is in the chain verbatim."""
    policy: tuple[str, ...] | None = None
    """The fields ``disclose="policy"`` carries; ``None``: ``hooks.yaml``'s ``disclose:`` of
    the ledger's workspace (what ``ledger push`` follows)."""


class ExportResult(NamedTuple):
    """What was written."""

    directory: Path
    manifest: dict[str, Any]


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, streamed."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def check_export_target(out: Path, *, force: bool) -> None:
    """Refuse an existing target (unless ``force``) or a parent we cannot write into."""
    if out.exists() and not force:
        raise InputError(f"{out} exists; pass --force to replace it")
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} exists and is not a directory")
    parent = out.parent
    if not parent.is_dir():
        raise InputError(f"{parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StorageError(f"cannot write into {parent}: permission denied")


def export_ledger(
    ledger: Ledger, options: ExportOptions, progress: Progress | None = None
) -> ExportResult:
    """Write an export of ``ledger`` (see the module docstring).

    Raises:
        InputError: unknown format, bad filters, existing output without ``force``, no
            record matching the filters.
        NotInitializedError: the ledger is empty.
        StorageError: the output cannot be written.
        KeyNotFoundError: no usable signing key for the manifest.
    """
    if options.format not in EXPORT_FORMATS:
        raise InputError(
            f"unknown format {options.format!r}; use one of: {', '.join(EXPORT_FORMATS)}"
        )
    if not 1 <= options.retention_months <= 1200:
        raise InputError("--retention-months must be between 1 and 1200")
    if options.disclose not in DISCLOSE_MODES:
        raise InputError(f"--disclose {options.disclose!r}: use one of {', '.join(DISCLOSE_MODES)}")
    policy = options.policy
    if options.disclose == "policy" and policy is None:
        from ledger._governance.config import WorkspaceConfig  # noqa: PLC0415

        workspace = ledger.workspace
        policy = WorkspaceConfig(
            workspace.orchestration, workspace.cache_dir, environ=ledger._environ
        ).disclose_policy()
    fields = disclosed_fields(options.disclose, policy or ())
    filters = ExportFilters.parse(options.since, options.until, options.intent, options.session)
    out = options.out.absolute()
    check_export_target(out, force=options.force)
    key = ledger.active_signing_key()  # fail before any work when the manifest cannot be signed
    report = ledger.verify(progress=_phase(progress, "verify")) if options.verify else None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as exc:
        raise StorageError(f"cannot write into {out.parent}: {exc.strerror}") from None
    try:
        manifest = _build(
            ledger,
            tmp,
            fmt=options.format,  # type: ignore[arg-type]
            filters=filters,
            report=report,
            options=options,
            fields=fields,
            signing_kid=key.kid,
            progress=progress,
        )
        payload = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
        ExportManifest.model_validate_json(payload)  # what we sign matches the schema
        (tmp / MANIFEST).write_bytes(payload)
        (tmp / SIGNATURE).write_bytes(base64.b64encode(key.sign(payload)) + b"\n")
        _replace_dir(tmp, out)
    except OSError as exc:
        raise StorageError(f"cannot write the export: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ExportResult(out, manifest)


def _phase(progress: Progress | None, name: str) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda done, total: progress(name, done, total)


def _replace_dir(tmp: Path, out: Path) -> None:
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


def _build(
    ledger: Ledger,
    tmp: Path,
    *,
    fmt: ExportFormat,
    filters: ExportFilters,
    report: VerifyReport | None,
    options: ExportOptions,
    fields: tuple[str, ...] | None,
    signing_kid: str,
    progress: Progress | None,
) -> dict[str, Any]:
    import duckdb  # noqa: PLC0415 -- DuckDB loads with the export, never with the library

    segment = tmp / SEGMENT
    segment.parent.mkdir(parents=True)
    spill = Path(tempfile.mkdtemp(prefix="ledger-export-"))
    con = sandboxed_connection(spill)
    try:
        con.execute(ATTRIBUTION_RANGES_MACRO)
        _write_segment(ledger, con, segment, filters=filters, tmp=tmp, progress=progress)
        _refuse_verbatim(segment, allowed=options.verbatim)
        files = _write_data(con, tmp, fmt=fmt, filters=filters, segment=segment, progress=progress)
        _stage_meta(con, tmp, fmt=fmt, filters=filters, segment=segment)
        facts = _segment_facts(con)
        selected = _scalar(con, "SELECT count(*) FILTER (selected) FROM seg_meta")
        if selected == 0:
            raise InputError("no record matches the filters; nothing exported")
        keys = _write_keys(ledger, con, tmp, signing_kid)
        gaps = _gaps(con, report)
        chosen = {
            int(r[0]) for r in con.execute("SELECT seq FROM seg_meta WHERE selected").fetchall()
        }
    except duckdb.InvalidInputException:
        raise IntegrityError(
            "the ledger holds lines that are not JSON records; run "
            "`ledger verify` (and `ledger repair` for a torn tail)"
        ) from None
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    entries = [
        *files,
        _entry(tmp, SEGMENT, "segment", facts["records"]),
        *(_entry(tmp, path, "key", None) for path in keys["paths"]),
    ]
    if options.disclose != "none":
        lines = _write_disclosures(ledger, segment, chosen, fields, tmp / DISCLOSURES)
        entries.append(_entry(tmp, DISCLOSURES, "disclosures", lines))
    exported_at = utc_now()
    retain_until = _add_months(datetime.now(UTC).date(), options.retention_months)
    verification = _verification(report)
    return {
        "format": MANIFEST_FORMAT,
        "ledger_id": facts["ledger_id"],
        "tool": {"name": "ledger", "version": __version__},
        "exported_at": exported_at,
        "export_format": fmt,
        "filters": filters._asdict(),
        "selected_records": selected,
        "segment": {
            "path": SEGMENT,
            **{k: facts[k] for k in _SEGMENT_FACTS},
        },
        "files": entries,
        "keys": keys["windows"],
        "signing_key": signing_kid,
        "verification": verification,
        "gaps": {"state": "gaps" if gaps else "none", "missing": gaps},
        "retention": {
            "period_months": options.retention_months,
            "retain_until": retain_until.isoformat(),
            "basis": RETENTION_BASIS,
        },
        "complete": not gaps and verification["state"] == "verified",
        "disclose": options.disclose,
        "disclosed_fields": None if fields is None else list(fields),
    }


def _refuse_verbatim(segment: Path, *, allowed: bool) -> None:
    """An export carries no content by default: refuse one whose segment holds records from
    before format v3 (content verbatim) unless ``allowed``."""
    if allowed:
        return
    with segment.open("rb") as handle:
        verbatim = verbatim_records(handle)
    if verbatim:
        raise InputError(
            f"{verbatim} record(s) of the export are from before format v3 and hold prompts, "
            "command lines or file contents verbatim; export them anyway with "
            "--publish-verbatim-content, or narrow the export with --since"
        )


def _write_disclosures(
    ledger: Ledger,
    segment: Path,
    seqs: set[int],
    fields: tuple[str, ...] | None,
    target: Path,
) -> int:
    """Copy the store's lines for the commitments of the records ``seqs`` selects: each
    disclosure of a field ``fields`` names that opens its commitment (as ``ledger push``
    chooses them), and the tombstone of each forgotten one (so a reader says ``[forgotten]``).
    The lines keep their bytes; the count is returned."""
    from ledger._export.segment import segment_records  # noqa: PLC0415

    wanted: set[str] = set()
    for record in segment_records(segment):
        if record.seq in seqs:
            wanted.update(d.decode() for d in COMMITMENT_BYTES.findall(record.line))
    with target.open("wb") as handle:
        return published_disclosures(
            ledger.disclosures, fields, handle, only=wanted, tombstones=True
        )


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:  # noqa: ANN401 -- one value
    row = con.execute(sql).fetchone()
    return None if row is None else row[0]


def _write_segment(
    ledger: Ledger,
    con: duckdb.DuckDBPyConnection,
    segment: Path,
    *,
    filters: ExportFilters,
    tmp: Path,
    progress: Progress | None,
) -> None:
    """Copy the complete lines the export covers: all of them, or from the first to the last
    selected record."""
    path = ledger.file.path
    size, end = complete_extent(path)
    if end == 0:
        raise NotInitializedError("the ledger holds no records; run `ledger init` first")
    if not filters.active:
        _copy_prefix(path, end, segment, progress)
        return
    source = path if end == size else snapshot_prefix(path, end, tmp, 0)
    bounds = con.execute(
        f"SELECT min(seq), max(seq) FROM {segment_events(source)} WHERE {filters.where()}"
    ).fetchone()
    if source != path:
        source.unlink()
    if bounds is None or bounds[0] is None:
        raise InputError("no record matches the filters; nothing exported")
    first, last = int(bounds[0]), int(bounds[1])
    started = False
    with segment.open("wb") as handle:
        for record in ledger.records():
            if not started and record.seq == first:
                started = True
            if started:
                handle.write(record.line + b"\n")
                if record.seq == last:
                    break


def _copy_prefix(path: Path, end: int, target: Path, progress: Progress | None) -> None:
    """Copy the first ``end`` bytes in the kernel (``copy_file_range``; a reflink where the
    file system can), falling back to read/write."""
    with path.open("rb") as src, target.open("wb") as dst:
        done = 0
        while done < end:
            want = min(_CHUNK * 8, end - done)
            try:
                moved = os.copy_file_range(src.fileno(), dst.fileno(), want, done, done)
            except OSError:
                dst.seek(done)
                moved = dst.write(os.pread(src.fileno(), want, done))
            if moved == 0:
                break
            done += moved
            if progress is not None:
                progress("segment", done, end)


def _stage_meta(
    con: duckdb.DuckDBPyConnection,
    tmp: Path,
    *,
    fmt: ExportFormat,
    filters: ExportFilters,
    segment: Path,
) -> None:
    """``seg_meta``: the chain facts of every segment record, in one scan.

    A full Parquet export holds every segment record, so the facts come from its columns
    (fast); anything else scans the segment once.
    """
    if fmt == "parquet" and not filters.active:
        files = "'" + str(tmp / DATA_DIR).replace("'", "''") + "/**/*.parquet'"
        source, selected = f"read_parquet({files}, hive_partitioning = true)", "TRUE"
    else:
        source, selected = segment_events(segment), filters.where()
    con.execute(f"""
        CREATE TEMP TABLE seg_meta AS
        SELECT ledger_id, seq, prev, hash, key,
               CASE WHEN kind = 'key.rotated' THEN body->>'$.new_key' END AS new_key,
               ({selected}) AS selected
        FROM {source}""")


def _segment_facts(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    row = con.execute("""
        SELECT any_value(ledger_id), min(seq), max(seq), arg_min(prev, seq), arg_min(hash, seq),
               arg_max(hash, seq), count(*) FROM seg_meta""").fetchone()
    assert row is not None  # noqa: S101 -- an aggregate always returns one row
    return dict(zip(("ledger_id", *_SEGMENT_FACTS), row, strict=True))


def _entry(
    root: Path,
    relative: str,
    role: str,
    rows: int | None,
    *,
    query: str | None = None,
    partition: dict[str, str] | None = None,
) -> dict[str, Any]:
    path = root / relative
    entry: dict[str, Any] = {
        "path": relative,
        "role": role,
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
        "rows": rows,
    }
    if query is not None:
        entry["query"] = query
    if partition is not None:
        entry["partition"] = partition
    return entry


def _write_data(
    con: duckdb.DuckDBPyConnection,
    tmp: Path,
    *,
    fmt: ExportFormat,
    filters: ExportFilters,
    segment: Path,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    """The data files and their manifest entries (queries name the segment relatively)."""
    data = tmp / DATA_DIR
    data.mkdir()
    if progress is not None:
        progress("data", 0, 1)
    entries: list[dict[str, Any]] = []
    if fmt == "parquet":
        # Flush each partition's rows every 64k rows: DuckDB's default (~0.5M rows per
        # partition) held 2.8 GB for a million records; this stays near a plain COPY's memory.
        con.execute("SET partitioned_write_flush_threshold = 65536")
        con.execute(
            f"COPY ({parquet_select(filters, str(segment))}) TO '{data}' (FORMAT parquet, "
            f"PARTITION_BY (ledger_id, date), FILENAME_PATTERN 'part-{{i}}', "
            f"COMPRESSION zstd)"
        )
        for path in sorted(data.rglob("*.parquet")):
            relative = path.relative_to(tmp).as_posix()
            parts = dict(p.split("=", 1) for p in path.parent.relative_to(data).parts)
            partition = (parts["ledger_id"], parts["date"])
            rows = _scalar(con, f"SELECT count(*) FROM read_parquet('{path}')")
            entries.append(
                _entry(
                    tmp,
                    relative,
                    "data",
                    int(rows),
                    query=file_query(fmt, filters, SEGMENT, partition),
                    partition={"ledger_id": partition[0], "date": partition[1]},
                )
            )
    elif fmt == "csv":
        target = data / "events.csv"
        rows = _scalar(
            con,
            f"COPY ({file_query(fmt, filters, str(segment))}) TO '{target}' "
            f"(FORMAT csv, HEADER true)",
        )
        entries.append(
            _entry(
                tmp,
                f"{DATA_DIR}/events.csv",
                "data",
                int(rows),
                query=file_query(fmt, filters, SEGMENT),
            )
        )
    elif fmt == "jsonl":
        rows = _write_lines(
            data / "records.jsonl",
            selected_lines(con, segment, file_query(fmt, filters, str(segment))),
        )
        entries.append(
            _entry(
                tmp,
                f"{DATA_DIR}/records.jsonl",
                "data",
                rows,
                query=file_query(fmt, filters, SEGMENT),
            )
        )
    else:
        lines = trace_lines(trace_rows(con, file_query(fmt, filters, str(segment))))
        rows = _write_lines(data / "agent-trace.jsonl", lines)
        entries.append(
            _entry(
                tmp,
                f"{DATA_DIR}/agent-trace.jsonl",
                "data",
                rows,
                query=file_query(fmt, filters, SEGMENT),
            )
        )
    if progress is not None:
        progress("data", 1, 1)
    return entries


def selected_lines(
    con: duckdb.DuckDBPyConnection, segment: Path, seq_query: str
) -> Iterator[bytes]:
    """The raw segment lines whose seq the query selects, byte for byte, in segment order."""
    from ledger._export.segment import segment_records  # noqa: PLC0415

    wanted = {int(row[0]) for row in con.execute(seq_query).fetchall()}
    for record in segment_records(segment):
        if record.seq in wanted:
            yield record.line + b"\n"


def _write_lines(path: Path, lines: Iterator[bytes]) -> int:
    count = 0
    with path.open("wb") as handle:
        for line in lines:
            handle.write(line)
            count += 1
    return count


def _write_keys(
    ledger: Ledger, con: duckdb.DuckDBPyConnection, tmp: Path, signing_kid: str
) -> dict[str, Any]:
    """Ship the pinned keys that signed the segment (and the manifest), with their windows."""
    from cryptography.hazmat.primitives.serialization import (  # noqa: PLC0415
        Encoding,
        PublicFormat,
    )

    signed = {
        str(k): (int(a), int(b))
        for k, a, b in con.execute(
            "SELECT key, min(seq), max(seq) FROM seg_meta GROUP BY key"
        ).fetchall()
    }
    keyring = ledger.keyring()
    wanted = set(signed) | {signing_kid}
    rotated = con.execute(
        "SELECT DISTINCT new_key FROM seg_meta WHERE new_key IS NOT NULL"
    ).fetchall()
    wanted |= {str(r[0]) for r in rotated if r[0]}
    directory = tmp / KEYS_DIR
    directory.mkdir()
    windows: list[dict[str, Any]] = []
    paths: list[str] = []
    for kid in sorted(wanted):
        entry: KeyEntry | None = keyring.get(kid)
        if entry is None:
            continue  # not pinned: its records fail verification, which the manifest says
        first, last = signed.get(kid, (None, None))
        (directory / f"{kid}.json").write_text(
            json.dumps(entry.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        (directory / f"{kid}.pem").write_bytes(
            entry.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
        )
        paths += [f"{KEYS_DIR}/{kid}.json", f"{KEYS_DIR}/{kid}.pem"]
        windows.append(
            {
                "kid": kid,
                "path": f"{KEYS_DIR}/{kid}.json",
                "created": entry.created,
                "first_seq_signed": first,
                "last_seq_signed": last,
                "retired_after_seq": entry.retired_after_seq,
                "revoked_from_seq": entry.revoked_from_seq,
            }
        )
    return {"paths": paths, "windows": windows}


def _gaps(con: duckdb.DuckDBPyConnection, report: VerifyReport | None) -> list[dict[str, Any]]:
    runs = con.execute("""
        SELECT prev_seq + 1, seq - 1 FROM (
            SELECT seq, lag(seq) OVER (ORDER BY seq) AS prev_seq FROM (SELECT DISTINCT seq
            FROM seg_meta))
        WHERE seq - prev_seq > 1 ORDER BY 1""").fetchall()
    reported = {p.seq for p in report.problems if p.code == "seq-gap"} if report else set()
    return [
        {
            "from_seq": int(a),
            "to_seq": int(b),
            "reason": (
                "not in the ledger file: lost or deleted before the export"
                + ("; `ledger verify` reports it as seq-gap" if a in reported else "")
            ),
        }
        for a, b in runs
    ]


def _verification(report: VerifyReport | None) -> dict[str, Any]:
    if report is None:
        return {
            "state": "not-run",
            "summary": "not verified at export time (--no-verify)",
            "records": None,
            "head_seq": None,
            "head_hash": None,
            "problem_count": None,
        }
    return {
        "state": "verified" if report.ok else "failed",
        "summary": report.summary(),
        "records": report.records,
        "head_seq": report.head_seq,
        "head_hash": report.head_hash,
        "problem_count": report.problem_count,
    }
