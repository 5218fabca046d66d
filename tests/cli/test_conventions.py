"""CLI conventions: --version, -h, plain flags, one-line usage errors with a hint (exit 2),
--json wherever data is printed, intent select/expand/expansions/withdraw, shell completion,
and the interactive commands staying clear of Typer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from cli import _log
from cli._app import app
from cli._help import COMMANDS
from ledger import __version__

# In this process: these tests are about what a command prints and its exit code, which a new
# interpreter would not change (tests/cli/inprocess.py).
from tests.cli.inprocess import run_ledger as run

LEDGER = Path(sys.executable).parent / "ledger"
INTENTS = """\
active_intents:
    - id: "INT-001"
      name: "JWT Authentication Migration"
      status: "IN_PROGRESS"
      owned_scope: ["src/auth/**"]
"""


def run_at_terminal(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """As a person types it: stdin is a terminal (a pty). A scope grant counts only when a
    person made it (ledger/_governance/state.py); from a pipe, `intent expand` records nothing."""
    import pty  # noqa: PLC0415

    controller, terminal = pty.openpty()
    try:
        return subprocess.run(
            [str(LEDGER), *args],
            stdin=terminal,
            capture_output=True,
            text=True,
            check=False,
            env=env,
            timeout=120,
        )
    finally:
        os.close(controller)
        os.close(terminal)


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "CLAUDE_", "GEMINI_"))
    }
    env["LEDGER_HOME"] = str(tmp_path / "home")
    root = tmp_path / "ws"
    assert run("init", "--parents", "--root", str(root), env=env).returncode == 0
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    return root, env


def test_version_and_short_help() -> None:
    for flag in ("--version", "-V"):
        done = run(flag)
        assert (done.returncode, done.stdout) == (0, f"ledger {__version__}\n")
    for args in ([], ["-h"], ["--help"]):
        done = run(*args)
        assert done.returncode == 0
        assert done.stdout.startswith("Usage: ledger [OPTIONS] COMMAND")
    assert "Usage: ledger verify" in run("verify", "-h").stdout
    assert "usage: ledger log" in run("log", "-h").stdout


def _all_commands(group: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    command = typer.main.get_command(group)
    names: list[tuple[str, ...]] = []
    for name, sub in getattr(command, "commands", {}).items():
        names.append((*prefix, name))
        names += [(*prefix, name, inner) for inner in getattr(sub, "commands", {})]
    return names


def test_fast_top_level_help_lists_every_command() -> None:
    top = {names[0] for names in _all_commands(app)}
    assert {name for name, _ in COMMANDS} == top, "add the command to cli/_help.py COMMANDS"


def test_no_flag_shows_a_bool_metavar() -> None:
    for names in _all_commands(app):
        done = run(*names, "--help")
        assert done.returncode == 0, (names, done.stderr)
        assert "<bool>" not in done.stdout, names
        assert "BOOLEAN" not in done.stdout, names


@pytest.mark.parametrize(
    ("args", "fragment", "hint"),
    [
        (["verify", "--bogus"], "No such option: --bogus", "hint: ledger verify --help"),
        (["frobnicate"], "No such command 'frobnicate'", "hint: ledger --help"),
        (["key", "revoke"], "Missing argument 'KID'", "hint: ledger key revoke --help"),
        (["install", "claud"], "'claud' is not one of claude", "hint: ledger install --help"),
        (["uninstall", "zed"], "'zed' is not one of", "hint: ledger uninstall --help"),
        (["log", "--decision", "maybe"], "invalid choice: 'maybe'", "hint: ledger log --help"),
        (
            ["intent", "list", "--bogus"],
            "No such option: --bogus",
            "hint: ledger intent list --help",
        ),
    ],
)
def test_usage_error_is_one_line_and_a_hint(args: list[str], fragment: str, hint: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    error, hint_line = done.stderr.splitlines()
    assert error.startswith("ledger: error: ")
    assert fragment in error
    assert hint_line == hint


def test_json_wherever_data_is_printed(ws: tuple[Path, dict[str, str]]) -> None:
    root, env = ws
    for args in (
        ["intent", "list"],
        ["show"],
        ["key", "list"],
        ["log"],
        ["doctor"],
        ["intent", "expansions"],
        ["verify"],
    ):
        done = run(*args, "--json", "--root", str(root), env=env)
        assert done.returncode in (0, 1), (args, done.stderr)
        text = done.stdout.strip()
        assert text, args
        for chunk in text.splitlines() if args == ["log"] else [text]:
            json.loads(chunk)


def test_intent_select_without_a_session_is_refused(ws: tuple[Path, dict[str, str]]) -> None:
    root, env = ws
    done = run("intent", "select", "INT-001", "--root", str(root), env=env)
    assert done.returncode == 2
    assert "`ledger intent select` needs --session ID" in done.stderr
    bound = run(
        "intent", "select", "INT-001", "--session", "s1", "--json", "--root", str(root), env=env
    )
    assert json.loads(bound.stdout)["session"] == "s1"
    # Inside an agent's shell the session comes from the client's variable.
    inside = run(
        "intent", "clear", "--root", str(root), env={**env, "CLAUDE_CODE_SESSION_ID": "s1"}
    )
    assert inside.stdout == "session s1: intent cleared (was INT-001)\n"


@pytest.mark.parametrize(
    "glob", ["../outside/**", "/etc/**", "**", ".orchestration/**", "*.yaml", "~/x"]
)
def test_intent_expand_refuses_globs_leaving_the_workspace_or_opening_orchestration(
    ws: tuple[Path, dict[str, str]],
    glob: str,
) -> None:
    root, env = ws
    before = (root / ".orchestration" / "agent_trace.jsonl").read_bytes()
    done = run("intent", "expand", "INT-001", glob, "--root", str(root), env=env)
    assert done.returncode == 3
    assert done.stderr.startswith("ledger: error: cannot expand INT-001: ")
    assert (root / ".orchestration" / "agent_trace.jsonl").read_bytes() == before


def test_expansions_are_listed_and_withdrawn_as_records(ws: tuple[Path, dict[str, str]]) -> None:
    root, env = ws
    base = ["--root", str(root)]
    assert (
        run_at_terminal(
            "intent", "expand", "INT-001", "docs/**", "--reason", "API docs", *base, env=env
        ).returncode
        == 0
    )
    (grant,) = json.loads(run("intent", "expansions", "--json", *base, env=env).stdout)
    assert (grant["glob"], grant["via"], grant["reason"], grant["withdrawn_seq"]) == (
        "docs/**",
        "cli",
        "API docs",
        None,
    )
    listed = json.loads(run("intent", "list", "--json", *base, env=env).stdout)
    assert listed[0]["expansions"] == ["docs/**"]

    wrong = run("intent", "withdraw", "INT-001", "src/auth/**", *base, env=env)
    assert wrong.returncode == 3
    assert "it is in owned_scope: edit active_intents.yaml" in wrong.stderr
    done = run("intent", "withdraw", "INT-001", "docs/**", "--reason", "done", *base, env=env)
    assert done.stdout == "INT-001 scope: src/auth/**\n"
    last = json.loads((root / ".orchestration" / "agent_trace.jsonl").read_bytes().splitlines()[-1])
    assert last["kind"] == "intent.scope_withdrawn"
    assert last["body"]["globs"] == ["docs/**"]
    assert json.loads(run("intent", "expansions", "--json", *base, env=env).stdout) == []
    (old,) = json.loads(run("intent", "expansions", "--all", "--json", *base, env=env).stdout)
    assert old["withdrawn_seq"] == last["seq"]
    assert json.loads(run("intent", "list", "--json", *base, env=env).stdout)[0]["expansions"] == []
    assert run("verify", *base, env=env).returncode == 0


def test_shell_completion_is_installable_and_completes() -> None:
    # The shell is detected from the parent process, as when a person types it in bash.
    shown = subprocess.run(
        ["bash", "-c", f"'{LEDGER}' --show-completion"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "_ledger_completion" in shown.stdout
    env = {
        **os.environ,
        "_LEDGER_COMPLETE": "complete_bash",
        "COMP_WORDS": "ledger in",
        "COMP_CWORD": "1",
    }
    completed = run(env=env)
    assert set(completed.stdout.split()) >= {"init", "install", "intent"}


def _completions(line: str) -> set[str]:
    """What bash completion offers for the last word of ``line`` (empty after a space)."""
    words = line.split(" ")
    env = {
        **os.environ,
        "_LEDGER_COMPLETE": "complete_bash",
        "COMP_WORDS": line,
        "COMP_CWORD": str(len(words) - 1),
    }
    return set(run(env=env).stdout.split())


@pytest.mark.parametrize("command", ["install", "uninstall", "hook"])
def test_completion_offers_the_registrys_client_names(command: str) -> None:
    from ledger import CLIENT_NAMES  # noqa: PLC0415

    assert _completions(f"ledger {command} ") == set(CLIENT_NAMES)
    assert _completions(f"ledger {command} c") == {n for n in CLIENT_NAMES if n.startswith("c")}


@pytest.mark.parametrize(
    ("command", "parser"), [("log", _log.log_parser), ("show", _log.show_parser)]
)
def test_completion_offers_every_option_of_log_and_show(
    command: str, parser: Callable[[], _log.CommandParser]
) -> None:
    options = {
        o for a in parser()._actions for o in a.option_strings if o.startswith("--")
    }  # argparse keeps no public list of its options
    assert {"--root", "--json", "--help"} <= options
    assert _completions(f"ledger {command} --") == options
    assert _completions(f"ledger {command} -") >= options
    if command == "log":
        assert {"--count", "--kind", "--session", "--decision", "--since"} <= options
        assert _completions("ledger log -n 5 --decision ") == {"allow", "ask", "deny"}
        assert _completions("ledger log --decision d") == {"deny"}


def test_interactive_commands_do_not_import_typer(ws: tuple[Path, dict[str, str]]) -> None:
    root, env = ws
    # The first read of a changed intents file parses YAML and caches it; then no more.
    assert run("intent", "list", "--root", str(root), env=env).returncode == 0
    (root / "notes.txt").write_text("a line\n", encoding="utf-8")
    code = (
        "import sys, io, contextlib\nfrom cli._entry import main\n"
        "for args in (['--help'], ['--version'], ['intent', 'list', '--root', sys.argv[1]], "
        "['log', '--root', sys.argv[1]], ['show', '--root', sys.argv[1]], "
        "['blame', '--root', sys.argv[1], sys.argv[1] + '/notes.txt']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(args) == 0, args\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('typer', 'click', 'rich', 'pydantic', 'duckdb', 'yaml')]\n"
        "assert not heavy, heavy\n"
        # nor the hook engine (a name imported from ledger at module level can pull it in)
        "engine = [m for m in sys.modules if m.startswith(('ledger._hooks', 'ledger._gover"
        "nance.engine'))]\n"
        "assert not engine, engine\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_help_names_what_a_value_is_never_a_python_type() -> None:
    for names in _all_commands(app):
        done = run(*names, "--help")
        assert done.returncode == 0, (names, done.stderr)
        leaked = re.findall(r"<(?:str|int|float|path|list\[[^\]]*\]|Path)>", done.stdout)
        assert not leaked, (names, leaked)


def test_a_reversed_range_has_its_own_message(ws: tuple[Path, dict[str, str]]) -> None:
    root, env = ws
    (root / "a.py").write_text("1\n2\n3\n4\n5\n6\n")
    done = run("blame", "a.py:5-2", "--root", str(root), env=env, cwd=root)
    assert done.returncode == 2
    assert done.stderr == "ledger: error: 5-2 is a reversed range: blame a.py:2-5\n"


def test_a_per_user_client_without_user_is_a_usage_error(tmp_path: Path) -> None:
    for command in ("install", "uninstall"):
        done = run(command, "antigravity", "--root", str(tmp_path))
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith("ledger: error: Antigravity CLI reads hooks only from")
        assert "add --user" in line


def test_blame_usage_errors_are_one_line_like_every_command() -> None:
    for args in (["blame"], ["blame", "a.py", "--bogus"]):
        done = subprocess.run(
            [str(LEDGER), *args], capture_output=True, text=True, check=False, timeout=60
        )
        assert done.returncode == 2
        error, hint = done.stderr.splitlines()
        assert error.startswith("ledger: error: ")
        assert hint == "hint: ledger blame --help"


def test_top_level_help_names_every_subcommand_of_each_group() -> None:
    top = run("--help").stdout
    for names in _all_commands(app):
        if len(names) == 2:  # a group's subcommand: named on the group's line
            line = next(x for x in top.splitlines() if x.strip().startswith(names[0] + " "))
            assert names[1] in line, (names, line)
