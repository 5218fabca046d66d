"""Suite-wide isolation: ledger's per-user state (stored checkpoints, workspace anchors) goes to
a throwaway directory, never the real ``~/.local/state/ledger``. Tests that set ``LEDGER_HOME``
keep their state under it (``anchors.state_home``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import settings

# One folder for the whole session: xdist's workers inherit the controller's.
_MADE_HERE: list[str] = []  # the folders below this process made (and removes at the end)


def _suite_folder(variable: str, prefix: str) -> str:
    if not os.environ.get(variable):
        os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
        _MADE_HERE.append(os.environ[variable])
    return os.environ[variable]


_STATE_MARKER = _suite_folder("LEDGER_TEST_STATE", "ledger-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE_MARKER
# A short runtime folder of the suite's own (0700, from mkdtemp): a decider a test starts with an
# environment copied from this one puts its socket there. Without it, a socket path under a
# pytest tmp folder is too long for sun_path and goes to the per-user fallback, /tmp/ledger-<uid>,
# which outlives the suite (watched below).
_RUNTIME = os.environ["XDG_RUNTIME_DIR"] = _suite_folder("LEDGER_TEST_RUNTIME", "ledger-run-")
# Every hook call of the suite decides in its own process, as it did before the resident
# decider: otherwise each test's ledger home would start a decider of its own. The decider's
# tests (tests/hooks/test_decider.py) switch it on, each with its own socket folder.
os.environ["LEDGER_DECIDER"] = "off"

# Property tests explore new examples on every local run (that is how they find bugs), but CI must
# judge a commit, not a dice roll: `.ci/run` selects the "ci" profile, which derandomizes the
# search (the same examples for the same code) and prints the blob that replays a failure.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("LEDGER_HYPOTHESIS_PROFILE", "default"))


# --- a suite that leaves nothing behind ------------------------------------------------------
# At the end of the session (in the controller, after every worker), the suite fails if a test
# wrote into this user's real ledger or agent-client folders, or left a ledger process running.
# Tests give ledger and the clients a temporary HOME / LEDGER_HOME / XDG_CONFIG_HOME instead.
# Downloaded agent CLIs live in one documented cache (tests/conformance/_clients.py,
# `cache_root`), which is not watched.

_REAL_HOME = Path(os.environ.get("HOME") or Path.home())
_WATCHED = [
    Path(os.environ.get("XDG_CONFIG_HOME") or _REAL_HOME / ".config") / "ledger",
    _REAL_HOME / ".config" / "ledger",
    _REAL_HOME / ".local" / "state" / "ledger",
    *(_REAL_HOME / name for name in (".claude", ".claude.json", ".codex", ".gemini", ".cursor")),
    *(_REAL_HOME / name for name in (".copilot", ".cline", ".codeium", ".config/Code/User")),
    _REAL_HOME / ".config" / "chromium",  # its crash reporter ignores --user-data-dir
    Path("/tmp") / f"ledger-{os.getuid()}",  # the deciders' socket fallback
]
_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()
_FILES_LIMIT = 20_000  # a watched folder this large is walked no further (and not compared)


def _snapshot() -> dict[str, tuple[int, int]]:
    seen: dict[str, tuple[int, int]] = {}
    for top in _WATCHED:
        if top.is_file():
            info = top.stat()
            seen[str(top)] = (info.st_mtime_ns, info.st_size)
            continue
        if top.is_dir():
            seen[f"{top}/"] = (-1, -1)
        for folder, dirs, files in os.walk(top):
            # A folder made counts too (a decider's `run/`), not one whose entries changed.
            seen.update({os.path.join(folder, name) + "/": (-1, -1) for name in dirs})  # noqa: PTH118
            for name in files:
                path = os.path.join(folder, name)  # noqa: PTH118 -- os.walk's strings
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                seen[path] = (info.st_mtime_ns, info.st_size)
            if len(seen) > _FILES_LIMIT:
                return seen
    return seen


def _ledger_processes_of(*markers: str) -> list[str]:
    """Processes still running whose environment names one of this session's temporary
    folders (a decider or `ledger serve` a test started), as ``pid: command line``."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m.encode() in environ for m in markers) and "serve" in command:
            found.append(f"{entry.name}: {command.strip()}")
    return found


#: The folder Claude Code's sandbox makes in /tmp whatever TMPDIR says (seen with 2.1.332 under
#: `--hardened`, tests/conformance/test_claude_hardened.py): removed at the end when the session
#: made it and it is empty again.
_CLIENT_TMP = Path("/tmp") / f"cc-daemon-{os.getuid()}"


_CLIENT_TMP_NEW = pytest.StashKey[bool]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_BEFORE] = _snapshot()
        session.config.stash[_CLIENT_TMP_NEW] = not _CLIENT_TMP.exists()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput") or _BEFORE not in session.config.stash:
        return
    before, after = session.config.stash[_BEFORE], _snapshot()
    written = sorted(p for p, stamp in after.items() if before.get(p) != stamp)
    deadline = time.monotonic() + 5  # a decider told to stop may take a moment to exit
    running = _ledger_processes_of(_STATE_MARKER, _RUNTIME)
    while running and time.monotonic() < deadline:
        time.sleep(0.2)
        running = _ledger_processes_of(_STATE_MARKER, _RUNTIME)
    problems = [f"wrote into the real {path}" for path in written[:20]]
    if not running:  # the suite's own temporary folders, once nothing runs from them
        for folder in _MADE_HERE:
            shutil.rmtree(folder, ignore_errors=True)
        if session.config.stash.get(_CLIENT_TMP_NEW, False):
            with contextlib.suppress(OSError):
                _CLIENT_TMP.rmdir()  # only if empty: a client of the person's may use it
    problems += [f"left running: {line}" for line in running]
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        text = "the suite must leave nothing behind:\n  " + "\n  ".join(problems)
        if reporter is not None:
            reporter.write_line(text, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
