"""``ledger blame FILE:N``, warm, on a small real repository (decision 0008 "≤ 3× ``git blame -L``
on a small repository"; decision 0014 "blame may ask the decider").

A real history is replayed through the installed hook commands, as Claude Code runs them: every
first-parent commit's ``.py`` changes are agent Writes (PreToolUse, the write, PostToolUse), the
rest of the commit is a person's, and each commit is committed again (same author and message).
Then, in rotating order, each round times:

* ``ledger blame FILE:N`` with the resident decider up (the command asks it);
* ``ledger blame FILE:N`` in its own process (``LEDGER_DECIDER=off``);
* ``git blame -L N,N FILE`` (the baseline);
* ``python3 -I -S -c pass`` (for context: a Python process's floor).

FILE is the largest ``.py`` file at HEAD, N its middle line. Each is run once before timing
(warm: the projection cache is built).

    python bench/bench_blame_small.py [--repo PATH] [--runs N] [--commits N] [--quick] [--json]

``--repo`` defaults to this repository; the README's figure is ``pallets/itsdangerous``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    precompile,
    report,
    running_decider,
    say,
    verdict,
)
from bench_cli_append import find_ledger_bin

ROOT = Path(__file__).resolve().parent.parent
TARGET = 3.0
INTENTS = """active_intents:
  - id: INT-001
    name: Replay
    status: IN_PROGRESS
    owned_scope: ["**/*.py"]
"""


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--commits", type=int, default=0, help="replay only the last N (0: all)")
    parser.add_argument("--ledger-bin")
    parser.add_argument("--quick", action="store_true", help="11 runs, the last 40 commits")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.commits = 11, args.commits or 40
    return args


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, check=True
    ).stdout


class Replay:
    """A workspace with Claude Code's hooks installed, replaying ``source``'s history."""

    def __init__(self, base: Path, source: Path, ledger: str, env: dict[str, str]) -> None:
        self.source, self.ledger, self.env = source, ledger, env
        self.root = base / "app"
        self.root.mkdir()
        _git(self.root, "init", "-q")
        subprocess.run([ledger, "init"], cwd=self.root, env=env, check=True, capture_output=True)
        (self.root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, "utf-8")
        subprocess.run(
            [ledger, "install", "claude", "--root", str(self.root)],
            env=env,
            check=True,
            capture_output=True,
        )
        settings = json.loads((self.root / ".claude" / "settings.local.json").read_text("utf-8"))
        self.commands = {
            event: groups[0]["hooks"][0]["command"]
            for event, groups in settings["hooks"].items()
            if event in ("PreToolUse", "PostToolUse")
        }
        self.writes = 0
        self._hook("PreToolUse", "Bash", {"command": "ledger intent select INT-001"}, "select")

    def _hook(
        self,
        event: str,
        tool: str,
        tool_input: dict[str, object],
        call: str,
        response: dict[str, object] | None = None,
    ) -> None:
        payload: dict[str, object] = {
            "session_id": "replay",
            "transcript_path": "/home/dev/.claude/projects/-replay/replay.jsonl",
            "cwd": str(self.root),
            "permission_mode": "default",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{call}",
        }
        if response is not None:
            payload["tool_response"] = response
        done = subprocess.run(
            ["sh", "-c", self.commands[event]],
            input=json.dumps(payload).encode(),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0 or b'"deny"' in done.stdout:
            raise RuntimeError(f"hook refused the replay: {done.stdout!r} {done.stderr!r}")

    def agent_write(self, relative: str, content: bytes) -> None:
        target = self.root / relative
        old = target.read_text("utf-8", "replace") if target.exists() else None
        text = content.decode("utf-8", "replace")
        tool_input: dict[str, object] = {"file_path": str(target), "content": text}
        call = f"w{self.writes}"
        self.writes += 1
        self._hook("PreToolUse", "Write", tool_input, call)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        response: dict[str, object] = {
            "type": "create" if old is None else "update",
            "filePath": str(target),
            "content": text,
            "structuredPatch": [],
            "originalFile": old,
        }
        self._hook("PostToolUse", "Write", tool_input, call, response)

    def commit(self, sha: str) -> None:
        parents = _git(self.source, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        # Against the first parent: a merge on the first-parent chain brings its branch's work.
        base = [parents[0].decode(), sha] if parents else ["--root", sha]
        raw = _git(
            self.source, "diff-tree", "--no-commit-id", "-r", "-z", "--no-renames", *base
        ).split(b"\0")
        for meta, path in zip(raw[0::2], raw[1::2], strict=False):
            fields = meta.split()  # :old-mode new-mode old-sha new-sha status
            if len(fields) < 5 or b"160000" in (fields[0][1:], fields[1]):
                continue  # a submodule: no content here
            relative = path.decode("utf-8", "surrogateescape")
            target = self.root / relative
            if fields[4] == b"D":
                target.unlink(missing_ok=True)
                continue
            content = _git(self.source, "cat-file", "blob", fields[3].decode())
            if relative.endswith(".py"):
                self.agent_write(relative, content)
            else:  # a person's part of the commit
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
        _git(self.root, "add", "-A", ".")
        name, email, when, message = (
            _git(self.source, "log", "-1", "--format=%an%x00%ae%x00%aI%x00%B", sha)
            .decode("utf-8", "replace")
            .split("\0", 3)
        )
        author = ["-c", f"user.name={name or 'replay'}", "-c", f"user.email={email or 'r@x'}"]
        _git(
            self.root,
            *author,
            "commit",
            "-q",
            "--allow-empty",
            f"--date={when}",
            "-m",
            message or sha,
            "--no-verify",
        )


def _measure(
    target: str,
    line: int,
    *,
    root: Path,
    ledger: str,
    env: dict[str, str],
    runs: int,
    meter: LoadMeter,
) -> dict[str, list[float]]:
    """Warm each command once, check both blames agree, then time them in rotating order."""
    commands = {
        "up": ([ledger, "blame", f"{target}:{line}"], {**env, "LEDGER_DECIDER": "on"}),
        "down": ([ledger, "blame", f"{target}:{line}"], {**env, "LEDGER_DECIDER": "off"}),
        "git": (["git", "blame", "-L", f"{line},{line}", target], env),
        "python": ([sys.executable, "-I", "-S", "-c", "pass"], env),
    }
    outputs = {
        name: subprocess.run(command, cwd=root, env=which, capture_output=True, check=True).stdout
        for name, (command, which) in commands.items()
    }
    # Both in JSON too: the table's ages may tick between the two runs.
    outputs.update(
        {
            name: subprocess.run(
                [*commands[name][0], "--json"],
                cwd=root,
                env=commands[name][1],
                capture_output=True,
                check=True,
            ).stdout
            for name in ("up", "down")
        }
    )
    if outputs["up"] != outputs["down"]:
        raise RuntimeError(f"the decider's blame differs: {outputs['up']!r} {outputs['down']!r}")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_no in range(runs):
        order = list(commands)
        order = order[round_no % 4 :] + order[: round_no % 4]
        for name in order:
            command, which = commands[name]
            with meter:
                start = time.perf_counter()
                subprocess.run(command, cwd=root, env=which, capture_output=True, check=True)
                times[name].append(time.perf_counter() - start)
    times["target"] = [float(line)]
    say(f"bench_blame_small: {target}:{line} measured")
    return times


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    ledger = find_ledger_bin(args.ledger_bin)
    precompile()
    info = machine()
    meter = LoadMeter()
    commits = _git(args.repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    if args.commits:
        commits = commits[-args.commits :]
    with tempfile.TemporaryDirectory(prefix="bbs-", dir="/tmp") as tmp:
        base = Path(tmp)
        runtime = base / "run"
        runtime.mkdir(mode=0o700)
        env = isolated_env(base / "home")
        env.update({"XDG_RUNTIME_DIR": str(runtime), "HOME": str(base / "userhome")})
        times: dict[str, dict[str, list[float]]] = {}
        with running_decider(ledger, env):
            replay = Replay(base, args.repo, ledger, {**env, "LEDGER_DECIDER": "on"})
            started = time.perf_counter()
            for n, sha in enumerate(commits, 1):
                replay.commit(sha.decode())
                if n % 50 == 0:
                    say(f"bench_blame_small: replayed {n}/{len(commits)} commits")
            say(
                f"bench_blame_small: {len(commits)} commits, {replay.writes} agent writes in "
                f"{time.perf_counter() - started:.0f} s"
            )
            files = [p for p in _git(replay.root, "ls-files", "*.py").decode().split("\n") if p]
            lines = {p: (replay.root / p).read_bytes().count(b"\n") for p in files}
            largest = max(files, key=lines.__getitem__)
            # The file git blames fastest (the shortest history): the hardest baseline to meet.
            git_cost: dict[str, float] = {}
            for path in files:
                if lines[path]:
                    began = time.perf_counter()
                    _git(replay.root, "blame", "-L", f"{lines[path] // 2 + 1},+1", path)
                    git_cost[path] = time.perf_counter() - began
            quickest = min(git_cost, key=git_cost.__getitem__)
            targets = {"largest": largest, "quickest": quickest}
            writes = replay.writes
            for label, target in targets.items():
                times[label] = _measure(
                    target,
                    lines[target] // 2 + 1,
                    root=replay.root,
                    ledger=ledger,
                    env=env,
                    runs=args.runs,
                    meter=meter,
                )

    where = f"`{args.repo.resolve().name}` replayed ({len(commits)} commits, {writes} writes)"
    figures: list[Figure] = []
    notes = [f"{args.runs} timed rounds of each, rotating order, after one warm-up run"]
    for label, measured in times.items():
        p50 = {name: median(values) for name, values in measured.items() if name != "target"}
        which = (
            "the largest `.py` file" if label == "largest" else "the `.py` file git blames fastest"
        )
        for mode, text in (("up", "decider up"), ("down", "own process (`LEDGER_DECIDER=off`)")):
            figures.append(
                Figure(
                    f"`ledger blame FILE:N` warm, {text}, {which}, {where}",
                    p50[mode],
                    ms(p50[mode]),
                    p50["git"],
                    f"{ms(p50['git'])} (`git blame -L N,N`)",
                    p50[mode] / p50["git"],
                    f"≤ {TARGET}×",
                    verdict(p50[mode] / p50["git"] <= TARGET),
                )
            )
        notes.append(
            f"{label}: {targets[label]}:{int(measured['target'][0])}; `python3 -I -S -c pass` "
            f"p50 {ms(p50['python'])} ({p50['python'] / p50['git']:.2f}× git blame -L)"
        )
    notes.append(noise_line(meter))
    report(
        "bench_blame_small",
        figures,
        settings={"runs": args.runs, "repo": str(args.repo), "commits": len(commits)},
        context=notes,
        raw={label: dict(measured) for label, measured in times.items()},
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
