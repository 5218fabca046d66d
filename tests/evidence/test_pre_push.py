"""The git ``pre-push`` hook ``ledger install --pre-push`` writes runs like the clients' hooks:
isolated from the environment (``python -I``), and fail-closed (no code leaves without its
evidence unless a person says so with ``git push --no-verify``). Attack tests are named after
what they break."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ledger import install_pre_push
from ledger._clients.install import pre_push_command

from ..hooks._support import LEDGER
from .test_remote import Team, git


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return Team(tmp_path)


def _new_commit(team: Team, name: str) -> str:
    (team.a_root / name).write_text("x\n")
    git(team.a_root, "add", name)
    git(team.a_root, "commit", "-q", "-m", name)
    return git(team.a_root, "rev-parse", "HEAD")


def _push(
    team: Team, *extra: str, environ: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LEDGER_HOME": str(team.base / "ha"),
        "LEDGER_DECIDER": "off",
        **(environ or {}),
    }
    return subprocess.run(
        ["git", "push", "-q", *extra, "origin", "HEAD:refs/heads/main"],
        cwd=team.a_root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _on_remote(team: Team, ref: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", ref],
        cwd=team.bare,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def test_the_pre_push_hook_runs_ledger_isolated() -> None:
    command = pre_push_command(str(LEDGER))
    interpreter, flag, script = command.replace("'", "").split()
    assert flag == "-I"
    assert script == str(LEDGER)
    assert Path(interpreter).name.startswith("python")
    assert pre_push_command(command) == command  # already isolated: kept
    assert pre_push_command("ledger") == "ledger"  # not a script path: as written


def test_a_planted_sitecustomize_does_not_run_inside_the_pre_push_hook(
    team: Team, tmp_path: Path
) -> None:
    """PYTHONPATH naming a folder with a sitecustomize.py would run code in the person's
    push, beside their signing key: the hook's interpreter ignores it."""
    install_pre_push(team.a_root, ledger_cmd=str(LEDGER))
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "ran"
    (planted / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    head = _new_commit(team, "code")
    done = _push(team, environ={"PYTHONPATH": str(planted), "PYTHONSTARTUP": str(planted)})
    assert done.returncode == 0, done.stderr
    assert _on_remote(team, "refs/heads/main") == head
    assert _on_remote(team, team.ref)  # the evidence went too
    assert not marker.exists()


def test_a_ledger_that_cannot_run_stops_the_code_push(team: Team) -> None:
    """A moved installation (or a broken interpreter) must not let the code leave quietly
    without its evidence."""
    before = _on_remote(team, "refs/heads/main")
    install_pre_push(team.a_root, ledger_cmd=str(team.base / "moved" / "ledger"))
    _new_commit(team, "code")
    done = _push(team)
    assert done.returncode != 0
    assert _on_remote(team, "refs/heads/main") == before
    assert not _on_remote(team, team.ref)
    [line] = [x for x in done.stderr.splitlines() if x.startswith("ledger:")]
    assert "this push is stopped" in line
    assert "git push --no-verify" in line
    assert "Traceback" not in done.stderr


def test_a_remote_refusing_the_evidence_stops_the_code_push_until_a_person_says_so(
    team: Team,
) -> None:
    hook = team.bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "while read old new ref; do\n"
        '  case "$ref" in refs/ledger*) echo "no evidence here" >&2; exit 1;; esac\n'
        "done\n"
    )
    hook.chmod(0o755)
    before = _on_remote(team, "refs/heads/main")
    install_pre_push(team.a_root, ledger_cmd=str(LEDGER))
    head = _new_commit(team, "code")
    stopped = _push(team)
    assert stopped.returncode != 0
    assert "this push is stopped" in stopped.stderr
    assert _on_remote(team, "refs/heads/main") == before
    # The person's own choice: the code alone.
    alone = _push(team, "--no-verify")
    assert alone.returncode == 0, alone.stderr
    assert _on_remote(team, "refs/heads/main") == head
    assert not _on_remote(team, team.ref)
