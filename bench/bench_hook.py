"""Latency of ``ledger hook claude`` end to end (fsync on), vs. the same floor script.

Ledger, each a fresh subprocess as Claude Code runs it (payloads shaped as hook-protocols §1.3-1.6):

* PreToolUse ``Write`` of a file inside the selected intent's ``owned_scope``: every policy runs
  (orchestration guard, intent, scope with symlink resolution, stale-file hash, mutation class)
  and a signed ``hook.pre`` record is appended.
* PostToolUse ``Edit`` with the client's ``structuredPatch``: the edit, the file's SHA-256 and the
  added line ranges are recorded in a signed ``hook.post``.

Baseline (the floor), measured beside them round-robin: ``bench/floor_append.py`` (python +
cryptography PEM load + flock + sign + append with fsync), as in ``bench_cli_append.py``.

Targets: PreToolUse p50 ≤ 1.3 × floor p50; PostToolUse p50 ≤ 1.6 × floor p50. Also reports the
import cost of the hook path (``python -X importtime``) and checks that Typer, Click, Rich,
pydantic, DuckDB, PyYAML, pathspec and orjson are not loaded on it.

    python bench/bench_hook.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    isolate_this_process,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    percentile,
    precompile,
    report,
    say,
    verdict,
)
from bench_cli_append import BODY, FLOOR, find_ledger_bin, round_robin, startup_args

PRE_TARGET = 1.3
POST_TARGET = 1.6
HEAVY = (
    "typer",
    "click",
    "rich",
    "pydantic",
    "duckdb",
    "yaml",
    "pathspec",
    "pandas",
    "orjson",
    # the MCP SDK: `ledger mcp` only (decision 0015)
    "mcp",
    "anyio",
    "starlette",
)
SESSION = "3f1c9a2e-7b4d-4e8a-9c51-2d6f0b8e4a17"
INTENTS = """intents:
  - id: INT-001
    name: JWT hardening
    status: active
    owned_scope: ["src/auth/**"]
    constraints: ["Pin the algorithm to HS256"]
    acceptance_criteria: ["auth tests pass"]
"""
ORIGINAL = "".join(f"export const line{i} = {i};\n" for i in range(1, 41))


def payload(root: Path, event: str, **fields: object) -> bytes:
    """A Claude Code hook payload (common fields per hook-protocols §1.3)."""
    return json.dumps(
        {
            "session_id": SESSION,
            "prompt_id": "8d2b6c40-1e9f-4a7b-b3d5-6f0c2e91a8d4",
            "transcript_path": f"/home/dev/.claude/projects/-bench/{SESSION}.jsonl",
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
    ).encode()


def post_edit_payload(root: Path) -> bytes:
    """PostToolUse Edit of src/auth/middleware.ts with a jsdiff-style structuredPatch."""
    path = root / "src" / "auth" / "middleware.ts"
    old, new = "export const line20 = 20;", "export const line20 = 20; // reviewed"
    return payload(
        root,
        "PostToolUse",
        tool_name="Edit",
        tool_use_id="toolu_bench_post",
        tool_input={
            "file_path": str(path),
            "old_string": old,
            "new_string": new,
            "replace_all": False,
        },
        tool_response={
            "filePath": str(path),
            "oldString": old,
            "newString": new,
            "originalFile": ORIGINAL,
            "structuredPatch": [
                {
                    "oldStart": 17,
                    "oldLines": 7,
                    "newStart": 17,
                    "newLines": 7,
                    "lines": [
                        " export const line17 = 17;",
                        " export const line18 = 18;",
                        " export const line19 = 19;",
                        f"-{old}",
                        f"+{new}",
                        " export const line21 = 21;",
                        " export const line22 = 22;",
                        " export const line23 = 23;",
                    ],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
        duration_ms=41,
    )


def run_hook(cmd: list[str], env: dict[str, str], data: bytes) -> dict[str, object]:
    """Run the hook once and return its JSON answer (fail if it denied or crashed)."""
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"hook exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    answer = json.loads(proc.stdout or b"{}")
    if not isinstance(answer, dict):
        raise TypeError(f"hook answered {type(answer).__name__}, not a JSON object")
    specific = answer.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":
        raise RuntimeError(f"hook denied: {specific.get('permissionDecisionReason')}")
    return answer


def import_cost(cmd: list[str], env: dict[str, str], data: bytes) -> tuple[float, list[str]]:
    """(milliseconds of imports, heavy modules loaded) for one run, via -X importtime."""
    argv = cmd if cmd[0] == sys.executable else [sys.executable, *cmd]
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        input=data,
        capture_output=True,
        env=env,
        check=True,
    )
    total_us = 0
    loaded: set[str] = set()
    for line in proc.stderr.decode().splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].strip()
        loaded.add(name.split(".")[0])
        if len(parts[2]) - len(parts[2].lstrip()) == 1:  # top level: count its cumulative time
            total_us += int(parts[1])
    return total_us / 1000, sorted(loaded & set(HEAVY))


def main(argv: list[str] | None = None) -> int:
    args = startup_args(__doc__ or "", argv)

    from ledger import Ledger  # noqa: PLC0415

    info = machine()
    precompile()
    ledger_bin = find_ledger_bin(args.ledger_bin)
    with tempfile.TemporaryDirectory(prefix="ledger-bench-hook-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        ledger = Ledger.init(root)
        kid = next(iter(ledger.keyring())).kid
        (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
        (root / "src" / "auth").mkdir(parents=True)
        (root / "src" / "auth" / "middleware.ts").write_text(ORIGINAL)
        hook = [ledger_bin, "hook", "claude", "--event"]
        pre_cmd, post_cmd = [*hook, "PreToolUse"], [*hook, "PostToolUse"]
        # The session selects its intent and reads the file, as an agent would first.
        answer = run_hook(
            pre_cmd,
            env,
            payload(
                root,
                "PreToolUse",
                tool_name="Bash",
                tool_use_id="toolu_bench_select",
                tool_input={"command": "ledger intent select INT-001"},
            ),
        )
        if "additionalContext" not in answer.get("hookSpecificOutput", {}):  # type: ignore[operator]
            raise RuntimeError(f"intent selection failed: {answer}")
        pre_data = payload(
            root,
            "PreToolUse",
            tool_name="Write",
            tool_use_id="toolu_bench_pre",
            tool_input={
                "file_path": str(root / "src/auth/tokens.ts"),
                "content": "export const ttlSeconds = 900;\n",
            },
        )
        post_data = post_edit_payload(root)
        # A quiet everyday shell call: the classifier walks every word against its table.
        bash_data = payload(
            root,
            "PreToolUse",
            tool_name="Bash",
            tool_use_id="toolu_bench_bash",
            tool_input={
                "command": "cd src/auth && grep -rn 'ttl' . | head -5 && git status --short"
            },
        )
        commands = {
            "pre": (pre_cmd, pre_data),
            "bash": (pre_cmd, bash_data),
            "post": (post_cmd, post_data),
            "floor": (
                [
                    sys.executable,
                    str(FLOOR),
                    str(home / "keys" / f"{kid}.pem"),
                    str(Path(tmp) / "floor.jsonl"),
                ],
                BODY,
            ),
            "startup": ([sys.executable, "-c", "pass"], b""),
        }
        say(
            f"bench_hook: {args.warmup} warm-up + {args.runs} timed rounds of {', '.join(commands)}"
        )
        meter = LoadMeter()
        times = round_robin(commands, env, warmup=args.warmup, runs=args.runs, meter=meter)
        runs = [import_cost(pre_cmd, env, pre_data) for _ in range(5)]
        imports_ms, heavy = median([r[0] for r in runs]), runs[0][1]
        floor_cmd, floor_data = commands["floor"]
        floor_imports_ms = median([import_cost(floor_cmd, env, floor_data)[0] for _ in range(5)])
        result = Ledger.open(root).verify()
        kinds = [r.kind for r in Ledger.open(root).records()]
        expected = 2 * (args.warmup + args.runs)
        recorded = kinds.count("hook.pre") + kinds.count("hook.post") - 1  # minus the select
        if not result.ok or recorded < expected:
            raise RuntimeError(
                f"ledger after the runs: {result.summary()}; "
                f"{recorded} hook records, want {expected}"
            )

    p50 = {k: median(v) for k, v in times.items()}
    p90 = {k: percentile(v, 90) for k, v in times.items()}
    figures = [
        Figure(
            figure="`ledger hook claude` PreToolUse Write in scope (p50)",
            ledger=p50["pre"],
            ledger_text=ms(p50["pre"]),
            baseline=p50["floor"],
            baseline_text=f"{ms(p50['floor'])} (floor_append.py)",
            ratio=p50["pre"] / p50["floor"],
            target=f"≤ {PRE_TARGET:.1f}× floor",
            status=verdict(p50["pre"] <= PRE_TARGET * p50["floor"]),
        ),
        Figure(
            figure="`ledger hook claude` PreToolUse Bash, a quiet `cd && grep | head && git` (p50)",
            ledger=p50["bash"],
            ledger_text=ms(p50["bash"]),
            baseline=p50["floor"],
            baseline_text=f"{ms(p50['floor'])} (floor_append.py)",
            ratio=p50["bash"] / p50["floor"],
            target=f"≤ {PRE_TARGET:.1f}× floor",
            status=verdict(p50["bash"] <= PRE_TARGET * p50["floor"]),
        ),
        Figure(
            figure="`ledger hook claude` PostToolUse Edit + structuredPatch (p50)",
            ledger=p50["post"],
            ledger_text=ms(p50["post"]),
            baseline=p50["floor"],
            baseline_text=f"{ms(p50['floor'])} (floor_append.py)",
            ratio=p50["post"] / p50["floor"],
            target=f"≤ {POST_TARGET:.1f}× floor",
            status=verdict(p50["post"] <= POST_TARGET * p50["floor"]),
        ),
        Figure(
            figure="imports on the PreToolUse hook path (-X importtime, median of 5); heavy "
            f"modules loaded: {', '.join(heavy) or 'none'}",
            ledger=imports_ms,
            ledger_text=f"{imports_ms:.1f} ms",
            baseline=floor_imports_ms,
            baseline_text=f"{floor_imports_ms:.1f} ms (floor's)",
            ratio=imports_ms / floor_imports_ms,
            target="none of " + "/".join(HEAVY),
            status=verdict(not heavy),
        ),
    ]
    context = [
        f"{args.runs} timed runs of each command, round-robin with rotating order, after "
        f"{args.warmup} warm-up round(s); bytecode precompiled as pip install does",
        f"p90: PreToolUse {ms(p90['pre'])}, PostToolUse {ms(p90['post'])}, floor "
        f"{ms(p90['floor'])}; bare `python -c pass` p50 {ms(p50['startup'])}",
        f"above bare start-up (p50): PreToolUse {ms(p50['pre'] - p50['startup'])}, PostToolUse "
        f"{ms(p50['post'] - p50['startup'])}, floor {ms(p50['floor'] - p50['startup'])}",
        f"ledger script: {ledger_bin}; every run appended a signed record (verified after)",
        noise_line(meter),
    ]
    report(
        "bench_hook",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "quick": args.quick},
        context=context,
        raw={
            "seconds": times,
            "cpu_count": os.cpu_count(),
            "imports_ms": imports_ms,
            "heavy_modules": heavy,
            "other_cores": meter.other_cores,
        },
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
