"""No program planted in the current folder is found, run, or written into a hook command.

An empty or relative ``PATH`` entry is the current folder (``shutil.which``, ``subprocess`` and
``execvp`` agree), and for a hook, ``ledger mcp`` or the decider that is the agent's workspace,
where a runner (``npm run x``, quiet by design) can leave any file. Each test plants an
executable that leaves a mark when it runs, puts a current-folder entry first on ``PATH``, and
checks that what ledger does next neither runs it nor names it
(``ledger/_startup/search_path.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger._clients.settings import default_ledger_command, script_interpreter
from ledger._git import git_command, git_environment, run_bounded
from ledger._governance.executors import CommandHook
from ledger._startup.search_path import absolute_search_path, program_on_path

from .test_engine import inv

#: ``PATH`` spellings that name the current folder (first, so that it would win).
CURRENT_FOLDER_FIRST = ("", ".", "./", "bin/..", ":", "::")


def _plant(folder: Path, name: str, mark: Path) -> Path:
    planted = folder / name
    planted.write_text(f"#!/bin/sh\necho planted > {mark}\necho 2.1.332\n", encoding="utf-8")
    planted.chmod(0o755)
    return planted


def _path_with_the_current_folder_first(entry: str) -> str:
    """``entry`` before this process's absolute folders (where git and python3 are)."""
    return os.pathsep.join([entry, absolute_search_path(None)])


@given(st.lists(st.sampled_from(["", ".", "..", "bin", "./x", "/usr/bin", "/bin", "/opt/a b"])))
def test_the_search_path_keeps_every_absolute_folder_in_order_and_nothing_else(
    entries: list[str],
) -> None:
    kept = absolute_search_path(os.pathsep.join(entries)).split(os.pathsep)
    absolute = [entry for entry in entries if entry.startswith("/")]
    assert all(folder.startswith("/") for folder in kept)
    assert kept == (absolute or [f for f in os.defpath.split(os.pathsep) if f.startswith("/")])


@pytest.mark.parametrize("entry", CURRENT_FOLDER_FIRST)
def test_a_program_planted_in_the_current_folder_is_never_found(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bin").mkdir()
    for folder in (tmp_path, tmp_path / "bin"):
        _plant(folder, "planted-tool", tmp_path / "ran")
    assert program_on_path("planted-tool", _path_with_the_current_folder_first(entry)) is None
    assert program_on_path("sh", _path_with_the_current_folder_first(entry)) == shutil.which("sh")


@pytest.mark.parametrize("entry", CURRENT_FOLDER_FIRST)
def test_install_never_writes_a_ledger_planted_in_the_current_folder_into_the_hooks(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ledger.install`` embedded in a script (its ``argv[0]`` is no ``ledger``) looks the
    command up on ``PATH``: the planted one would run on every hook call, outside any sandbox."""
    planted = _plant(tmp_path, "ledger", tmp_path / "ran")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "embedding.py")])
    monkeypatch.setenv("PATH", _path_with_the_current_folder_first(entry))
    command = default_ledger_command()
    assert str(planted) not in command
    assert "./ledger" not in command
    assert command.split()[-1] in ("ledger", str(shutil.which("ledger")))


def test_an_env_shebang_never_names_an_interpreter_planted_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "tool" / "ledger"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env python3\n", encoding="utf-8")
    planted = _plant(tmp_path, "python3", tmp_path / "ran")
    monkeypatch.chdir(tmp_path)
    for entry in CURRENT_FOLDER_FIRST:
        monkeypatch.setenv("PATH", _path_with_the_current_folder_first(entry))
        found = script_interpreter(script)
        assert found is None or (found.is_absolute() and found != planted), entry


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("entry", CURRENT_FOLDER_FIRST)
def test_a_git_planted_in_the_current_folder_is_never_run(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ledger mcp``'s blame, ``review``, ``push``/``fetch`` and install's checks run git in
    the folder they were started in: with a current-folder entry first, git was the agent's."""
    mark = tmp_path / "ran"
    _plant(tmp_path, "git", mark)
    (tmp_path / "bin").mkdir()
    _plant(tmp_path / "bin", "git", mark)
    monkeypatch.chdir(tmp_path)
    env = git_environment({**os.environ, "PATH": _path_with_the_current_folder_first(entry)})
    done = run_bounded(git_command(tmp_path, "--version", env=env), env=env, timeout=30)
    assert done.stdout.startswith(b"git version")
    assert not mark.exists()


@pytest.mark.parametrize("entry", CURRENT_FOLDER_FIRST)
def test_a_configured_hook_never_runs_a_program_planted_in_the_workspace(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``hooks.yaml`` hook named by a bare program runs in the workspace, outside any
    sandbox: the inherited ``PATH`` is searched in its absolute folders only."""
    mark = tmp_path / "ran"
    _plant(tmp_path, "lint-check", mark)
    base = {**os.environ, "PATH": _path_with_the_current_folder_first(entry)}
    for command in (["lint-check"], "lint-check"):
        hook = CommandHook("lint", command, cwd=str(tmp_path), base_env=base)
        outcome = hook(inv("Write", {"file_path": str(tmp_path / "a.ts")}, cwd=str(tmp_path)))
        assert outcome.error is not None, command  # not found: a hook error, as for any typo
    assert not mark.exists()


def test_a_configured_hook_keeps_the_path_its_configuration_sets(tmp_path: Path) -> None:
    """A ``PATH`` the hook's own ``env:`` names is the person's configuration, kept as it is."""
    mark = tmp_path / "ran"
    _plant(tmp_path, "lint-check", mark)
    hook = CommandHook("lint", ["lint-check"], cwd=str(tmp_path), env={"PATH": str(tmp_path)})
    hook(inv("Write", {"file_path": str(tmp_path / "a.ts")}, cwd=str(tmp_path)))
    assert mark.exists()
