"""``ledger query`` ends by itself and never prints a traceback: a time limit (a recursive CTE
that never ends is interrupted), a memory limit, one-line errors for any SQL (hand-picked
hostile inputs and hypothesis-generated ones), and ``--out`` refusing the protected paths."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import InputError, QuerySession
from tests.query._governed import Governed, governed_workspace
from tests.query.test_query import query

NEVER_ENDS = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
)


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Governed:
    return governed_workspace(tmp_path_factory.mktemp("limits"))


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("ledger: warning:")]


def _one_line_or_ok(done: subprocess.CompletedProcess[str], sql: str) -> None:
    """The contract for any SQL: an answer (0), or one line and exit 3 (invalid input)."""
    assert "Traceback" not in done.stderr, (sql, done.stderr)
    if done.returncode == 0:
        return
    assert done.returncode == 3, (sql, done.returncode, done.stderr)
    errors = _errors(done.stderr)
    assert len(errors) == 1, (sql, done.stderr)
    assert errors[0].startswith("ledger: error: "), (sql, done.stderr)


def test_a_recursive_cte_that_never_ends_stops_at_the_time_limit(governed: Governed) -> None:
    done = query(governed, NEVER_ENDS, "--timeout", "0.5")
    assert done.returncode == 3, done.stderr
    assert _errors(done.stderr) == [
        "ledger: error: the query ran longer than 0.5 s and was stopped; narrow it, or allow "
        "more with --timeout SECONDS"
    ]


@pytest.mark.parametrize("timeout", [1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.2])
def test_the_time_limit_holds_whenever_it_falls(governed: Governed, timeout: float) -> None:
    """Up while the ledger loads, between two statements or during the query: an interrupt
    that lands between statements is lost, so the timer keeps interrupting until the end."""
    sources = [governed.ws.source]
    with (
        pytest.raises(InputError, match="ran longer than"),
        QuerySession(sources, NEVER_ENDS, timeout=timeout) as session,
    ):
        session.output("table", None)


def test_the_time_limit_comes_from_the_environment_too(governed: Governed) -> None:
    done = query(governed, NEVER_ENDS, env={"LEDGER_QUERY_TIMEOUT": "0.3"})
    assert done.returncode == 3
    assert "longer than 0.3 s" in done.stderr


def test_the_time_limit_is_on_by_default(governed: Governed) -> None:
    with QuerySession([governed.ws.source], "SELECT 1") as session:
        timeout = session._timeout  # the default is the point
        assert session._timer is not None
    assert timeout is not None
    assert 0 < timeout <= 30


def test_a_query_over_the_memory_limit_stops_with_one_line(governed: Governed) -> None:
    sql = "SELECT list(range) FROM range(20000000)"
    done = query(governed, sql, "--memory-limit", "20MB")
    assert done.returncode == 3, done.stderr
    assert _errors(done.stderr) == [
        "ledger: error: the query needs more than 20MB of memory and was stopped; narrow it, "
        "or allow more with --memory-limit SIZE"
    ]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--memory-limit", "lots"), "memory limit 'lots'"),
        (("--timeout", "0"), "positive number of seconds"),
        (("--timeout", "-1"), "positive number of seconds"),
    ],
)
def test_bad_limits_are_one_line(governed: Governed, args: tuple[str, ...], words: str) -> None:
    done = query(governed, "SELECT 1", *args)
    assert done.returncode == 3
    assert len(_errors(done.stderr)) == 1
    assert words in done.stderr


# The four inputs that printed tracebacks (invalid UTF-8 reached DuckDB's parser as surrogates;
# casts and binder errors surfaced when the rows were fetched, outside the error handling),
# then the rest of the hostile corpus.
TRACEBACKS = [
    "SELECT 1 -- \udcff",
    "SELECT 1::INT[]",
    "SELECT 'abc'::INT",
    "SELECT * FROM (SELECT 1) t(a, b)",
]
HOSTILE = [
    "",
    " ",
    "-- only a comment",
    "/* only a comment */",
    ";",
    "SELECT 1; SELECT 2",
    "SELECT 1;;",
    "PRAGMA version",
    "PRAGMA enable_external_access",
    "SET enable_external_access = true",
    "RESET lock_configuration",
    "COPY events TO '/tmp/x.csv'",
    "ATTACH '/tmp/x.db'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CALL pragma_version()",
    "EXPLAIN SELECT 1",
    "DESCRIBE events",
    "SUMMARIZE events",
    "SELECT $1",
    "SELECT ?",
    "SELECT $name",
    "SELECT 'a\x00b'",
    "SELECT '" + "x" * 200_000 + "'",
    "SELECT " + "(" * 3000 + "1" + ")" * 3000,
    "SELECT " + " + ".join(["1"] * 5000),
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT getenv('HOME')",
    "SELECT current_setting('temp_directory')",
    "SELECT 1/0",
    "SELECT [1, 2][5]",
    "SELECT 9223372036854775807 + 1",
    "SELECT '2024-13-45'::DATE",
    "SELECT json('{')",
    "SELECT body->>'$.x'::INT FROM events",
    "SELECT * FROM events, events",
    "SELECT * FROM decisions NATURAL JOIN nope",
    "SELECT unnest(range(3)) GROUP BY 1 HAVING",
    "WITH x AS (SELECT 1) SELECT * FROM x, x",
    "SELECT 'é' || '\U0001f600'",
    "\ufeffSELECT 1",
    "SELECT error('boom')",
    "SELECT * FROM range(10) WHERE range = 'x'",
]


@pytest.mark.parametrize("sql", TRACEBACKS + HOSTILE)
def test_hostile_sql_is_an_answer_or_one_line(governed: Governed, sql: str) -> None:
    _one_line_or_ok(query(governed, "--", sql), sql)


_WORDS = st.sampled_from(
    [
        "SELECT",
        "FROM",
        "WHERE",
        "events",
        "decisions",
        "intents",
        "1",
        "'x'",
        "*",
        ",",
        "(",
        ")",
        ";",
        "::INT",
        "::DATE",
        "[1]",
        "UNION",
        "ALL",
        "WITH",
        "RECURSIVE",
        "AS",
        "x",
        "JOIN",
        "ON",
        "=",
        "+",
        "/",
        "0",
        "NULL",
        "ORDER",
        "BY",
        "GROUP",
        "LIMIT",
        "--",
        "/*",
        "*/",
        "$1",
        "?",
        "COPY",
        "TO",
        "PRAGMA",
        "'\x00'",
        "body->>'a'",
        "range(3)",
        "list(",
    ]
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sql=st.one_of(
        st.lists(_WORDS, max_size=14).map(" ".join),
        st.text(max_size=60),
        st.binary(max_size=40).map(lambda b: "SELECT " + b.decode("utf-8", "surrogateescape")),
    )
)
def test_any_sql_is_an_answer_or_one_line(governed: Governed, sql: str) -> None:
    _one_line_or_ok(query(governed, "--timeout", "5", "--", sql), sql)


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "parquet"])
def test_a_query_that_fails_midway_through_its_rows_is_the_querys_error(
    governed: Governed, tmp_path: Path, fmt: str
) -> None:
    """A cast failing on row 150,001, after the first batches were written: the query's error
    (exit 3), not a file that could not be written (exit 2), and no file left behind."""
    sql = "SELECT CASE WHEN range > 150000 THEN 'x'::INT ELSE 1 END FROM range(200000)"
    out = tmp_path / f"r.{fmt}"
    done = query(governed, sql, "--format", fmt, "--out", str(out))
    assert done.returncode == 3, done.stderr
    errors = _errors(done.stderr)
    assert len(errors) == 1
    assert errors[0].startswith("ledger: error: Conversion Error")
    assert "cannot write" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_session_refuses_sql_that_is_not_text(governed: Governed) -> None:
    for sql in ("SELECT 1 -- \udcff", "SELECT 'a\x00b'"):
        with pytest.raises(InputError):
            QuerySession([governed.ws.source], sql)


# --- --out is a write -------------------------------------------------------------------------


def test_query_out_cannot_overwrite_the_ledger_even_with_force(governed: Governed) -> None:
    root = governed.ws.root
    ledger = root / ".orchestration" / "agent_trace.jsonl"
    before = ledger.read_bytes()
    (root / "link.csv").symlink_to(ledger)
    home = Path(os.environ.get("HOME", "~")).expanduser()
    for target in (
        ledger,
        root / ".orchestration" / "new.csv",
        root / ".orchestration" / "intents.yaml",
        root / "link.csv",
        root / ".claude" / "settings.json",
        root / ".codex" / "config.toml",
        home / ".claude" / "settings.json",
    ):
        done = query(governed, "SELECT 1", "--format", "csv", "--out", str(target), "--force")
        assert done.returncode == 3, (target, done.stderr)
        errors = _errors(done.stderr)
        assert len(errors) == 1
        assert "refusing --out" in errors[0]
    assert ledger.read_bytes() == before
    assert not (root / ".orchestration" / "new.csv").exists()
    (root / "link.csv").unlink()


def test_query_out_cannot_plant_a_git_config_or_hook(governed: Governed) -> None:
    """A CSV result shaped as a config section (`[core]` / `fsmonitor = ...`) would run the
    agent's code on the person's next git command."""
    root = governed.ws.root
    sql = "SELECT 'touch /tmp/pwned' AS \"[core] fsmonitor\""
    for target in (root / ".git" / "config", root / ".git" / "hooks" / "pre-commit"):
        target.parent.mkdir(parents=True, exist_ok=True)
        done = query(governed, sql, "--format", "csv", "--out", str(target), "--force")
        assert done.returncode == 3, done.stderr
        assert "git's configuration" in done.stderr
        assert not target.exists()


def test_query_out_cannot_replace_a_hard_link_to_the_ledger(governed: Governed) -> None:
    root = governed.ws.root
    ledger = root / ".orchestration" / "agent_trace.jsonl"
    alias = root / "alias.jsonl"
    os.link(ledger, alias)
    try:
        done = query(governed, "SELECT 1", "--out", str(alias), "--force")
        assert done.returncode == 3
        assert "hard link" in done.stderr
    finally:
        alias.unlink()


def test_query_out_cannot_write_the_key_folder(governed: Governed, tmp_path: Path) -> None:
    home = tmp_path / "ledger-home"
    (home / "keys").mkdir(parents=True)
    done = query(
        governed, "SELECT 1", "--out", str(home / "keys" / "k.pem"), env={"LEDGER_HOME": str(home)}
    )
    assert done.returncode == 3
    assert "signing keys" in done.stderr
    assert not (home / "keys" / "k.pem").exists()


def test_query_out_writes_a_new_file_and_refuses_an_existing_one(
    governed: Governed, tmp_path: Path
) -> None:
    out = tmp_path / "result.csv"
    first = query(governed, "SELECT 1 AS n", "--format", "csv", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert out.read_text(encoding="utf-8") == "n\n1\n"
    again = query(governed, "SELECT 2 AS n", "--format", "csv", "--out", str(out))
    assert again.returncode == 3
    assert "--force" in again.stderr
    assert out.read_text(encoding="utf-8") == "n\n1\n"
