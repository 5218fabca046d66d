"""The tripwire watches the ``.pyc`` of the hook path's modules, the same set in every process,
and keeps its verdicts on them per user, so no hook call compiles what was judged before.

A resident process (the decider under the CLI, ``ledger mcp`` under the MCP SDK) has imported
~550 modules a one-shot hook never loads; stat-ing and sealing their ``.pyc`` on every call was
most of its per-call cost. The set is the generated
:data:`~ledger._governance.analysis.hook_modules.HOOK_MODULES`; the first test fails when a hook
imports a module missing from it (regenerate: ``python -m tests.hooks.hook_modules_probe
--write``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger._governance.analysis import runs_later
from ledger._governance.analysis.hook_modules import HOOK_MODULES
from ledger._hooks import bytecode, tripwire
from ledger._hooks.bytecode import FAITHFUL, JudgedBytecode, judge_hook_bytecode
from ledger._hooks.tripwire import Rule, compare, fingerprint

from .hook_modules_probe import fixture_cases, probe

#: One of each kind of call, for every client: reads, writes, edits, shell commands, MCP tools,
#: prompts, session starts and ends.
_SAMPLE = (
    "claude/PreToolUse-bash.json",
    "claude/PreToolUse-write.json",
    "claude/PostToolUse-edit.json",
    "claude/PostToolUse-bash.json",
    "claude/PreToolUse-mcp.json",
    "claude/UserPromptSubmit-prompt.json",
    "claude/SessionStart-startup.json",
    "claude/SessionEnd-logout.json",
    "codex/PreToolUse-apply-patch.json",
    "gemini/BeforeTool-shell.json",
    "cursor/beforeShellExecution-basic.json",
    "cline/PreToolUse-replace-in-file.json",
    "copilot/preToolUse-edit.json",
    "windsurf/pre_write_code-edit.json",
)


def test_every_module_a_hook_process_imports_is_on_the_hook_path_list() -> None:
    cases = fixture_cases(_SAMPLE)
    assert len(cases) == len(_SAMPLE)
    missing = sorted(probe(cases) - HOOK_MODULES)
    assert missing == [], (
        f"hook processes import {missing}, not in HOOK_MODULES: their .pyc would go unwatched "
        "in a resident process; run `python -m tests.hooks.hook_modules_probe --write`"
    )


def test_a_resident_process_watches_the_same_pyc_as_a_one_shot_hook() -> None:
    """After importing the MCP SDK and the CLI (what ``ledger mcp`` and the decider load), the
    watched ``.pyc`` are still the hook path's (yaml's among them, the SDK's and Typer's not)
    and ledger's own."""
    probe_code = (
        "import json, sys\n"
        "import ledger._hooks.service, yaml\n"
        "from ledger._governance.analysis.runs_later import hook_bytecode_files\n"
        "import mcp.server, cli._app\n"
        "watched = set(hook_bytecode_files())\n"
        "names = [n for n, m in sys.modules.items() if getattr(m, '__cached__', None) in watched]\n"
        "print(json.dumps([sorted(watched), names, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe_code], capture_output=True, text=True, check=True
    )
    watched, names, loaded = json.loads(done.stdout)
    assert {"mcp.server", "typer", "pydantic"} <= set(loaded)
    others = [n for n in names if n.partition(".")[0] not in ("ledger", "cli")]
    assert set(others) <= HOOK_MODULES
    assert any("/yaml/__pycache__/" in path for path in watched)
    assert "yaml.constructor" in names
    assert not [p for p in watched if "/mcp/" in p or "/typer/" in p or "/pydantic/" in p]


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A module of the hook path, imported from a folder on the path: its source and .pyc."""
    folder = tmp_path / "site"
    folder.mkdir()
    source = folder / "ledger_judged_dep.py"
    source.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(runs_later, "HOOK_MODULES", runs_later.HOOK_MODULES | {"ledger_judged_dep"})
    importlib.invalidate_caches()
    importlib.import_module("ledger_judged_dep")
    cached = Path(importlib.util.cache_from_source(str(source)))
    # Old enough that a verdict is kept under its stat (one changed within 100 ms is not).
    os.utime(source, (1_700_000_000, 1_700_000_000))
    py_compile.compile(str(source), cfile=str(cached), doraise=True)
    monkeypatch.setattr(runs_later, "RACY_NS", 0)
    try:
        yield source, cached
    finally:
        sys.modules.pop("ledger_judged_dep", None)


class _Compiles:
    """Counts the sources compiled to judge a .pyc."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = bytecode._bytecode_verdict

        def counted(*args: object) -> str:
            self.count += 1
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(bytecode, "_bytecode_verdict", counted)
        monkeypatch.setattr(bytecode, "_BYTECODE_VERDICTS", {})


def _fresh_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process: no verdict remembered in memory."""
    monkeypatch.setattr(bytecode, "_BYTECODE_VERDICTS", {})
    monkeypatch.setattr(bytecode, "_INSTANCES", {})


def test_a_pyc_judged_in_one_workspace_is_not_compiled_again_in_another(
    module: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, cached = module
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    rules: dict[str, Rule] = {str(cached): "bytecode"}
    compiles = _Compiles(monkeypatch)
    first = fingerprint(rules, judged=JudgedBytecode.for_user(env))
    assert first[str(cached)].digest == FAITHFUL
    assert compiles.count == 1
    _fresh_process_state(monkeypatch)
    compiles = _Compiles(monkeypatch)
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", -1)  # no time to judge anything new
    second = fingerprint(rules, judged=JudgedBytecode.for_user(env))  # a new seal: all "new"
    assert second[str(cached)].digest == FAITHFUL  # known, not pending
    assert compiles.count == 0


def test_a_pyc_rewritten_after_its_verdict_was_kept_is_judged_again(
    module: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, cached = module
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    rules: dict[str, Rule] = {str(cached): "bytecode"}
    sealed = fingerprint(rules, judged=JudgedBytecode.for_user(env))
    # Other code behind the source's own header: what the next import would run.
    other = source.with_name("planted.py")
    other.write_text("import os\nos.system('id')\n")
    py_compile.compile(str(other), cfile=str(cached), doraise=True)
    data = bytearray(cached.read_bytes())
    info = source.stat()
    data[8:12] = (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    data[12:16] = (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cached.write_bytes(bytes(data))
    _fresh_process_state(monkeypatch)
    now = fingerprint(rules, sealed, judged=JudgedBytecode.for_user(env))
    [change] = compare(sealed, now)
    assert (change.path, change.what) == (str(cached), "changed")
    assert str(now[str(cached)].digest).startswith("foreign:")


def test_a_forged_verdict_file_is_ignored(
    module: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent cannot read the per-user secret, so it cannot write verdicts: a file whose MAC
    fails is started afresh (the .pyc is judged, not taken as faithful)."""
    _, cached = module
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    judged = JudgedBytecode.for_user(env)
    fingerprint({str(cached): "bytecode"}, judged=judged)
    raw = judged.path.read_bytes()
    judged.path.write_bytes(raw.replace(b"compiled-from-its-source", b"compiled-from-its-sourcE"))
    _fresh_process_state(monkeypatch)
    compiles = _Compiles(monkeypatch)
    assert JudgedBytecode.for_user(env).verdict(str(cached), cached.stat()) == FAITHFUL
    assert compiles.count == 1
    assert judged.path.stat().st_mode & 0o777 == 0o600


def test_a_persons_install_judges_the_whole_hook_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``judge_hook_bytecode`` (run by ``ledger install``), a first seal finds every
    .pyc of the hook path judged: none is left pending, even with no time to judge."""
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    monkeypatch.setattr(runs_later, "RACY_NS", 0)
    assert judge_hook_bytecode(env) > 50
    _fresh_process_state(monkeypatch)
    monkeypatch.setattr(tripwire, "_BYTECODE_BUDGET_NS", -1)
    compiles = _Compiles(monkeypatch)
    rules: dict[str, Rule] = dict.fromkeys(runs_later.hook_bytecode_files(), "bytecode")
    found = fingerprint(rules, judged=JudgedBytecode.for_user(env))
    pending = [p for p, e in found.items() if e.digest == "not-judged-yet"]
    assert pending == []
    assert compiles.count == 0


def test_the_code_of_the_resident_hook_servers_is_watched_though_no_hook_imports_it() -> None:
    """``ledger serve`` and ``ledger mcp`` answer every call of a session with the code they
    started from: each module of ledger and of the command line is watched, source and
    ``.pyc``, whatever this process imported (a ``.pyc`` planted for ledger/_mcp.py would run
    in the next session's server, where no one-shot hook ever imports it)."""
    repo = Path(runs_later.__file__).resolve().parents[3]
    sources = sorted(
        str(p)
        for top in ("ledger", "cli")
        for p in (repo / top).rglob("*.py")
        if "__pycache__" not in p.parts
    )
    installed = set(runs_later.hook_install_files())
    bytecode = set(runs_later.hook_bytecode_files())
    assert [s for s in sources if s not in installed] == []
    assert [s for s in sources if importlib.util.cache_from_source(s) not in bytecode] == []
    for module in ("ledger._mcp", "ledger._hooks.decider", "cli._serve", "cli._mcp"):
        assert module not in HOOK_MODULES  # what no one-shot hook imports
        source = str(repo / (module.replace(".", "/") + ".py"))
        assert source in installed
        assert importlib.util.cache_from_source(source) in bytecode
