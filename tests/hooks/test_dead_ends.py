"""Dead ends get a way out: every fail-closed denial names its fix, and a teammate's fresh clone
(or a second machine) gets its own ledger and key from ``ledger init``, keeping the shared files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._workspace import LOCAL_PATHS

from ._support import INTENTS_YAML, clean_env, run_cli


def _pre(
    root: Path,
    env: dict[str, str],
    tool: str,
    tool_input: dict[str, Any],
    session: str = "s-dead-ends",
) -> tuple[str | None, str]:
    payload = {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }
    done = run_cli(
        ["hook", "claude", "--event", "PreToolUse"],
        env,
        cwd=root,
        stdin=json.dumps(payload).encode(),
    )
    assert done.returncode == 0, done.stderr
    specific = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
    return specific.get("permissionDecision"), str(specific.get("permissionDecisionReason", ""))


def _write(
    root: Path, env: dict[str, str], relative: str = "src/auth/x.ts"
) -> tuple[str | None, str]:
    return _pre(root, env, "Write", {"file_path": str(root / relative), "content": "x\n"})


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "app"
    root.mkdir()
    env = clean_env(tmp_path / "home")
    assert run_cli(["init", "--root", str(root)], env).returncode == 0
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS_YAML)
    return root, env


# --- every fail-closed denial names its fix -----------------------------------------------------


def _break(name: str, root: Path, env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    orchestration = root / ".orchestration"
    if name == "torn-tail":
        with (orchestration / "agent_trace.jsonl").open("ab") as handle:
            handle.write(b'{"v":1,"seq":')
    elif name == "no-ledger":
        (orchestration / "agent_trace.jsonl").unlink()
    elif name == "no-private-key":
        return {**env, "LEDGER_HOME": str(tmp_path / "another-machine")}
    elif name == "hooks-yaml-typo":
        (orchestration / "hooks.yaml").write_text("policies:\n  destuctive: deny\n")
    elif name == "hooks-yaml-misplaced":
        (orchestration / "hooks.yaml").write_text("destructive: deny\n")
    elif name == "hooks-yaml-invalid":
        (orchestration / "hooks.yaml").write_text("policies:\n  destructive: [\n")
    elif name == "intents-invalid":
        (orchestration / "active_intents.yaml").write_text(
            INTENTS_YAML.replace("status: active", "status: wip", 1)
        )
    else:
        assert name == "keyring-missing"
        shutil.rmtree(orchestration / "keys")
    return env


@pytest.mark.parametrize(
    ("name", "fix"),
    [
        ("torn-tail", "run `ledger repair`"),
        ("no-ledger", "run `ledger init`"),
        ("no-private-key", "this machine has no signing key for this ledger"),
        ("hooks-yaml-typo", "unknown setting 'destuctive' (did you mean 'destructive'?)"),
        (
            "hooks-yaml-misplaced",
            "unknown top-level setting 'destructive' (put it under policies:)",
        ),
        ("hooks-yaml-invalid", "`ledger doctor`"),
        ("intents-invalid", "fix .orchestration/active_intents.yaml (`ledger doctor` checks it)"),
        ("keyring-missing", "run `ledger init` to make a key for this clone"),
    ],
)
def test_every_fail_closed_denial_names_its_fix(
    workspace: tuple[Path, dict[str, str]], tmp_path: Path, name: str, fix: str
) -> None:
    root, env = workspace
    assert _pre(root, env, "Bash", {"command": "ledger intent select INT-001"})[0] == "allow"
    env = _break(name, root, env, tmp_path)
    decision, reason = _write(root, env)
    assert decision == "deny"
    assert fix in reason, reason
    if name == "no-private-key":
        assert "run `ledger init` to make one for this clone" in reason


# --- a teammate's fresh clone, a second machine -------------------------------------------------


@pytest.fixture
def shared_repo(workspace: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    """The first machine's repository, with .orchestration/ committed as `ledger init` wrote it."""
    root, env = workspace
    (root / ".orchestration" / "hooks.yaml").write_text("policies:\n  destructive: deny\n")
    (root / "src" / "auth").mkdir(parents=True)
    (root / "src" / "auth" / "x.ts").write_text("export {};\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "shared workspace")
    return root, env


def test_gitignore_keeps_this_clones_state_out_of_git(
    shared_repo: tuple[Path, dict[str, str]],
) -> None:
    root, _env = shared_repo
    tracked = set(_git(root, "ls-files", ".orchestration").split())
    assert ".orchestration/active_intents.yaml" in tracked
    assert ".orchestration/hooks.yaml" in tracked
    assert any(path.startswith(".orchestration/keys/") for path in tracked)
    assert ".orchestration/agent_trace.jsonl" not in tracked
    assert not any(path.startswith(".orchestration/.cache/") for path in tracked)
    ignore = (root / ".orchestration" / ".gitignore").read_text().splitlines()
    assert set(LOCAL_PATHS) <= set(ignore)


def test_existing_gitignore_is_completed_not_replaced(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".orchestration").mkdir(parents=True)
    (root / ".orchestration" / ".gitignore").write_text(".cache/\nmy-notes.txt")
    env = clean_env(tmp_path / "home")
    assert run_cli(["init", "--root", str(root)], env).returncode == 0
    lines = (root / ".orchestration" / ".gitignore").read_text().splitlines()
    assert lines[:2] == [".cache/", "my-notes.txt"]
    assert sorted(lines[2:]) == sorted(set(LOCAL_PATHS) - {".cache/"})


def test_fresh_clone_gets_its_own_ledger_and_key(
    shared_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    origin, origin_env = shared_repo
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    env = clean_env(tmp_path / "teammate-home")  # a second machine: no keys of the first
    decision, reason = _write(clone, env)
    assert decision == "deny"
    assert "run `ledger init`" in reason

    shared = {
        p: (clone / ".orchestration" / p).read_bytes()
        for p in ("active_intents.yaml", "hooks.yaml", ".gitignore")
    }
    origin_keys = {p.name for p in (clone / ".orchestration" / "keys").iterdir()}
    done = run_cli(["init", "--json", "--root", str(clone)], env)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["created"] is True
    assert info["moved_from_elsewhere"] is None
    assert set(info["kept"]) >= {"active_intents.yaml", "hooks.yaml", "keys/", ".gitignore"}
    for path, data in shared.items():
        assert (clone / ".orchestration" / path).read_bytes() == data
    keys = {p.name for p in (clone / ".orchestration" / "keys").iterdir()}
    assert keys == origin_keys | {f"{info['key']}.json"}
    assert (tmp_path / "teammate-home" / "keys" / f"{info['key']}.pem").is_file()
    first = (clone / ".orchestration" / "agent_trace.jsonl").read_bytes().splitlines()[0]
    assert json.loads(first)["key"] == info["key"]  # init names the key that signs here

    assert _pre(clone, env, "Bash", {"command": "ledger intent select INT-001"})[0] == "allow"
    assert _write(clone, env)[0] in (None, "allow")
    assert run_cli(["verify", "--root", str(clone)], env).returncode == 0
    # Only the new public key is new to git; the clone's ledger stays out of it.
    status = _git(clone, "status", "--porcelain", "--untracked-files=all")
    assert status.split() == ["??", f".orchestration/keys/{info['key']}.json"]
    assert run_cli(["verify", "--root", str(origin)], origin_env).returncode == 0


def test_clone_of_a_committed_ledger_moves_it_aside_and_starts_its_own(
    shared_repo: tuple[Path, dict[str, str]],
    tmp_path: Path,
) -> None:
    origin, _env = shared_repo
    _git(origin, "add", "-f", ".orchestration/agent_trace.jsonl")  # as older versions advised
    _git(origin, "commit", "-qm", "ledger")
    foreign = (origin / ".orchestration" / "agent_trace.jsonl").read_bytes()
    foreign_id = json.loads(foreign.splitlines()[0])["ledger"]
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    env = clean_env(tmp_path / "teammate-home")
    decision, reason = _write(clone, env)
    assert decision == "deny"
    assert "run `ledger init` to make one for this clone" in reason

    done = run_cli(["init", "--root", str(clone)], env)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    moved = clone / ".orchestration" / "other-ledgers" / f"agent_trace.{foreign_id}.jsonl"
    assert "written on another machine" in out
    assert moved.read_bytes() == foreign
    new_first = json.loads(
        (clone / ".orchestration" / "agent_trace.jsonl").read_bytes().splitlines()[0]
    )
    assert new_first["ledger"] != foreign_id
    assert f"signing key {new_first['key']}" in out
    assert _pre(clone, env, "Bash", {"command": "ledger intent select INT-001"})[0] == "allow"
    # Run again: nothing more moves, the ledger is this clone's now.
    again = run_cli(["init", "--root", str(clone)], env)
    assert "already initialised" in again.stdout.decode()
    assert len(list(moved.parent.iterdir())) == 1


def test_init_on_a_missing_path_asks_for_parents(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    target = tmp_path / "no" / "such" / "dir"
    done = run_cli(["init", "--root", str(target)], env)
    assert done.returncode == 2
    assert "does not exist; create it, or pass --parents" in done.stderr.decode()
    assert not target.exists()
    assert run_cli(["init", "--parents", "--root", str(target)], env).returncode == 0
    assert (target / ".orchestration" / "agent_trace.jsonl").is_file()
