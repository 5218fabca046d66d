"""``ledger query``: one read-only SQL statement over the ledger's JSONL, in a locked DuckDB.

The JSONL stays the only source of truth; DuckDB reads it with ``read_ndjson`` and explicit
columns (``body`` as ``JSON``, never auto-detected). The sandbox follows the measured recipe of
findings §5, because an allow-listed path is *writable* too (``COPY … TO '<ledger>'`` truncated a
ledger with the lock on):

1. load what the statement needs into in-memory tables (nothing is allow-listed, ever);
2. turn extension auto-install and auto-load off;
3. ``enable_external_access = false``;
4. ``lock_configuration = true``;
5. accept exactly one statement, of type SELECT.

Spilling goes to a private temporary directory outside the workspace (DuckDB's default for an
in-memory database is ``.tmp`` under the *current directory*), removed on close.

A query ends by itself: ``timeout`` seconds after the session opens a timer thread interrupts
the connection (``DuckDBPyConnection.interrupt``; a recursive CTE that never ends stops there),
and ``memory_limit`` caps DuckDB's memory (and four times that its spill directory). Each ends
in a one-line :class:`~ledger.InputError`, like every other error of a statement: DuckDB's
errors surface when the relation is *fetched*, so :meth:`QuerySession.output` translates them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, NamedTuple

from ledger._errors import InputError, NotInitializedError, StorageError
from ledger._query.output import OutputFormat, write_result
from ledger._query.views import (
    ATTRIBUTION_RANGES_MACRO,
    RAW_COLUMNS,
    SqlView,
    events_relation,
    get_view,
    registered_views,
)

if TYPE_CHECKING:
    import duckdb

    from ledger._query.sources import LedgerSource

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TIMEOUT",
    "QuerySession",
    "complete_extent",
    "lock_down",
    "ndjson_scan",
    "one_line",
    "sandboxed_connection",
    "snapshot_prefix",
]

#: ``ledger query``'s default limits: a query is for answers in seconds, not a batch job
#: (``--timeout``/``$LEDGER_QUERY_TIMEOUT``, ``--memory-limit``/``$LEDGER_QUERY_MEMORY``).
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_MEMORY_LIMIT: Final = "2GB"
_TAIL_WINDOW: Final = 1024 * 1024
#: Records are at most 4 MiB (MAX_RECORD_BYTES); DuckDB's default object limit is 16 MiB.
_MAX_OBJECT: Final = 16 * 1024 * 1024


def one_line(error: BaseException) -> str:
    """DuckDB's message on one line (it wraps with newlines and LINE markers)."""
    text = " ".join(str(error).split())
    return text if len(text) <= 500 else text[:499] + "…"


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def ndjson_scan(paths: Sequence[Path], *, ignore_errors: bool = False) -> str:
    """A ``read_ndjson`` relation over ``paths`` with the record columns declared."""
    columns = ", ".join(f"{_sql_string(k)}: {_sql_string(v)}" for k, v in RAW_COLUMNS.items())
    files = ", ".join(_sql_string(str(p)) for p in paths)
    return (
        f"read_ndjson([{files}], columns={{{columns}}}, maximum_object_size={_MAX_OBJECT}"
        f", ignore_errors={'true' if ignore_errors else 'false'})"
    )


def complete_extent(path: Path) -> tuple[int, int]:
    """``(size, end)``: the file's size and the offset just after its last newline."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            end = size
            while end > 0:
                start = max(0, end - _TAIL_WINDOW)
                handle.seek(start)
                cut = handle.read(end - start).rfind(b"\n")
                if cut >= 0:
                    return size, start + cut + 1
                end = start
            return size, 0
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None


def snapshot_prefix(path: Path, end: int, directory: Path, index: int) -> Path:
    """A private copy of the first ``end`` bytes (complete lines only)."""
    target = directory / f"snapshot-{index}.jsonl"
    with path.open("rb") as src, target.open("wb") as dst:
        remaining = end
        while remaining > 0:
            chunk = src.read(min(remaining, 8 * 1024 * 1024))
            if not chunk:
                break
            dst.write(chunk)
            remaining -= len(chunk)
    return target


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """Steps 2-4 of the recipe, in the measured order. Irreversible for this connection."""
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def sandboxed_connection(
    temp_dir: Path, memory_limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory database that spills only into ``temp_dir`` (not yet locked), with
    at most ``memory_limit`` of memory and four times that on disk.

    Raises:
        InputError: ``memory_limit`` is not a size DuckDB reads (``512MB``, ``2GB``).
    """
    import duckdb  # noqa: PLC0415

    con = duckdb.connect(":memory:")
    con.execute(f"SET temp_directory = {_sql_string(str(temp_dir))}")
    if memory_limit is not None:
        try:
            con.execute("SET memory_limit = ?", [memory_limit])
            limit = con.execute("SELECT current_setting('memory_limit')").fetchone()
            con.execute(
                "SET max_temp_directory_size = ?",
                [_times_four(str(limit[0]) if limit else memory_limit)],
            )
        except duckdb.Error as exc:
            con.close()
            raise InputError(f"memory limit {memory_limit!r}: {one_line(exc)}") from None
    return con


def _times_four(size: str) -> str:
    """``"1.8 GiB"`` (DuckDB's spelling of a limit) times four, in a spelling it reads back."""
    number, _, unit = size.partition(" ")
    try:
        return f"{float(number) * 4:.1f} {unit}".strip()
    except ValueError:
        return size


class _Analysis(NamedTuple):
    tables: frozenset[str] | None  # names used as tables (None: unknown, load every view)
    columns: frozenset[str] | None  # names used as columns (None: all of them)


def _analyze(con: duckdb.DuckDBPyConnection, sql: str) -> _Analysis:
    """The tables and columns a statement could use, from DuckDB's own parse tree.

    ``json_serialize_sql`` parses without binding (``get_table_names`` binds, and so touches
    files named in table functions). Columns: column references and ``USING`` columns; a ``*``,
    ``COLUMNS(...)``, a NATURAL join or a whole row used as a value means "all". Over-
    approximating only loads more; a miss is caught by the binder and retried in full.
    """
    import json  # noqa: PLC0415

    try:
        found = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
        tree = json.loads(found[0]) if found else {"error": True}
    except Exception:  # noqa: BLE001 -- any failure only means "load everything"
        return _Analysis(None, None)
    if tree.get("error"):
        return _Analysis(None, None)
    tables: set[str] = set()
    columns: set[str] | None = set()
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("class")
        if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str):
            tables.add(node["table_name"].lower())
        if kind == "STAR" or node.get("ref_type") == "NATURAL":
            columns = None
        if columns is not None:
            if kind == "COLUMN_REF":
                columns.update(str(n).lower() for n in node.get("column_names", []))
            columns.update(str(n).lower() for n in node.get("using_columns") or [])
        stack.extend(node.values())
    if columns is not None and columns & tables:  # a whole row used as a value
        columns = None
    return _Analysis(frozenset(tables), None if columns is None else frozenset(columns))


class QuerySession:
    """A locked, in-memory DuckDB holding the views one statement needs.

    Use as a context manager; :meth:`run` returns a DuckDB relation over the locked connection.

    Args:
        sources: the ledgers to query (their rows carry ``ledger_id``).
        sql: the statement.

        timeout: seconds until the statement is interrupted (``None``: never).
        memory_limit: DuckDB's memory limit (``None``: DuckDB's default, 80% of RAM).

    Raises:
        InputError: not exactly one statement, not a SELECT, a parse error, SQL that is not
            text (invalid UTF-8, NUL), or a file or extension access the sandbox refuses.
        NotInitializedError: every source is empty.
    """

    def __init__(
        self,
        sources: Sequence[LedgerSource],
        sql: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
    ) -> None:
        if not sources:
            raise InputError("no ledger to query")
        if timeout is not None and not timeout > 0:
            raise InputError(f"the time limit must be a positive number of seconds, not {timeout}")
        self.sources = list(sources)
        self.warnings: list[str] = []
        self._unknown: list[str] = []
        self._columns: frozenset[str] | None = None
        self._memory_limit = memory_limit
        self._timeout = timeout
        self._timed_out = False
        self._active: duckdb.DuckDBPyConnection | None = None
        self._temp = Path(tempfile.mkdtemp(prefix="ledger-query-"))
        self.con: duckdb.DuckDBPyConnection | None = None
        self._closed = threading.Event()
        self._timer: threading.Thread | None = None
        if timeout is not None:
            self._timer = threading.Thread(target=self._watch, name="ledger-query-timer")
            self._timer.daemon = True
            self._timer.start()
        import duckdb  # noqa: PLC0415

        try:
            self.statement, self._views = self._check(sql)
            self.con = self._load(self._views)
            lock_down(self.con)
        except duckdb.Error as exc:  # the limits, while the ledger loads
            self.close()
            raise self._ended(exc) from None
        except BaseException:
            self.close()
            raise

    def _watch(self) -> None:
        """The timer thread: once the time is up, interrupt the session's connection every
        50 ms until the session closes. Once is not enough: an interrupt that lands between
        two statements is lost, and the next one would run unbounded."""
        assert self._timeout is not None  # noqa: S101 -- started only with a timeout
        if self._closed.wait(self._timeout):
            return
        self._timed_out = True
        while not self._closed.is_set():
            active = self._active
            if active is not None:
                with contextlib.suppress(Exception):  # closed meanwhile: nothing to stop
                    active.interrupt()
            self._closed.wait(0.05)

    def _connect(self) -> duckdb.DuckDBPyConnection:
        """A sandboxed connection with the session's limits, the one the timer interrupts."""
        self._active = sandboxed_connection(self._temp, self._memory_limit)
        return self._active

    def _ended(self, error: BaseException) -> InputError:
        """The one-line error for a statement DuckDB stopped (or refused)."""
        import duckdb  # noqa: PLC0415

        if self._timed_out:
            return InputError(
                f"the query ran longer than {self._timeout:g} s and was stopped; narrow it, "
                "or allow more with --timeout SECONDS"
            )
        if isinstance(error, duckdb.OutOfMemoryException):
            return InputError(
                f"the query needs more than {self._memory_limit} of memory and was stopped; "
                "narrow it, or allow more with --memory-limit SIZE"
            )
        return InputError(one_line(error))

    def _check(self, sql: str) -> tuple[str, list[str]]:
        """Parse on a locked, empty connection: one SELECT, and the views it names."""
        import duckdb  # noqa: PLC0415

        if "\0" in sql:
            raise InputError("the SQL contains a NUL character")
        try:
            sql.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were not UTF-8, kept as surrogates (PEP 383)
            raise InputError("the SQL is not valid UTF-8 text") from None
        scratch = self._connect()
        try:
            lock_down(scratch)
            try:
                statements = scratch.extract_statements(sql)
            except duckdb.Error as exc:
                raise self._ended(exc) from None
            if len(statements) != 1:
                raise InputError(
                    f"ledger query accepts exactly one statement; got {len(statements)}"
                )
            statement = statements[0]
            if statement.type != duckdb.StatementType.SELECT:
                kind = str(statement.type).rsplit(".", 1)[-1]
                raise InputError(
                    f"ledger query is read-only: only a SELECT statement is accepted, not {kind}"
                )
            analysis = _analyze(scratch, statement.query)
            self._columns = analysis.columns
        finally:
            scratch.close()
        if analysis.tables is None:
            return statement.query, [v.name for v in registered_views()]
        self._unknown = sorted(n for n in analysis.tables if get_view(n) is None)
        return statement.query, sorted(n for n in analysis.tables if get_view(n) is not None)

    def _load(self, needed: list[str]) -> duckdb.DuckDBPyConnection:
        import duckdb  # noqa: PLC0415

        con = self._connect()
        con.execute(ATTRIBUTION_RANGES_MACRO)
        if not needed:
            return con
        paths = self._readable_paths()
        sql_views = [v for v in (get_view(n) for n in needed) if isinstance(v, SqlView)]
        try:
            self._materialize(con, needed, sql_views, ndjson_scan(paths))
        except duckdb.InvalidInputException:
            # A damaged line (verification says which) or a record appended while we read:
            # read private snapshots of the complete lines and skip what does not parse.
            con.close()
            con = self._connect()
            con.execute(ATTRIBUTION_RANGES_MACRO)
            snapshots = [
                snapshot_prefix(p, complete_extent(p)[1], self._temp, i)
                for i, p in enumerate(paths)
            ]
            self._materialize(con, needed, sql_views, ndjson_scan(snapshots, ignore_errors=True))
            self.warnings.append(
                "some lines are not valid JSON records and were skipped (run `ledger verify`)"
            )
        return con

    def _readable_paths(self) -> list[Path]:
        """Each source's file, or a private snapshot of its complete lines if its tail is torn."""
        paths: list[Path] = []
        empty = 0
        for index, source in enumerate(self.sources):
            size, end = complete_extent(source.jsonl)
            if end == 0:
                empty += 1
                self.warnings.append(f"{source.label}: the ledger holds no records")
                continue
            paths.append(
                source.jsonl
                if end == size
                else snapshot_prefix(source.jsonl, end, self._temp, index)
            )
        if not paths:
            raise NotInitializedError("the ledger holds no records; run `ledger init` first")
        return paths

    def _materialize(
        self, con: duckdb.DuckDBPyConnection, needed: list[str], sql_views: list[SqlView], scan: str
    ) -> None:
        events = events_relation(scan)
        if "events" in needed or len(sql_views) > 1:
            con.execute(f"CREATE TABLE events AS SELECT * FROM {events}")
            events = "events"
        for name in needed:
            view = get_view(name)
            if view is not None and not (name == "events" and events == "events"):
                view.materialize(con, events, self.sources, self._columns)

    def run(self) -> duckdb.DuckDBPyRelation:
        """The statement's result, as a relation on the locked connection.

        Raises:
            InputError: DuckDB refused the statement (its message, on one line).
        """
        import duckdb  # noqa: PLC0415

        assert self.con is not None  # noqa: S101 -- set in __init__
        if self._timed_out:
            raise self._ended(TimeoutError())
        try:
            return self.con.sql(self.statement)
        except duckdb.BinderException as exc:
            if self._columns is None:
                raise self._ended(exc) from None
            # A column the analysis missed: load every column and run it again (only slower).
            self.con.close()
            self._columns = None
            self.con = self._load(self._views)
            lock_down(self.con)
            return self.run()
        except duckdb.CatalogException as exc:
            views = ", ".join(v.name for v in registered_views())
            missing = [n for n in self._unknown if f"name {n} does not exist" in str(exc)]
            if missing:
                raise InputError(f"unknown view {missing[0]!r}; views: {views}") from None
            raise self._ended(exc) from None
        except duckdb.Error as exc:
            raise self._ended(exc) from None

    def output(
        self,
        fmt: OutputFormat,
        out: Path | None,
        *,
        force: bool = False,
        stream: IO[str] | None = None,
    ) -> int:
        """Run the statement and write its result (:func:`~ledger._query.output.write_result`);
        the row count. Errors DuckDB raises while the rows are fetched (a failed cast, the
        time or memory limit) become one-line ``InputError`` errors.

        Raises:
            InputError: DuckDB refused or stopped the statement; ``out`` is refused.
            StorageError: ``out`` could not be written.
        """
        import duckdb  # noqa: PLC0415

        try:
            return write_result(self.run(), fmt, out, force=force, stream=stream)
        except duckdb.Error as exc:
            raise self._ended(exc) from None
        except (StorageError, InputError) as exc:
            if self._timed_out:  # the copy into the file was interrupted
                raise self._ended(exc) from None
            raise

    def close(self) -> None:
        """Close the connection and remove the private temporary directory."""
        self._closed.set()
        self._active = None
        if self.con is not None:
            self.con.close()
            self.con = None
        shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self) -> QuerySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
