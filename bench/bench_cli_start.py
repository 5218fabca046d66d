"""Latency of the interactive commands (``log``, ``show``, ``intent list``, ``--help``) vs. a
bare interpreter start-up.

Ledger: each command as a fresh subprocess of the ``ledger`` command, on a workspace whose
ledger holds a governed session's worth of hook records (``--records``, default 2,000); the
interactive ones both in their own process and answered by a running resident decider.

Baseline, measured beside it: ``python -c pass`` with the same interpreter. Commands run
round-robin (rotating the order each round) so noise hits them alike; the first rounds are
warm-up and not counted. For context, ``ledger verify --help`` (the Typer app: Typer imports
pydantic) and where the time of ``ledger log -n 20`` goes (``-X importtime``, largest
self-times).

Target: each command's p50 ≤ 5 × ``python -c pass`` p50 (about 100 ms where start-up is 20 ms).

    python bench/bench_cli_start.py [--runs N] [--records N] [--ledger-bin PATH] [--quick] [--json]
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    Figure,
    LoadMeter,
    hook_bodies,
    isolate_this_process,
    isolated_env,
    machine,
    median,
    ms,
    noise_line,
    percentile,
    precompile,
    report,
    running_decider,
    say,
    verdict,
)
from bench_cli_append import find_ledger_bin, round_robin, startup_args

from ledger._evidence.ledger import append_reserved

TARGET_RATIO = 5.0
INTENTS = """\
active_intents:
    - id: "INT-001"
      name: "JWT Authentication Migration"
      status: "IN_PROGRESS"
      owned_scope: ["src/auth/**", "src/middleware/jwt.ts"]
    - id: "INT-002"
      name: "Auth test coverage"
      status: "PLANNED"
      owned_scope: ["tests/auth/**"]
"""


def import_profile(ledger_bin: str, root: Path, env: dict[str, str], top: int = 6) -> list[str]:
    """The modules with the largest self import time in ``ledger log -n 20``."""
    script = (
        f"import sys; sys.argv = ['ledger', 'log', '-n', '20', '--root', {str(root)!r}]; "
        "from cli._entry import main; main()"
    )
    python = Path(ledger_bin).with_name("python")
    done = subprocess.run(
        [str(python if python.exists() else sys.executable), "-X", "importtime", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].strip().split()[-1].isdigit():
            rows.append((int(parts[0].split()[-1]), int(parts[1]), parts[2].strip()))
    total = sum(self_us for self_us, _, _ in rows)
    rows.sort(reverse=True)
    return [f"all imports {total / 1000:.1f} ms self-time"] + [
        f"{name}: {self_us / 1000:.1f} ms" for self_us, _, name in rows[:top]
    ]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    records = 2000
    if "--records" in argv:  # the one option startup_args does not know
        at = argv.index("--records")
        records = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    args = startup_args(__doc__ or "", argv)

    from ledger import Entry, Ledger  # noqa: PLC0415

    info = machine()
    precompile()
    ledger_bin = find_ledger_bin(args.ledger_bin)
    with tempfile.TemporaryDirectory(prefix="ledger-bench-start-", dir=args.dir) as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "ws"
        isolate_this_process(home)
        env = isolated_env(home)
        env.pop("COLUMNS", None)
        ledger = Ledger.init(root)
        (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
        rng = random.Random(7)  # noqa: S311 -- reproducible ids, not crypto
        sessions = [f"{rng.getrandbits(128):032x}" for _ in range(4)]
        # hook.* are ledger's own kinds (decision 0013): written as the hook service writes them.
        append_reserved(
            ledger,
            (
                Entry("hook.pre", body, {"client": "claude-code", "session": sessions[i % 4]})
                for i, body in enumerate(hook_bodies(records))
            ),
        )
        seq = str(records // 2)
        base = ["--root", str(root)]
        interactive = {
            "ledger log -n 20": [ledger_bin, "log", "-n", "20", *base],
            f"ledger show {seq}": [ledger_bin, "show", seq, *base],
            "ledger intent list": [ledger_bin, "intent", "list", *base],
        }
        commands = {
            **{name: (argv, b"") for name, argv in interactive.items()},
            **{f"{name}, decider up": (argv, b"") for name, argv in interactive.items()},
            "ledger --help": ([ledger_bin, "--help"], b""),
            "ledger verify --help": ([ledger_bin, "verify", "--help"], b""),
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
        }
        runtime = Path(tmp) / "run"
        runtime.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(runtime)
        up = {**env, "LEDGER_DECIDER": "on"}
        envs = {f"{name}, decider up": up for name in interactive}

        say(
            f"bench_cli_start: {args.warmup} warm-up + {args.runs} timed rounds of "
            f"{len(commands)} commands, {records:,} records"
        )
        meter = LoadMeter()
        with running_decider(ledger_bin, env):
            times = round_robin(
                commands, env, warmup=args.warmup, runs=args.runs, meter=meter, envs=envs
            )
        profile = import_profile(ledger_bin, root, env)

    p50 = {k: median(v) for k, v in times.items()}
    p90 = {k: percentile(v, 90) for k, v in times.items()}
    floor = p50["python -c pass"]
    figures = []
    for name in commands:
        if name == "python -c pass":
            continue
        gated = name != "ledger verify --help"
        figures.append(
            Figure(
                figure=f"`{name}` (p50)",
                ledger=p50[name],
                ledger_text=ms(p50[name]),
                baseline=floor,
                baseline_text=f"{ms(floor)} (python -c pass)",
                ratio=p50[name] / floor,
                target=f"≤ {TARGET_RATIO:.0f}× start-up" if gated else "— (Typer app)",
                status=verdict(p50[name] <= TARGET_RATIO * floor) if gated else "—",
            )
        )
    context = [
        f"{args.runs} timed runs of each command, round-robin with rotating order, after "
        f"{args.warmup} warm-up round(s); ledger of {records + 1:,} records",
        "p90: " + ", ".join(f"{name} {ms(value)}" for name, value in p90.items()),
        "where `ledger log -n 20` spends its imports: " + "; ".join(profile),
        noise_line(meter),
    ]
    report(
        "bench_cli_start",
        figures,
        settings={"runs": args.runs, "warmup": args.warmup, "records": records},
        context=context,
        raw={k: list(v) for k, v in times.items()},
        as_json=args.json,
        info=info,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
