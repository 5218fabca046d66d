"""A ``.pyc`` planted in the cache of a module the hook imports is caught on the next call;
the ``.pyc`` Python itself writes at a first import (or pip at install, in any invalidation
mode) never is.

The next interpreter that imports a module runs its ``__pycache__`` entry instead of its
source whenever the header matches the source (PEP 3147, PEP 552): a ``.pyc`` compiled from
other code, with the real source's header, runs in the next hook process as surely as an
edited ``.py``. The tripwire watches the ``.pyc`` of every module the hook imported from
source, and reads one only when its stat moved.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import py_compile
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from ledger._governance.analysis import runs_later
from ledger._governance.analysis.runs_later import hook_bytecode_files
from ledger._hooks.tripwire import Rule, bytecode_digest, compare, fingerprint

from ._support import Session, Workspace, make_workspace

AUTH = "src/auth/login.ts"
FAITHFUL = "compiled-from-its-source"


def _foreign(source: Path, cached: Path, code: str = "import os\nos.system('id')\n") -> None:
    """Write, at ``cached``, other code compiled with ``source``'s own timestamp header (its
    mtime and size): what an attacker plants so that the next import runs it."""
    other = source.with_name("planted_elsewhere.py")
    other.write_text(code)
    py_compile.compile(str(other), cfile=str(cached), doraise=True)
    other.unlink()
    data = bytearray(cached.read_bytes())
    info = source.stat()
    data[8:12] = (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    data[12:16] = (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cached.write_bytes(bytes(data))


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A module imported from a folder on the path (as site-packages is): its source, and the
    ``.pyc`` Python wrote for it."""
    folder = tmp_path / "site"
    folder.mkdir()
    source = folder / "ledger_probe_dep.py"
    source.write_text("VALUE = 1\n\ndef f():\n    return VALUE\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    # On the hook path, as yaml's modules are (the watch covers the hook path's modules only).
    probes = frozenset({"ledger_probe_dep", "ledger_probe_other"})
    monkeypatch.setattr(runs_later, "HOOK_MODULES", runs_later.HOOK_MODULES | probes)
    importlib.invalidate_caches()
    imported = importlib.import_module("ledger_probe_dep")
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        assert imported.__cached__ == str(cached)
        assert cached.is_file()
        yield source, cached
    finally:
        sys.modules.pop("ledger_probe_dep", None)
        sys.modules.pop("ledger_probe_other", None)


def test_every_pyc_of_ledgers_own_modules_is_faithful() -> None:
    """No false alarm from the byte-code on disk now (written by Python or by pip)."""
    judged = [p for p in hook_bytecode_files() if "/ledger/" in p and Path(p).exists()]
    if sys.dont_write_bytecode and len(judged) <= 20:  # PYTHONDONTWRITEBYTECODE, a fresh clone
        pytest.skip("this interpreter writes no byte-code: there is none of ledger's to judge")
    assert len(judged) > 20
    foreign = [p for p in judged if bytecode_digest(p) != FAITHFUL]
    assert foreign == []


@pytest.mark.parametrize(
    "mode",
    [
        py_compile.PycInvalidationMode.TIMESTAMP,
        py_compile.PycInvalidationMode.CHECKED_HASH,
        py_compile.PycInvalidationMode.UNCHECKED_HASH,
    ],
)
def test_a_pyc_compiled_from_its_source_in_any_mode_is_faithful(
    module: tuple[Path, Path], mode: py_compile.PycInvalidationMode
) -> None:
    source, cached = module
    py_compile.compile(str(source), cfile=str(cached), invalidation_mode=mode, doraise=True)
    assert bytecode_digest(str(cached)) == FAITHFUL


def test_a_planted_pyc_with_the_sources_header_is_foreign(module: tuple[Path, Path]) -> None:
    source, cached = module
    _foreign(source, cached)
    assert bytecode_digest(str(cached)).startswith("foreign:")
    # It is what the next interpreter runs instead of the source:
    done = subprocess.run(
        [sys.executable, "-c", "import ledger_probe_dep"],
        cwd=source.parent,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(source.parent), "PATH": "/usr/bin:/bin"},
    )
    assert "uid=" in done.stdout


def test_an_unchecked_hash_pyc_of_other_code_is_foreign(module: tuple[Path, Path]) -> None:
    """Loaded whatever the source says: the header proves nothing."""
    source, cached = module
    other = source.with_name("other.py")
    other.write_text("import os\n")
    py_compile.compile(
        str(other),
        cfile=str(cached),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    assert bytecode_digest(str(cached)).startswith("foreign:")


@pytest.mark.parametrize(
    "damage", ["stale-header", "bad-magic", "truncated", "garbage-code", "no-source"]
)
def test_what_no_interpreter_would_run_is_judged_by_what_it_would_do(
    module: tuple[Path, Path], damage: str
) -> None:
    source, cached = module
    _foreign(source, cached)
    data = bytearray(cached.read_bytes())
    if damage == "stale-header":  # Python recompiles from the source: harmless
        data[8:12] = b"\0\0\0\0"
        expected = FAITHFUL
    elif damage == "bad-magic":  # rejected at import: harmless
        data[0:4] = b"\0\0\0\0"
        expected = FAITHFUL
    elif damage == "no-source":  # a __pycache__ entry without its source is never imported
        source.unlink()
        expected = FAITHFUL
    else:  # the header passes and the code cannot be read: planted, never Python's
        data = data[:20] if damage == "truncated" else data[:16] + b"\xff" * 64
        expected = "foreign"
    cached.write_bytes(bytes(data))
    assert bytecode_digest(str(cached)).startswith(expected)


def test_a_cache_written_or_cleared_is_no_change_and_a_planted_one_is(
    module: tuple[Path, Path],
) -> None:
    source, cached = module
    rules: dict[str, Rule] = {str(cached): "bytecode"}
    sealed = fingerprint(rules)
    cached.unlink()  # cleared (pyclean, git clean -X)
    assert compare(sealed, fingerprint(rules, sealed)) == []
    py_compile.compile(str(source), cfile=str(cached), doraise=True)  # rewritten by Python
    assert compare(sealed, fingerprint(rules, sealed)) == []
    _foreign(source, cached)
    [change] = compare(sealed, fingerprint(rules, sealed))
    assert (change.path, change.rule) == (str(cached), "bytecode")


# --- through the hook ---------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    from ledger._hooks import tripwire  # noqa: PLC0415

    # Every new .pyc judged at once (the budget is test_a_flood_of_new_pycs_...'s).
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", 10**12)
    ws = make_workspace(tmp_path)
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write(AUTH, "export const login = 1;\n")
    return ws


def _write(session: Session) -> str | None:
    return session.pre(
        "Write", {"file_path": str(session.ws.path(AUTH)), "content": "export const x = 2;\n"}
    ).code


def test_a_pyc_planted_for_a_module_the_hook_imports_halts_the_next_call(
    ws: Workspace, module: tuple[Path, Path]
) -> None:
    source, cached = module
    assert str(cached) in hook_bytecode_files()
    session = Session(ws, "agent")
    assert session.select().code is None  # armed: the .pyc sealed as its source's
    _foreign(source, cached)
    assert _write(session) == "TAMPER"
    [record] = [r.body for r in ws.records() if r.kind == "governance.tamper"]
    assert {"path": str(cached), "what": "changed", "rule": "bytecode"} in record["changes"]
    from ledger import GovernedWorkspace  # noqa: PLC0415

    GovernedWorkspace(ws.root, environ=ws.env).resolve_tamper("revert")
    assert not cached.exists()  # removed: the next import compiles the source again
    assert _write(session) is None


def test_python_writing_a_fresh_pyc_at_a_first_import_is_no_tamper(
    ws: Workspace, module: tuple[Path, Path]
) -> None:
    source, cached = module
    session = Session(ws, "agent")
    assert session.select().code is None
    cached.unlink()
    importlib.reload(sys.modules["ledger_probe_dep"])  # Python writes it again
    assert cached.is_file()
    other = source.with_name("ledger_probe_other.py")
    other.write_text("OTHER = 2\n")
    importlib.invalidate_caches()
    importlib.import_module("ledger_probe_other")  # a first import: a new .pyc, newly watched
    assert Path(importlib.util.cache_from_source(str(other))).is_file()
    assert _write(session) is None
    assert _write(session) is None
    assert not [r for r in ws.records() if r.kind == "governance.tamper"]


# --- what the stat cannot see -------------------------------------------------------------


class _CoarseClock:
    """``os.stat`` as a kernel that stamps ``ctime`` with a coarse clock shows it (one tick of
    4 ms, as jiffies; kernels before multigrain timestamps, 6.13): files written within one
    tick show the same ``ctime``."""

    def __init__(self, path: Path) -> None:

        self.real, self.path = os.stat, str(path)

    def __call__(self, path: object, *args: object, **kwargs: object) -> object:
        info = self.real(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path) != self.path:
            return info
        tick = 4_000_000
        fields = {k: getattr(info, k) for k in ("st_mode", "st_size", "st_ino", "st_mtime")}
        return SimpleNamespace(**fields, st_ctime_ns=info.st_ctime_ns // tick * tick)


def test_a_same_size_rewrite_right_after_the_check_read_it_is_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file rewritten (same size, same inode) within the clock tick in which the tripwire
    read it keeps its stat, and its new content used to be taken as the sealed one for good.
    Code left running can wait for the read (inotify) and rewrite at once."""

    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus-4"}')
    rules: dict[str, Rule] = {str(settings): "client-config"}
    clock = _CoarseClock(settings)
    monkeypatch.setattr(os, "stat", clock)
    for _ in range(20):  # some rounds fall within one tick
        sealed = fingerprint(rules)
        settings.write_text('{"hooks": {"x": 1}}')  # same size, at once: what runs
        assert len(settings.read_bytes()) == len('{"model": "opus-4"}')
        [change] = compare(sealed, fingerprint(rules, sealed))
        assert change.path == str(settings)
        settings.write_text('{"model": "opus-4"}')


def test_a_file_read_long_after_its_change_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{}")
    from ledger._hooks import tripwire  # noqa: PLC0415

    rules: dict[str, Rule] = {str(settings): "client-config"}
    monkeypatch.setattr(runs_later, "RACY_NS", 0)  # as if the change were long ago
    sealed = fingerprint(rules)
    reads: list[str] = []
    real = tripwire._digest

    def counted(path: str, info: os.stat_result, rule: Rule) -> str | None:
        reads.append(path)
        return real(path, info, rule)

    monkeypatch.setattr(tripwire, "_digest", counted)
    assert fingerprint(rules, sealed) == sealed
    assert reads == []
    assert settings.stat().st_ctime_ns == sealed[str(settings)].ctime_ns


def test_a_flood_of_new_pycs_is_judged_over_calls_but_a_changed_one_at_once(
    module: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's first seal finds a hundred .pyc or more; judging them all in one call held
    the ledger's lock past concurrent callers' deadline. New ones wait within a budget; one
    judged before and changed since never waits."""
    from ledger._hooks import tripwire  # noqa: PLC0415

    source, cached = module
    rules: dict[str, Rule] = {str(cached): "bytecode"}
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", -1)  # spent
    _foreign(source, cached)
    pending = fingerprint(rules)
    assert pending[str(cached)].digest == "not-judged-yet"
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", 10**12)
    [change] = compare(pending, fingerprint(rules, pending))  # judged at the next call
    assert change.rule == "bytecode"
    py_compile.compile(str(source), cfile=str(cached), doraise=True)
    judged = fingerprint(rules)
    assert judged[str(cached)].digest == FAITHFUL
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", -1)
    _foreign(source, cached)
    assert [c.path for c in compare(judged, fingerprint(rules, judged))] == [str(cached)]


def test_the_venvs_pyvenv_cfg_is_watched_wherever_the_interpreter_would_read_one() -> None:
    """``home =`` in pyvenv.cfg picks the interpreter and standard library a venv's python
    runs: rewritten (or planted beside a bare interpreter), it changes what the hook imports."""
    from ledger._governance.analysis.runs_later import hook_install_files  # noqa: PLC0415

    here = Path(sys.executable).absolute().parent
    watched = set(hook_install_files())
    assert {str(here / "pyvenv.cfg"), str(here.parent / "pyvenv.cfg")} <= watched
