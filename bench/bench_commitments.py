"""Hook cost of commitments and secret scanning: this tree against the tree before them.

Both trees run the same hook calls, round robin in one run, with the same interpreter and
dependencies (each tree first on ``PYTHONPATH``, through its own ``cli/_launcher.py``), each in a
workspace of its own: a prompt (UserPromptSubmit), a PreToolUse Write of a 2 KiB file, a quiet
PreToolUse Bash, and a PostToolUse Edit with its structuredPatch. The baseline tree is
``git archive`` of ``--baseline-rev`` (default: the merge base with ``main``). Target: every p50
within 5% of the baseline's (ratio ≤ 1.05).

    python bench/bench_commitments.py [--runs N] [--baseline-rev REV] [--json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    baseline_tree,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    report,
    say,
    verdict,
)
from bench_cli_append import round_robin
from bench_hook import INTENTS, ORIGINAL, payload, post_edit_payload, run_hook

HERE = Path(__file__).resolve().parent.parent
TARGET = 1.05
CONTENT = "".join(
    f"export const setting{i} = 'value {i}'; // a line of config\n" for i in range(40)
)


def _workspace(tree: Path, base: Path, name: str) -> tuple[list[str], dict[str, str], Path]:
    """A workspace initialised by ``tree``'s own code; the hook command and its environment."""
    home, root = base / f"{name}-home", base / f"{name}-ws"
    env = isolated_env(home)
    env["PYTHONPATH"] = str(tree)
    launcher = [sys.executable, str(tree / "cli" / "_launcher.py")]
    subprocess.run(
        [*launcher, "init", "--root", str(root), "--parents"],
        env=env,
        check=True,
        capture_output=True,
    )
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    # As a person sets a workspace up: the hooks installed (which judges the hook path's .pyc
    # for this user, in a tree that does; without it a fresh workspace's first ~40 calls each
    # compiled up to 20 ms of sources, and the rounds measured that instead of a call).
    subprocess.run(
        [*launcher, "install", "claude", "--root", str(root)],
        env=env,
        check=True,
        capture_output=True,
    )
    (root / "src" / "auth").mkdir(parents=True)
    (root / "src" / "auth" / "middleware.ts").write_text(ORIGINAL)
    hook = [*launcher, "hook", "claude", "--event"]
    run_hook(
        [*hook, "PreToolUse"],
        env,
        payload(
            root,
            "PreToolUse",
            tool_name="Bash",
            tool_use_id="toolu_select",
            tool_input={"command": "ledger intent select INT-001"},
        ),
    )
    return hook, env, root


def _calls(hook: list[str], root: Path) -> dict[str, tuple[list[str], bytes]]:
    return {
        "prompt": (
            [*hook, "UserPromptSubmit"],
            payload(
                root,
                "UserPromptSubmit",
                prompt="Pin the JWT algorithm to HS256 and read the key from JWT_SECRET",
            ),
        ),
        "pre": (
            [*hook, "PreToolUse"],
            payload(
                root,
                "PreToolUse",
                tool_name="Write",
                tool_use_id="toolu_pre",
                tool_input={"file_path": str(root / "src/auth/tokens.ts"), "content": CONTENT},
            ),
        ),
        "bash": (
            [*hook, "PreToolUse"],
            payload(
                root,
                "PreToolUse",
                tool_name="Bash",
                tool_use_id="toolu_bash",
                tool_input={"command": "cd src/auth && grep -rn 'ttl' . | head -5"},
            ),
        ),
        "post": ([*hook, "PostToolUse"], post_edit_payload(root)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--baseline-rev", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-commit-") as tmp:
        base = Path(tmp)
        rev, old_tree = baseline_tree(args.baseline_rev, base / "baseline")
        commands: dict[str, tuple[list[str], bytes]] = {}
        envs: dict[str, dict[str, str]] = {}
        for name, tree in (("baseline", old_tree), ("now", HERE)):
            hook, env, root = _workspace(tree, base, name)
            for call, command in _calls(hook, root).items():
                commands[f"{name}:{call}"] = command
                envs[f"{name}:{call}"] = env
        say(f"bench_commitments: {args.warmup} warm-up + {args.runs} rounds against {rev[:12]}")
        meter = LoadMeter()
        times = round_robin(
            commands, envs["now:pre"], warmup=args.warmup, runs=args.runs, meter=meter, envs=envs
        )
    figures = []
    for call in ("prompt", "pre", "bash", "post"):
        now, then = median(times[f"now:{call}"]), median(times[f"baseline:{call}"])
        figures.append(
            Figure(
                f"hook {call} (p50), commitments + secret scan",
                now,
                ms(now),
                then,
                f"{ms(then)} (before, {rev[:10]})",
                now / then,
                f"≤ {TARGET:.2f}×",
                verdict(now <= TARGET * then),
            )
        )
    report(
        "hook cost of commitments",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "baseline": rev},
        context=[noise_line(meter)],
        raw=dict(times),
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
