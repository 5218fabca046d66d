"""``ledger blame`` against ``git blame`` on a replayed real history (decision 0010).

Every first-parent commit of a real repository becomes one agent write per file it changed:
the exact attribution the hook computes (:func:`ledger._governance.attribution.file_change`,
old version -> new version, renames as moves) folded into the blame projection
(:data:`ledger._projections.BLAME`). At the end each line of every file at ``HEAD`` names a
write, that is a commit; ``git blame --first-parent`` names one too. The figure is the share of
lines on which they agree (target ≥ 99.9%), with the diff git's own (``git diff --no-index``,
the default when git is on PATH) and, for comparison, libgit2's (``--diff pygit2``).

The fold is what is measured: records are built in memory, unsigned (the alignment does not
depend on the ledger file).

    python bench/bench_git_agreement.py [--repo PATH] [--suffix .py] [--diff git|pygit2|both]
        [--json]

``--repo`` defaults to this repository; the documented figure is on a 369-commit project
(``pallets/itsdangerous``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import say

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger._governance import attribution  # noqa: E402
from ledger._governance.attribution import file_change  # noqa: E402
from ledger._projections import BLAME  # noqa: E402


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


class _Blobs:
    """``git cat-file --batch`` as one process: the text of ``rev:path``."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        if self.proc.stdin is None or self.proc.stdout is None:
            raise RuntimeError("git cat-file has no pipes")
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def text(self, spec: str) -> str | None:
        self.stdin.write(spec.encode() + b"\n")
        self.stdin.flush()
        header = self.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "surrogateescape")

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def _changes(repo: Path, parent: str | None, commit: str, suffix: str) -> list[list[str]]:
    if parent is None:
        out = _git(repo, "ls-tree", "-r", "--name-only", commit)
        return [["A", p] for p in out.splitlines() if p.endswith(suffix)]
    out = _git(repo, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status", parent, commit)
    rows = [line.split("\t") for line in out.splitlines()]
    return [r for r in rows if r[-1].endswith(suffix) or r[1].endswith(suffix)]


def replay(repo: Path, suffix: str) -> tuple[Any, dict[str, str], int, float]:
    """The blame state after every first-parent commit as agent writes; seq -> commit."""
    commits = _git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    blobs = _Blobs(repo)
    state = BLAME.initial()
    commit_of: dict[str, str] = {}
    seq = 0
    spent = 0.0
    for parent, commit in zip([None, *commits], commits, strict=False):
        files = []
        for row in _changes(repo, parent, commit, suffix):
            status, path = row[0][0], row[-1]
            previous = row[1] if status == "R" else None
            if status == "D":
                files.append(
                    file_change(
                        path, old=None, old_known=True, old_sha256=None, new=None, new_sha256=None
                    )
                )
                continue
            old = blobs.text(f"{parent}:{previous or path}") if parent else None
            new = blobs.text(f"{commit}:{path}")
            if new is None or not path.endswith(suffix):
                continue
            started = time.perf_counter()
            change = file_change(
                path,
                old=old,
                old_known=True,
                old_sha256=_sha(old),
                new=new,
                new_sha256=_sha(new),
                previous_path=previous,
            )
            spent += time.perf_counter() - started
            files.append(change)
        if not files:
            continue
        seq += 1
        commit_of[f"t{seq}"] = commit
        BLAME.apply(
            state,
            {
                "seq": seq,
                "hash": f"{seq:064x}",
                "kind": "hook.post",
                "ts": "t",
                "actor": {"session": "s", "client": "bench", "model": None},
                "body": {
                    "tool": "Write",
                    "tool_use_id": f"t{seq}",
                    "invocation": f"i{seq}",
                    "data": {},
                    "attribution": {"files": files, "source": "content"},
                },
            },
        )
    blobs.close()
    return state, commit_of, len(commits), spent


def _sha(text: str | None) -> str | None:
    import hashlib  # noqa: PLC0415

    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def agreement(repo: Path, state: Any, commit_of: dict[str, str], suffix: str) -> dict[str, Any]:
    """Lines of every file at HEAD on which the replayed model and ``git blame`` agree."""
    agree = total = 0
    by_file: dict[str, int] = {}
    for path in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if not path.endswith(suffix) or path not in state.files:
            continue
        out = _git(repo, "blame", "--first-parent", "--porcelain", "HEAD", "--", path)
        commits = [
            line.split()[0]
            for line in out.split("\n")  # not splitlines(): a form feed is not a line end
            if not line.startswith("\t")  # a line of the file
            and len(line.split(" ")[0]) == 40
            and len(line.split()) >= 3
        ]
        model = state.files[path]
        if len(commits) != len(model["refs"]):
            say(f"{path}: git has {len(commits)} lines, the model {len(model['refs'])}")
        for index, commit in enumerate(commits):
            ref = model["refs"][index] if index < len(model["refs"]) else -1
            found = state.ref(ref) if ref >= 0 else None
            same = found is not None and commit_of.get(found["tool_use_id"]) == commit
            agree += same
            total += 1
            if not same:
                by_file[path] = by_file.get(path, 0) + 1
    return {"agree": agree, "total": total, "disagreements_by_file": by_file}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--suffix", default=".py")
    parser.add_argument("--diff", choices=("git", "pygit2", "both"), default="both")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {"repo": str(args.repo)}
    engines = ["git", "pygit2"] if args.diff == "both" else [args.diff]
    for engine in engines:
        attribution.use_git_diff(engine == "git")
        started = time.perf_counter()
        state, commit_of, commits, spent = replay(args.repo, args.suffix)
        found = agreement(args.repo, state, commit_of, args.suffix)
        rate = found["agree"] / found["total"] if found["total"] else 1.0
        figures[engine] = {
            **found,
            "commits": commits,
            "rate": rate,
            "diff_seconds": round(spent, 3),
            "seconds": round(time.perf_counter() - started, 1),
        }
        if not args.json:
            print(
                f"{engine:>6} diff: {found['agree']}/{found['total']} lines agree with git blame "
                f"= {rate:.3%} over {commits} first-parent commits ({spent:.2f} s in diffs); "
                f"target >= 99.9%: {'PASS' if rate >= 0.999 else 'MISS'}"
                + (f"; by file {found['disagreements_by_file']}" if rate < 1 else "")
            )
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
