"""git blame as an oracle: one commit per agent write; ledger blame must agree line by line.

Each write goes through the Claude hook path as a PostToolUse payload (``originalFile`` and
``content``) and is then committed, so every commit is exactly one tool call. For each line of
the final file, ``git blame`` names a commit; ``ledger blame`` names a tool call (or, for the
content committed before the ledger saw the file, that same base commit). Lines are drawn from
a small vocabulary so duplicates (``}``, blank lines) are common: the hard case for a line
model. Moves are not generated: ``git blame`` without ``-M`` and the ledger both count a moved
line as deleted and added, so they agree there by construction.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from tests.blame._world import World, git

VOCABULARY = ["}", "", "    return x", "else {", "    pass", "# note"]


def _mutate(rng: random.Random, lines: list[str], counter: list[int]) -> list[str]:
    new = list(lines)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["insert", "replace", "delete"] if new else ["insert"])
        at = rng.randrange(len(new) + (1 if kind == "insert" else 0))
        counter[0] += 1
        made = [
            rng.choice(VOCABULARY) if rng.random() < 0.4 else f"stmt_{counter[0]}_{i}"
            for i in range(rng.randint(1, 4))
        ]
        if kind == "insert":
            new[at:at] = made
        elif kind == "replace":
            new[at : at + rng.randint(1, 3)] = made
        else:
            del new[at : at + rng.randint(1, 3)]
    return new


def _git_blame(root: Path, relative: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "blame", "--porcelain", "--", relative],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [
        line.split()[0]
        for line in out.splitlines()
        if len(line.split(" ")[0]) == 40 and len(line.split()) >= 3
    ]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_ledger_blame_agrees_with_git_blame(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 -- replayable by seed, not a secret
    world = World(tmp_path)
    relative = "src/app.c"
    counter = [0]
    lines = [f"base_{i}" if i % 3 else rng.choice(VOCABULARY) for i in range(30)]
    (world.root / "src").mkdir()
    (world.root / relative).write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    git(world.root, "add", "-A")
    git(world.root, "commit", "-qm", "base")
    tool_of_commit: dict[str, str] = {}
    for _ in range(40):
        lines = _mutate(rng, lines, counter)
        tool_use_id = world.write("s1", relative, "".join(f"{x}\n" for x in lines))
        git(world.root, "commit", "-qam", f"write {tool_use_id}")
        tool_of_commit[git(world.root, "rev-parse", "HEAD").strip()] = tool_use_id
    commits = _git_blame(world.root, relative)
    report = world.blame(relative)
    assert len(commits) == len(report.lines)
    agree = 0
    for commit, row in zip(commits, report.lines, strict=True):
        if row.status == "agent":
            agree += row.facts["tool_use_id"] == tool_of_commit.get(commit)
        elif row.status == "git":
            agree += row.facts["commit"] == commit
    rate = agree / len(commits)
    print(f"seed {seed}: git-blame agreement {agree}/{len(commits)} = {rate:.2%}")  # noqa: T201 -- the reported figure (pytest -s)
    assert rate >= 0.995
