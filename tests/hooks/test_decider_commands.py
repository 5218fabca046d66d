"""``ledger blame``, ``log``, ``show`` and ``intent list`` through the resident decider (decision
0014, "beyond hooks"): the same bytes and exit code as in the caller's own process, for every
usual invocation and its errors, from any directory; and the caller runs them itself whenever
the decider cannot answer (or will not: help, ``log --follow``)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cli import _decider as client
from cli._blame import served
from cli._exit import NotServedError
from cli._intent import served_list
from cli._log import LogOptions, Output, run_log, served_log, served_show
from ledger import CommandCall

from ._support import LEDGER
from .test_decider import Rig, select_payload, write_payload

AGE = re.compile(rb"\d+(?:s|m|h|d|mo|y) ago")


@pytest.fixture
def written(tmp_path: Path) -> Iterator[Rig]:
    """A workspace where an agent rewrote ``src/app.py`` and a person committed it and added
    a line of their own."""
    with Rig(tmp_path, decider="on") as rig:
        yield from _written(rig)


def _written(rig: Rig) -> Iterator[Rig]:
    rig.hook("claude", "PreToolUse", select_payload(rig.root, "s1"))
    rig.hook("claude", "PreToolUse", write_payload(rig.root, "s1", "t1"))
    (rig.root / "src" / "app.py").write_text("x = 2\n", encoding="utf-8")
    rig.hook("claude", "PostToolUse", write_payload(rig.root, "s1", "t1", "PostToolUse"))
    (rig.root / "src" / "person.py").write_text("z = 0\n", encoding="utf-8")
    git = ["git", "-C", str(rig.root), "-c", "user.name=Ann", "-c", "user.email=a@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "agent work"], check=True)
    with (rig.root / "src" / "app.py").open("a", encoding="utf-8") as handle:
        handle.write("y = 3  # by hand\n")
    (rig.root / "src" / "pkg").mkdir()
    yield rig


def _blame(
    rig: Rig, args: list[str], *, cwd: Path, decider: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return _ledger(rig, ["blame", *args], cwd=cwd, decider=decider, extra=extra)


def _ledger(
    rig: Rig, args: list[str], *, cwd: Path, decider: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", LEDGER, *args],
        cwd=cwd,
        env={**rig.env, "LEDGER_DECIDER": decider, **(extra or {})},
        capture_output=True,
        timeout=60,
        check=False,
    )


def _imported_blame(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether the process computed the blame itself (it imported the projections)."""
    return b"ledger._projections.explain" in done.stderr


def _imported_ledger(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether the process imported anything of ledger (it answered itself)."""
    return re.search(rb"\| +ledger(\.|\n|$)", done.stderr, re.MULTILINE) is not None


def _answer(done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    stderr = b"\n".join(
        line for line in done.stderr.splitlines() if not line.startswith(b"import time:")
    )
    return done.returncode, AGE.sub(b"<age>", done.stdout), stderr


def _served_as_here(
    rig: Rig,
    args: list[str],
    *,
    cwd: Path,
    extra: dict[str, str],
    here: Callable[[subprocess.CompletedProcess[bytes]], bool],
) -> subprocess.CompletedProcess[bytes]:
    """Run ``ledger ARGS`` with the decider up and in its own process: the decider answered
    the first, and both printed the same (ages aside)."""
    remote = _ledger(rig, args, cwd=cwd, decider="on", extra=extra)
    local = _ledger(rig, args, cwd=cwd, decider="off", extra=extra)
    assert here(local), args
    assert not here(remote), (args, "the decider did not answer")
    assert _answer(remote) == _answer(local), (args, cwd, extra)
    return remote


INVOCATIONS: list[tuple[list[str], str, dict[str, str]]] = [
    (["src/app.py"], ".", {}),
    (["src/app.py:1"], ".", {}),
    (["--json", "src/app.py"], ".", {}),
    (["--porcelain", "src/app.py:1-2"], ".", {}),
    (["app.py:2"], "src", {}),  # relative to the caller's directory
    (["../app.py", "--json"], "src/pkg", {}),
    (["--root", "..", "app.py:1"], "src", {}),  # --root relative to the caller
    (["app.py:1"], "src", {"LEDGER_ROOT": ".."}),  # so is $LEDGER_ROOT
    (["--at", "2", "src/app.py"], ".", {}),
    (["src/app.py"], ".", {"NO_COLOR": "1"}),
    # git runs with the caller's environment (its global config maps Ann's name), not the
    # environment of the hook that started the decider
    (["--porcelain", "src/person.py"], ".", {"GIT_CONFIG_GLOBAL": "{mailmap_config}"}),
    # errors: the same line and exit code
    (["src/missing.py"], ".", {}),
    (["src/app.py:9"], ".", {}),
    (["src/pkg"], ".", {}),
    (["/etc/hostname"], ".", {}),
    (["src/app.py"], "/", {}),  # no workspace here
]


@pytest.mark.slow
def test_blame_through_the_decider_prints_exactly_what_the_caller_would(written: Rig) -> None:
    (written.root.parent / "mailmap").write_text(
        "Annette <a@example.com> Ann <a@example.com>\n", encoding="utf-8"
    )
    mailmap_config = written.root.parent / "gitconfig"
    mailmap_config.write_text(f"[mailmap]\n\tfile = {written.root.parent / 'mailmap'}\n", "utf-8")
    written.start()
    for args, where, template in INVOCATIONS:
        extra = {
            name: value.format(mailmap_config=mailmap_config) for name, value in template.items()
        }
        remote = _served_as_here(
            written, ["blame", *args], cwd=written.root / where, extra=extra, here=_imported_blame
        )
        if "GIT_CONFIG_GLOBAL" in extra:
            assert b"author Annette" in remote.stdout, remote.stdout


@pytest.mark.slow
def test_blame_usage_the_decider_does_not_serve_is_run_by_the_caller(written: Rig) -> None:
    written.start()
    for args in (["--help"], ["--jsn", "src/app.py"], ["src/app.py", "other.py"]):
        remote = _blame(written, args, cwd=written.root, decider="on")
        local = _blame(written, args, cwd=written.root, decider="off")
        assert _answer(remote) == _answer(local), args


def test_a_command_never_starts_a_decider(written: Rig) -> None:
    """An agent's shell runs the read-only commands too (the shell analysis lets them through
    as reads): a decider they started would hold the agent's PATH and PYTHONPATH and decide
    the client's hook calls. Only hook calls and a person's ``ledger serve`` start one."""
    for args in (["blame", "src/app.py:1"], ["log"], ["show"], ["intent", "list"]):
        done = _ledger(written, args, cwd=written.root, decider="auto")
        assert done.returncode == 0, (args, done.stderr)
        assert _imported_ledger(done), args
    time.sleep(0.5)  # a decider started detached would have bound its socket by now
    assert not written.socket.exists(), "a read-only command started a decider"
    assert not written.status().get("running")


def test_blame_asked_of_a_decider_of_another_version_is_computed_by_the_caller(
    written: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = written.start()
    monkeypatch.setattr(client, "_version", lambda _install: "0.0.0-old")
    monkeypatch.setattr(os, "environ", {**written.env, "LEDGER_DECIDER": "on"})
    monkeypatch.chdir(written.root)
    assert client.command("blame", ["src/app.py"], tty=False) is None
    proc.wait(timeout=10)  # it retired; the next call starts this version's


def test_served_blame_colours_only_a_terminal_without_no_color(written: Rig) -> None:
    env = {**written.env, "LEDGER_DECIDER": "off"}
    where = str(written.root)
    plain = served(CommandCall(["src/app.py"], where, env, tty=False))
    coloured = served(CommandCall(["src/app.py"], where, env, tty=True))
    no_color = served(CommandCall(["src/app.py"], where, {**env, "NO_COLOR": "1"}, tty=True))
    assert plain[0] == coloured[0] == 0
    assert "\x1b[" not in plain[1]
    assert "\x1b[32m" in coloured[1]
    assert no_color == plain


def test_served_blame_leaves_unusual_usage_to_the_caller(written: Rig) -> None:
    env = {**written.env, "LEDGER_DECIDER": "off"}
    for args in (["--help"], [], ["--at", "-1", "src/app.py"]):
        with pytest.raises(NotServedError):
            served(CommandCall(args, str(written.root), env, tty=False))
    code, out, _err = served(CommandCall(["--json", "src/app.py"], str(written.root), env, False))
    assert code == 0
    assert json.loads(out)["file"] == "src/app.py"


READ_COMMANDS: list[tuple[list[str], str, dict[str, str]]] = [
    (["log"], ".", {}),
    (["log", "-n", "3", "--json"], ".", {}),
    (["log", "--kind", "hook.pre"], "src", {}),
    (["log", "--decision", "allow", "--since", "1h"], ".", {"COLUMNS": "60"}),
    (["log", "--root", ".."], "src", {}),
    (["log"], "src/pkg", {"LEDGER_ROOT": "../.."}),
    (["log", "--kind", "hook.prre"], ".", {}),  # a usage error and its hint
    (["log", "-n", "0"], ".", {}),
    (["show"], ".", {}),
    (["show", "1"], "src", {"COLUMNS": "50"}),
    (["show", "--json", "2"], ".", {}),
    (["show", "999"], ".", {}),
    (["intent", "list"], ".", {}),
    (["intent", "list", "--json"], "src", {}),
    (["intent", "list", "--bogus"], ".", {}),
    (["log"], "/", {}),  # no workspace here
]


@pytest.mark.slow
def test_log_show_and_intent_list_through_the_decider_print_exactly_what_the_caller_would(
    written: Rig,
) -> None:
    written.start()
    for args, where, extra in READ_COMMANDS:
        _served_as_here(written, args, cwd=written.root / where, extra=extra, here=_imported_ledger)
    for args in (["log", "--help"], ["log", "--hel"], ["intent", "list", "-h"]):
        remote = _ledger(written, args, cwd=written.root, decider="on")
        assert _imported_ledger(remote), (args, "help is the caller's to print")
        assert _answer(remote) == _answer(_ledger(written, args, cwd=written.root, decider="off"))


def test_a_terminal_callers_width_and_colour_reach_the_decider(
    written: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = write_payload(written.root, "s1", "t-out")
    outside["tool_input"]["file_path"] = str(written.root / "docs" / "notes.md")
    denied = written.hook("claude", "PreToolUse", outside)  # a deny: a long reason to fit
    assert b'"deny"' in denied.stdout
    written.start()
    # the terminal's own width, not $COLUMNS (which pytest's workers may carry)
    environ = {k: v for k, v in written.env.items() if k not in ("COLUMNS", "LINES")}
    monkeypatch.setattr(os, "environ", {**environ, "LEDGER_DECIDER": "on"})
    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((40, 20)))
    monkeypatch.chdir(written.root)
    answered = client.command("log", ["-n", "4"], tty=True)
    assert answered is not None
    code, out, _err = answered
    local = io.StringIO()
    run_log(LogOptions(limit=4), Output(local, dict(os.environ), True, 40, str(written.root)))
    assert code == 0
    assert out.decode() == local.getvalue()
    assert "\x1b[" in local.getvalue()
    wide = io.StringIO()
    run_log(LogOptions(limit=4), Output(wide, dict(os.environ), True, 200, str(written.root)))
    assert wide.getvalue() != local.getvalue(), "the width must shape the lines"


def test_log_follow_and_help_are_left_to_the_caller(written: Rig) -> None:
    env = {**written.env, "LEDGER_DECIDER": "off"}
    for served_command, args in (
        (served_log, ["-f"]),
        (served_log, ["--follow", "-n", "2"]),
        (served_log, ["--help"]),
        (served_show, ["-h"]),
        (served_list, ["--help"]),
    ):
        with pytest.raises(NotServedError):
            served_command(CommandCall(args, str(written.root), env, tty=False))


@pytest.mark.slow
def test_a_caller_printing_in_another_encoding_runs_the_command_itself(written: Rig) -> None:
    """The decider answers in UTF-8; a caller whose streams encode otherwise (``é`` in a
    latin-1 terminal) must print what its own process would."""
    written.start()
    extra = {"PYTHONIOENCODING": "latin-1"}
    remote = _ledger(written, ["log"], cwd=written.root, decider="on", extra=extra)
    assert _imported_ledger(remote), "a latin-1 caller must not print the decider's UTF-8"
    assert remote.returncode == 0
