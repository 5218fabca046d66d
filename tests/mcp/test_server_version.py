"""A ``ledger mcp`` server from another version of ledger than the one installed now (an
upgrade, a downgrade or an uninstall under a running session): it refuses every hook call,
with the way out, and ``ledger doctor`` names it.

The server runs from a copy of this installation (its ``ledger`` and ``cli`` packages), whose
version file the test then rewrites or removes, as ``pip install`` would under the session.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

import ledger
from ledger import run_checks
from ledger._hooks.mcp_servers import RESTART_SERVER, running_servers

from ..hooks._support import Workspace, make_workspace
from .test_hook_tool import Server, arguments_for

pytestmark = pytest.mark.slow


def installed_copy(base: Path) -> tuple[Path, list[str]]:
    """(the copy's install folder, the command that runs its ``ledger``)."""
    source = Path(ledger.__file__).resolve().parents[1]
    for package in ("ledger", "cli"):
        shutil.copytree(
            source / package, base / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    code = (
        f"import sys; sys.path.insert(0, {str(base)!r}); "
        "from cli._entry import main; sys.exit(main())"
    )
    return base, [sys.executable, "-c", code]


def read_call(ws: Workspace, n: int) -> dict[str, object]:
    payload = {
        "session_id": "s-version",
        "cwd": str(ws.root),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(ws.root / "src" / "app.py")},
        "tool_use_id": f"toolu_v{n}",
    }
    return arguments_for("PreToolUse", json.dumps(payload))


def mcp_lines(ws: Workspace, tmp_path: Path) -> list[tuple[str, str]]:
    checks = run_checks(ws.root, environ=ws.env, home=tmp_path / "home")
    return [
        (c.status, c.message + (f" | {c.fix}" if c.fix else ""))
        for c in checks
        if c.name == "mcp server"
    ]


def test_a_server_outlived_by_its_install_refuses_hooks_and_doctor_names_it(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    install, command = installed_copy(tmp_path / "install")
    version_file = install / "ledger" / "_version.py"
    running = ledger.__version__
    server = Server(ws.root, ws.proc_env, command)
    try:
        pid = server.proc.pid
        [found] = running_servers(ws.env)
        assert (found.pid, found.version, found.install) == (pid, running, str(install))
        assert mcp_lines(ws, tmp_path) == [("ok", f"1 running (pid {pid}), ledger {running}")]
        failed, answer = server.hook(read_call(ws, 1))
        assert not failed, answer
        decided = len(ws.records())

        # Upgraded under the running session: refused, with the way out; doctor says which.
        version_file.write_text('__version__ = "99.0.0"\n', encoding="utf-8")
        failed, answer = server.hook(read_call(ws, 2))
        assert failed
        assert f"server is ledger {running}, but ledger 99.0.0 is installed now" in answer
        assert RESTART_SERVER in answer
        [(status, line)] = mcp_lines(ws, tmp_path)
        assert status == "fail"
        assert (
            f"`ledger mcp` pid {pid} is ledger {running}, but ledger 99.0.0 is installed now"
            in line
        )
        assert line.endswith(RESTART_SERVER)

        # Uninstalled under it: refused too (there is nothing left to compare with).
        version_file.unlink()
        failed, answer = server.hook(read_call(ws, 3))
        assert failed
        assert "no ledger is installed where it was started any more" in answer
        [(status, line)] = mcp_lines(ws, tmp_path)
        assert status == "fail"
        assert f"no ledger is installed in {install}" in line
        assert len(ws.records()) == decided  # a refused call records nothing
    finally:
        server.close()
    assert server.protocol_only() == []
    assert running_servers(ws.env) == []
    assert mcp_lines(ws, tmp_path) == []  # nothing runs: no line


def test_a_killed_server_is_not_reported_running(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    _, command = installed_copy(tmp_path / "install")
    server = Server(ws.root, ws.proc_env, command)
    try:
        assert [s.pid for s in running_servers(ws.env)] == [server.proc.pid]
        os.kill(server.proc.pid, signal.SIGKILL)  # leaves its file, but not its lock
        server.proc.wait(timeout=30)
        assert running_servers(ws.env) == []
        assert mcp_lines(ws, tmp_path) == []
    finally:
        server.close()
