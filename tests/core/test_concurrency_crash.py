"""Many processes appending at once, and writers killed at random moments.

(a) Concurrent ``ledger append`` processes on one workspace: every record lands exactly once,
    seqs are contiguous, the chain verifies.
(b) Writers using the library are SIGKILLed mid-stream, round after round, sometimes leaving a
    torn tail: verify never reports more than a torn tail, ``repair`` fixes that, and every
    record a writer saw returned (hence fsynced) survives to the end.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ledger import Ledger

pytestmark = pytest.mark.slow

LEDGER_BIN = Path(sys.executable).parent / "ledger"


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"LEDGER_SIGNING_KEY", "LEDGER_ROOT", "LEDGER_HOME"}
    }
    env["LEDGER_HOME"] = str(tmp_path / "home")
    return env


# --- (a) concurrent CLI appends -------------------------------------------------------------

PROCESSES = 8
PER_PROCESS = 5


def test_concurrent_cli_appends_are_all_recorded_exactly_once(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    init = subprocess.run(
        [str(LEDGER_BIN), "init", "--parents", "--root", str(ws)],
        env=env,
        capture_output=True,
        check=False,
    )
    assert init.returncode == 0, init.stderr

    def worker(wid: int) -> list[int]:
        seqs = []
        for i in range(PER_PROCESS):
            done = subprocess.run(
                [
                    str(LEDGER_BIN),
                    "append",
                    "--root",
                    str(ws),
                    "--kind",
                    "app.concurrent",
                    "--client",
                    f"worker-{wid}",
                    "--json",
                ],
                input=json.dumps({"w": wid, "i": i}).encode(),
                env=env,
                capture_output=True,
                check=False,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr.decode()
            assert done.stderr == b""
            seqs.append(json.loads(done.stdout)["seq"])
        return seqs

    with ThreadPoolExecutor(PROCESSES) as pool:
        returned = list(pool.map(worker, range(PROCESSES)))

    total = PROCESSES * PER_PROCESS
    records = list(Ledger.open(ws, environ=env).records())
    assert len(records) == total + 1
    assert [r.seq for r in records] == list(range(total + 1))
    bodies = [(r.body["w"], r.body["i"]) for r in records[1:]]
    assert sorted(bodies) == [(w, i) for w in range(PROCESSES) for i in range(PER_PROCESS)]
    # Each process's appends are ordered, and each reported the seq it really got.
    for wid, seqs in enumerate(returned):
        assert seqs == sorted(seqs)
        for i, seq in enumerate(seqs):
            assert (records[seq].body["w"], records[seq].body["i"]) == (wid, i)
            assert records[seq].actor["client"] == f"worker-{wid}"
    verify = subprocess.run(
        [str(LEDGER_BIN), "verify", "--root", str(ws)], env=env, capture_output=True, check=False
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"ok: {total + 1} records".encode() in verify.stdout


# --- (b) writers killed at random moments ---------------------------------------------------

WRITER = """
import sys, time
from ledger import Entry, Ledger

root, wid, mode = sys.argv[1], sys.argv[2], sys.argv[3]
ledger = Ledger.open(root)
out = sys.stdout
i = 0
while True:
    if mode == "batch":
        # Large single write()s: a SIGKILL can cut one short (the kernel checks for fatal
        # signals between pages), which is how a real torn tail happens.
        records = ledger.append_many(
            [Entry("app.crash", {"w": wid, "i": i + k, "pad": "p" * 400}) for k in range(150)])
        time.sleep(0.01)
    else:
        records = [ledger.append("app.crash", {"w": wid, "i": i})]
    for record in records:
        out.write(f"{record.seq} {record.hash}\\n")
    out.flush()
    i += len(records)
"""

ROUNDS = 6
WRITERS = 4


def start_writers(
    tmp_path: Path, round_no: int, env: dict[str, str], script: Path, ws: Path
) -> list[tuple[subprocess.Popen[bytes], Path]]:
    writers = []
    for wid in range(WRITERS):
        out = tmp_path / f"round{round_no}-writer{wid}.out"
        mode = "batch" if wid == 0 else "single"
        with out.open("wb") as handle:
            proc = subprocess.Popen(
                [sys.executable, str(script), str(ws), f"{round_no}.{wid}", mode],
                stdout=handle,
                stderr=subprocess.PIPE,
                env=env,
            )
        writers.append((proc, out))
    return writers


def wait_until_writing(writers: list[tuple[subprocess.Popen[bytes], Path]]) -> None:
    deadline = time.monotonic() + 60
    for proc, out in writers:
        while out.stat().st_size == 0:
            if proc.poll() is not None:
                assert proc.stderr is not None
                pytest.fail(f"writer exited early: {proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                pytest.fail("writer produced no record within 60 s")
            time.sleep(0.01)


def returned_records(out: Path) -> list[tuple[int, str]]:
    """(seq, hash) pairs a writer printed; a line cut by the kill is ignored."""
    pairs = []
    for line in out.read_bytes().split(b"\n")[:-1]:
        seq, record_hash = line.decode().split(" ")
        pairs.append((int(seq), record_hash))
    return pairs


def inject_torn_tail(path: Path, rnd: random.Random) -> int:
    """Simulate a write cut mid-line: append a plausible next record, then truncate inside it.

    (Truncating a record a writer has already seen returned would be data loss caused by the
    test, not a crash of the writer: returned records are fsynced.)
    """
    size = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(path.read_bytes().splitlines()[-1] + b"\n")
    cut = size + rnd.randrange(1, path.stat().st_size - size - 1)
    os.truncate(path, cut)
    return cut - size


def test_killed_writers_lose_nothing_they_returned(tmp_path: Path) -> None:
    rnd = random.Random(20260301)  # noqa: S311 -- test schedule, not cryptography
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ledger = Ledger.init(ws, environ=env)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    returned: set[tuple[int, str]] = set()
    repairs = 0
    for round_no in range(ROUNDS):
        writers = start_writers(tmp_path, round_no, env, script, ws)
        wait_until_writing(writers)
        kill_at = sorted((rnd.uniform(0.0, 0.4), i) for i in range(WRITERS))
        started = time.monotonic()
        for delay, index in kill_at:
            time.sleep(max(0.0, started + delay - time.monotonic()))
            writers[index][0].send_signal(signal.SIGKILL)
        for proc, out in writers:
            code = proc.wait(timeout=60)
            assert proc.stderr is not None
            stderr = proc.stderr.read().decode()
            proc.stderr.close()
            if code != -signal.SIGKILL:
                # A kill that cut a large write short leaves a real torn tail; writers still
                # running must then refuse to append (and exit) rather than write after it.
                assert "TornTailError" in stderr, (code, stderr)
            returned.update(returned_records(out))
        if round_no % 2 == 1:
            inject_torn_tail(ledger.file.path, rnd)

        report = ledger.verify(jobs=2)
        assert report.ok or report.only_torn_tail, report.problems
        if not report.ok:
            result = ledger.repair()
            assert result.repaired
            repairs += 1
            after = ledger.verify(jobs=2)
            assert after.ok, after.problems
        present = {(r.seq, r.hash) for r in ledger.records()}
        assert returned <= present, sorted(returned - present)[:5]

    assert repairs >= ROUNDS // 2  # at least the injected torn tails were repaired
    records = list(ledger.records())
    assert [r.seq for r in records] == list(range(len(records)))
    assert len(returned) > ROUNDS * WRITERS  # the writers really did write
    kinds = [r.kind for r in records]
    assert kinds.count("ledger.repaired") == repairs
