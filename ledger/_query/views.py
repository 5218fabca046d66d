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

Further views register with :func:`register_view`; ``lines`` reads the blame projection.

Committed content (record format v3 holds ``{"commitment": "<64 hex>"}`` in place of a prompt,
a command line, a reason) is shown as a person reads it: the disclosed value where a disclosure
present opens the commitment, else ``[withheld]`` or ``[forgotten]``. The disclosure stores are
loaded into ``_disclosed`` before the lock, only when a statement reads such a column; each
committed column has a ``*_disclosure`` twin (disclosed, withheld, forgotten) and a
``*_commitment`` twin (the digest), and the ``content`` view lists every committed field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    import duckdb

    from ledger._query.sources import LedgerSource

__all__ = [
    "ATTRIBUTION_RANGES_MACRO",
    "EVENT_COLUMNS",
    "RAW_COLUMNS",
    "Column",
    "ContentView",
    "FoldView",
    "JsonField",
    "JsonView",
    "SqlView",
    "ViewDefinition",
    "ensure_disclosed",
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

    def materialize(
        self,
        con: duckdb.DuckDBPyConnection,
        events: str,
        sources: Sequence[LedgerSource],
        needed: frozenset[str] | None = None,
    ) -> None:
        """Create the in-memory table (or view over one) ``name``, before the lock.

        Args:
            con: the connection, still unlocked.
            events: a relation (table name or parenthesized subquery) holding the ``events``
                columns.
            sources: the ledgers being queried, for views computed from the read path.
            needed: the column names the statement may use (None: all); a view may load
                only those.
        """
        ...


#: The JSONL columns, declared explicitly: auto-detection samples 20,480 rows and silently
#: drops body keys that first appear later (findings §5), so ``body`` is plain ``JSON``.
RAW_COLUMNS: Final = {
    "v": "BIGINT",
    "ledger": "VARCHAR",
    "seq": "BIGINT",
    "prev": "VARCHAR",
    "ts": "VARCHAR",
    "kind": "VARCHAR",
    "actor": "STRUCT(agent VARCHAR, client VARCHAR, model VARCHAR, session VARCHAR)",
    "body": "JSON",
    "key": "VARCHAR",
    "hash": "VARCHAR",
    "sig": "VARCHAR",
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

#: Attribution ranges of one record as ``LIST(STRUCT(path, start_line, end_line, file_sha256,
#: content_hash))``, the one place that knows where attribution lives in a body. Format 2 has
#: the typed ``body.attribution`` (files → hunks, ``ledger/_evidence/models.py``); format 1
#: kept ranges in free ``data`` keys (``added_lines``: path → [[start, end], ...], ``seen``:
#: path → sha256), read here as ``ledger/_evidence/upcast.py`` upcasts them. DuckDB reads the
#: stored bytes, so the upcast happens in SQL.
ATTRIBUTION_RANGES_MACRO: Final = """
CREATE OR REPLACE TEMP MACRO attribution_ranges(v, body) AS CASE WHEN v >= 2 THEN
    list_filter(flatten(list_transform(
        TRY_CAST(json_extract(body, '$.attribution.files') AS STRUCT(
            path VARCHAR, sha256 VARCHAR,
            hunks STRUCT(new_start BIGINT, new_lines BIGINT, content_hash VARCHAR)[])[]),
        lambda f: list_transform(f.hunks, lambda h: {
            'path': f.path, 'start_line': h.new_start,
            'end_line': h.new_start + h.new_lines - 1, 'file_sha256': f.sha256,
            'content_hash': h.content_hash}))),
        lambda r: r.end_line >= r.start_line)
ELSE flatten(list_transform(
    map_entries(TRY_CAST(json_extract(body, '$.data.added_lines') AS MAP(VARCHAR, BIGINT[][]))),
    lambda entry: list_transform(entry.value, lambda r: {
        'path': entry.key, 'start_line': r[1], 'end_line': r[2],
        'file_sha256': TRY_CAST(json_extract(body, '$.data.seen') AS MAP(VARCHAR, VARCHAR))
                       [entry.key],
        'content_hash': NULL::VARCHAR})))
END
"""


class SqlView(NamedTuple):
    """A view defined by a SELECT over ``{events}``.

    With a ``projection``, ``sql`` only *stages* the rows (an in-memory table holding each
    body's fields as one ``json_extract`` list, parsed once) and the view itself is a DuckDB
    view over that table: a statement pays only for the fields it reads.
    """

    name: str
    description: str
    columns: tuple[Column, ...]
    sql: str
    projection: str | None = None

    def materialize(
        self,
        con: duckdb.DuckDBPyConnection,
        events: str,
        sources: Sequence[LedgerSource],
        needed: frozenset[str] | None = None,
    ) -> None:
        """``CREATE TABLE name AS <sql>``, or a staged table and a view over it."""
        del sources, needed  # computed from events alone, every column
        if self.projection is None:
            con.execute(f"CREATE TABLE {self.name} AS {self.sql.format(events=events)}")
            return
        stage = f"_stage_{self.name}"
        con.execute(f"CREATE TABLE {stage} AS {self.sql.format(events=events)}")
        con.execute(f"CREATE VIEW {self.name} AS {self.projection.format(stage=stage)}")


Rows = Iterable[Sequence[Any]]


class FoldView(NamedTuple):
    """A view whose rows are computed in Python from each ledger's read path."""

    name: str
    description: str
    columns: tuple[Column, ...]
    rows: Callable[[LedgerSource], Rows]

    def materialize(
        self,
        con: duckdb.DuckDBPyConnection,
        events: str,
        sources: Sequence[LedgerSource],
        needed: frozenset[str] | None = None,
    ) -> None:
        """Create the table from the declared columns and insert every source's rows."""
        del events, needed
        ddl = ", ".join(f'"{c.name}" {c.type}' for c in self.columns)
        con.execute(f"CREATE TABLE {self.name} ({ddl})")
        marks = ", ".join("?" for _ in self.columns)
        for source in sources:
            batch = [list(row) for row in self.rows(source)]
            if batch:
                con.executemany(f"INSERT INTO {self.name} VALUES ({marks})", batch)


def _disclosure_rows(sources: Sequence[LedgerSource]) -> tuple[list[str], list[str], list[str]]:
    """``(commitments, states, values)`` of every source's disclosure store: each disclosure
    that opens its commitment (its value as text), and each forgotten commitment."""
    import json  # noqa: PLC0415

    from ledger._evidence.disclosure import FORGOTTEN, DisclosureStore, opened  # noqa: PLC0415

    digests: list[str] = []
    states: list[str] = []
    values: list[str] = []
    for source in sources:
        if source.disclosures is None:
            continue
        disclosed, forgotten = DisclosureStore(source.disclosures).load()
        for digest in forgotten:
            digests.append(digest)
            states.append("forgotten")
            values.append(FORGOTTEN)
        for digest, line in disclosed.items():
            if not opened(line, str(line.get("field")), digest):
                continue  # a doctored disclosure is never shown (`ledger verify` names it)
            value = line["value"]
            digests.append(digest)
            states.append("disclosed")
            values.append(
                value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            )
    return digests, states, values


#: ``committed_digest(j)``: the digest of a JSON value that is a commitment, else NULL;
#: ``disclosure_state(j)``: disclosed, withheld or forgotten for a commitment, else NULL;
#: ``revealed(j)``: the text a person reads (the disclosed value, ``[withheld]``,
#: ``[forgotten]``), or the value itself when it is not a commitment.
_DISCLOSURE_MACROS: Final = (
    """CREATE OR REPLACE TEMP MACRO committed_digest(j) AS CASE
        WHEN length(CAST(j AS VARCHAR)) = 81
         AND starts_with(CAST(j AS VARCHAR), '{"commitment":"')
        THEN substr(CAST(j AS VARCHAR), 16, 64) END""",
    """CREATE OR REPLACE TEMP MACRO disclosure_state(j) AS CASE
        WHEN committed_digest(j) IS NOT NULL THEN coalesce(
            (SELECT state FROM _disclosed d WHERE d.commitment = committed_digest(j)),
            'withheld') END""",
    """CREATE OR REPLACE TEMP MACRO revealed(j) AS CASE
        WHEN committed_digest(j) IS NULL THEN j->>'$'
        ELSE coalesce((SELECT value FROM _disclosed d WHERE d.commitment = committed_digest(j)),
                      '[withheld]') END""",
)


def ensure_disclosed(con: duckdb.DuckDBPyConnection, sources: Sequence[LedgerSource]) -> None:
    """Load the sources' disclosures into ``_disclosed`` and define the macros that read it,
    once per connection (before the lock: the stores are files)."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_disclosed'"
    ).fetchone()
    if found and found[0]:
        return
    digests, states, values = _disclosure_rows(sources)
    # A commitment disclosed by one source and forgotten by another is shown disclosed.
    con.execute(
        """CREATE TABLE _disclosed AS
        SELECT commitment, min(state) AS state, arg_min(value, state) AS value FROM (
            SELECT unnest(?::VARCHAR[]) AS commitment, unnest(?::VARCHAR[]) AS state,
                   unnest(?::VARCHAR[]) AS value)
        GROUP BY commitment""",
        [digests, states, values],
    )
    for macro in _DISCLOSURE_MACROS:
        con.execute(macro)


_REVEALED: Final = {
    "value": "revealed({value})",
    "state": "disclosure_state({value})",
    "commitment": "committed_digest({value})",
}


class JsonField(NamedTuple):
    """One column of a :class:`JsonView`: an ``events`` column (``meta``), a JSON path into the
    body (``path``), or an SQL expression over the row and its unnested ``r`` (``expr``).

    A body field that may be committed content says how it is shown (``reveal``): ``value``
    (the text a person reads), ``state`` (disclosed, withheld, forgotten; NULL when the field
    is plain) or ``commitment`` (the digest; NULL when plain)."""

    name: str
    type: str
    description: str
    meta: str | None = None
    path: str | None = None
    expr: str | None = None
    reveal: Literal["value", "state", "commitment"] | None = None


class JsonView(NamedTuple):
    """A view of one record kind whose columns are mostly body fields.

    Loading stages only the columns a statement uses (``needed``; ``None`` = all), and all the
    body fields it needs with *one* multi-path ``json_extract`` per row -- every ``->>`` would
    parse the JSON again. The view over the staged table turns them into typed columns.
    """

    name: str
    description: str
    fields: tuple[JsonField, ...]
    where: str
    unnest: str | None = None

    @property
    def columns(self) -> tuple[Column, ...]:
        """The documented columns."""
        return tuple(Column(f.name, f.type, f.description) for f in self.fields)

    def materialize(
        self,
        con: duckdb.DuckDBPyConnection,
        events: str,
        sources: Sequence[LedgerSource],
        needed: frozenset[str] | None = None,
    ) -> None:
        """Stage the needed columns, then ``CREATE VIEW name`` over them."""
        chosen = [f for f in self.fields if needed is None or f.name in needed]
        if not chosen:  # e.g. count(*): rows, no columns
            chosen = [self.fields[1]]
        if any(f.reveal is not None for f in chosen):
            ensure_disclosed(con, sources)
        paths = list(dict.fromkeys(f.path for f in chosen if f.path is not None))
        staged: list[str] = []
        shown: list[str] = []
        for field in chosen:
            if field.path is not None:
                value = f"_f[{paths.index(field.path) + 1}]"
                if field.reveal is not None:
                    shown.append(f"{_REVEALED[field.reveal].format(value=value)} AS {field.name}")
                elif field.type == "VARCHAR":
                    shown.append(f"{value}->>'$' AS {field.name}")
                elif field.type.endswith("[]"):  # a list: empty, not NULL, when absent
                    shown.append(
                        f"coalesce(TRY_CAST({value} AS {field.type}), "
                        f"[]::{field.type}) AS {field.name}"
                    )
                else:
                    shown.append(f"TRY_CAST({value} AS {field.type}) AS {field.name}")
                continue
            staged.append(f"{field.meta or field.expr} AS {field.name}")
            shown.append(field.name)
        if paths:
            staged.append("json_extract(body, [" + ", ".join(f"'{p}'" for p in paths) + "]) AS _f")
        rows = (
            f"(SELECT *, unnest({self.unnest}) AS r FROM {events} WHERE {self.where})"
            if self.unnest
            else f"{events} WHERE {self.where}"
        )
        stage = f"_stage_{self.name}"
        con.execute(f"CREATE TABLE {stage} AS SELECT {', '.join(staged)} FROM {rows}")
        con.execute(f"CREATE VIEW {self.name} AS SELECT {', '.join(shown)} FROM {stage}")


# The views extract a body's fields with one multi-path json_extract per row: every `->>` parses
# the JSON document again, and on a million records that doubled the load time.
_ACTOR_FIELDS = (
    JsonField("session", "VARCHAR", "Client session id.", meta="session"),
    JsonField("client", "VARCHAR", "Agent client.", meta="client"),
    JsonField("model", "VARCHAR", "Model id.", meta="model"),
    JsonField("agent", "VARCHAR", "Subagent id.", meta="agent"),
)
_ACTOR = tuple(Column(f.name, f.type, f.description) for f in _ACTOR_FIELDS)

EVENTS = SqlView(
    "events",
    "Every record, typed envelope columns, body as JSON.",
    EVENT_COLUMNS,
    "SELECT * FROM {events}",
)

DECISIONS = JsonView(
    "decisions",
    "Pre-hook outcomes: one row per hook.pre record.",
    (
        JsonField("ledger_id", "VARCHAR", "Ledger id.", meta="ledger_id"),
        JsonField("seq", "BIGINT", "Record seq.", meta="seq"),
        JsonField("ts", "TIMESTAMP", "UTC time.", meta="ts"),
        JsonField(
            "decision",
            "VARCHAR",
            "allow, deny or ask (allow also means no objection).",
            path="$.decision",
        ),
        JsonField(
            "code",
            "VARCHAR",
            "Error code of a refusal (SCOPE_VIOLATION, STALE_FILE, ...).",
            path="$.error.code",
        ),
        JsonField(
            "reason",
            "VARCHAR",
            "Reason given to the agent (committed content: [withheld] or [forgotten] where no "
            "disclosure opens it).",
            path="$.reason",
            reveal="value",
        ),
        JsonField(
            "reason_disclosure",
            "VARCHAR",
            "disclosed, withheld or forgotten (NULL: the reason is stored plain).",
            path="$.reason",
            reveal="state",
        ),
        JsonField(
            "reason_commitment",
            "VARCHAR",
            "The reason's commitment (hex SHA-256; NULL when stored plain).",
            path="$.reason",
            reveal="commitment",
        ),
        JsonField("tool", "VARCHAR", "Neutral tool name (Write, Edit, Bash, ...).", path="$.tool"),
        JsonField(
            "paths", "VARCHAR[]", "Workspace-relative paths the call touches.", path="$.data.paths"
        ),
        JsonField(
            "intent", "VARCHAR", "Intent id the session worked under.", path="$.data.intent_id"
        ),
        *_ACTOR_FIELDS,
        JsonField(
            "invocation",
            "VARCHAR",
            "Invocation id (shared by the call's pre and post).",
            path="$.invocation",
        ),
        JsonField(
            "tool_use_id", "VARCHAR", "The client's id of the tool call.", path="$.tool_use_id"
        ),
        JsonField("risk", "VARCHAR", "SAFE or DESTRUCTIVE for shell commands.", path="$.data.risk"),
        JsonField("hash", "VARCHAR", "Record hash.", meta="hash"),
    ),
    where="kind = 'hook.pre'",
)

TOOL_CALLS = SqlView(
    "tool_calls",
    "Tool calls: pre and post records joined by invocation.",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("invocation", "VARCHAR", "Invocation id."),
        Column("tool", "VARCHAR", "Neutral tool name."),
        Column("decision", "VARCHAR", "Pre-hook decision (NULL when no pre was recorded)."),
        Column("code", "VARCHAR", "Pre-hook refusal code."),
        Column("outcome", "VARCHAR", "success, failure, blocked (denied), or NULL (no post)."),
        Column(
            "duration_ms",
            "BIGINT",
            "Tool run time as the client reported it, else the time between pre and post.",
        ),
        Column("intent", "VARCHAR", "Intent id."),
        *_ACTOR,
        Column("tool_use_id", "VARCHAR", "The client's id of the tool call."),
        Column("pre_seq", "BIGINT", "Seq of the hook.pre record."),
        Column("post_seq", "BIGINT", "Seq of the hook.post record."),
        Column("pre_ts", "TIMESTAMP", "Time of the pre record."),
        Column("post_ts", "TIMESTAMP", "Time of the post record."),
    ),
    """
    SELECT ledger_id, seq, ts, kind, session, client, model, agent,
           json_extract_string(body, '$.invocation') AS invocation,
           json_extract(body, ['$.tool', '$.decision', '$.error.code', '$.outcome',
                               '$.duration_ms', '$.data.intent_id', '$.tool_use_id']) AS f
    FROM {events} WHERE kind IN ('hook.pre', 'hook.post')
    """,
    """
    WITH calls AS (
        SELECT ledger_id, seq, ts, kind, session, client, model, agent, invocation,
               f[1]->>'$' AS tool, f[2]->>'$' AS decision, f[3]->>'$' AS code,
               f[4]->>'$' AS outcome, TRY_CAST(f[5]->>'$' AS BIGINT) AS duration_ms,
               f[6]->>'$' AS intent, f[7]->>'$' AS tool_use_id
        FROM {stage}),
         pre AS (SELECT * FROM calls WHERE kind = 'hook.pre'),
         post AS (SELECT * FROM calls WHERE kind = 'hook.post')
    SELECT coalesce(pre.ledger_id, post.ledger_id) AS ledger_id,
           coalesce(pre.invocation, post.invocation) AS invocation,
           coalesce(pre.tool, post.tool) AS tool, pre.decision, pre.code,
           coalesce(post.outcome, CASE WHEN pre.decision = 'deny' THEN 'blocked' END) AS outcome,
           coalesce(post.duration_ms, date_diff('millisecond', pre.ts, post.ts)) AS duration_ms,
           coalesce(pre.intent, post.intent) AS intent,
           coalesce(pre.session, post.session) AS session,
           coalesce(pre.client, post.client) AS client,
           coalesce(pre.model, post.model) AS model, coalesce(pre.agent, post.agent) AS agent,
           coalesce(pre.tool_use_id, post.tool_use_id) AS tool_use_id,
           pre.seq AS pre_seq, post.seq AS post_seq, pre.ts AS pre_ts, post.ts AS post_ts
    FROM pre FULL OUTER JOIN post
      ON pre.ledger_id = post.ledger_id AND pre.invocation = post.invocation
    """,
)

FILE_RANGES = JsonView(
    "file_ranges",
    "Line attribution: one row per range an agent wrote (hook.post).",
    (
        JsonField("ledger_id", "VARCHAR", "Ledger id.", meta="ledger_id"),
        JsonField("seq", "BIGINT", "Seq of the hook.post record.", meta="seq"),
        JsonField("ts", "TIMESTAMP", "UTC time.", meta="ts"),
        JsonField("path", "VARCHAR", "Workspace-relative path.", expr="r.path"),
        JsonField(
            "start_line",
            "BIGINT",
            "First line (1-based, in the file after the write).",
            expr="r.start_line",
        ),
        JsonField("end_line", "BIGINT", "Last line, inclusive.", expr="r.end_line"),
        JsonField(
            "line_count",
            "BIGINT",
            "end_line - start_line + 1.",
            expr="r.end_line - r.start_line + 1",
        ),
        JsonField(
            "file_sha256",
            "VARCHAR",
            "SHA-256 of the whole file after the write.",
            expr="r.file_sha256",
        ),
        JsonField(
            "content_hash",
            "VARCHAR",
            "'sha256:' of the written lines (format 2; NULL when unknown).",
            expr="r.content_hash",
        ),
        JsonField("tool", "VARCHAR", "Neutral tool name.", path="$.tool"),
        JsonField("intent", "VARCHAR", "Intent id.", path="$.data.intent_id"),
        *_ACTOR_FIELDS,
        JsonField("invocation", "VARCHAR", "Invocation id.", path="$.invocation"),
        JsonField("hash", "VARCHAR", "Record hash.", meta="hash"),
    ),
    where="kind = 'hook.post'",
    unnest="attribution_ranges(v, body)",
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
            source.ledger_id,
            intent_id,
            None if intent is None else intent.name,
            None if intent is None else intent.status,
            [] if intent is None else list(intent.owned_scope),
            state.grants.get(intent_id, []),
            sorted(sessions.get(intent_id, [])),
            state.recent.get(intent_id, []),
            intent is not None,
        )


INTENTS = FoldView(
    "intents",
    "The intent projection: active_intents.yaml joined with the ledger's fold.",
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


def _line_rows(source: LedgerSource) -> Rows:
    # The live files are a workspace's; an export has none (its records still describe them).
    if source.root is None:
        return
    from ledger._projections.explain import AGENT_FIELDS, current_lines  # noqa: PLC0415

    for row in current_lines(source.root, environ=source.environ):
        yield (
            source.ledger_id,
            row["path"],
            row["line"],
            row["content_hash"],
            row["status"],
            row.get("reason"),
            *(row.get(name) for name in AGENT_FIELDS),
        )


LINES = FoldView(
    "lines",
    "The current blame of every live file the ledger describes, one row per line "
    "(files changed on disk since their last record are unknown: run ledger blame PATH).",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("path", "VARCHAR", "Workspace-relative path."),
        Column("line", "BIGINT", "1-based line number."),
        Column("content_hash", "VARCHAR", "Short hash of the line's LF-normalised text."),
        Column("status", "VARCHAR", "agent or unknown (git is resolved per file by ledger blame)."),
        Column("reason", "VARCHAR", "Why a line is unknown."),
        Column("seq", "BIGINT", "Record that wrote the line (agent lines)."),
        Column("record_hash", "VARCHAR", "That record's hash."),
        Column("invocation_id", "VARCHAR", "Invocation id of the tool call."),
        Column("tool_use_id", "VARCHAR", "The client's id of the tool call."),
        Column("tool", "VARCHAR", "Tool (Write, Edit, Bash, ...)."),
        Column("intent_id", "VARCHAR", "Intent the session worked under."),
        Column("session_id", "VARCHAR", "Agent session."),
        Column("client", "VARCHAR", "Agent client."),
        Column("model", "VARCHAR", "Model, as the client reported it."),
        Column("ts", "VARCHAR", "When the record was written."),
    ),
    _line_rows,
)


class ContentView(NamedTuple):
    """Every committed field of every record, with what a person may read of it."""

    name: str
    description: str
    columns: tuple[Column, ...]

    def materialize(
        self,
        con: duckdb.DuckDBPyConnection,
        events: str,
        sources: Sequence[LedgerSource],
        needed: frozenset[str] | None = None,
    ) -> None:
        """One row per ``{"commitment": …}`` found in a body (``json_tree``), joined with the
        disclosures present."""
        del needed
        ensure_disclosed(con, sources)
        con.execute(f"""
            CREATE TABLE {self.name} AS
            SELECT e.ledger_id, e.seq, e.ts, e.kind, e.session,
                   substr(t.path, 3) AS field, t.value->>'$' AS commitment,
                   coalesce(d.state, 'withheld') AS disclosure,
                   coalesce(d.value, '[withheld]') AS value
            FROM (SELECT * FROM {events}
                  WHERE contains(CAST(body AS VARCHAR), '{{"commitment":"')) e,
                 json_tree(e.body) t
            LEFT JOIN _disclosed d ON d.commitment = t.value->>'$'
            WHERE t.key = 'commitment' AND t.type = 'VARCHAR'
              AND regexp_full_match(t.value->>'$', '[0-9a-f]{{64}}')""")


CONTENT = ContentView(
    "content",
    "Committed content (record format v3): one row per committed field, with its disclosed "
    "value, or [withheld] / [forgotten].",
    (
        Column("ledger_id", "VARCHAR", "Ledger id."),
        Column("seq", "BIGINT", "Record seq."),
        Column("ts", "TIMESTAMP", "UTC time."),
        Column("kind", "VARCHAR", "Record kind."),
        Column("session", "VARCHAR", "Client session id."),
        Column("field", "VARCHAR", "Where in the body (prompt, tool_input.command, reason, ...)."),
        Column("commitment", "VARCHAR", "The salted digest the signed record holds (hex)."),
        Column(
            "disclosure",
            "VARCHAR",
            "disclosed (a disclosure present opens it), withheld (none here) or forgotten "
            "(erased by ledger forget).",
        ),
        Column(
            "value",
            "VARCHAR",
            "The disclosed value (JSON text if not a string), else [withheld] or [forgotten].",
        ),
    ),
)


_REGISTRY: dict[str, ViewDefinition] = {
    view.name: view
    for view in (EVENTS, DECISIONS, TOOL_CALLS, FILE_RANGES, INTENTS, LINES, CONTENT)
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
    return {
        view.name: {"description": view.description, "columns": [c._asdict() for c in view.columns]}
        for view in registered_views()
    }
