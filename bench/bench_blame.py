"""``ledger blame`` speed and memory, against ``git blame`` on an equivalent history.

History: ``--writes`` agent writes (default 50,000) spread over ``--files`` files, each write
a few random line edits recorded as a ``hook.pre`` + ``hook.post`` pair (so 100,000 signed
records by default) with the exact attribution the hook computes
(:func:`ledger._governance.attribution.file_change`). Its git twin holds the same contents with
one commit per write, built with ``git fast-import``.

Figures (medians, measured side by side):

* single-line blame, CLI wall time, warm projection cache: ``ledger blame F:N`` vs
  ``git blame -L N,N F`` (target ≤ 1.0×); the cold figure (cache deleted, full rebuild) too;
* full projection rebuild: records/s folded from the ledger file, read path included (median
  of three; target ≥ 50,000/s);
* memory: peak RSS of a rebuild over the history and over 10× the history on the same live
  files (in-memory records, unsigned, each write replacing one of the 60 lines: the fold is
  what is measured), target: about equal; and the peak RSS of the ``ledger blame F:N``
  process, warm and cold.

    python bench/bench_blame.py [--writes N] [--files N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import isolated_env, median, precompile, say

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger._evidence.ledger import Entry, Ledger, append_reserved  # noqa: E402
from ledger._evidence.read import read_records  # noqa: E402
from ledger._governance.attribution import file_change  # noqa: E402
from ledger._projections import BLAME  # noqa: E402


def _history(
    writes: int, files: int, seed: int = 9
) -> Iterator[tuple[str, list[str] | None, list[str]]]:
    """Yield ``(path, old lines or None for a new file, new lines)`` per write."""
    rng = random.Random(seed)  # noqa: S311 -- a reproducible history, not a secret
    contents: dict[str, list[str]] = {}
    counter = 0
    for _ in range(writes):
        path = f"src/f{rng.randrange(files):04d}.py"
        old = contents.get(path)
        lines = list(old) if old is not None else [f"init {path} {i}" for i in range(60)]
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(lines) + 1)
            counter += 1
            if rng.random() < 0.5 and at < len(lines):
                lines[at] = f"changed {counter}"
            else:
                lines.insert(at, f"added {counter}")
        contents[path] = lines
        yield path, old, lines


def _text(lines: list[str] | None) -> str | None:
    return None if lines is None else "".join(f"{x}\n" for x in lines)


def _records(writes: int, files: int) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    import hashlib  # noqa: PLC0415

    for n, (path, old, new) in enumerate(_history(writes, files)):
        old_text, new_text = _text(old), "".join(f"{x}\n" for x in new)
        change = file_change(
            path,
            old=old_text,
            old_known=True,
            old_sha256=hashlib.sha256(old_text.encode()).hexdigest() if old_text else None,
            new=new_text,
            new_sha256=hashlib.sha256(new_text.encode()).hexdigest(),
        )
        actor = {
            "agent": None,
            "client": "claude-code",
            "model": "claude-opus-4",
            "session": f"s{n % 7}",
        }
        common = {
            "tool": "Write",
            "tool_use_id": f"toolu_{n}",
            "invocation": f"inv-{n}",
            "event": "PostToolUse",
            "cwd": "/ws",
            "git_head": None,
        }
        out.append(
            (
                "hook.pre",
                {
                    **common,
                    "event": "PreToolUse",
                    "decision": "allow",
                    "reason": None,
                    "error": None,
                    "hooks": [],
                    "data": {"intent_id": "INT-001"},
                    "tool_input": {"file_path": path},
                },
                actor,
            )
        )
        out.append(
            (
                "hook.post",
                {
                    **common,
                    "decision": "allow",
                    "reason": None,
                    "error": None,
                    "hooks": [],
                    "data": {"intent_id": "INT-001"},
                    "outcome": "success",
                    "duration_ms": 1,
                    "tool_error": None,
                    "edit": None,
                    "observed": {},
                    "attribution": {"source": "content", "files": [change]},
                },
                actor,
            )
        )
    return out


def _git_twin(root: Path, writes: int, files: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream = []
    stamp = 1_700_000_000
    for mark, (path, _old, new) in enumerate(_history(writes, files), start=1):
        data = (_text(new) or "").encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer A <a@x> {stamp + mark} +0000\n".encode())
        message = f"write {mark}".encode()
        stream.append(b"data %d\n%s\n" % (len(message), message))
        if mark > 1:
            stream.append(f"from :{mark - 1}\n".encode())
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    # each commit gets its mark (``from :N`` names the previous one)
    text = b"".join(stream)
    parts = text.split(b"commit refs/heads/main\n")[1:]
    final = b"".join(
        b"commit refs/heads/main\nmark :%d\n" % (i + 1) + part for i, part in enumerate(parts)
    )
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=final, check=True)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "-f", "main"], check=True)


_PEAK_RSS = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
print(os.wait4(pid, 0)[2].ru_maxrss)
"""


def _peak_rss(command: list[str], env: dict[str, str], cwd: Path) -> int:
    """Peak RSS (KiB) of ``command``, forked from a small Python (ru_maxrss carries across
    exec, so not from this large process)."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *command],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def _wall(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _rss_fold(records: int, files: int) -> int:
    """Peak RSS (KiB) of a child folding ``records`` in-memory posts over ``files`` files."""
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from ledger._projections import BLAME
state = BLAME.initial()
for n in range({records}):
    path = f"src/f{{n % {files}:04d}}.py"
    BLAME.apply(state, {{"seq": n, "hash": "h", "kind": "hook.post", "ts": "t",
        "actor": {{"session": "s"}}, "body": {{"tool": "Write", "data": {{}},
        "attribution": {{"files": [{{"path": path, "exact": True, "change": "modified",
        "old_sha256": state.files.get(path, {{}}).get("sha"), "sha256": f"{{n:064x}}",
        "lines": 60, "hunks": [{{"old_start": n % 59 + 1, "old_lines": 1,
        "new_start": n % 59 + 1, "new_lines": 1, "line_hashes": [f"{{n:012x}}"]}}]
        if path in state.files else
        [{{"old_start": 0, "old_lines": 0, "new_start": 1, "new_lines": 60,
           "line_hashes": [f"{{n:06x}}{{i:06x}}" for i in range(60)]}}]}}]}}}}}})
# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child of this (large)
# process would report the parent's peak.
print(next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM")))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=50_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    precompile()
    tmp = Path(tempfile.mkdtemp(prefix="bench-blame-"))
    try:
        home = tmp / "home"
        env = isolated_env(home)
        ws = tmp / "ws"
        say(f"git twin: {args.writes} commits ...")
        _git_twin(ws, args.writes, args.files)
        say("ledger: signing records ...")
        ledger = Ledger.init(ws, environ=env)
        entries = [Entry(k, b, a) for k, b, a in _records(args.writes, args.files)]
        for i in range(0, len(entries), 2000):
            append_reserved(ledger, entries[i : i + 2000])  # hook.* as the hook service writes them
        total = len(entries) + 1
        # the file the last write touched, a line in its middle
        last_path = entries[-1].body["attribution"]["files"][0]["path"]
        line_count = entries[-1].body["attribution"]["files"][0]["lines"]
        line = line_count // 2
        ledger_cli = [str(Path(sys.executable).parent / "ledger"), "blame", f"{last_path}:{line}"]
        git_cli = ["git", "blame", "-L", f"{line},{line}", "--", last_path]
        cache = ws / ".orchestration" / ".cache" / "projections"
        cold = []
        for _ in range(args.runs):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(_wall(ledger_cli, env, ws))
        shutil.rmtree(cache, ignore_errors=True)
        rss_cold = _peak_rss(ledger_cli, env, ws)
        warm, git = [], []
        for _ in range(args.runs):
            warm.append(_wall(ledger_cli, env, ws))
            git.append(_wall(git_cli, env, ws))
        rss_warm = _peak_rss(ledger_cli, env, ws)
        # The agent's next call writes another file, then a person blames this one: the first
        # blame after new records (the slices fall behind the ledger until a full fold).
        post = next(
            i
            for i in range(len(entries) - 1, 0, -1)
            if entries[i].kind == "hook.post"
            and entries[i].body["attribution"]["files"][0]["path"] != last_path
        )
        call = entries[post - 1 : post + 1]  # its hook.pre and hook.post
        after_call = []
        for n in range(args.runs):
            ids = {"tool_use_id": f"toolu_next_{n}", "invocation": f"inv-next-{n}"}
            append_reserved(ledger, [Entry(e.kind, {**e.body, **ids}, e.actor) for e in call])
            after_call.append(_wall(ledger_cli, env, ws))
        rebuilds = []
        for _ in range(3):
            start = time.perf_counter()
            state = BLAME.initial()
            for stored in read_records(ledger.file.path):
                BLAME.apply(state, stored.data)
            rebuilds.append(total / (time.perf_counter() - start))
        rebuild = median(rebuilds)
        rss_1 = _rss_fold(total, args.files)
        rss_10 = _rss_fold(10 * total, args.files)
        figures = {
            "records": total,
            "writes": args.writes,
            "files": args.files,
            "blame_warm_ms": median(warm) * 1000,
            "blame_cold_ms": median(cold) * 1000,
            "git_blame_ms": median(git) * 1000,
            "warm_vs_git": median(warm) / median(git),
            "blame_after_call_ms": median(after_call) * 1000,
            "after_call_vs_git": median(after_call) / median(git),
            "rebuild_records_per_s": rebuild,
            "rss_kib_1x": rss_1,
            "rss_kib_10x": rss_10,
            "rss_kib_blame_warm": rss_warm,
            "rss_kib_blame_cold": rss_cold,
        }
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            print(
                f"history: {total:,} records ({args.writes:,} writes over {args.files} files);"
                f" git twin: {args.writes:,} commits"
            )
            print(
                f"single-line blame, warm: ledger {figures['blame_warm_ms']:.0f} ms vs git "
                f"blame -L {figures['git_blame_ms']:.0f} ms = {figures['warm_vs_git']:.2f}x "
                f"(target <= 1.0x) {'PASS' if figures['warm_vs_git'] <= 1 else 'FAIL'}"
            )
            print(
                f"single-line blame after the agent's next call (another file): "
                f"{figures['blame_after_call_ms']:.0f} ms = {figures['after_call_vs_git']:.2f}x git"
            )
            print(f"single-line blame, cold (cache deleted): {figures['blame_cold_ms']:.0f} ms")
            print(
                f"full rebuild: {rebuild:,.0f} records/s (target >= 50,000) "
                f"{'PASS' if rebuild >= 50_000 else 'FAIL'}"
            )
            print(
                f"peak RSS of the fold: {rss_1 / 1024:.1f} MiB at 1x, {rss_10 / 1024:.1f} MiB "
                f"at 10x history (same live files)"
            )
            print(
                f"peak RSS of `ledger blame F:N`: warm {rss_warm / 1024:.1f} MiB, cold "
                f"{rss_cold / 1024:.1f} MiB"
            )
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
