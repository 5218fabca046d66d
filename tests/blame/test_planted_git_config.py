"""Attack: an agent's shell plants commands in the repository's git config (or a file it
includes), then waits for the person to run ``ledger blame``, ``ledger doctor`` or the next hook
call. None of them may run: ledger's git commands switch every executing setting off
(:func:`ledger._git.git_command`), and the hook path runs no git at all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.blame._world import World, git
from tests.hooks._support import LEDGER


def _plant(root: Path, marker: Path) -> list[str]:
    """Every executing setting an agent could write, each touching ``marker/<name>``."""
    names = [
        "fsmonitor",
        "clean",
        "smudge",
        "process",
        "textconv",
        "pager",
        "hook",
        "included",
        "external",
        "ssh",
        "gpg",
        "askpass",
        "credential",
    ]
    run = {name: f"touch {marker / name}; cat" for name in names}
    included = root / "innocent.cfg"
    included.write_text(f'[filter "y"]\n\tclean = {run["included"]}\n', encoding="utf-8")
    (root / ".gitattributes").write_text("*.py filter=x diff=x\n*.md filter=y\n", encoding="utf-8")
    for key, value in (
        ("core.fsmonitor", f"touch {marker / 'fsmonitor'}; exit 1"),
        ("filter.x.clean", run["clean"]),
        ("filter.x.smudge", run["smudge"]),
        ("filter.x.process", run["process"]),
        ("diff.x.textconv", run["textconv"]),
        ("core.pager", run["pager"]),
        ("pager.blame", run["pager"]),
        ("include.path", str(included)),
        ("diff.external", run["external"]),
        ("core.sshCommand", run["ssh"]),
        ("gpg.program", run["gpg"]),
        ("log.showSignature", "true"),
        ("core.askPass", run["askpass"]),
        ("credential.helper", f"!{run['credential']}"),
    ):
        git(root, "config", key, value)
    hooks = root / ".git" / "hooks"
    for hook in ("post-index-change", "pre-auto-gc", "reference-transaction", "post-checkout"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker / 'hook'}\n", encoding="utf-8")
        (hooks / hook).chmod(0o755)
    return names


@pytest.fixture
def planted(tmp_path: Path) -> tuple[World, Path]:
    world = World(tmp_path)
    (world.root / "app.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (world.root / "notes.md").write_text("a\n", encoding="utf-8")
    git(world.root, "add", "-A")
    git(world.root, "commit", "-qm", "base")
    world.edit("s1", "app.py", "two\n", "TWO\n")
    marker = tmp_path / "ran"
    marker.mkdir()
    _plant(world.root, marker)
    # the planted settings are live: plain git runs them (so the test can fail)
    subprocess.run(
        ["git", "-C", str(world.root), "status"],
        capture_output=True,
        check=False,
        env={**os.environ, "HOME": str(world.root)},
    )
    assert (marker / "fsmonitor").exists()
    for ran in marker.iterdir():
        ran.unlink()
    return world, marker


def _ledger(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LEDGER), *args],
        cwd=world.root,
        env={**world.ws.proc_env, "HOME": str(world.root), "PAGER": "cat"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_planted_git_config_does_not_run_when_the_person_runs_ledger_blame(
    planted: tuple[World, Path],
) -> None:
    world, marker = planted
    for target in ("app.py", "notes.md"):
        done = _ledger(world, "blame", target)
        assert done.returncode == 0, done.stderr
        assert "git" in done.stdout  # git still answered for the committed lines
    assert sorted(p.name for p in marker.iterdir()) == []


def test_planted_git_config_does_not_run_on_ledger_doctor_or_a_hook_call(
    planted: tuple[World, Path],
) -> None:
    world, marker = planted
    _ledger(world, "doctor")
    # The hook call runs no git; it finds the plant (the tripwire) and refuses the call.
    session = world.session("s1")
    target = str(world.root / "src" / "new.py")
    pre = session.pre("Write", {"file_path": target, "content": "x = 1\n"})
    assert pre.code == "TAMPER"
    assert ".git/config was changed" in pre.reason
    assert sorted(p.name for p in marker.iterdir()) == []
