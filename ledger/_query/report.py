"""``ledger report``: a summary for humans, computed with the query views.

Per intent and per session: decisions by code, denials, human approvals of destructive commands;
the most-touched files and the lines by blame's statuses (agent, git, unknown); verification and
checkpoint status. :func:`build_report` returns plain JSON-ready data; ``report_html`` renders
it as one self-contained page.

Lines by status come from the ``lines`` view (current blame) when it is registered, else they
are an estimate from attribution alone, and say so (``lines_basis``): a file whose bytes
still equal the last write an agent recorded has that write's ranges as ``agent`` lines and the
rest ``unknown``; a file changed since (by a person or an untracked tool) is all ``unknown``.
Without blame no line can be called ``git``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from ledger._query.engine import QuerySession
from ledger._query.views import get_view
from ledger._workspace import utc_now

if TYPE_CHECKING:
    import duckdb

    from ledger._query.sources import LedgerSource, Verification

__all__ = ["build_report"]

Progress = Callable[[str, int, int], None]
TOP_FILES: Final = 15
# A star: the report reads every column of these views with its own queries.
_LOAD: Final = "SELECT * FROM events, decisions, tool_calls, file_ranges, lines LIMIT 0"


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _iso(value: Any) -> Any:  # noqa: ANN401 -- any DuckDB value
    return value.isoformat() if hasattr(value, "isoformat") else value


def _clean(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _iso(v) for k, v in row.items()} for row in rows]


def build_report(
    sources: Sequence[LedgerSource],
    *,
    verifications: Sequence[Verification] | None = None,
    checkpoints: Sequence[dict[str, Any]] = (),
    progress: Progress | None = None,
    left_out: Sequence[str] = (),
) -> dict[str, Any]:
    """The report data (JSON-ready).

    Args:
        sources: the ledgers to summarise.
        verifications: one per source (None: not verified).
        checkpoints: ``{"name", "ok", "message"}`` per stored checkpoint compared.
        progress: ``(phase, done, total)`` callback.
        left_out: why each ledger offered but not read was left out (a teammate's fetched
            ledger that does not verify here, with the command that fetches it again): the
            report says so, and does not call its evidence verified.
    """
    steps = 7

    def tick(done: int) -> None:
        if progress is not None:
            progress("report", done, steps)

    # the report's own statements, whatever the ledger's size: no time limit
    with QuerySession(sources, _LOAD, timeout=None) as session:
        con = session.con
        assert con is not None  # noqa: S101 -- set by QuerySession
        tick(1)
        overview = _rows(
            con,
            "SELECT count(*) AS records, min(ts) AS first_ts, max(ts) AS "
            "last_ts, list(DISTINCT ledger_id ORDER BY ledger_id) AS ledgers "
            "FROM events",
        )[0]
        by_code = _rows(
            con,
            """
            SELECT decision, coalesce(code, '') AS code, count(*) AS n FROM decisions
            GROUP BY ALL ORDER BY n DESC, code""",
        )
        tick(2)
        per_intent = _rows(
            con,
            """
            SELECT coalesce(intent, '(none)') AS intent, count(*) AS calls,
                   count(*) FILTER (decision = 'deny') AS denials,
                   count(*) FILTER (decision = 'ask') AS asks,
                   list(DISTINCT code ORDER BY code) FILTER (code IS NOT NULL) AS codes
            FROM decisions GROUP BY ALL ORDER BY calls DESC, intent""",
        )
        destructive = _rows(
            con,
            f"""
            SELECT d.ts, d.session, d.intent, d.tool, d.paths, d.reason,
                   d.reason_disclosure, d.reason_commitment,
                   CASE WHEN t.outcome = 'success' THEN 'approved, ran'
                        WHEN r.tool_use_id IS NOT NULL THEN 'rejected by a human'
                        WHEN t.outcome IS NOT NULL THEN 'approved, ' || t.outcome
                        ELSE 'no answer recorded' END AS outcome
            FROM decisions d
            LEFT JOIN tool_calls t USING (ledger_id, invocation)
            LEFT JOIN ({_REJECTIONS}) r
              ON r.ledger_id = d.ledger_id AND r.tool_use_id = d.tool_use_id
            WHERE d.code = 'DESTRUCTIVE_COMMAND' ORDER BY d.ts""",
        )
        tick(3)
        sessions = _rows(
            con,
            """
            WITH calls AS (
                SELECT session, count(*) AS calls, count(*) FILTER (decision = 'deny') AS denials,
                       count(*) FILTER (decision = 'ask') AS asks,
                       count(*) FILTER (code = 'DESTRUCTIVE_COMMAND') AS destructive
                FROM decisions GROUP BY session),
            lines AS (SELECT session, sum(line_count) AS lines_written FROM file_ranges
                      GROUP BY session)
            SELECT e.session, any_value(e.client) AS client,
                   list(DISTINCT e.model) FILTER (e.model IS NOT NULL) AS models,
                   list(DISTINCT c.intent) FILTER (c.intent IS NOT NULL) AS intents,
                   min(e.ts) AS first_ts, max(e.ts) AS last_ts,
                   coalesce(any_value(k.calls), 0) AS calls,
                   coalesce(any_value(k.denials), 0) AS denials,
                   coalesce(any_value(k.asks), 0) AS asks,
                   coalesce(any_value(l.lines_written), 0) AS lines_written
            FROM events e LEFT JOIN decisions c USING (ledger_id, seq)
            LEFT JOIN calls k ON k.session IS NOT DISTINCT FROM e.session
            LEFT JOIN lines l ON l.session IS NOT DISTINCT FROM e.session
            WHERE e.session IS NOT NULL GROUP BY e.session ORDER BY first_ts""",
        )
        tick(4)
        timeline = _timeline(con)
        top_files = _rows(
            con,
            f"""
            SELECT path, count(DISTINCT seq) AS writes, sum(line_count) AS lines_written,
                   count(DISTINCT session) AS sessions, max(ts) AS last_write
            FROM file_ranges GROUP BY path ORDER BY writes DESC, path LIMIT {TOP_FILES}""",
        )
        tick(5)
        lines, basis = _lines_by_directory(con, sources)
        tick(6)
    checked: Sequence[Verification | None] = verifications or [None] * len(sources)
    report = {
        "generated_at": utc_now(),
        "ledgers": [
            {
                "label": s.label,
                "verification": v.state if v else "unverified",
                "summary": v.summary if v else "not verified (--no-verify)",
            }
            for s, v in zip(sources, checked, strict=True)
        ],
        "checkpoints": list(checkpoints),
        "left_out": list(left_out),
        "overview": _clean([overview])[0],
        "decisions_by_code": by_code,
        "per_intent": per_intent,
        "destructive": _clean(destructive),
        "sessions": _clean(sessions),
        "timeline": timeline,
        "top_files": _clean(top_files),
        "lines_by_directory": lines,
        "lines_basis": basis,
    }
    tick(steps)
    return report


#: Human rejections of an ``ask`` (the client's PermissionDenied, recorded as HITL_REJECT).
_REJECTIONS: Final = """
    SELECT DISTINCT ledger_id, body->>'$.tool_use_id' AS tool_use_id FROM events
    WHERE body->>'$.error.code' = 'HITL_REJECT'"""


_BUCKETS: Final = ((120, "second"), (7_200, "minute"), (259_200, "hour"), (float("inf"), "day"))


def _timeline(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    # The bucket follows the span, so a chart has bars to compare: seconds for a session of a
    # minute or two, minutes up to two hours, hours up to three days, then days.
    span = con.execute("SELECT date_diff('second', min(ts), max(ts)) FROM decisions").fetchone()
    seconds = int(span[0]) if span and span[0] is not None else 0
    unit = next(u for limit, u in _BUCKETS if seconds <= limit)
    buckets = _rows(
        con,
        f"""
        SELECT date_trunc('{unit}', ts) AS bucket,
               count(*) FILTER (decision = 'allow') AS allow,
               count(*) FILTER (decision = 'ask') AS ask,
               count(*) FILTER (decision = 'deny') AS deny
        FROM decisions WHERE ts IS NOT NULL GROUP BY bucket ORDER BY bucket""",
    )
    return {"unit": unit, "buckets": _clean(buckets)}


def _directory(path: str) -> str:
    parent = PurePosixPath(path).parent
    return "." if str(parent) in ("", ".") else str(parent)


def _lines_by_directory(
    con: duckdb.DuckDBPyConnection, sources: Sequence[LedgerSource]
) -> tuple[list[dict[str, Any]], str]:
    if get_view("lines") is not None:  # the blame projection
        blamed: dict[str, dict[str, int]] = {}
        for item in _rows(con, "SELECT path, status, count(*) AS n FROM lines GROUP BY ALL"):
            bucket = blamed.setdefault(
                _directory(item["path"]), {"agent": 0, "git": 0, "unknown": 0}
            )
            # exactly blame's statuses: a line git explains is `git`, not unknown
            bucket[item["status"] if item["status"] in bucket else "unknown"] += item["n"]
        return [{"directory": d, **counts} for d, counts in sorted(blamed.items())], "blame"
    latest = _rows(
        con,
        """
        SELECT ledger_id, path, arg_max(file_sha256, seq) AS sha256,
               arg_max(seq, seq) AS seq FROM file_ranges GROUP BY ALL""",
    )
    ranges = _rows(con, "SELECT ledger_id, path, seq, start_line, end_line FROM file_ranges")
    by_record: dict[tuple[str, str, int], list[tuple[int, int]]] = {}
    for r in ranges:
        key = (r["ledger_id"], r["path"], r["seq"])
        by_record.setdefault(key, []).append((r["start_line"], r["end_line"]))
    roots = {s.ledger_id: s.root for s in sources if s.root is not None}
    totals: dict[str, dict[str, int]] = {}
    for item in latest:
        root = roots.get(item["ledger_id"])
        if root is None:
            continue
        status = _file_status(
            root / item["path"],
            item["sha256"],
            by_record.get((item["ledger_id"], item["path"], item["seq"]), []),
        )
        if status is None:
            continue
        bucket = totals.setdefault(_directory(item["path"]), {"agent": 0, "git": 0, "unknown": 0})
        for name, count in status.items():
            bucket[name] += count
    rows = [{"directory": d, **counts} for d, counts in sorted(totals.items())]
    return rows, "estimate"


def _file_status(
    path: Path, recorded_sha256: str | None, ranges: list[tuple[int, int]]
) -> dict[str, int] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None  # deleted since: not a live file
    total = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if hashlib.sha256(data).hexdigest() != recorded_sha256:
        return {"agent": 0, "git": 0, "unknown": total}
    agent = len({n for a, b in ranges for n in range(a, b + 1) if 1 <= n <= total})
    return {"agent": agent, "git": 0, "unknown": total - agent}
