"""A world for reviews: agents (the real hook path) and a person commit in one repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ledger._evidence.ledger import Ledger
from tests.blame._world import World, git
from tests.cli.inprocess import run_in_process


def commit(world: World | Path, message: str = "work") -> str:
    root = world if isinstance(world, Path) else world.root
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, "--allow-empty")
    return git(root, "rev-parse", "HEAD").strip()


def based_world(tmp_path: Path) -> tuple[World, str]:
    """A world with one person's commit to review against."""
    world = World(tmp_path)
    (world.root / "README").write_text("hello\n", encoding="utf-8")
    return world, commit(world, "base")


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return run_in_process(["review", *args], stdin=b"", cwd=root, env={**os.environ, **env})


def review_json(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = cli(root, env, *args, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def shallow_review(source: Path, tmp_path: Path, spec: str, *clone_args: str) -> str:
    """``ledger review spec`` in a depth-1 clone of ``source`` with a ledger: its one line of
    stderr (the exit code is asserted: 2)."""
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", *clone_args, f"file://{source}", str(shallow)],
        check=True,
    )
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    Ledger.init(shallow, environ=env)
    done = cli(shallow, env, spec)
    assert done.returncode == 2
    [line] = done.stderr.decode().splitlines()
    return line
