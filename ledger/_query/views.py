"""The views ``ledger query`` offers: one registry, one protocol.

Every view is a :class:`ViewDefinition`: a name, documented columns, and a way to *materialize*
itself into an in-memory DuckDB table before the connection is locked (findings §5: a view that
reads a file binds again at query time and fails -- or must be allow-listed -- after the lock, so
nothing here may read a file once the user's statement runs).

Two kinds exist today:

* :class:`SqlView` -- a ``SELECT`` over the ``{events}`` relation (every record with typed
  envelope columns and ``body`` as DuckDB ``JSON``). ``events`` itself is one.
* :class:`FoldView` -- rows computed in Python from the public read path (``intents``: the state
  fold of ``ledger/_governance/state.py`` joined with ``active_intents.yaml``).

Views that come later (``lines``, the current blame) register with :func:`register_view`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

if TYPE_CHECKING:
    import duckdb

    from ledger._query.sources import LedgerSource

__all__ = [
    "ATTRIBUTION_RANGES_MACRO",
    "EVENT_COLUMNS",
    "RAW_COLUMNS",
    "Column",
    "FoldView",
    "SqlView",
    "ViewDefinition",
    "get_view",
    "register_view",
    "registered_views",
]


class Column(NamedTuple):
    """One documented column of a view."""

    name: str
    type: str  # DuckDB type, as DESCRIBE prints it
    description: str


class ViewDefinition(Protocol):
    """What every view in the registry provides."""

    @property
    def name(self) -> str:
        """The name queries use."""
        ...

    @property
    def description(self) -> str:
        """One line for ``--help`` and ``--schema``."""
        ...

    @property
    def columns(self) -> Sequence[Column]:
        """The columns, in order (a test checks them against DESCRIBE)."""
        ...

    def materialize(self, con: duckdb.DuckDBPyConnection, events: str,
                    sources: Sequence[LedgerSource]) -> None:
        """Create the in-memory table ``name`` (called before the configuration is locked).

        Args:
            con: the connection, still unlocked.
            events: a relation (table name or parenthesized subquery) holding the ``events``
                columns.
            sources: the ledgers being queried, for views computed from the read path.
        """
        ...


#: The JSONL columns, declared explicitly: auto-detection samples 20,480 rows and silently
#: drops body keys that first appear later (findings §5), so ``body`` is plain ``JSON``.
RAW_COLUMNS: Final = {
    "v": "BIGINT", "ledger": "VARCHAR", "seq": "BIGINT", "prev": "VARCHAR", "ts": "VARCHAR",
    "kind": "VARCHAR",
    "actor": "STRUCT(agent VARCHAR, client VARCHAR, model VARCHAR, session VARCHAR)",
    "body": "JSON", "key": "VARCHAR", "hash": "VARCHAR", "sig": "VARCHAR",
}

EVENT_COLUMNS: Final = (
    Column("ledger_id", "VARCHAR", "Ledger id (the record's `ledger` field)."),
    Column("seq", "BIGINT", "Position in the chain, from 0."),
    Column("ts", "TIMESTAMP", "UTC time of the record."),
    Column("kind", "VARCHAR", "hook.pre, hook.post, hook.event, intent.selected, ..."),
    Column("client", "VARCHAR", "Actor: agent client (claude-code, codex, ...)."),
    Column("session", "VARCHAR", "Actor: client session id."),
    Column("agent", "VARCHAR", "Actor: subagent id."),
    Column("model", "VARCHAR", "Actor: model id as the client reported it."),
    Column("body", "JSON", "Kind-specific body (use body->>'$.field')."),
    Column("key", "VARCHAR", "Signing key id."),
    Column("hash", "VARCHAR", "Record hash (hex SHA-256)."),
    Column("prev", "VARCHAR", "Hash of the previous record."),
    Column("v", "BIGINT", "Record format version."),
)

_EVENTS_SQL: Final = """
SELECT ledger AS ledger_id, seq, TRY_CAST(rtrim(ts, 'Z') AS TIMESTAMP) AS ts, kind,
       actor.client AS client, actor.session AS session, actor.agent AS agent,
       actor.model AS model, body, key, hash, prev, v
FROM {source}
"""

#: Attribution ranges of one record as ``LIST(STRUCT(path, start_line, end_line, file_sha256))``.
#: Today they live in free keys of ``hook.post`` bodies (``data.added_lines``: path -> [[start,
#: end], ...], ``data.seen``: path -> sha256). When the typed ``body.attribution`` field lands,
#: this macro is the one place to change.
ATTRIBUTION_RANGES_MACRO: Final = """
CREATE OR REPLACE TEMP MACRO attribution_ranges(body) AS flatten(list_transform(
    map_entries(TRY_CAST(json_extract(body, '$.data.added_lines') AS MAP(VARCHAR, BIGINT[][]))),
    lambda entry: list_transform(entry.value, lambda r: {
        'path': entry.key, 'start_line': r[1], 'end_line': r[2],
        'file_sha256': TRY_CAST(json_extract(body, '$.data.seen') AS MAP(VARCHAR, VARCHAR))
                       [entry.key]})))
"""


class SqlView(NamedTuple):
    """A view defined by a SELECT over ``{events}``."""

    name: str
    description: str
    columns: tuple[Column, ...]
    sql: str

    def materialize(self, con: duckdb.DuckDBPyConnection, events: str,
                    sources: Sequence[LedgerSource]) -> None:
        """``CREATE TABLE name AS <sql>``."""
        del sources  # computed from events alone
        con.execute(f"CREATE TABLE {self.name} AS {self.sql.format(events=events)}")


Rows = Iterable[Sequence[Any]]


class FoldView(NamedTuple):
    """A view whose rows are computed in Python from each ledger's read path."""

    name: str
    description: str
    columns: tuple[Column, ...]
    rows: Callable[[LedgerSource], Rows]

    def materialize(self, con: duckdb.DuckDBPyConnection, events: str,
                    sources: Sequence[LedgerSource]) -> None:
        """Create the table from the declared columns and insert every source's rows."""
        del events
        ddl = ", ".join(f'"{c.name}" {c.type}' for c in self.columns)
        con.execute(f"CREATE TABLE {self.name} ({ddl})")
        marks = ", ".join("?" for _ in self.columns)
        for source in sources:
            batch = [list(row) for row in self.rows(source)]
            if batch:
                con.executemany(f"INSERT INTO {self.name} VALUES ({marks})",
                                batch)


_ACTOR = (
    Column("session", "VARCHAR", "Client session id."),
    Column("client", "VARCHAR", "Agent client."),
    Column("model", "VARCHAR", "Model id."),
    Column("agent", "VARCHAR", "Subagent id."),
)

EVENTS = SqlView(
    "events", "Every record, typed envelope columns, body as JSON.", EVENT_COLUMNS,
    "SELECT * FROM {events}",
)

DECISIONS = SqlView(
    "decisions", "Pre-hook outcomes: one row per hook.pre record.",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("seq", "BIGINT", "Record seq."),
        Column("ts", "TIMESTAMP", "UTC time."),
        Column("decision", "VARCHAR", "allow, deny or ask (allow also means no objection)."),
        Column("code", "VARCHAR", "Error code of a refusal (SCOPE_VIOLATION, STALE_FILE, ...)."),
        Column("reason", "VARCHAR", "Reason given to the agent."),
        Column("tool", "VARCHAR", "Neutral tool name (Write, Edit, Bash, ...)."),
        Column("paths", "VARCHAR[]", "Workspace-relative paths the call touches."),
        Column("intent", "VARCHAR", "Intent id the session worked under."),
        *_ACTOR,
        Column("invocation", "VARCHAR", "Invocation id (shared by the call's pre and post)."),
        Column("tool_use_id", "VARCHAR", "The client's id of the tool call."),
        Column("risk", "VARCHAR", "SAFE or DESTRUCTIVE for shell commands."),
        Column("hash", "VARCHAR", "Record hash."),
    ),
    """
    SELECT ledger_id, seq, ts, body->>'$.decision' AS decision,
           body->>'$.error.code' AS code, body->>'$.reason' AS reason,
           body->>'$.tool' AS tool, json_extract_string(body, '$.data.paths[*]') AS paths,
           body->>'$.data.intent_id' AS intent, session, client, model, agent,
           body->>'$.invocation' AS invocation, body->>'$.tool_use_id' AS tool_use_id,
           body->>'$.data.risk' AS risk, hash
    FROM {events} WHERE kind = 'hook.pre'
    """,
)

TOOL_CALLS = SqlView(
    "tool_calls", "Tool calls: pre and post records joined by invocation.",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("invocation", "VARCHAR", "Invocation id."),
        Column("tool", "VARCHAR", "Neutral tool name."),
        Column("decision", "VARCHAR", "Pre-hook decision (NULL when no pre was recorded)."),
        Column("code", "VARCHAR", "Pre-hook refusal code."),
        Column("outcome", "VARCHAR", "success, failure, blocked (denied), or NULL (no post)."),
        Column("duration_ms", "BIGINT", "Tool run time as the client reported it, else the "
               "time between pre and post."),
        Column("intent", "VARCHAR", "Intent id."),
        *_ACTOR,
        Column("tool_use_id", "VARCHAR", "The client's id of the tool call."),
        Column("pre_seq", "BIGINT", "Seq of the hook.pre record."),
        Column("post_seq", "BIGINT", "Seq of the hook.post record."),
        Column("pre_ts", "TIMESTAMP", "Time of the pre record."),
        Column("post_ts", "TIMESTAMP", "Time of the post record."),
    ),
    """
    WITH pre AS (SELECT * FROM {events} WHERE kind = 'hook.pre'),
         post AS (SELECT * FROM {events} WHERE kind = 'hook.post')
    SELECT coalesce(pre.ledger_id, post.ledger_id) AS ledger_id,
           coalesce(pre.body->>'$.invocation', post.body->>'$.invocation') AS invocation,
           coalesce(pre.body->>'$.tool', post.body->>'$.tool') AS tool,
           pre.body->>'$.decision' AS decision, pre.body->>'$.error.code' AS code,
           coalesce(post.body->>'$.outcome',
                    CASE WHEN pre.body->>'$.decision' = 'deny' THEN 'blocked' END) AS outcome,
           coalesce(TRY_CAST(post.body->>'$.duration_ms' AS BIGINT),
                    date_diff('millisecond', pre.ts, post.ts)) AS duration_ms,
           coalesce(pre.body->>'$.data.intent_id', post.body->>'$.data.intent_id') AS intent,
           coalesce(pre.session, post.session) AS session,
           coalesce(pre.client, post.client) AS client,
           coalesce(pre.model, post.model) AS model, coalesce(pre.agent, post.agent) AS agent,
           coalesce(pre.body->>'$.tool_use_id', post.body->>'$.tool_use_id') AS tool_use_id,
           pre.seq AS pre_seq, post.seq AS post_seq, pre.ts AS pre_ts, post.ts AS post_ts
    FROM pre FULL OUTER JOIN post
      ON pre.ledger_id = post.ledger_id
     AND pre.body->>'$.invocation' = post.body->>'$.invocation'
    """,
)

FILE_RANGES = SqlView(
    "file_ranges", "Line attribution: one row per range an agent wrote (hook.post).",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("seq", "BIGINT", "Seq of the hook.post record."),
        Column("ts", "TIMESTAMP", "UTC time."),
        Column("path", "VARCHAR", "Workspace-relative path."),
        Column("start_line", "BIGINT", "First line (1-based, in the file after the write)."),
        Column("end_line", "BIGINT", "Last line, inclusive."),
        Column("line_count", "BIGINT", "end_line - start_line + 1."),
        Column("file_sha256", "VARCHAR", "SHA-256 of the whole file after the write."),
        Column("tool", "VARCHAR", "Neutral tool name."),
        Column("intent", "VARCHAR", "Intent id."),
        *_ACTOR,
        Column("invocation", "VARCHAR", "Invocation id."),
        Column("hash", "VARCHAR", "Record hash."),
    ),
    """
    SELECT ledger_id, seq, ts, r.path, r.start_line, r.end_line,
           r.end_line - r.start_line + 1 AS line_count, r.file_sha256,
           body->>'$.tool' AS tool, body->>'$.data.intent_id' AS intent,
           session, client, model, agent, body->>'$.invocation' AS invocation, hash
    FROM (SELECT *, unnest(attribution_ranges(body)) AS r
          FROM {events} WHERE kind = 'hook.post')
    """,
)


def _intent_rows(source: LedgerSource) -> Rows:
    from ledger._governance.intents import load_intents_file  # noqa: PLC0415
    from ledger._governance.state import fold  # noqa: PLC0415

    state = fold(record.data for record in source.records())
    declared: dict[str, Any] = {}
    intents_path = source.intents_path
    if intents_path is not None and intents_path.exists():
        declared = {i.id: i for i in load_intents_file(intents_path).intents}
    sessions: dict[str, list[str]] = {}
    for session_id, session in state.sessions.items():
        if session.get("intent"):
            sessions.setdefault(str(session["intent"]), []).append(session_id)
    ids = sorted(set(declared) | set(sessions) | set(state.grants) | set(state.recent))
    for intent_id in ids:
        intent = declared.get(intent_id)
        yield (
            source.ledger_id, intent_id,
            None if intent is None else intent.name,
            None if intent is None else intent.status,
            [] if intent is None else list(intent.owned_scope),
            state.grants.get(intent_id, []),
            sorted(sessions.get(intent_id, [])),
            state.recent.get(intent_id, []),
            intent is not None,
        )


INTENTS = FoldView(
    "intents", "The intent projection: active_intents.yaml joined with the ledger's fold.",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("intent_id", "VARCHAR", "Intent id."),
        Column("name", "VARCHAR", "Name in active_intents.yaml (NULL if not declared)."),
        Column("status", "VARCHAR", "Status in active_intents.yaml."),
        Column("owned_scope", "VARCHAR[]", "Declared owned_scope globs."),
        Column("granted_scope", "VARCHAR[]", "Globs added by approved scope expansions."),
        Column("active_sessions", "VARCHAR[]", "Sessions whose selected intent this is now."),
        Column("recent_changes", "VARCHAR[]", "Last changed paths ('path (seq N)')."),
        Column("declared", "BOOLEAN", "Present in active_intents.yaml."),
    ),
    _intent_rows,
)

_REGISTRY: dict[str, ViewDefinition] = {
    view.name: view for view in (EVENTS, DECISIONS, TOOL_CALLS, FILE_RANGES, INTENTS)
}


def register_view(view: ViewDefinition) -> None:
    """Add a view (e.g. ``lines`` from the blame projection); its name must be new."""
    if view.name in _REGISTRY:
        raise ValueError(f"view {view.name!r} is already registered")
    _REGISTRY[view.name] = view


def registered_views() -> list[ViewDefinition]:
    """Every view, in registration order."""
    return list(_REGISTRY.values())


def get_view(name: str) -> ViewDefinition | None:
    """The view called ``name``."""
    return _REGISTRY.get(name)


def events_relation(source_sql: str) -> str:
    """The ``events`` columns computed straight from a ``read_ndjson`` relation."""
    return f"({_EVENTS_SQL.format(source=source_sql)})"


def view_schema_text(*, compact: bool = False) -> str:
    """Every view and its columns: for ``ledger query --schema``, or one line per view for
    ``--help`` (``compact``)."""
    lines: list[str] = []
    for view in registered_views():
        if compact:
            lines.append(f"{view.name}: " + ", ".join(c.name for c in view.columns))
            continue
        lines.append(f"{view.name}: {view.description}")
        lines.extend(f"  {c.name:<16} {c.type:<10} {c.description}" for c in view.columns)
    return "\n".join(lines)


def view_schema_json() -> dict[str, Any]:
    """The same, as JSON."""
    return {view.name: {"description": view.description,
                        "columns": [c._asdict() for c in view.columns]}
            for view in registered_views()}
