"""``ledger query``: the views, the sandbox (refused AND nothing changed on disk), bad input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from ledger import InputError, LedgerSource, NotInitializedError, QuerySession, registered_views
from tests.cli.inprocess import run_ledger
from tests.query._governed import ALICE, BOB, Governed, governed_workspace

LEDGER_BIN = Path(sys.executable).parent / "ledger"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Governed:
    return governed_workspace(tmp_path_factory.mktemp("governed"))


def rows(governed: Governed, sql: str) -> list[tuple[object, ...]]:
    with QuerySession([governed.ws.source], sql) as session:
        return session.run().fetchall()


def tree_state(*roots: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under ``roots``: (sha256, size, mtime_ns); directories by their listing."""
    state: dict[str, tuple[str, int, int]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            st = path.lstat()
            if path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digest = ",".join(sorted(p.name for p in path.iterdir())) if path.is_dir() else ""
            state[str(path)] = (digest, st.st_size, st.st_mtime_ns)
    return state


def unwritable_dir(tmp_path: Path) -> Path:
    """A directory this process cannot create files in (root ignores modes: use /proc)."""
    if os.geteuid() == 0:
        return Path("/proc")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    return locked


# --- views --------------------------------------------------------------------------------


def test_decisions_hold_every_pre_hook_outcome(governed: Governed) -> None:
    found = rows(
        governed, "SELECT decision, code, tool, intent, session FROM decisions ORDER BY seq"
    )
    codes = [r[1] for r in found]
    assert codes == [
        None if c == "-" else c
        for c in (
            "INTENT_REQUIRED",
            "-",
            "-",
            "SCOPE_VIOLATION",
            "DESTRUCTIVE_COMMAND",
            "ORCHESTRATION_PROTECTED",
            "-",
            "-",
            "STALE_FILE",
        )
    ]
    assert [r[0] for r in found].count("deny") == 4
    assert ("ask", "DESTRUCTIVE_COMMAND", "Bash", "INT-001", ALICE) in found
    assert {r[4] for r in found} == {ALICE, BOB}


def test_decisions_paths_are_a_list_of_workspace_paths(governed: Governed) -> None:
    found = rows(governed, "SELECT paths FROM decisions WHERE tool = 'Edit' AND code IS NULL")
    assert found == [(["src/auth/middleware.ts"],)]


def test_tool_calls_join_pre_and_post_by_invocation(governed: Governed) -> None:
    found = rows(
        governed,
        "SELECT tool, decision, outcome, duration_ms, pre_seq < post_seq "
        "FROM tool_calls WHERE tool IN ('Edit', 'Write') AND outcome = "
        "'success' ORDER BY pre_seq",
    )
    assert [r[:3] for r in found] == [("Edit", "allow", "success"), ("Write", "allow", "success")]
    assert found[0][3] == 41  # the client's duration wins
    assert all(r[4] for r in found)
    blocked = rows(governed, "SELECT count(*) FROM tool_calls WHERE outcome = 'blocked'")
    assert blocked == [(4,)]


def test_file_ranges_one_row_per_attributed_range(governed: Governed) -> None:
    found = rows(
        governed,
        "SELECT path, start_line, end_line, line_count, session, "
        "length(file_sha256) FROM file_ranges ORDER BY seq",
    )
    assert found == [
        ("src/auth/middleware.ts", 4, 4, 1, ALICE, 64),
        ("src/auth/middleware.ts", 6, 6, 1, BOB, 64),
    ]


def test_intents_view_folds_the_ledger_over_the_intents_file(governed: Governed) -> None:
    found = rows(
        governed,
        "SELECT intent_id, status, declared, active_sessions, "
        "len(recent_changes) FROM intents ORDER BY intent_id",
    )
    assert found[0] == ("INT-001", "active", True, sorted([ALICE, BOB]), 2)
    assert [r[0] for r in found] == ["INT-001", "INT-002", "INT-009"]


def test_every_view_has_exactly_its_documented_columns(governed: Governed) -> None:
    for view in registered_views():
        described = rows(governed, f"SELECT column_name, column_type FROM (DESCRIBE {view.name})")
        assert described == [(c.name, c.type) for c in view.columns], view.name


def test_a_view_loaded_alone_equals_the_view_derived_from_events(governed: Governed) -> None:
    alone = rows(governed, "SELECT * FROM decisions ORDER BY seq")
    with_events = rows(
        governed, "SELECT * FROM decisions WHERE seq IN (SELECT seq FROM events) ORDER BY seq"
    )
    assert alone == with_events


def test_events_body_is_json_with_late_keys_kept(tmp_path: Path) -> None:
    # auto-detection samples 20,480 rows and drops keys that first appear later (findings §5)
    from tests.hooks._support import make_workspace  # noqa: PLC0415

    ws = make_workspace(tmp_path)
    from ledger import Entry, Ledger  # noqa: PLC0415

    ledger = Ledger.open(ws.root, environ=ws.env)
    ledger.append_many([Entry("app.event", {"n": i}) for i in range(21_000)])
    ledger.append("app.event", {"late": "here"})
    with QuerySession(
        [ws.source],
        "SELECT body->>'$.late', typeof(body) FROM events WHERE kind = 'app.event' "
        "AND body->>'$.late' IS NOT NULL",
    ) as session:
        assert session.run().fetchall() == [("here", "JSON")]


# --- the sandbox ----------------------------------------------------------------------------


def _attacks(ledger: Path, outside: Path) -> list[str]:
    return [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/passwd')",
        f"SELECT * FROM read_text('{ledger}')",
        f"SELECT * FROM read_blob('{ledger}')",
        "SELECT (SELECT count(*) FROM read_csv('/etc/passwd')) AS n FROM events",
        f"COPY events TO '{outside / 'out.csv'}'",
        f"COPY (SELECT 'pwned') TO '{ledger}' (FORMAT csv, USE_TMP_FILE false)",
        f"ATTACH '{outside / 'x.db'}' AS x",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "RESET enable_external_access",
        "PRAGMA enable_external_access",
        f"CREATE TABLE t AS SELECT * FROM read_text('{ledger}')",
        f"EXPORT DATABASE '{outside / 'dump'}'",
        f"SELECT * FROM glob('{ledger.parent}/*')",
        f"SELECT * FROM glob('{outside}/*')",
    ]


def test_every_attack_is_refused_and_nothing_on_disk_changes(
    governed: Governed, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    before = tree_state(governed.ws.root, outside)
    cwd = Path.cwd()
    os.chdir(governed.ws.root)  # DuckDB's default spill directory is ./.tmp
    try:
        for sql in _attacks(governed.ledger_path, outside):
            with pytest.raises(InputError):
                rows(governed, sql)
    finally:
        os.chdir(cwd)
    assert tree_state(governed.ws.root, outside) == before


def test_the_locked_connection_itself_refuses_files_settings_and_extensions(
    governed: Governed, tmp_path: Path
) -> None:
    # Defence in depth: even a statement that slipped past the one-SELECT rule is refused.
    before = tree_state(governed.ws.root, tmp_path)
    with QuerySession(
        [governed.ws.source],
        "SELECT count(*) FROM events",
    ) as session:
        assert session.con is not None
        for sql in _attacks(governed.ledger_path, tmp_path):
            if sql.startswith("SELECT (SELECT") or sql.startswith("CREATE TABLE t"):
                continue
            with pytest.raises(duckdb.Error):
                session.con.execute(sql)
        assert session.run().fetchall()[0][0] > 0
    assert tree_state(governed.ws.root, tmp_path) == before


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; SELECT 2",
        "SELECT 1; COPY events TO '/tmp/x'",
        "DELETE FROM events",
        "UPDATE events SET seq = 0",
        "INSERT INTO events SELECT * FROM events",
        "CREATE TABLE x (a INT)",
        "DROP TABLE events",
        "CALL checkpoint()",
        "DETACH memory",
    ],
)
def test_only_one_select_statement_is_accepted(governed: Governed, sql: str) -> None:
    with pytest.raises(InputError):
        rows(governed, sql)


# --- bad input --------------------------------------------------------------------------------


def test_unknown_view_names_the_views(governed: Governed) -> None:
    with pytest.raises(InputError, match=r"unknown view 'lines_of_nope'.*decisions"):
        rows(governed, "SELECT * FROM lines_of_nope")


def test_bad_sql_is_duckdbs_message_on_one_line(governed: Governed) -> None:
    with pytest.raises(InputError) as caught:
        rows(governed, "SELEC decision\nFROM decisions")
    assert "\n" not in str(caught.value)
    assert "syntax error" in str(caught.value)


def test_empty_ledger_is_a_clear_error(tmp_path: Path) -> None:
    from tests.hooks._support import make_workspace  # noqa: PLC0415

    ws = make_workspace(tmp_path)
    (ws.orchestration / "agent_trace.jsonl").write_bytes(b"")
    with pytest.raises(NotInitializedError, match="no records"):
        rows(Governed(ws, ws.orchestration / "agent_trace.jsonl"), "SELECT * FROM events")


def test_torn_tail_queries_the_complete_records(governed: Governed, tmp_path: Path) -> None:
    import shutil  # noqa: PLC0415

    copy = tmp_path / "ws"
    shutil.copytree(governed.ws.root, copy)
    path = copy / ".orchestration" / "agent_trace.jsonl"
    count = len(path.read_bytes().splitlines())
    with path.open("ab") as handle:
        handle.write(b'{"actor":{"agent":null,"client":"cla')
    source = LedgerSource.workspace(copy, environ=governed.ws.env)
    with QuerySession([source], "SELECT count(*) FROM events") as session:
        assert session.run().fetchall() == [(count,)]


# --- CLI ---------------------------------------------------------------------------------------


def cli(
    governed: Governed, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``ledger ARGS`` in this process (tests/cli/inprocess.py): its output and exit code, in
    the governed workspace's subprocess environment (its ledger home: its pinned keys, its
    caches' secret, never the real ``~/.config/ledger``)."""
    base = governed.ws.proc_env
    return run_ledger(*args, env={**base, **(env or {}), "COLUMNS": "200"}, cwd=cwd)


def query(
    governed: Governed, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``ledger query --root <the governed workspace> ARGS`` (:func:`cli`)."""
    return cli(governed, "query", "--root", str(governed.ws.root), *args, env=env)


def test_cli_formats(governed: Governed, tmp_path: Path) -> None:
    sql = "SELECT code, count(*) AS n FROM decisions WHERE decision = 'deny' GROUP BY code"
    table = query(governed, sql)
    assert table.returncode == 0, table.stderr
    assert "STALE_FILE" in table.stdout
    assert "(4 rows)" in table.stdout
    as_json = query(governed, sql, "--format", "json")
    assert sum(r["n"] for r in json.loads(as_json.stdout)) == 4
    as_csv = query(governed, sql, "--format", "csv")
    assert as_csv.stdout.splitlines()[0] == "code,n"
    out = tmp_path / "r.parquet"
    done = query(governed, sql, "--format", "parquet", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert duckdb.execute(f"SELECT sum(n) FROM '{out}'").fetchall() == [(4,)]
    again = query(governed, sql, "--format", "parquet", "--out", str(out))
    assert again.returncode == 3
    assert "--force" in again.stderr
    assert query(governed, sql, "--format", "parquet", "--out", str(out), "--force").returncode == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_cli_bad_input_exit_codes(governed: Governed, tmp_path: Path) -> None:
    for args, needle in [
        (("SELECT 1", "--format", "xml"), "unknown format"),
        (("SELECT 1", "--format", "parquet"), "--out"),
        (("SELEC 1",), "syntax error"),
        (("SELECT * FROM nope",), "unknown view"),
        (("COPY events TO 'x.csv'",), "read-only"),
    ]:
        done = query(governed, *args)
        assert done.returncode == 3, (args, done.stderr)
        assert needle in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
    done = query(
        governed, "SELECT 1", "--format", "csv", "--out", str(unwritable_dir(tmp_path) / "x.csv")
    )
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr


def test_cli_schema_and_help_list_views_and_columns(governed: Governed) -> None:
    schema = cli(governed, "query", "--schema")
    assert schema.returncode == 0
    for view in registered_views():
        assert f"{view.name}:" in schema.stdout
        assert all(c.name in schema.stdout for c in view.columns)
    helptext = cli(governed, "query", "--help").stdout
    assert "file_ranges: ledger_id, seq" in helptext
    as_json = json.loads(cli(governed, "query", "--schema", "--json").stdout)
    assert [c["name"] for c in as_json["decisions"]["columns"]][:4] == [
        "ledger_id",
        "seq",
        "ts",
        "decision",
    ]


def test_cli_failing_ledger_still_queries_with_a_warning(
    governed: Governed, tmp_path: Path
) -> None:
    import shutil  # noqa: PLC0415

    copy = tmp_path / "tampered"
    shutil.copytree(governed.ws.root, copy)
    path = copy / ".orchestration" / "agent_trace.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"decision":"deny"', b'"decision":"allow"', 1))
    done = cli(
        governed,
        "query",
        "SELECT count(*) AS n FROM decisions WHERE decision = 'deny'",
        "--root",
        str(copy),
        "--format",
        "csv",
    )
    assert done.returncode == 0
    assert done.stdout.splitlines()[1] == "3"
    assert "warning" in done.stderr
    assert "FAILED" in done.stderr
    assert "bad-hash" in done.stderr


def test_cli_many_ledgers_union_with_ledger_id(governed: Governed, tmp_path: Path) -> None:
    import shutil  # noqa: PLC0415

    (tmp_path / "second").mkdir()
    other = governed_workspace(tmp_path / "second")
    shutil.copytree(governed.ws.root, tmp_path / "first" / "ws")
    tampered = tmp_path / "first" / "ws" / ".orchestration" / "agent_trace.jsonl"
    tampered.write_bytes(
        tampered.read_bytes().replace(b'"decision":"deny"', b'"decision":"allow"', 1)
    )
    done = cli(
        governed,
        "query",
        "SELECT ledger_id, count(*) AS n FROM decisions GROUP BY ALL",
        "--ledgers",
        str(tmp_path / "*" / "ws"),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert len(found) == 2
    assert {r["n"] for r in found} == {9}
    assert str(tmp_path / "first" / "ws") in done.stderr
    assert "FAILED" in done.stderr
    assert str(other.ws.root) not in done.stderr
    none = cli(governed, "query", "SELECT 1", "--ledgers", str(tmp_path / "nothing*"))
    assert none.returncode == 3
    assert "matches no workspace" in none.stderr


# --- loading only the columns a statement uses ------------------------------------------------

PRUNED = [
    "SELECT decision, code, count(*) FROM decisions GROUP BY ALL ORDER BY ALL",
    "SELECT count(*) FROM decisions",
    "SELECT d.tool, d.paths FROM decisions AS d WHERE d.code IS NOT NULL ORDER BY d.seq",
    "SELECT a.seq, b.seq FROM decisions a JOIN decisions b USING (invocation) ORDER BY 1",
    "SELECT path, sum(line_count) FROM file_ranges GROUP BY path",
    "SELECT * EXCLUDE (reason) FROM decisions ORDER BY seq",
    "SELECT decisions FROM decisions ORDER BY seq",
    "SELECT COLUMNS('^c') FROM decisions ORDER BY seq",
    "SELECT t.outcome, f.path FROM tool_calls t JOIN file_ranges f USING (invocation)",
    "SELECT seq FROM decisions NATURAL JOIN file_ranges",
]


@pytest.mark.parametrize("sql", PRUNED)
def test_loading_only_used_columns_gives_the_full_answer(
    governed: Governed, sql: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pruned = rows(governed, sql)
    from ledger._query import engine  # noqa: PLC0415

    full = engine._Analysis
    real = engine._analyze
    monkeypatch.setattr(engine, "_analyze", lambda con, sql: full(real(con, sql).tables, None))
    assert rows(governed, sql) == pruned


def test_a_column_the_analysis_misses_is_retried_in_full(
    governed: Governed, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ledger._query import engine  # noqa: PLC0415

    real = engine._analyze
    monkeypatch.setattr(
        engine,
        "_analyze",
        lambda con, sql: engine._Analysis(real(con, sql).tables, frozenset({"seq"})),
    )
    assert len(rows(governed, "SELECT reason FROM decisions WHERE code IS NOT NULL")) == 5


# --- attribution in both record formats -------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_paths = st.text(alphabet="abc/._-é", min_size=1, max_size=12)
_ranges = st.lists(
    st.tuples(st.integers(1, 500), st.integers(0, 40)).map(lambda t: [t[0], t[0] + t[1]]),
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(_paths, _ranges, max_size=3))
def test_attribution_macro_reads_v1_as_the_upcaster_does(added: dict[str, list[list[int]]]) -> None:
    from ledger._evidence.upcast import upcast  # noqa: PLC0415
    from ledger._query.views import ATTRIBUTION_RANGES_MACRO  # noqa: PLC0415

    seen = {path: f"{abs(hash(path)):064x}"[:64] for path in added}
    v1_body = {"data": {"added_lines": added, "seen": seen, "changed": sorted(added)}}
    v2 = upcast({"v": 1, "kind": "hook.post", "body": v1_body})
    con = duckdb.connect()
    con.execute(ATTRIBUTION_RANGES_MACRO)

    def ranges(v: int, body: dict[str, Any]) -> list[tuple[object, ...]]:
        found = con.execute(
            "SELECT unnest(attribution_ranges(?, ?::JSON), recursive := true)",
            [v, json.dumps(body)],
        ).fetchall()
        return sorted((r[0], r[1], r[2], r[3]) for r in found)

    expected = sorted((path, a, b, seen[path]) for path, rs in added.items() for a, b in rs)
    assert ranges(1, v1_body) == expected
    assert ranges(2, v2["body"]) == expected
