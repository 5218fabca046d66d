"""``ledger log`` answers questions (one line per record, filters, follow) and ``ledger show``.

The ledger under test is written by real hook calls (in-process) of a governed session.
"""

from __future__ import annotations

import io
import json
import select
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli._log import (
    KNOWN_KINDS,
    Layout,
    color_enabled,
    format_line,
    layout_for,
    shorten,
    shorten_path,
    summarize,
)
from ledger._evidence.models import KIND_BODIES

from ._support import LEDGER, Session, Workspace, make_workspace, run_cli


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A session that is refused, selects an intent, writes, strays out of scope, and an `rm`."""
    ws = make_workspace(tmp_path_factory.mktemp("log"))
    ws.write("src/auth/a.ts", "export const a = 1;\n")
    alice = Session(ws, "a11ce000-0000-4000-8000-000000000001")
    bob = Session(ws, "b0b00000-0000-4000-8000-000000000002")
    alice.pre("Write", {"file_path": str(ws.path("src/auth/new.ts")), "content": "x"})
    alice.select("INT-001")
    tool_use = alice.tool_use_id()
    alice.pre(
        "Write",
        {"file_path": str(ws.path("src/auth/new.ts")), "content": "x"},
        tool_use_id=tool_use,
    )
    ws.write("src/auth/new.ts", "x")
    alice.post(
        "Write",
        {"file_path": str(ws.path("src/auth/new.ts")), "content": "x"},
        {
            "type": "create",
            "filePath": str(ws.path("src/auth/new.ts")),
            "content": "x",
            "structuredPatch": [],
            "originalFile": None,
        },
        tool_use_id=tool_use,
    )
    alice.pre("Write", {"file_path": str(ws.path("docs/readme.md")), "content": "x"})
    alice.pre("Bash", {"command": "rm -f src/auth/a.ts"})
    bob.pre("Read", {"file_path": str(ws.path("src/auth/a.ts"))})
    return ws


def log(
    ws: Workspace, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return run_cli(["log", "--root", str(ws.root), *args], env or {**ws.proc_env, "COLUMNS": "200"})


def lines(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().splitlines()


def test_each_line_shows_time_session_tool_target_decision_code_reason(governed: Workspace) -> None:
    out = lines(log(governed, "-n", "50"))
    refused = next(line for line in out if "INTENT_REQUIRED" in line)
    words = refused.split()
    # seq, MM-DD, HH:MM:SS, session, tool, target, decision, code, reason...
    assert words[3] == "a11ce000"
    assert words[4:8] == ["Write", "src/auth/new.ts", "deny", "INTENT_REQUIRED"]
    assert "no intent is selected for this session" in refused
    assert any("Bash" in line and "rm -f src/auth/a.ts" in line and " ask " in line for line in out)
    # The post-call record is labelled with its pre-call target and its outcome.
    assert any(" Write " in line and "src/auth/new.ts" in line and " done" in line for line in out)


@pytest.mark.parametrize(
    ("args", "must", "must_not"),
    [
        (["--decision", "deny"], [" deny "], ["rm -f", " allow ", " done"]),
        (["--decision", "ask"], ["rm -f"], [" deny "]),
        (["--code", "scope_violation"], ["docs/readme.md"], ["INTENT_REQUIRED"]),
        (["--tool", "bash"], ["Bash"], ["Write"]),
        (["--session", "b0b0"], ["b0b00000", "Read"], ["a11ce000"]),
        (
            ["--intent", "INT-001", "--kind", "intent.selected"],
            ["intent.selected", "INT-001"],
            ["Write"],
        ),
        (["--kind", "hook.*", "--since", "2999-01-01"], [], ["a11ce000"]),
    ],
)
def test_filters(
    governed: Workspace, args: list[str], must: list[str], must_not: list[str]
) -> None:
    out = lines(log(governed, "-n", "100", *args))
    text = "\n".join(out)
    for fragment in must:
        assert fragment in text, (args, text)
    for fragment in must_not:
        assert fragment not in text, (args, text)
    if must:
        assert out


def test_since_a_duration_keeps_recent_records(governed: Workspace) -> None:
    assert len(lines(log(governed, "--since", "1h", "-n", "100"))) == len(
        lines(log(governed, "-n", "100"))
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--kind", "hook.pree"],
            "--kind 'hook.pree': no such kind in this ledger (did you mean 'hook.pre'?)",
        ),
        (["--decision", "maybe"], "argument --decision: invalid choice: 'maybe'"),
        (["--since", "yesterday"], "--since 'yesterday': use a duration"),
        (["-n", "0"], "must be at least 1"),
        (["--frobnicate"], "No such option: --frobnicate"),
    ],
)
def test_bad_filters_are_one_line_and_a_hint(
    governed: Workspace, args: list[str], fragment: str
) -> None:
    done = log(governed, *args)
    assert done.returncode == 2
    assert done.stdout == b""
    error, hint = done.stderr.decode().splitlines()
    assert error.startswith("ledger: error: ")
    assert fragment in error
    assert hint.startswith("hint: ")


def test_json_is_the_full_records(governed: Workspace) -> None:
    out = lines(log(governed, "--json", "--decision", "deny"))
    stored = governed.ledger_bytes().decode().splitlines()
    assert out
    for line in out:
        assert line in stored
        assert json.loads(line)["body"]["decision"] == "deny"


def test_show_prints_one_record_in_full(governed: Workspace) -> None:
    deny = json.loads(lines(log(governed, "--json", "--code", "SCOPE_VIOLATION"))[0])
    done = run_cli(["show", str(deny["seq"]), "--root", str(governed.root)], governed.proc_env)
    text = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert text.startswith(f"seq {deny['seq']}  hook.pre  ")
    assert "decision  deny  SCOPE_VIOLATION" in text
    assert deny["hash"] in text
    assert '"tool_input": {' in text  # the whole body
    as_json = run_cli(
        ["show", str(deny["seq"]), "--json", "--root", str(governed.root)], governed.proc_env
    )
    assert json.loads(as_json.stdout) == deny

    last = run_cli(["show", "--json", "--root", str(governed.root)], governed.proc_env)
    assert last.stdout.decode().strip() == governed.ledger_bytes().decode().splitlines()[-1]

    missing = run_cli(["show", "9999", "--root", str(governed.root)], governed.proc_env)
    assert missing.returncode == 2
    assert missing.stderr.decode().startswith("ledger: error: no record with seq 9999 (the last")


def test_follow_prints_new_records(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    proc = subprocess.Popen(
        [str(LEDGER), "log", "-f", "-n", "1", "--root", str(ws.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ws.proc_env, "COLUMNS": "120"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
        assert "ledger.genesis" in first
        appended = run_cli(
            ["append", "--kind", "app.deploy", "--root", str(ws.root)],
            ws.proc_env,
            stdin=b'{"version": "v1.2.3"}',
        )
        assert appended.returncode == 0
        deadline = time.monotonic() + 20
        seen = ""
        while "app.deploy" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                seen += proc.stdout.readline().decode()
        assert "app.deploy" in seen
        assert "v1.2.3" in seen
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --- formatting, in-process ---------------------------------------------------------------------

words = st.lists(
    st.text(alphabet="abcdefghij/._-", min_size=1, max_size=12), min_size=1, max_size=12
)


@given(words, st.integers(min_value=2, max_value=80))
def test_shorten_fits_and_cuts_inside_a_word_only_when_the_first_is_too_long(
    parts: list[str], width: int
) -> None:
    text = " ".join(parts)
    short = shorten(text, width)
    assert len(short) <= width
    if short == text:
        return
    assert short.endswith("…")
    stem = short.removesuffix("…")
    if len(parts[0]) < width:  # whole words, cut at a space
        assert stem.split(" ") == parts[: len(stem.split(" "))]
    else:
        assert stem == parts[0][: width - 1]


@given(
    st.lists(st.text(alphabet="abcdef.", min_size=1, max_size=10), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=60),
)
def test_shorten_path_keeps_whole_trailing_components(parts: list[str], width: int) -> None:
    path = "/".join(parts)
    short = shorten_path(path, width)
    assert len(short) <= max(width, 1)
    if short == path or not short.startswith("…/"):
        return  # unchanged, or no trailing component fits: cut like any text (test above)
    assert path.endswith(short[1:])
    assert short[2:].split("/") == parts[-len(short[2:].split("/")) :]


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert color_enabled(Tty(), {})
    assert not color_enabled(Tty(), {"NO_COLOR": "1"})
    assert not color_enabled(io.StringIO(), {})
    row = summarize(
        {
            "seq": 7,
            "ts": "2026-11-21T10:43:00.000000Z",
            "kind": "hook.pre",
            "actor": {"session": "s1"},
            "body": {
                "tool": "Write",
                "decision": "deny",
                "tool_input": {},
                "error": {"code": "SCOPE_VIOLATION", "message": "outside"},
            },
        }
    )
    layout = Layout(seq=2, what=5, target=0, decision=4, code=15, width=100)
    assert "\x1b[31mdeny\x1b[0m" in format_line(row, layout, color=True)
    assert "\x1b[" not in format_line(row, layout, color=False)


def test_a_reason_with_newlines_stays_on_one_line() -> None:
    row = summarize(
        {
            "seq": 1,
            "ts": "2026-11-21T10:43:00.000000Z",
            "kind": "hook.pre",
            "body": {
                "tool": "Edit",
                "decision": "deny",
                "tool_input": {},
                "error": {"code": "STALE_FILE", "message": "changed\n--- a\n+++ b"},
            },
        }
    )
    line = format_line(row, Layout(1, 4, 0, 4, 10, 0))
    assert "\n" not in line
    assert line.endswith("changed --- a +++ b")


def test_known_kinds_cover_every_kind_with_a_body_model() -> None:
    assert set(KIND_BODIES) <= set(KNOWN_KINDS)


def test_log_and_show_do_not_import_typer(governed: Workspace) -> None:
    code = (
        "import sys; from cli._entry import main; main(['log', '--root', sys.argv[1]]); "
        "main(['show', '--root', sys.argv[1]]); "
        "assert 'typer' not in sys.modules and 'pydantic' not in sys.modules, "
        "[m for m in sys.modules if m.startswith(('typer', 'pydantic'))]"
    )
    done = subprocess.run(
        [str(Path(LEDGER).with_name("python")), "-c", code, str(governed.root)],
        env=governed.proc_env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


# --- the terminal: fitted, never wrapped --------------------------------------------------------


def _mcp_session(ws: Workspace) -> None:
    session = Session(ws, "5e55100e-0000-4000-8000-000000000002")
    session.pre(
        "mcp__ledger__select_active_intent", {"intent_id": "INT-001"}, tool_use_id="toolu_01mcp"
    )
    long_path = "src/auth/" + "/".join(["deeply-nested-directory-name"] * 4) + "/middleware.ts"
    session.pre("Write", {"file_path": str(ws.path(long_path)), "content": "x"})
    session.pre("Bash", {"command": "rm -rf " + " ".join(f"build/out-{i}" for i in range(30))})


@pytest.mark.parametrize("columns", [80, 100, 120, 200])
def test_every_line_fits_the_terminal_and_columns_stay_aligned(
    tmp_path: Path, columns: int
) -> None:
    ws = make_workspace(tmp_path)
    _mcp_session(ws)
    ran = log(ws, env={**ws.proc_env, "COLUMNS": str(columns)})
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.decode().splitlines()
    assert len(lines) >= 5
    assert all(len(line) <= columns for line in lines), [len(x) for x in lines]
    # the session column starts at the same place on every line (MCP names do not push it)
    sessions = {line.index(" - ") + 1 if " - " in line else line.index("5e551") for line in lines}
    assert len(sessions) == 1, lines
    mcp = next(line for line in lines if " ledger:" in line)
    assert "mcp__" not in mcp
    assert "None" not in ran.stdout.decode()


def test_each_code_is_shown_once_and_never_none(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    session = Session(ws, "5e55100e-0000-4000-8000-000000000003")
    session.pre("Write", {"file_path": str(ws.path("src/auth/a.ts")), "content": "x"})
    ran = log(ws, env={**ws.proc_env, "COLUMNS": "200"})
    line = next(x for x in ran.stdout.decode().splitlines() if "INTENT_REQUIRED" in x)
    assert line.count("INTENT_REQUIRED") == 1
    assert "None" not in ran.stdout.decode()
    row = summarize({"seq": 3, "ts": "", "kind": "governance.tamper_resolved", "body": {}})
    assert "None" not in " ".join(str(v) for v in row)
    row = summarize({"seq": 4, "ts": "", "kind": "key.revoked", "body": {"kid": "ed25519-1"}})
    assert "None" not in row.target


def test_a_filter_that_matches_nothing_says_so(governed: Workspace) -> None:
    ran = log(governed, "--code", "NO_SUCH_CODE")
    assert ran.returncode == 0
    assert ran.stdout.decode() == "no records match\n"
    assert log(governed, "--code", "NO_SUCH_CODE", "--json").stdout == b""


def test_a_long_tool_name_is_cut_not_pushed() -> None:
    row = summarize(
        {
            "seq": 1,
            "ts": "2026-11-21T10:43:00.000000Z",
            "kind": "hook.pre",
            "body": {"tool": "mcp__some_server_with_a_long_name__do_the_thing", "tool_input": {}},
        }
    )
    layout = layout_for([row], 80)
    line = format_line(row, layout)
    assert len(line) <= 80
    assert "some_server" in line
    assert "…" in line
