"""``ledger doctor``: one line per check, OK or what to do; exit 1 when something is broken."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ledger._clients.install import install
from ledger._doctor import Check, run_checks

from ._support import LEDGER, Workspace, make_workspace, run_cli


@pytest.fixture
def healthy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Initialised, one IN_PROGRESS intent, Claude Code hooks pointing at this ledger."""
    monkeypatch.setenv("PATH", str(LEDGER.parent))  # no agent CLIs of this machine
    ws = make_workspace(tmp_path)
    install("claude", root=ws.root, ledger_cmd=str(LEDGER), home=tmp_path / "user-home")
    return ws


def checks(ws: Workspace, tmp_path: Path, **kwargs: object) -> dict[str, Check]:
    found = run_checks(ws.root, environ=ws.env, home=tmp_path / "user-home", **kwargs)  # type: ignore[arg-type]
    return {check.name: check for check in found}


def test_healthy_workspace(healthy: Workspace, tmp_path: Path) -> None:
    found = checks(healthy, tmp_path)
    assert list(found) == [
        "workspace",
        "ledger",
        "signing key",
        "intents",
        "hooks.yaml",
        "hooks: claude",
        "claude allow",
        "claude ask",
        "claude deny",
        "content",
        "sharing",
        "checkpoint",
        "tripwire",
        "decider",
    ]
    for name in (
        "workspace",
        "ledger",
        "signing key",
        "intents",
        "hooks.yaml",
        "hooks: claude",
        "sharing",
        "tripwire",
        "decider",
    ):
        assert found[name].status == "ok", found[name]
        assert found[name].fix is None
    assert found["hooks: claude"].message.startswith("installed in ")
    assert found["hooks: claude"].message.endswith("the command starts; `ledger mcp` registered")
    assert found["checkpoint"].status == "warn"
    assert "ledger checkpoint -o" in str(found["checkpoint"].fix)


def test_checkpoint_given_is_verified_and_dated(healthy: Workspace, tmp_path: Path) -> None:
    cp = tmp_path / "ledger.ckpt"
    assert (
        run_cli(
            ["checkpoint", "-o", str(cp), "--root", str(healthy.root)], healthy.proc_env
        ).returncode
        == 0
    )
    given = [(str(cp), cp.read_text())]
    assert checks(healthy, tmp_path, checkpoints=given)["checkpoint"].status == "ok"
    old = cp.stat().st_mtime - 30 * 86400
    os.utime(cp, (old, old))
    stale = checks(healthy, tmp_path, checkpoints=given)["checkpoint"]
    assert stale.status == "warn"
    assert "30 day(s) old: not recent" in stale.message


@pytest.mark.parametrize(
    ("damage", "name", "fragment", "fix"),
    [
        ("torn-tail", "ledger", "torn tail", "run `ledger repair`"),
        ("no-key", "signing key", "this machine has no signing key", "run `ledger init`"),
        ("intents", "intents", "active_intents.yaml:4:", "fix .orchestration/active_intents"),
        ("hooks-yaml", "hooks.yaml", "(did you mean 'destructive'?)", "fix .orchestration/hooks"),
        ("moved-venv", "hooks: claude", "/gone/venv/bin/ledger", "run `ledger install claude`"),
        ("not-installed", "hooks: claude", "hooks are not installed", "run `ledger install"),
    ],
)
def test_each_problem_says_what_to_do(
    healthy: Workspace, tmp_path: Path, *, damage: str, name: str, fragment: str, fix: str
) -> None:
    env = healthy.env
    settings = healthy.root / ".claude" / "settings.local.json"
    if damage == "torn-tail":
        with (healthy.orchestration / "agent_trace.jsonl").open("ab") as handle:
            handle.write(b'{"v":')
    elif damage == "no-key":
        shutil.rmtree(healthy.home / "keys")
    elif damage == "intents":
        path = healthy.orchestration / "active_intents.yaml"
        path.write_text(path.read_text().replace("status: active", "status: wip", 1))
    elif damage == "hooks-yaml":
        (healthy.orchestration / "hooks.yaml").write_text("policies:\n  destrucive: deny\n")
    elif damage == "moved-venv":
        settings.write_text(settings.read_text().replace(str(LEDGER), "/gone/venv/bin/ledger"))
    else:
        settings.write_text("{}")
    found = {c.name: c for c in run_checks(healthy.root, environ=env, home=tmp_path / "user-home")}
    check = found[name]
    assert check.status == "fail", check
    assert fragment in check.message, check
    assert fix in str(check.fix), check


def test_the_enforcement_matrix_of_each_installed_client(
    healthy: Workspace, tmp_path: Path
) -> None:
    install("codex", root=healthy.root, ledger_cmd=str(LEDGER), home=tmp_path / "user-home")
    found = checks(healthy, tmp_path)
    assert found["claude ask"].message.startswith("ask -> ask: Claude Code asks the person")
    assert found["codex ask"].message.startswith("ask -> deny: delivered as deny: Codex")
    assert found["codex deny"].message.startswith("deny -> deny")
    assert found["codex allow"].message.startswith("allow -> allow")
    assert "cursor allow" not in found  # not installed, not shown


def test_cursor_matrix_names_the_events_that_can_ask(tmp_path: Path) -> None:
    from ledger._clients.registry import CLIENTS  # noqa: PLC0415
    from ledger._doctor import _enforcement  # noqa: PLC0415

    asked = {c.name: c.message for c in _enforcement(CLIENTS["cursor"])}["cursor ask"]
    assert asked.startswith("ask -> deny")
    assert "at beforeShellExecution: ask" in asked
    assert "at beforeMCPExecution: ask" in asked


def test_cli_report_and_exit_codes(healthy: Workspace) -> None:
    env = {**healthy.proc_env, "PATH": str(LEDGER.parent), "HOME": str(healthy.home)}
    done = run_cli(["doctor", "--root", str(healthy.root)], env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("ok    workspace")
    assert any(line.startswith("WARN  checkpoint") for line in lines)
    assert "\x1b[" not in done.stdout.decode()  # no colour in a pipe

    (healthy.orchestration / "active_intents.yaml").write_text("intents: 3\n")
    broken = run_cli(["doctor", "--json", "--root", str(healthy.root)], env)
    assert broken.returncode == 1
    report = json.loads(broken.stdout)
    assert report["ok"] is False
    (intents,) = [c for c in report["checks"] if c["name"] == "intents"]
    assert intents["status"] == "fail"
    assert set(intents) == {"name", "status", "message", "fix"}


def test_no_workspace_is_one_failed_check(tmp_path: Path) -> None:
    (found,) = run_checks(tmp_path, environ={"LEDGER_HOME": str(tmp_path / "h")})
    assert found.status == "fail"
    assert found.fix == "run `ledger init`"


def test_doctor_names_a_pending_tampering_and_the_way_out(
    healthy: Workspace, tmp_path: Path
) -> None:
    from ._support import Session  # noqa: PLC0415

    session = Session(healthy, "s")
    session.select()  # arms the tripwire
    assert checks(healthy, tmp_path)["tripwire"].status == "ok"
    healthy.write(".claude/settings.local.json", "{}\n")
    before = checks(healthy, tmp_path)["tripwire"]
    assert before.status == "fail"
    assert "the next tool call will be denied" in before.message
    session.select()  # the next hook call records it
    found = checks(healthy, tmp_path)["tripwire"]
    assert found.status == "fail"
    assert "every tool call is denied" in found.message
    assert "settings.local.json" in found.message
    assert "ledger tamper accept" in str(found.fix)
