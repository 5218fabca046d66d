"""The hook runs isolated from the environment and the user site (``python -I``).

The client runs ledger's hook outside any sandbox, with the environment it was given: a
``PYTHONPATH`` holding a ``sitecustomize.py``, a ``PYTHONSTARTUP``, or a ``sitecustomize.py`` in
the user site folder would run inside the hook, next to the cache secret and the signing key.
``ledger install`` therefore writes every client's hook command, and every MCP server entry, as
``<interpreter> -I <ledger script>``. The attacks run the installed command string with
``sh -c``, as the clients do.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from ledger._clients.install import install
from ledger._clients.mcp_config import mcp_entry
from ledger._clients.registry import CLIENTS
from ledger._clients.settings import default_ledger_command

from .test_install_failclosed import _installed, _user

_SCRIPT = Path(sys.executable).with_name("ledger")


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This installation's ``ledger`` first on PATH, as for a person who installed it."""
    monkeypatch.setenv("PATH", f"{_SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_the_default_hook_command_runs_the_script_isolated(on_path: None) -> None:
    words = shlex.split(default_ledger_command())
    assert words[1] == "-I", words
    assert Path(words[2]).name == "ledger"
    assert Path(words[0]).name.startswith("python")


@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_client_adapter_installs_isolated_hooks(
    tmp_path: Path, client: str, on_path: None
) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    home.mkdir()
    install(client, root=root, user=_user(client), home=home)
    commands = _installed(client, root, home)
    assert commands
    for event, command in commands.items():
        words = shlex.split(command)
        assert words[1] == "-I", (event, command)  # isolated: with or without site (_thin.py)
        assert Path(words[words.index("hook") - 1]).name == "ledger", (event, command)


def test_the_mcp_server_entry_runs_isolated(on_path: None) -> None:
    entry = mcp_entry(default_ledger_command(), None)
    assert entry["args"][:1] == ["-I"]
    assert Path(entry["args"][1]).name == "ledger"
    assert entry["args"][2] == "mcp"


def _plant(tmp_path: Path) -> tuple[dict[str, str], list[Path]]:
    """An environment whose every code-loading route writes a marker file when Python starts."""
    markers: list[Path] = []

    def code(name: str) -> str:
        marker = tmp_path / f"ran-{name}"
        markers.append(marker)
        return f"open({str(marker)!r}, 'w').close()\n"

    path_dir = tmp_path / "pythonpath"
    path_dir.mkdir()
    (path_dir / "sitecustomize.py").write_text(code("pythonpath"))
    startup = tmp_path / "startup.py"
    startup.write_text(code("startup"))
    user_base = tmp_path / "userbase"
    user_site = Path(sysconfig.get_path("purelib", f"{os.name}_user", {"userbase": str(user_base)}))
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(code("usersite"))
    (user_site / "sitecustomize.py").write_text(code("usersite-site"))
    env = {
        **os.environ,
        "PYTHONPATH": str(path_dir),
        "PYTHONSTARTUP": str(startup),
        "PYTHONUSERBASE": str(user_base),
        "PYTHONINSPECT": "1",
        "LEDGER_DECIDER": "off",
    }
    return env, markers


def _claude_pre_command(tmp_path: Path) -> tuple[Path, str]:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    home.mkdir()
    install("claude", root=root, home=home)
    return root, _installed("claude", root, home)["PreToolUse"]


def test_pythonpath_startup_and_user_site_do_not_reach_the_hook(
    tmp_path: Path, on_path: None
) -> None:
    root, command = _claude_pre_command(tmp_path)
    env, markers = _plant(tmp_path)
    env.update(HOME=str(tmp_path / "home"), LEDGER_HOME=str(tmp_path / "home" / ".ledger"))
    payload = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "cwd": str(root),
        "transcript_path": os.devnull,
    }
    ran = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert [m.name for m in markers if m.exists()] == []
    # The same environment does reach a plain interpreter: the planted code is live.
    subprocess.run(
        [sys.executable, "-c", "pass"], env=env, timeout=60, check=True, capture_output=True
    )
    assert (tmp_path / "ran-pythonpath").exists()
