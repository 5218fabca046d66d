"""Shared helpers of the benchmark scripts (not a benchmark itself).

Every script reports figures as rows of ``figure | ledger | baseline | ratio | target | status``
where the baseline is measured in the same run, interleaved with the ledger measurement, so a
noisy machine slows both sides alike. Absolute numbers are printed beside every ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

#: Variables that would make a benchmark use (or write into) a real user's keys or workspace.
LEDGER_ENV_DROP = ("LEDGER_SIGNING_KEY", "LEDGER_ROOT")


def isolated_env(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment whose ledger keys live in ``home`` and nowhere else.

    ``PYTHONDONTWRITEBYTECODE`` is dropped: with it every run recompiles ledger's modules from
    source, which no installed copy does (pip writes bytecode at install time).
    """
    env = dict(os.environ if base is None else base)
    for name in (*LEDGER_ENV_DROP, "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    env["LEDGER_HOME"] = str(home)
    # The one-shot hook path unless a benchmark asks for the resident decider itself
    # (bench_decider.py): otherwise the first hook call would start one for the rest.
    env.setdefault("LEDGER_DECIDER", "off")
    return env


def precompile() -> None:
    """Write ledger's and cli's bytecode, as ``pip install`` does, so start-up is comparable."""
    import compileall  # noqa: PLC0415

    root = Path(__file__).resolve().parent.parent
    for package in ("ledger", "cli"):
        compileall.compile_dir(str(root / package), quiet=1)


def isolate_this_process(home: Path) -> None:
    """Point this process's key lookups at ``home`` (for in-process benchmarks)."""
    for name in LEDGER_ENV_DROP:
        os.environ.pop(name, None)
    os.environ["LEDGER_HOME"] = str(home)


def two_bare_starts() -> float:
    """Seconds for two bare starts of this interpreter (``-I -S -c pass``): the unit the hook
    targets are stated in. This interpreter itself, never ``python3`` from PATH: a pyenv shim
    there is a shell script costing several times a bare start, which would flatter every
    ratio against it."""
    started = time.perf_counter()
    for _ in range(2):
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
    return time.perf_counter() - started


def say(message: str) -> None:
    """Progress goes to stderr, so ``--json`` keeps stdout machine-readable."""
    print(message, file=sys.stderr, flush=True)


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence."""
    return statistics.median(values)


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval holding the median with ``confidence`` (order statistics:
    the ``k``-th smallest and largest values, ``k`` from the binomial distribution of how many
    samples fall below the median); the whole range when there are too few samples."""
    ordered, n = sorted(values), len(values)
    tail, k = 0.0, 0
    while k < n // 2:
        tail += math.comb(n, k) / 2**n  # P(at most k samples below the median)
        if tail > (1 - confidence) / 2:
            break
        k += 1
    return ordered[max(k - 1, 0)], ordered[n - max(k, 1)]


def percentile(values: Sequence[float], pct: int) -> float:
    """The ``pct``-th percentile (inclusive method, linear interpolation)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import cryptography  # noqa: PLC0415 -- only for its version

    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        model = platform.processor() or "unknown"
    return {
        "cores": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cryptography": cryptography.__version__,
        "openssl": _openssl_version(),
        "platform": platform.platform(),
    }


def _openssl_version() -> str:
    try:
        from cryptography.hazmat.backends.openssl.backend import backend  # noqa: PLC0415

        return str(backend.openssl_version_text())
    except (ImportError, AttributeError):
        return "unknown"


def machine_line(info: Mapping[str, Any]) -> str:
    """One line describing the machine."""
    return (
        f"{info['cores']} cores ({info['cpu']}), {info['implementation']} {info['python']}, "
        f"cryptography {info['cryptography']} ({info['openssl']}), {info['platform']}"
    )


class Figure(NamedTuple):
    """One row of a results table."""

    figure: str
    ledger: float
    ledger_text: str
    baseline: float | None
    baseline_text: str
    ratio: float | None
    target: str
    status: str  # PASS, MISS, or "—" for a row without a target

    def cells(self) -> list[str]:
        """The Markdown cells of this row."""
        ratio = "—" if self.ratio is None else f"{self.ratio:.2f}×"
        return [
            self.figure,
            self.ledger_text,
            self.baseline_text,
            ratio,
            self.target,
            f"**{self.status}**" if self.status in ("PASS", "MISS") else self.status,
        ]


def verdict(ok: bool) -> str:
    """PASS or MISS."""
    return "PASS" if ok else "MISS"


HEADER = ("figure", "ledger", "baseline", "ratio", "target", "status")


def markdown_table(rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table with the standard header."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def report(
    name: str,
    figures: Sequence[Figure],
    *,
    settings: Mapping[str, Any],
    context: Sequence[str],
    raw: Mapping[str, Any],
    as_json: bool,
    info: Mapping[str, Any],
) -> None:
    """Print the results: a Markdown table with context notes, or one JSON document."""
    if as_json:
        doc = {
            "benchmark": name,
            "machine": dict(info),
            "settings": dict(settings),
            "figures": [f._asdict() for f in figures],
            "context": list(context),
            "raw": dict(raw),
        }
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    print(f"## {name}\n")
    print(f"machine: {machine_line(info)}")
    print("settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()) + "\n")
    print(markdown_table(f.cells() for f in figures))
    if context:
        print()
        for line in context:
            print(f"- {line}")


def rate(value: float, unit: str = "rec/s") -> str:
    """``12,345 rec/s``."""
    return f"{value:,.0f} {unit}"


def ms(seconds: float) -> str:
    """``12.3 ms``."""
    return f"{seconds * 1000:.1f} ms"


def spread(values: Sequence[float], fmt: str = "{:,.0f}") -> str:
    """``min–max`` of the repetitions, for the context notes."""
    return f"{fmt.format(min(values))}–{fmt.format(max(values))}"


def _busy_seconds() -> float | None:
    """CPU seconds all cores spent busy since boot (``/proc/stat``), or None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait.
    ticks = [int(x) for x in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    import resource  # noqa: PLC0415

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class LoadMeter:
    """How busy *other* processes kept the machine while we measured (noise indicator).

    ``other_cores`` = (CPU time all cores were busy − CPU time of this process and its waited-for
    children) / wall time. 0 on a quiet machine; 1.0 means another process kept one core busy.
    """

    def __init__(self) -> None:
        self.busy = 0.0
        self.own = 0.0
        self.wall = 0.0

    def __enter__(self) -> LoadMeter:
        self._busy0 = _busy_seconds()
        self._own0 = _own_cpu_seconds()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        busy1 = _busy_seconds()
        self.wall += time.perf_counter() - self._t0
        self.own += _own_cpu_seconds() - self._own0
        if busy1 is not None and self._busy0 is not None:
            self.busy += busy1 - self._busy0

    @property
    def other_cores(self) -> float:
        """Average number of cores other processes used over the measured intervals."""
        return max(0.0, self.busy - self.own) / self.wall if self.wall else 0.0


def noise_line(meter: LoadMeter) -> str:
    """A context note on machine noise."""
    return (
        f"machine noise: other processes kept {meter.other_cores:.2f} of "
        f"{os.cpu_count()} cores busy on average while this benchmark measured"
    )


def add_workspaces_dir(parser: argparse.ArgumentParser) -> None:
    """``--dir``: the folder a hook benchmark puts its workspaces in (:func:`file_creation_line`
    says why it matters); ``/tmp`` by default, short enough for the decider's sockets."""
    parser.add_argument(
        "--dir",
        default="/tmp",  # noqa: S108 -- a folder for temporary workspaces
        help="where the workspaces go (default /tmp: short enough for the sockets)",
    )


def file_creation_line(folder: Path, samples: int = 60) -> str:
    """A context note on the workspace's file system: the p50 of creating a small file and
    renaming it over another in ``folder``, a step every hook's caches and snapshots take a few
    times. On the Firecracker VM these figures were measured on it ranged from 10 µs to 1 ms
    between folders of one disk and between minutes after boot (ext4 initialising its inode
    tables), so a run's figures are read beside it (``--dir`` picks the workspaces' folder)."""
    probe = Path(tempfile.mkdtemp(prefix="fc-", dir=folder))
    try:
        target, times = probe / "target", []
        target.write_bytes(b"x")
        for n in range(samples):
            start = time.perf_counter()
            fd = os.open(probe / f"t{n}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, b"y" * 512)
            os.close(fd)
            (probe / f"t{n}").replace(target)
            times.append(time.perf_counter() - start)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return (
        f"file system: creating a file and renaming it over another takes "
        f"{median(times) * 1e6:,.0f} µs (p50) in {folder}, where the workspaces are"
    )


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds``."""

    def __enter__(self) -> Stopwatch:
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


# --- realistic hook-event bodies --------------------------------------------------------------

_TOOLS = ("Edit", "Edit", "Edit", "Write", "MultiEdit", "Bash", "Read")
_DIRS = (
    "src/acme/api",
    "src/acme/models",
    "src/acme/billing",
    "tests/unit",
    "src/acme/auth",
    "src/acme/workers",
    "docs",
    "migrations/versions",
)
_MODULES = (
    "user",
    "invoice",
    "session_store",
    "routes",
    "schema",
    "tasks",
    "payments",
    "permissions",
    "conftest",
    "settings",
    "ratelimit",
    "webhooks",
)
_WORDS = (
    "def",
    "return",
    "self",
    "if",
    "else",
    "await",
    "async",
    "for",
    "in",
    "not",
    "None",
    "True",
    "import",
    "from",
    "raise",
    "ValueError",
    "user",
    "invoice",
    "amount_cents",
    "customer_id",
    "session",
    "request",
    "response",
    "status",
    "=",
    "==",
    "(",
    ")",
    ":",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "+",
    "-",
    '"pending"',
    "'paid'",
    "0",
    "1",
    "42",
    "timeout_ms",
    "retry",
    "logger.info",
    "# TODO: handle refunds",
    "décimal",
    "→",
)
_HOOKS = ("owned-scope", "secret-scan", "intent-match", "lint-gate", "rate-limit")
_OUTCOMES = ("pass", "pass", "pass", "pass", "warn", "block")
_DECISIONS = ("allow", "allow", "allow", "allow", "ask", "deny")


def _code(rng: random.Random, length: int) -> str:
    out: list[str] = []
    size = 0
    indent = "    "
    while size < length:
        line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 9)))
        out.append(line)
        size += len(line) + 1
        indent = rng.choice(("", "    ", "        "))
    return "\n".join(out)[:length]


def hook_body(rng: random.Random, turn: int) -> dict[str, Any]:
    """One PreToolUse-style hook event, as an agent client would log it (no floats)."""
    tool = rng.choice(_TOOLS)
    path = f"{rng.choice(_DIRS)}/{rng.choice(_MODULES)}.py"
    hooks = [
        {"duration_ms": rng.randint(0, 40), "name": name, "outcome": rng.choice(_OUTCOMES)}
        for name in rng.sample(_HOOKS, rng.randint(1, 3))
    ]
    decision = rng.choice(_DECISIONS)
    body: dict[str, Any] = {
        "event": "PreToolUse",
        "tool": tool,
        "tool_use_id": f"toolu_{rng.getrandbits(96):024x}",
        "cwd": "/home/dev/projects/acme-platform",
        "intent": f"INT-{rng.randint(1, 400):04d}",
        "decision": decision,
        "reason": "" if decision == "allow" else f"{path} is outside the intent's owned_scope",
        "hooks": hooks,
        "turn": turn,
        "exit_code": 0 if decision == "allow" else 2,
    }
    if tool == "Bash":
        body["input"] = {
            "command": f"pytest -q {path} -k " + _code(rng, rng.randint(20, 60)),
            "timeout_ms": 120_000,
        }
    else:
        old = _code(rng, rng.randint(40, 200))
        new = _code(rng, rng.randint(60, 240))
        body["input"] = {
            "file_path": path,
            "old_string": old,
            "new_string": new,
            "replace_all": rng.random() < 0.1,
        }
        body["diff"] = {
            "lines_added": new.count("\n") + 1,
            "lines_removed": old.count("\n") + 1,
            "bytes_before": rng.randint(500, 40_000),
        }
    return body


def hook_bodies(
    count: int, *, seed: int = 20261121, low: int = 400, high: int = 900
) -> list[dict[str, Any]]:
    """``count`` distinct hook bodies whose canonical JSON is ``low``–``high`` bytes long."""
    from ledger import canonical_bytes  # noqa: PLC0415

    rng = random.Random(seed)  # noqa: S311 -- reproducible test data, not crypto
    out: list[dict[str, Any]] = []
    while len(out) < count:
        body = hook_body(rng, len(out))
        if low <= len(canonical_bytes(body)) <= high:
            out.append(body)
    return out


def body_sizes(bodies: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
    """(min, median, max) canonical size of ``bodies`` in bytes."""
    from ledger import canonical_bytes  # noqa: PLC0415

    sizes = sorted(len(canonical_bytes(dict(b))) for b in bodies)
    return sizes[0], sizes[len(sizes) // 2], sizes[-1]


ACTOR = {
    "agent": "builder",
    "client": "claude-code",
    "model": "claude-sonnet-4-5",
    "session": "0b7d7f4e-5b2a-4c41-9a55-3f0c9e2d1a17",
}


@contextlib.contextmanager
def running_decider(ledger: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A resident decider (``ledger serve``) for ``env``'s user, up until the block ends (the
    caller gives ``env`` a private ``XDG_RUNTIME_DIR``, so it is this benchmark's own)."""
    proc = subprocess.Popen([ledger, "serve", "--idle", "600"], env=env)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(
            [ledger, "serve", "--status"], env=env, capture_output=True, check=False
        ).returncode:
            if time.monotonic() > deadline:
                raise RuntimeError("the decider did not start")
            time.sleep(0.05)
        yield proc
    finally:
        subprocess.run([ledger, "serve", "--stop"], env=env, capture_output=True, check=False)
        proc.wait(timeout=30)


def baseline_tree(rev: str | None, into: Path) -> tuple[str, Path]:
    """``(rev, directory)``: ``git archive`` of ``rev`` (default: the merge base with ``main``)
    extracted into ``into``, to run a tree before a change beside this one."""
    import io  # noqa: PLC0415
    import tarfile  # noqa: PLC0415

    here = Path(__file__).resolve().parent.parent
    if rev is None:
        rev = subprocess.run(
            ["git", "merge-base", "HEAD", "main"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    data = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=here, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    return rev, into
