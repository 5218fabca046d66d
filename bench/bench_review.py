"""``ledger review`` of a range against git's own work on it, and the comment for a big range.

Speed: a replayed real history (the last ``--commits`` first-parent commits of ``--repo``, this
repository by default; in two commits of three each changed file is written by an agent
through the real hook path, ``Write`` with the file's content at that commit, in the third by a
person; each committed as that commit). ``ledger review BASE..HEAD --json`` of the whole range
against ``git diff --numstat BASE HEAD`` plus ``git blame HEAD -- FILE`` of every changed
file, one after the other, in the same run; medians (target ≤ 2×).

Scale: one commit changing ``--files`` files (a tenth of them written by an agent), ``ledger
review --markdown``: its time (target ≤ 10 s) and its length (under 65,536 characters).

    python bench/bench_review.py [--repo PATH] [--commits 100] [--files 2000] [--runs 5]
        [--only speed|scale] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import isolated_env, median, precompile, say

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger._clients import parse_payload  # noqa: E402
from ledger._evidence.ledger import Ledger  # noqa: E402
from ledger._hooks.service import handle_event  # noqa: E402

LEDGER = Path(sys.executable).parent / "ledger"
INTENTS = """\
active_intents:
  - id: INT-001
    name: Replay
    status: IN_PROGRESS
    owned_scope: ["**"]
"""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_AUTHOR_EMAIL": "a@x",
    "GIT_COMMITTER_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "a@x",
}


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    ).stdout


class _Agent:
    """One Claude Code session calling the hooks in this process."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env, self.n = root, env, 0
        self._call("PreToolUse", "Bash", {"command": "ledger intent select INT-001"})

    def _call(self, event: str, tool: str, tool_input: dict[str, Any], **fields: Any) -> None:
        payload = {
            "session_id": "bench",
            "transcript_path": str(self.root / "transcript.jsonl"),
            "cwd": str(self.root),
            "permission_mode": "default",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_bench_{self.n}",
            **fields,
        }
        handle_event(parse_payload("claude", json.dumps(payload).encode()), environ=self.env)

    def write(self, relative: str, content: str) -> None:
        self.n += 1
        path = self.root / relative
        old = path.read_text(encoding="utf-8") if path.exists() else None
        tool_input = {"file_path": str(path), "content": content}
        if old is not None:
            self._call(
                "PostToolUse",
                "Read",
                {"file_path": str(path)},
                tool_response={"type": "text", "file": {"filePath": str(path), "content": old}},
            )
            self.n += 1
        self._call("PreToolUse", "Write", tool_input)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        response: dict[str, Any] = {
            "type": "update" if old is not None else "create",
            "filePath": str(path),
            "content": content,
            "structuredPatch": [],
            "originalFile": old,
        }
        self._call("PostToolUse", "Write", tool_input, tool_response=response)


def _workspace(base: Path) -> tuple[Path, dict[str, str]]:
    root = base / "ws"
    root.mkdir()
    env = isolated_env(base / "home")
    _git(root, "init", "-q", "-b", "main")
    Ledger.init(root, environ=env)
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    (root / ".gitignore").write_text(".orchestration/\n", encoding="utf-8")
    return root, env


def _text(repo: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    try:
        return done.stdout.decode("utf-8") if done.returncode == 0 else None
    except UnicodeDecodeError:
        return None  # a binary file: the person commits it


def replay(
    repo: Path, commits: int, base: Path, *, person_every: int = 3
) -> tuple[Path, dict[str, str], str]:
    """The last ``commits`` first-parent commits of ``repo`` replayed, every ``person_every``-th
    by a person (no hook call: git explains those lines), the others by an agent; returns the
    workspace, its environment and the range's base commit there."""
    history = _git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    first, rest = history[-commits - 1], history[-commits:]
    root, env = _workspace(base)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", first], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    start = _git(root, "rev-parse", "HEAD").strip()
    os.environ["LEDGER_HOME"] = env["LEDGER_HOME"]
    agent = _Agent(root, env)
    parent = first
    for number, commit in enumerate(rest):
        changes = _git(repo, "diff", "--name-status", "--no-renames", parent, commit).splitlines()
        for change in changes:
            status, _, path = change.partition("\t")
            if path.startswith(".orchestration/") or path == ".gitignore":
                continue
            if status == "D":
                (root / path).unlink(missing_ok=True)
                continue
            text = _text(repo, commit, path)
            if text is None or number % person_every == person_every - 1:
                blob = subprocess.run(
                    ["git", "-C", str(repo), "show", f"{commit}:{path}"],
                    capture_output=True,
                    check=True,
                ).stdout
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(blob)
            else:
                agent.write(path, text)
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", f"replayed {commit[:12]}", "--allow-empty")
        parent = commit
        if number % 20 == 0:
            say(f"  replayed {number + 1}/{len(rest)} commits")
    return root, env, start


def _timed(command: list[str], root: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
    return time.perf_counter() - began


def _git_baseline(root: Path, env: dict[str, str], base: str) -> float:
    began = time.perf_counter()
    numstat = subprocess.run(
        ["git", "diff", "--numstat", base, "HEAD"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in numstat.splitlines():
        added, _, path = line.split("\t", 2)
        if added not in {"-", "0"}:
            subprocess.run(
                ["git", "blame", "HEAD", "--", path],
                cwd=root,
                env=env,
                capture_output=True,
                check=False,
            )
    return time.perf_counter() - began


def speed(repo: Path, commits: int, runs: int, base: Path) -> dict[str, Any]:
    say(f"replaying {commits} commits of {repo} through the hooks")
    root, env, start = replay(repo, commits, base)
    spec = f"{start}..HEAD"
    review = [str(LEDGER), "review", spec, "--json"]
    done = subprocess.run(review, cwd=root, env=env, capture_output=True, text=True, check=True)
    data = json.loads(done.stdout)
    ours, theirs = [], []
    for _ in range(runs):  # interleaved: the same load on both
        ours.append(_timed(review, root, env))
        theirs.append(_git_baseline(root, env, start))
    return {
        "commits": commits,
        "files": len(data["files"]),
        "lines": data["totals"]["total"],
        "agent": data["totals"]["agent"],
        "git": data["totals"]["git"],
        "review_s": median(ours),
        "git_s": median(theirs),
        "ratio": median(ours) / median(theirs),
    }


def scale(files: int, runs: int, base: Path) -> dict[str, Any]:
    say(f"one commit changing {files} files ({files // 10} by an agent)")
    root, env = _workspace(base)
    (root / "README").write_text("base\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    start = _git(root, "rev-parse", "HEAD").strip()
    os.environ["LEDGER_HOME"] = env["LEDGER_HOME"]
    agent = _Agent(root, env)
    for n in range(files):
        relative = f"pkg{n // 100:03d}/module_{n:05d}.py"
        content = "".join(f"value_{n}_{i} = {i}\n" for i in range(12))
        if n % 10 == 0:
            agent.write(relative, content)
        else:
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(content, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "big")
    command = [str(LEDGER), "review", f"{start}..HEAD", "--markdown"]
    times, length = [], 0
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, check=True
        )
        times.append(time.perf_counter() - began)
        length = len(done.stdout)
    return {"files": files, "markdown_s": median(times), "characters": length}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("speed", "scale"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    precompile()
    with tempfile.TemporaryDirectory(prefix="bench-review-") as name:
        base = Path(name)
        (base / "speed").mkdir()
        (base / "scale").mkdir()
        result: dict[str, Any] = {}
        if args.only != "scale":
            result["speed"] = speed(args.repo, args.commits, args.runs, base / "speed")
        if args.only != "speed":
            result["scale"] = scale(args.files, max(1, args.runs // 2), base / "scale")
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    if "speed" in result:
        _say_speed(result["speed"])
    if "scale" in result:
        _say_scale(result["scale"])
    return 0


def _say_speed(s: dict[str, Any]) -> None:
    print(
        f"ledger review of {s['commits']} commits ({s['files']} files, {s['lines']:,} lines, "
        f"{s['agent']:,} agent, {s['git']:,} git): {s['review_s'] * 1000:,.0f} ms vs git diff "
        f"--numstat + git blame of the changed files {s['git_s'] * 1000:,.0f} ms: "
        f"{s['ratio']:.2f}x ({'≤ 2x ✔' if s['ratio'] <= 2 else '> 2x ✘'})"
    )


def _say_scale(c: dict[str, Any]) -> None:
    print(
        f"ledger review --markdown of {c['files']} files: {c['markdown_s']:.2f} s, "
        f"{c['characters']:,} characters "
        f"({'✔' if c['markdown_s'] <= 10 and c['characters'] < 65_536 else '✘'})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
