"""``ledger blame FILE:N`` in a teammate's clone (blame in any clone, decision 0018), warm,
against ``git blame -L N,N`` in that clone.

1. Clone A: a history of ``--writes`` agent writes over ``--files`` files (the records
   ``bench_blame.py`` makes: a ``hook.pre`` + ``hook.post`` pair per write, the hook's exact
   attribution) and its git twin (one commit per write); A pushes the code and ``ledger push``es.
2. Clone B: ``git clone`` of the remote, ``ledger init``, A's public key committed as a teammate
   would, ``ledger fetch`` (which verifies A's ledger and folds its line model).
3. Interleaved, ``--runs`` times: ``ledger blame F:N`` in B (no agent ever ran there: the line
   is explained by A's fetched ledger), ``git blame -L N,N F`` in B, and ``ledger blame F:N`` in
   A (the same line from the local ledger, for reference). Then the cold figure (B's cache of
   the teammate's model deleted: the ledger is verified again and folded).

    python bench/bench_blame_clone.py [--writes N] [--files N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import isolated_env, median, precompile, running_decider, say
from bench_blame import _git_twin, _records

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger._evidence.ledger import Entry, Ledger, append_reserved  # noqa: E402

LEDGER = str(Path(sys.executable).parent / "ledger")


def _run(command: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()}")
    return done.stdout.decode()


def _wall(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    _run(command, env, cwd)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    precompile()
    tmp = Path(tempfile.mkdtemp(prefix="bench-blame-clone-"))
    try:
        env_a, env_b = isolated_env(tmp / "home-a"), isolated_env(tmp / "home-b")
        a, b, bare = tmp / "a", tmp / "b", tmp / "remote.git"
        say(f"clone A: {args.writes} writes, one commit each ...")
        _git_twin(a, args.writes, args.files)
        ledger = Ledger.init(a, environ=env_a)
        entries = [Entry(k, body, actor) for k, body, actor in _records(args.writes, args.files)]
        for i in range(0, len(entries), 2000):
            append_reserved(ledger, entries[i : i + 2000])
        (a / ".orchestration" / ".gitignore").unlink(missing_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        _run(["git", "remote", "add", "origin", str(bare)], env_a, a)
        _run(["git", "push", "-q", "origin", "main"], env_a, a)
        _run([LEDGER, "push"], env_a, a)
        say("clone B: clone, ledger init, pin A's key, ledger fetch ...")
        _run(["git", "clone", "-q", "-b", "main", str(bare), str(b)], env_b, tmp)
        _run([LEDGER, "init"], env_b, b)
        for key_file in ledger.workspace.keys_dir.iterdir():
            shutil.copy(key_file, b / ".orchestration" / "keys" / key_file.name)
        fetched = _run([LEDGER, "fetch"], env_b, b)
        last = entries[-1].body["attribution"]["files"][0]
        path, line = last["path"], last["lines"] // 2
        blame = [LEDGER, "blame", f"{path}:{line}", "--json"]
        started = time.perf_counter()
        answer = _run(blame, env_b, b)  # the first blame after the fetch: it folds A's ledger
        first_after_fetch = time.perf_counter() - started
        [row] = json.loads(answer)["lines"]
        if row["status"] != "agent" or row.get("ledger_id") != ledger.ledger_id:
            raise SystemExit(f"B does not blame {path}:{line} on A's agent: {row}")
        git_blame = ["git", "blame", "-L", f"{line},{line}", "--", path]
        blame = blame[:-1]
        # B with a resident decider up too (decision 0014): the command asks it.
        runtime = tmp / "run"
        runtime.mkdir(mode=0o700)
        served_env = {**env_b, "XDG_RUNTIME_DIR": str(runtime)}
        up_env = {**served_env, "LEDGER_DECIDER": "on"}
        with running_decider(LEDGER, served_env):
            as_json = [*blame, "--json"]  # the table's ages may tick between the two
            if _run(as_json, up_env, b) != _run(as_json, env_b, b):
                raise SystemExit("the decider's blame in B differs from B's own")
            in_b, in_a, git, in_b_up = [], [], [], []
            for _ in range(args.runs):
                in_b.append(_wall(blame, env_b, b))
                git.append(_wall(git_blame, env_b, b))
                in_a.append(_wall(blame, env_a, a))
                in_b_up.append(_wall(blame, up_env, b))
        foreign = b / ".orchestration" / ".cache" / "projections" / "foreign"
        cold = []
        for _ in range(3):
            shutil.rmtree(foreign, ignore_errors=True)
            cold.append(_wall(blame, env_b, b))
        figures = {
            "records": len(entries) + 1,
            "writes": args.writes,
            "files": args.files,
            "fetch": fetched.strip(),
            "blame_in_clone_ms": median(in_b) * 1000,
            "git_blame_ms": median(git) * 1000,
            "clone_vs_git": median(in_b) / median(git),
            "blame_in_clone_decider_up_ms": median(in_b_up) * 1000,
            "clone_decider_up_vs_git": median(in_b_up) / median(git),
            "blame_local_ms": median(in_a) * 1000,
            "blame_in_clone_cold_ms": median(cold) * 1000,
            "first_blame_after_fetch_ms": first_after_fetch * 1000,
        }
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            print(
                f"history: {figures['records']:,} records ({args.writes:,} writes over "
                f"{args.files} files, one commit each); {figures['fetch']}"
            )
            print(
                f"`ledger blame F:N` warm in clone B (the line from A's fetched ledger): "
                f"{figures['blame_in_clone_ms']:.1f} ms vs `git blame -L N,N` in B "
                f"{figures['git_blame_ms']:.1f} ms = {figures['clone_vs_git']:.2f}x"
            )
            print(
                f"the same in B with a resident decider up: "
                f"{figures['blame_in_clone_decider_up_ms']:.1f} ms = "
                f"{figures['clone_decider_up_vs_git']:.2f}x"
            )
            print(f"the same line blamed in clone A (local): {figures['blame_local_ms']:.1f} ms")
            print(
                f"the first blame in B after the fetch (folds A's ledger, verified by the "
                f"fetch): {figures['first_blame_after_fetch_ms']:.0f} ms"
            )
            print(
                f"cold in B (teammate's model deleted: verified again, folded): "
                f"{figures['blame_in_clone_cold_ms']:.0f} ms"
            )
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
