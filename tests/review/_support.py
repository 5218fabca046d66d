"""A world for reviews: agents (the real hook path) and a person commit in one repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ledger._evidence.ledger import Ledger
from tests.blame._clones import Clones
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


def _git_in(root: Path, data: bytes, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], input=data, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def shared_clones(tmp_path: Path) -> Clones:
    """A's agent writes two lines of ``src/app.py`` and a person one of ``README``; B fetched
    code and evidence."""
    clones = Clones(tmp_path)
    (clones.a.root / "README").write_text("hello\n", encoding="utf-8")
    commit(clones.a, "base")
    clones.a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    (clones.a.root / "README").write_text("hello\nby a person\n", encoding="utf-8")
    commit(clones.a)
    assert clones.push()
    clones.pull()
    return clones


def doctor_teammate_ref(clones: Clones, how: str) -> str:
    """Move B's kept ref of A's ledger to a commit whose segment was changed by hand: ``a
    record edited``, or else an unreadable line inserted in the middle of the chain."""
    ref = f"refs/ledger-remotes/origin/{clones.a_ledger.ledger_id}"
    good = git(clones.b_root, "rev-parse", ref).strip()
    segment = subprocess.run(
        ["git", "-C", str(clones.b_root), "cat-file", "blob", f"{good}:agent_trace.jsonl"],
        capture_output=True,
        check=True,
    ).stdout
    if how == "a record edited":
        forged = segment.replace(b'"session":"s1"', b'"session":"s9"')
    else:  # a line no parser reads, in the middle of the chain
        first_end = segment.index(b"\n") + 1
        forged = segment[:first_end] + b'{"kind":"hook.post", not json\n' + segment[first_end:]
    assert forged != segment
    blob = _git_in(clones.b_root, forged, "hash-object", "-w", "--stdin")
    note = git(clones.b_root, "rev-parse", f"{good}:checkpoint.note").strip()
    entries = f"100644 blob {blob}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
    tree = _git_in(clones.b_root, entries.encode(), "mktree")
    planted = git(clones.b_root, "commit-tree", tree, "-m", "x").strip()
    git(clones.b_root, "update-ref", ref, planted)
    return ref


def run_fix(clones: Clones, fix: str) -> None:
    """Run in B the fix a reader printed, as written (``git … && ledger …``; a parenthesised
    note after it is advice, not a command)."""
    for step in fix.split(" (", maxsplit=1)[0].split(" && "):
        if step.startswith("git "):
            git(clones.b_root, *step.split()[1:])
        else:
            assert step.startswith("ledger "), step
            done = run_in_process(
                step.split()[1:], stdin=b"", cwd=clones.b_root, env={**os.environ, **clones.b_env}
            )
            assert done.returncode == 0, done.stderr
