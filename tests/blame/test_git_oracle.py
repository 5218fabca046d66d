"""git blame as an oracle: one commit per agent write; ledger blame must agree line by line.

Each write goes through the Claude hook path as a PostToolUse payload (``originalFile`` and
``content``) and is then committed, so every commit is exactly one tool call. For each line of
the final file, ``git blame`` names a commit; ``ledger blame`` names a tool call (or, for the
content committed before the ledger saw the file, that same base commit). Lines are drawn from
a small vocabulary so duplicates (``}``, blank lines) are common: the hard case for a line
model. Writes also move and copy blocks of lines. ``git blame`` without ``-M`` and the ledger
both count a moved or copied line as written by the call that moved it, while ``git blame -M
-C`` credits the commit the text came from: lines on which those two git answers differ, and
lines whose text was ever moved or copied, are reported in their own bucket (decision 0008, "git
blame as an oracle"); the agreement goal is measured on the other lines.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from tests.blame._world import World, git

VOCABULARY = ["}", "", "    return x", "else {", "    pass", "# note"]


def _mutate(rng: random.Random, lines: list[str], counter: list[int], moved: set[str]) -> list[str]:
    """The next version of ``lines``; the texts of the blocks it moved or copied go into
    ``moved`` (after a copy, which instance a later edit kept is a matter of diff heuristics,
    in git's blame as in any line model)."""
    new = list(lines)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["insert", "replace", "delete"] if new else ["insert"])
        if len(new) > 4 and rng.random() < 0.06:
            kind = rng.choice(["move", "copy"])
        if kind in ("move", "copy"):
            start = rng.randrange(len(new) - 2)
            block = new[start : start + rng.randint(2, 3)]
            if kind == "move":
                del new[start : start + len(block)]
            at = rng.randrange(len(new) + 1)
            new[at:at] = block
            moved.update(block)
            continue
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


def _git_blame(root: Path, relative: str, *options: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "blame", "--porcelain", *options, "--", relative],
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
    moved: set[str] = set()
    for _ in range(40):
        lines = _mutate(rng, lines, counter, moved)
        tool_use_id = world.write("s1", relative, "".join(f"{x}\n" for x in lines))
        git(world.root, "commit", "-qam", f"write {tool_use_id}")
        tool_of_commit[git(world.root, "rev-parse", "HEAD").strip()] = tool_use_id
    commits = _git_blame(world.root, relative)
    origins = _git_blame(world.root, relative, "-M", "-C")
    report = world.blame(relative)
    assert len(commits) == len(report.lines) == len(origins)
    buckets = {"lines": [0, 0], "moved or copied": [0, 0]}
    for commit, origin, row in zip(commits, origins, report.lines, strict=True):
        if row.status == "agent":
            same = row.facts["tool_use_id"] == tool_of_commit.get(commit)
        elif row.status == "git":
            same = row.facts["commit"] == commit
        else:
            same = False
        ordinary = origin == commit and row.text not in moved
        bucket = buckets["lines" if ordinary else "moved or copied"]
        bucket[0] += same
        bucket[1] += 1
    for name, (agree, total) in buckets.items():
        rate = agree / total if total else 1.0
        print(f"seed {seed}: {name}: git-blame agreement {agree}/{total} = {rate:.2%}")  # noqa: T201 -- the reported figures (pytest -s)
    agree, total = buckets["lines"]
    assert agree / total >= 0.995
    assert buckets["moved or copied"][1] > 0  # the bucket is exercised
