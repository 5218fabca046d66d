"""What each export format holds, as fixed SQL over the raw segment.

Export and ``verify-export`` share these definitions: the auditor's check regenerates every data
file's rows from the segment with the same query the manifest records, and never runs SQL taken
from the manifest itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, get_args

from ledger._errors import InputError
from ledger._query.engine import ndjson_scan
from ledger._query.views import events_relation

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "EXPORT_FORMATS",
    "ExportFilters",
    "ExportFormat",
    "base_select",
    "parse_time",
    "segment_events",
    "trace_rows",
]

ExportFormat = Literal["agent-trace", "jsonl", "csv", "parquet"]
EXPORT_FORMATS: Final = get_args(ExportFormat)

#: Columns of the csv and parquet data files (body is the record body as JSON text).
DATA_COLUMNS: Final = (
    "ledger_id",
    "seq",
    "ts",
    "kind",
    "client",
    "session",
    "agent",
    "model",
    "key",
    "hash",
    "prev",
    "body",
)
CSV_TYPES: Final = {
    "ledger_id": "VARCHAR",
    "seq": "BIGINT",
    "ts": "TIMESTAMP",
    "kind": "VARCHAR",
    "client": "VARCHAR",
    "session": "VARCHAR",
    "agent": "VARCHAR",
    "model": "VARCHAR",
    "key": "VARCHAR",
    "hash": "VARCHAR",
    "prev": "VARCHAR",
    "body": "VARCHAR",
}


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def parse_time(text: str, *, end_of_day: bool = False) -> datetime:
    """An RFC 3339 time or a YYYY-MM-DD date as naive UTC; a bare date with ``end_of_day``
    means the start of the next day (``--until 2026-11-20`` includes that whole day).

    Raises:
        InputError: not a time.
    """
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"{text!r} is not a date (YYYY-MM-DD) or an RFC 3339 time") from None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    if end_of_day and len(text.strip()) == 10:
        value += timedelta(days=1)
    return value


def _format_time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ExportFilters(NamedTuple):
    """The record filters of an export; None means "not filtered"."""

    since: str | None = None
    until: str | None = None
    intent: str | None = None
    session: str | None = None

    @classmethod
    def parse(
        cls, since: str | None, until: str | None, intent: str | None, session: str | None
    ) -> ExportFilters:
        """Normalized filters (times in RFC 3339 UTC).

        Raises:
            InputError: a bad time, or ``since`` after ``until``.
        """
        start = parse_time(since) if since else None
        end = parse_time(until, end_of_day=True) if until else None
        if start is not None and end is not None and start >= end:
            raise InputError(f"--since {since} is not before --until {until}")
        return cls(
            _format_time(start) if start else None,
            _format_time(end) if end else None,
            intent or None,
            session or None,
        )

    @property
    def active(self) -> bool:
        """Some filter is set."""
        return any(self)

    def where(self, alias: str = "") -> str:
        """The SQL predicate over the ``events`` columns (TRUE when not filtered); ``alias``
        qualifies the columns (``"p."``)."""
        terms = []
        if self.since:
            terms.append(f"{alias}ts >= TIMESTAMP {_quote(self.since.rstrip('Z'))}")
        if self.until:
            terms.append(f"{alias}ts < TIMESTAMP {_quote(self.until.rstrip('Z'))}")
        if self.intent:
            terms.append(
                f"coalesce({alias}body->>'$.data.intent_id', "
                f"{alias}body->>'$.intent_id') = {_quote(self.intent)}"
            )
        if self.session:
            terms.append(
                f"coalesce({alias}session, {alias}body->>'$.session') = {_quote(self.session)}"
            )
        return " AND ".join(terms) or "TRUE"


def segment_events(segment: Path | str) -> str:
    """The ``events`` relation over a segment file (explicit columns, body as JSON)."""
    return events_relation(ndjson_scan([Path(segment)]))


def base_select(events: str, filters: ExportFilters) -> str:
    """The selected records with the csv/parquet columns plus the ``date`` partition."""
    return (
        f"SELECT ledger_id, seq, ts, kind, client, session, agent, model, key, hash, prev, "
        f"CAST(body AS VARCHAR) AS body, strftime(ts, '%Y-%m-%d') AS date "
        f"FROM {events} WHERE {filters.where()}"
    )


def parquet_select(filters: ExportFilters, segment: str) -> str:
    """The rows of every Parquet file, with the partition columns PARTITION_BY consumes (in
    segment order: DuckDB preserves insertion order, and sorting would hold every row in
    memory)."""
    return base_select(segment_events(segment), filters)


def file_query(
    fmt: ExportFormat,
    filters: ExportFilters,
    segment: str,
    partition: tuple[str, str] | None = None,
) -> str:
    """The exact query (over ``segment``, a path as the reader sees it) behind a data file."""
    events = segment_events(segment)
    if fmt == "parquet" and partition is not None:
        return (
            f"SELECT * EXCLUDE (ledger_id, date) FROM ({base_select(events, filters)}) "
            f"WHERE ledger_id = {_quote(partition[0])} AND date = {_quote(partition[1])} "
            f"ORDER BY seq"
        )
    if fmt in ("csv", "parquet"):
        return f"SELECT * EXCLUDE (date) FROM ({base_select(events, filters)}) ORDER BY seq"
    if fmt == "jsonl":
        return f"SELECT seq FROM {events} WHERE {filters.where()} ORDER BY seq"
    return trace_sql(events, filters)


def trace_sql(events: str, filters: ExportFilters) -> str:
    """hook.post records with attributed ranges, with the pre-hook decision of the call."""
    return f"""
    WITH seg AS (SELECT * FROM {events}),
         pre AS (SELECT ledger_id, body->>'$.invocation' AS invocation,
                        any_value(body->>'$.decision') AS decision
                 FROM seg WHERE kind = 'hook.pre' GROUP BY ALL)
    SELECT p.ledger_id, p.seq, strftime(p.ts, '%Y-%m-%dT%H:%M:%S.%fZ') AS ts, p.hash,
           p.client, p.session, p.model, p.body->>'$.git_head' AS git_head,
           p.body->>'$.data.intent_id' AS intent, p.body->>'$.invocation' AS invocation,
           p.body->>'$.tool' AS tool, CAST(p.body->'$.edit' AS VARCHAR) AS edit,
           attribution_ranges(p.v, p.body) AS ranges, pre.decision
    FROM seg p LEFT JOIN pre
      ON pre.ledger_id = p.ledger_id AND pre.invocation = p.body->>'$.invocation'
    WHERE p.kind = 'hook.post' AND len(attribution_ranges(p.v, p.body)) > 0
      AND ({filters.where("p.")})
    ORDER BY p.seq
    """


def trace_rows(con: duckdb.DuckDBPyConnection, sql: str) -> Iterator[dict[str, Any]]:
    """Rows of :func:`trace_sql` as dicts, streamed."""
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description or []]
    while batch := cursor.fetchmany(4096):
        for row in batch:
            yield dict(zip(names, row, strict=True))
