"""The blame CLI: outputs against the schema, porcelain's git fields, errors and exit codes."""

from __future__ import annotations

import calendar
import contextlib
import io
import json
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli._blame import _epoch, fast_parse, parser
from ledger._projections.blame_schema import SCHEMA_FILE, blame_schema
from tests.blame._world import World, git
from tests.hooks._support import LEDGER

SCHEMAS = Path(__file__).resolve().parent.parent.parent / "schemas"


def test_committed_blame_schema_matches_the_model() -> None:
    committed = json.loads((SCHEMAS / SCHEMA_FILE).read_text(encoding="utf-8"))
    assert committed == blame_schema(), (
        "run `python -m ledger._projections.blame_schema` and commit"
    )


def _cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LEDGER), *args],
        cwd=world.root,
        env=world.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    (w.root / "app.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    git(w.root, "add", "-A")
    git(w.root, "commit", "-qm", "base")
    w.edit("s1", "app.py", "two\n", "TWO\n")
    with (w.root / "app.py").open("a", encoding="utf-8") as handle:
        handle.write("typed by a person\n")
    return w


def test_json_output_is_valid_and_complete(world: World) -> None:
    done = _cli(world, "blame", "--json", "app.py")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    jsonschema.validate(data, blame_schema())
    assert [x["status"] for x in data["lines"]] == ["git", "agent", "git", "unknown"]
    agent = data["lines"][1]
    for key in (
        "seq",
        "record_hash",
        "invocation_id",
        "tool_use_id",
        "tool",
        "intent_id",
        "session_id",
        "client",
        "ts",
    ):
        assert agent[key] is not None, key
    assert data["lines"][0]["commit"]
    assert data["lines"][0]["author"] == "Ann"
    assert data["lines"][3]["reason"]
    assert data["summary"]["agent"] == {"lines": 1, "percent": 25.0}


def test_porcelain_keeps_git_field_meanings(world: World) -> None:
    # line 3 ("three") was line 3 in the commit; an insertion above it moves it to line 4
    text = (world.root / "app.py").read_text(encoding="utf-8")
    (world.root / "app.py").write_text("zero\n" + text, encoding="utf-8")
    done = _cli(world, "blame", "--porcelain", "app.py:4")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split()
    assert header[1:] == ["3", "4", "1"]  # original line, final line, group size (git's order)
    assert "x-ledger-status git" in done.stdout
    agent = _cli(world, "blame", "--porcelain", "app.py:3").stdout
    assert agent.splitlines()[0].startswith("0" * 40 + " 3 3 1")
    assert "x-ledger-status agent" in agent
    assert "x-ledger-session-id s1" in agent


def test_human_output_and_range(world: World) -> None:
    done = _cli(world, "blame", "app.py:2-3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[2] == "agent"
    assert lines[0].endswith("| TWO")
    assert "\x1b[" not in done.stdout  # not a terminal: no colour


def test_at_seq_shows_the_model_then(world: World) -> None:
    records = [
        json.loads(x)
        for x in (world.root / ".orchestration/agent_trace.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    post = next(
        r["seq"] for r in records if r["kind"] == "hook.post" and r["body"].get("tool") == "Edit"
    )
    data = json.loads(_cli(world, "blame", "--json", "--at", str(post), "app.py").stdout)
    assert data["at"] == post
    assert [x["status"] for x in data["lines"]] == ["unknown", "agent", "unknown"]
    assert _cli(world, "blame", "--at", str(post - 1), "app.py").returncode == 2


@pytest.mark.parametrize("target", ["/etc/passwd", ".", "src", "missing.py", "app.py:9"])
def test_bad_targets_are_one_line_exit_2(world: World, target: str) -> None:
    (world.root / "src").mkdir(exist_ok=True)
    done = _cli(world, "blame", target)
    assert done.returncode == 2
    assert done.stderr.startswith("ledger: error: ")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_a_file_the_ledger_never_saw_is_not_an_error(world: World) -> None:
    (world.root / "fresh.txt").write_text("x\n", encoding="utf-8")
    data = json.loads(_cli(world, "blame", "--json", "fresh.txt").stdout)
    assert data["lines"][0]["status"] == "unknown"
    assert "never" in data["lines"][0]["reason"] or "no recorded" in data["lines"][0]["reason"]


def test_output_into_a_closed_pipe_is_not_a_traceback(world: World) -> None:
    blame = subprocess.Popen(
        [str(LEDGER), "blame", "--json", "app.py"],
        cwd=world.root,
        env=world.ws.proc_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert blame.stdout is not None
    assert blame.stderr is not None
    blame.stdout.close()  # the reader went away before blame wrote a byte
    assert blame.wait() == 141  # 128 + SIGPIPE, silently (cli/_exit.py)
    assert blame.stderr.read() == b""


TOKENS = st.sampled_from(
    [
        "app.py",
        "a.py:3",
        "x=y",
        "--json",
        "--porcelain",
        "--at",
        "--at=4",
        "7",
        "-1",
        "--root",
        "--root=/r",
        "/r",
        "--",
        "-h",
        "--js",
        "--at=",
        "--bogus",
        "٣",
    ]
)


@settings(max_examples=400, deadline=None)
@given(argv=st.lists(TOKENS, max_size=6))
def test_fast_parse_agrees_with_argparse(argv: list[str]) -> None:
    """The few-line parser of the usual invocations parses exactly as argparse does, and leaves
    everything else (help, errors, abbreviations) to it."""
    fast = fast_parse(argv)
    if fast is None:
        return
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            full = vars(parser().parse_args(argv))
    except SystemExit:
        pytest.fail(f"fast_parse accepted what argparse refuses: {argv}")
    assert fast == full


def test_fast_parse_takes_the_usual_invocations() -> None:
    assert fast_parse(["src/a.py:3"]) is not None
    assert fast_parse(["--json", "--at", "5", "a.py"]) is not None
    assert fast_parse(["--porcelain", "--root=/w", "a.py:1-4"]) is not None


@given(seconds=st.integers(min_value=0, max_value=2**36))
def test_record_time_to_epoch(seconds: int) -> None:
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".123456Z"
    assert _epoch(ts) == calendar.timegm(time.gmtime(seconds))


@pytest.mark.parametrize("ts", ["", "garbage", "2026-13-01T00:00:00Z", "2026-01-01 00:00:00"])
def test_record_time_that_is_not_one(ts: str) -> None:
    assert _epoch(ts) is None
