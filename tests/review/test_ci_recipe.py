"""The CI recipe of docs/review.md, run as it stands: its ``git`` and ``ledger`` commands, in a
runner's clone of a pull request whose agent lines and evidence a teammate pushed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ledger._evidence.ledger import Ledger
from ledger._evidence.remote import push_evidence
from tests.blame._world import World, git
from tests.hooks._support import clean_env
from tests.review._support import commit

DOC = Path(__file__).resolve().parents[2] / "docs" / "review.md"


def _recipe(title: str) -> list[str]:
    """The ``git`` and ``ledger`` command lines of the YAML block under ``### title``."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### {title}\n", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    commands = []
    for raw in block.splitlines():
        line = raw.strip().removeprefix("- ").removeprefix("run: ").strip()
        if line.startswith(("ledger ", "git ")):
            commands.append(line)
    return commands


def test_the_recipes_name_the_commands_a_ci_job_needs() -> None:
    for title in ("GitHub Actions", "GitLab CI"):
        commands = _recipe(title)
        assert commands[-3:-1] == ["ledger init", "ledger fetch origin"] or commands[:2] == [
            "ledger init",
            "ledger fetch origin",
        ], commands
        [review] = [c for c in commands if c.startswith("ledger review")]
        assert "--markdown" in review
        assert "--fail-on" in review
        assert review.split("> ", 1)[1].startswith("review.md")
    text = DOC.read_text(encoding="utf-8")
    assert "fetch-depth: 0" in text
    assert 'GIT_DEPTH: "0"' in text
    assert "--body-file review.md" in text
    assert '"body@review.md"' in text


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A teammate (clone A) commits their public key with the code, opens a branch whose
    lines an agent wrote, pushes it and the evidence; returns the bare remote."""
    (tmp_path / "a").mkdir()
    a = World(tmp_path / "a")
    (a.root / "README").write_text("hello\n", encoding="utf-8")
    git(a.root, "add", "-f", ".orchestration/keys", ".orchestration/active_intents.yaml")
    commit(a, "base, with the team's pinned keys")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    git(a.root, "push", "-q", "origin", "main")
    git(a.root, "checkout", "-q", "-b", "feature")
    a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    (a.root / "README").write_text("hello\nby a person\n", encoding="utf-8")
    commit(a, "feature")
    git(a.root, "push", "-q", "origin", "feature")
    push_evidence(Ledger.open(a.root, environ=a.ws.env))
    return bare


def _runner(tmp_path: Path, bare: Path, name: str) -> tuple[Path, dict[str, str]]:
    """What the CI checkout leaves: the pull request's branch with its history."""
    clone = tmp_path / name
    subprocess.run(
        ["git", "clone", "-q", "-b", "feature", str(bare), str(clone)],
        check=True,
        capture_output=True,
    )
    env = clean_env(tmp_path / f"{name}-home")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path / f"{name}-home")
    return clone, env


def _run(commands: list[str], clone: Path, env: dict[str, str]) -> None:
    script = "set -e\n" + "\n".join(commands) + "\nexit ${status:-0}\n"
    done = subprocess.run(
        ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("title", ["GitHub Actions", "GitLab CI"])
def test_the_recipe_reviews_the_pull_request_in_a_fresh_runner(
    pull_request: Path, tmp_path: Path, title: str
) -> None:
    clone, env = _runner(tmp_path, pull_request, title.split(maxsplit=1)[0].lower())
    commands = [c.replace("${{ github.base_ref }}", "main") for c in _recipe(title)]
    env["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"] = "main"
    _run(commands, clone, env)
    comment = (clone / "review.md").read_text(encoding="utf-8")
    assert comment.startswith("### ledger review `origin/main...HEAD`")
    assert re.search(
        r"\| added/changed \| 2 \(66\.67%\) \| 1 \(33\.33%\) \| 0 \(0%\) \| 0 \| 3 \|", comment
    )
    assert "1/1 ledgers verified" not in comment  # the runner's own ledger and the teammate's
    assert "2/2 ledgers verified" in comment
    assert len(comment) < 65_536
