"""Evidence that travels through git (decision 0018): two clones share a bare remote; one
pushes its ledger under ``refs/ledger/<id>``, the other fetches and verifies it. The attacks are
named after what they break."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import (
    EvidenceRefusedError,
    Ledger,
    RemoteError,
    SigningKey,
    fetch_evidence,
    push_evidence,
    run_checks,
    verify_against_remote,
)
from ledger._evidence.keys import store_private_key
from ledger._workspace import Workspace
from tests.cli.inprocess import run_in_process

KEY_A = SigningKey.from_seed(bytes([0xA1]) * 32)
KEY_B = SigningKey.from_seed(bytes([0xB2]) * 32)
INTRUDER = SigningKey.from_seed(bytes([0x66]) * 32)
IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def home(path: Path) -> dict[str, str]:
    return {"LEDGER_HOME": str(path)}


def git(cwd: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, input=data, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


class Team:
    """A bare remote, clone A (pushes its agent's ledger), clone B (fetches it)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.bare = base / "remote.git"
        git(base, "init", "-q", "--bare", str(self.bare))
        self.a_root = base / "a"
        self.a_root.mkdir()
        git(self.a_root, "init", "-q")
        # Each clone's private key where its own `ledger` commands find it.
        store_private_key(KEY_A, home(base / "ha"))
        store_private_key(KEY_B, home(base / "hb"))
        self.a = Ledger.init(
            self.a_root, signing_key=KEY_A, environ={"LEDGER_HOME": str(base / "ha")}
        )
        self.a.append_many([("app.event", {"n": n}) for n in range(4)])
        git(self.a_root, "add", ".orchestration")
        git(self.a_root, "commit", "-q", "-m", "ledger keys")
        git(self.a_root, "remote", "add", "origin", str(self.bare))
        git(self.a_root, "push", "-q", "origin", "HEAD:refs/heads/main")
        self.b_root = base / "b"
        git(base, "clone", "-q", "-b", "main", str(self.bare), str(self.b_root))
        self.b = Ledger.init(
            self.b_root, signing_key=KEY_B, environ={"LEDGER_HOME": str(base / "hb")}
        )

    @property
    def ref(self) -> str:
        return f"refs/ledger/{self.a.ledger_id}"

    def fetched(self) -> str:
        return git(self.b_root, "for-each-ref", "--format=%(objectname)", "refs/ledger-remotes/")

    def publish_raw(self, segment: bytes, checkpoint: str, parent: str | None) -> None:
        """Write an evidence commit straight into the remote (what a hostile pusher could do)."""
        seg = git(self.bare, "hash-object", "-w", "--stdin", data=segment)
        note = git(self.bare, "hash-object", "-w", "--stdin", data=checkpoint.encode())
        entries = f"100644 blob {seg}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
        tree = git(self.bare, "mktree", data=entries.encode())
        commit = git(self.bare, "commit-tree", tree, *(["-p", parent] if parent else []), data=b"x")
        git(self.bare, "update-ref", self.ref, commit)


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return Team(tmp_path)


def forged_ledger(base: Path, ledger_id: str, key: SigningKey, records: int) -> Ledger:
    """A valid ledger with another clone's id: same id, different history."""
    forged = Ledger.init(
        base, signing_key=key, ledger_id=ledger_id, environ={"LEDGER_HOME": str(base / "h")}
    )
    forged.append_many([("app.event", {"forged": n}) for n in range(records - 1)])
    return forged


def test_push_then_fetch_verifies_a_teammates_evidence(team: Team) -> None:
    pushed = push_evidence(team.a)
    assert (pushed.status, pushed.records) == ("pushed", 5)
    assert git(team.bare, "rev-parse", team.ref) == pushed.commit
    assert push_evidence(team.a).status == "current"

    [got] = fetch_evidence(team.b)
    assert (got.ledger_id, got.records, got.status) == (team.a.ledger_id, 5, "new")
    assert got.ref == f"refs/ledger-remotes/origin/{team.a.ledger_id}"
    assert git(
        team.b_root, "cat-file", "blob", f"{got.ref}:agent_trace.jsonl"
    ).encode() + b"\n" == (team.a.file.path.read_bytes())
    assert fetch_evidence(team.b)[0].status == "current"


def test_each_push_fast_forwards_the_previous_one(team: Team) -> None:
    first = push_evidence(team.a)
    fetch_evidence(team.b)
    team.a.append("app.event", {"n": 99})
    second = push_evidence(team.a)
    assert git(team.bare, "rev-parse", f"{second.commit}^") == first.commit
    [got] = fetch_evidence(team.b)
    assert (got.status, got.records) == ("updated", 6)


def test_pushed_evidence_holds_no_private_key(team: Team) -> None:
    pushed = push_evidence(team.a)
    listing = git(team.bare, "ls-tree", "-r", "--name-only", pushed.commit).split()
    assert listing == ["agent_trace.jsonl", "checkpoint.note"]
    for name in listing:
        assert (
            b"PRIVATE" not in git(team.bare, "cat-file", "blob", f"{pushed.commit}:{name}").encode()
        )


def test_a_remote_without_evidence_gives_nothing(team: Team) -> None:
    assert fetch_evidence(team.b) == []
    assert team.fetched() == ""


def test_an_unknown_remote_is_an_error(team: Team) -> None:
    with pytest.raises(RemoteError, match="no git remote named 'audit'"):
        push_evidence(team.a, "audit")
    with pytest.raises(RemoteError, match="no git remote named 'nope'"):
        fetch_evidence(team.b, "nope")


def test_an_audit_remote_works_the_same(team: Team, tmp_path: Path) -> None:
    audit = tmp_path / "audit.git"
    git(tmp_path, "init", "-q", "--bare", str(audit))
    git(team.a_root, "remote", "add", "audit", str(audit))
    push_evidence(team.a, "origin")
    assert push_evidence(team.a, "audit").status == "pushed"
    git(team.b_root, "remote", "add", "audit", str(audit))
    [got] = fetch_evidence(team.b, "audit")
    assert got.ref == f"refs/ledger-remotes/audit/{team.a.ledger_id}"


# --- attacks ------------------------------------------------------------------------------------


def test_rewritten_ref_force_pushed_with_other_history_is_refused(
    team: Team, tmp_path: Path
) -> None:
    push_evidence(team.a)
    [before] = fetch_evidence(team.b)
    # The same clone's key re-signs a different history under the same ledger id, force-pushed.
    forged = forged_ledger(tmp_path / "forged", team.a.ledger_id, KEY_A, 7)
    segment, checkpoint = forged.segment()
    team.publish_raw(segment, checkpoint.text(), parent=None)
    with pytest.raises(EvidenceRefusedError, match="rewritten") as refused:
        fetch_evidence(team.b)
    assert refused.value.ledger_id == team.a.ledger_id
    assert refused.value.seq == 0  # the genesis records differ (timestamps)
    assert team.fetched() == before.commit  # the verified evidence stays, nothing new is kept


def test_forked_ref_that_fast_forwards_in_git_is_refused(team: Team, tmp_path: Path) -> None:
    pushed = push_evidence(team.a)
    fetch_evidence(team.b)
    # A descendant commit (git calls it a fast-forward) whose records fork after seq 2.
    lines = team.a.file.path.read_bytes().splitlines(keepends=True)
    fork = tmp_path / "fork"
    (fork / ".orchestration").mkdir(parents=True)
    (fork / ".orchestration" / "agent_trace.jsonl").write_bytes(b"".join(lines[:3]))
    (fork / ".orchestration" / "keys").symlink_to(team.a.workspace.keys_dir)
    forked = Ledger(
        Workspace(fork),
        signing_key=KEY_A,
        environ=home(tmp_path / "hf"),
    )
    forked.append_many([("app.event", {"fork": n}) for n in range(4)])
    segment, checkpoint = forked.segment()
    team.publish_raw(segment, checkpoint.text(), parent=pushed.commit)
    with pytest.raises(EvidenceRefusedError, match=r"refused at seq 3: .*forks") as refused:
        fetch_evidence(team.b)
    assert refused.value.seq == 3
    assert team.fetched() == pushed.commit


def test_segment_resigned_with_an_unpinned_key_is_never_kept(team: Team, tmp_path: Path) -> None:
    # Nothing fetched before: an unpinned signer is listed unverified (B cannot tell an intruder
    # from a teammate whose key is not committed yet), and nothing of it is kept or used.
    forged = forged_ledger(tmp_path / "intruder", team.a.ledger_id, INTRUDER, 5)
    segment, checkpoint = forged.segment()
    team.publish_raw(segment, checkpoint.text(), parent=None)
    [got] = fetch_evidence(team.b)
    assert got.status == "unverified"
    assert got.reason is not None
    assert f".orchestration/keys/{INTRUDER.kid}.json" in got.reason
    assert team.fetched() == ""
    assert git(team.b_root, "for-each-ref", "refs/ledger-incoming/") == ""


def test_unpinned_resigning_of_evidence_fetched_before_is_refused(
    team: Team, tmp_path: Path
) -> None:
    push_evidence(team.a)
    [before] = fetch_evidence(team.b)
    forged = forged_ledger(tmp_path / "intruder", team.a.ledger_id, INTRUDER, 7)
    segment, checkpoint = forged.segment()
    team.publish_raw(segment, checkpoint.text(), parent=None)
    with pytest.raises(EvidenceRefusedError, match="rewritten"):
        fetch_evidence(team.b)
    assert team.fetched() == before.commit


def test_records_signed_midway_by_a_key_nobody_introduced_are_refused(
    team: Team, tmp_path: Path
) -> None:
    # The genesis key is pinned; later records are signed by a key no record introduced: not a
    # teammate to pin but a chain whose key rules fail.
    lines = team.a.file.path.read_bytes().splitlines(keepends=True)
    fork = tmp_path / "fork"
    (fork / ".orchestration" / "keys").mkdir(parents=True)
    (fork / ".orchestration" / "agent_trace.jsonl").write_bytes(b"".join(lines))
    for key_file in team.a.workspace.keys_dir.iterdir():
        (fork / ".orchestration" / "keys" / key_file.name).write_bytes(key_file.read_bytes())
    Ledger(Workspace(fork), signing_key=INTRUDER, environ=home(tmp_path / "hi"))._pin(INTRUDER)
    forked = Ledger(Workspace(fork), signing_key=INTRUDER, environ=home(tmp_path / "hi"))
    forked.append_many([("app.event", {"intruder": n}) for n in range(3)])
    segment, checkpoint = forked.segment()
    team.publish_raw(segment, checkpoint.text(), parent=None)
    with pytest.raises(EvidenceRefusedError, match=f"refused at seq {len(lines)}"):
        fetch_evidence(team.b)
    assert team.fetched() == ""


def test_a_teammates_unpinned_key_is_listed_then_verified_once_pinned(team: Team) -> None:
    push_evidence(team.a)
    key_file = team.b.workspace.keys_dir / f"{KEY_A.kid}.json"
    pinned = key_file.read_bytes()
    key_file.unlink()  # B's clone does not have A's key committed yet
    [got] = fetch_evidence(team.b)
    assert (got.status, got.records) == ("unverified", 5)
    assert got.reason == (
        f"unverified: ledger {team.a.ledger_id} is signed by key {KEY_A.kid}, which is not "
        f"pinned; pin it: commit .orchestration/keys/{KEY_A.kid}.json from the teammate's "
        "clone (their `ledger init` wrote it; `git pull` brings it once they commit it), "
        "then `ledger fetch origin`"
    )
    assert team.fetched() == ""
    key_file.write_bytes(pinned)  # git pull
    [again] = fetch_evidence(team.b)
    assert (again.status, again.records) == ("new", 5)
    assert team.fetched() == again.commit


def test_badly_signed_record_is_refused_at_its_seq(team: Team) -> None:
    segment, checkpoint = team.a.segment()
    lines = segment.splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"n":2', b'"n":7')
    assert b'"n":7' in lines[3]
    team.publish_raw(b"".join(lines), checkpoint.text(), parent=None)
    with pytest.raises(EvidenceRefusedError, match="refused at seq 3") as refused:
        fetch_evidence(team.b)
    assert refused.value.seq == 3
    assert team.fetched() == ""


def test_local_truncation_after_push_fails_verify_remote(team: Team) -> None:
    push_evidence(team.a)
    assert verify_against_remote(team.a).ok
    path = team.a.file.path
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))
    report = verify_against_remote(team.a)
    assert not report.ok
    assert {"truncated", "remote-diverged"} <= {p.code for p in report.problems}
    with pytest.raises(EvidenceRefusedError, match="refused at seq 3"):
        push_evidence(team.a)


def test_local_rewrite_after_push_fails_verify_remote(team: Team, tmp_path: Path) -> None:
    push_evidence(team.a)
    forged = forged_ledger(tmp_path / "rewrite", team.a.ledger_id, KEY_A, 5)
    team.a.file.path.write_bytes(forged.file.path.read_bytes())
    report = verify_against_remote(team.a)
    assert "remote-diverged" in {p.code for p in report.problems}
    assert not report.ok


def test_verify_remote_without_a_push_says_so(team: Team) -> None:
    with pytest.raises(RemoteError, match="holds no evidence of ledger"):
        verify_against_remote(team.a)


# --- the commands -------------------------------------------------------------------------------


def ledger_cli(cwd: Path, home_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "LEDGER_HOME": str(home_dir)}
    return run_in_process(list(args), stdin=b"", cwd=cwd, env=env)


def test_cli_push_fetch_and_verify_remote(team: Team) -> None:
    pushed = ledger_cli(team.a_root, team.base / "ha", "push")
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout.decode() == f"pushed 5 records to origin {team.ref}\n"
    fetched = ledger_cli(team.b_root, team.base / "hb", "fetch", "origin")
    assert fetched.returncode == 0, fetched.stderr
    assert fetched.stdout.decode() == f"new: ledger {team.a.ledger_id}, 5 records, verified\n"
    verified = ledger_cli(team.a_root, team.base / "ha", "verify", "--remote", "origin")
    assert verified.returncode == 0, verified.stdout
    # it names the remote, and the ref, it checked against
    assert f"against origin: {team.ref}" in verified.stdout.decode()


def test_cli_refusal_is_one_line_with_the_ledger_and_seq(team: Team) -> None:
    segment, checkpoint = team.a.segment()
    lines = segment.splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"n":1', b'"n":9')
    team.publish_raw(b"".join(lines), checkpoint.text(), parent=None)
    done = ledger_cli(team.b_root, team.base / "hb", "fetch")
    assert done.returncode == 1
    [line] = done.stderr.decode().splitlines()
    assert f"ledger {team.a.ledger_id} refused at seq 2" in line
    # The refusal is a signed record in the fetching clone's ledger, and the ledger verifies.
    [last] = team.b.tail(1)
    assert last.kind == "governance.evidence_refused"
    assert (last.body["ledger_id"], last.body["seq"], last.body["remote"]) == (
        team.a.ledger_id,
        2,
        "origin",
    )
    assert team.b.verify(jobs=1).ok
    checks = run_checks(team.b_root, environ=home(team.base / "hb"), home=team.base)
    [named] = [c for c in checks if c.name == "evidence"]
    assert named.status == "warn"
    assert f"ledger {team.a.ledger_id} from origin at seq 2" in named.message


def test_cli_unpinned_key_is_one_line_on_stderr_and_exit_0(team: Team) -> None:
    push_evidence(team.a)
    (team.b.workspace.keys_dir / f"{KEY_A.kid}.json").unlink()
    done = ledger_cli(team.b_root, team.base / "hb", "fetch")
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    [line] = done.stderr.decode().splitlines()
    assert line.startswith(f"unverified: ledger {team.a.ledger_id} is signed by key {KEY_A.kid}")
    assert f".orchestration/keys/{KEY_A.kid}.json" in line
    # Not a refusal: nothing is recorded in B's ledger.
    assert team.b.tail(1)[0].kind != "governance.evidence_refused"


def test_cli_bad_input_exit_codes(team: Team) -> None:
    empty = ledger_cli(team.b_root, team.base / "hb", "fetch")
    assert (empty.returncode, empty.stdout.decode()) == (
        0,
        "origin holds no ledger evidence (refs/ledger/*)\n",
    )
    unknown = ledger_cli(team.b_root, team.base / "hb", "fetch", "nowhere")
    assert unknown.returncode == 2
    assert len(unknown.stderr.decode().splitlines()) == 1
    (team.b_root / ".git" / "config").open("a").write('[remote "gone"]\n\turl = /nonexistent\n')
    gone = ledger_cli(team.b_root, team.base / "hb", "fetch", "gone")
    assert gone.returncode == 2
    assert len(gone.stderr.decode().splitlines()) == 1


def test_cli_unreadable_evidence_ref_is_skipped_with_one_warning(team: Team) -> None:
    # A ref whose commit holds no checkpoint: nothing to verify against, nothing kept; a
    # warning, not an exit 2 that would stop every teammate's fetch of the other refs.
    segment, _ = team.a.segment()
    seg = git(team.bare, "hash-object", "-w", "--stdin", data=segment)
    tree = git(team.bare, "mktree", data=f"100644 blob {seg}\tagent_trace.jsonl\n".encode())
    git(team.bare, "update-ref", team.ref, git(team.bare, "commit-tree", tree, data=b"x"))
    done = ledger_cli(team.b_root, team.base / "hb", "fetch")
    assert done.returncode == 0
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("warning: skipped")
    assert "checkpoint.note" in line
    assert team.fetched() == ""


@pytest.mark.parametrize("name", ["not-a-ledger-id", "x" * 200])
def test_a_malformed_ref_beside_good_evidence_is_skipped_and_the_rest_verified(
    team: Team, name: str
) -> None:
    push_evidence(team.a)
    empty = git(team.bare, "mktree", data=b"")
    git(
        team.bare,
        "update-ref",
        f"refs/ledger/{name}",
        git(team.bare, "commit-tree", empty, data=b"x"),
    )
    fetched = {f.status: f for f in fetch_evidence(team.b)}
    assert fetched["new"].ledger_id == team.a.ledger_id
    assert "warning: skipped" in str(fetched["skipped"].reason)
    assert team.fetched() != ""


def test_cli_verify_remote_catches_a_truncation(team: Team) -> None:
    assert ledger_cli(team.a_root, team.base / "ha", "push").returncode == 0
    path = team.a.file.path
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:4]))
    done = ledger_cli(team.a_root, team.base / "ha", "verify", "--remote", "origin")
    assert done.returncode == 1
    assert "remote-diverged" in done.stdout.decode()


def test_planted_remote_commands_in_git_config_never_run(team: Team, tmp_path: Path) -> None:
    # An agent's shell can write .git/config: the pack programs and helpers it names must not run.
    marker = tmp_path / "ran"
    for root in (team.a_root, team.b_root):
        for key in ("remote.origin.uploadpack", "remote.origin.receivepack", "core.sshCommand"):
            git(root, "config", key, f"touch {marker}; false")
    assert push_evidence(team.a).status == "pushed"
    assert len(fetch_evidence(team.b)) == 1
    assert verify_against_remote(team.a).ok
    assert not marker.exists()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_flipped_byte_in_pushed_evidence_is_never_kept(team: Team, data: st.DataObject) -> None:
    segment, checkpoint = team.a.segment()
    note = checkpoint.text().encode()
    blob = data.draw(st.sampled_from(["segment", "checkpoint"]))
    target = bytearray(segment if blob == "segment" else note)
    at = data.draw(st.integers(0, len(target) - 1))
    target[at] ^= data.draw(st.integers(1, 255))
    if blob == "segment":
        team.publish_raw(bytes(target), checkpoint.text(), parent=None)
    else:
        team.publish_raw(segment, target.decode("utf-8", "replace"), parent=None)
    with pytest.raises((EvidenceRefusedError, RemoteError)):
        fetch_evidence(team.b)
    assert team.fetched() == ""


def test_two_clones_pushing_at_once_lose_no_ref(team: Team) -> None:
    git(team.b_root, "remote", "set-url", "origin", str(team.bare))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(push_evidence, [team.a, team.b] * 3))
    assert {r.ref for r in results} == {team.ref, f"refs/ledger/{team.b.ledger_id}"}
    on_remote = git(team.bare, "for-each-ref", "--format=%(refname)", "refs/ledger/").split()
    assert sorted(on_remote) == sorted({team.ref, f"refs/ledger/{team.b.ledger_id}"})
    # A pulled B's committed public key: both ledgers verify in A.
    for key_file in team.b.workspace.keys_dir.iterdir():
        (team.a.workspace.keys_dir / key_file.name).write_bytes(key_file.read_bytes())
    fetched = fetch_evidence(team.a)
    assert {f.ledger_id for f in fetched} == {team.a.ledger_id, team.b.ledger_id}


def test_pre_push_hook_pushes_the_evidence_with_the_code_and_uninstall_removes_it(
    team: Team,
) -> None:
    from ledger import install_pre_push, uninstall_pre_push  # noqa: PLC0415

    from ..hooks._support import LEDGER  # noqa: PLC0415

    added = install_pre_push(team.a_root, ledger_cmd=str(LEDGER))
    assert added.action == "added"
    assert install_pre_push(team.a_root, ledger_cmd=str(LEDGER)).action == "unchanged"
    (team.a_root / "README").write_text("x\n")
    git(team.a_root, "add", "README")
    git(team.a_root, "commit", "-q", "-m", "code")
    env = {**os.environ, "LEDGER_HOME": str(team.base / "ha"), "LEDGER_DECIDER": "off"}
    subprocess.run(
        ["git", "push", "-q", "origin", "HEAD:refs/heads/main"],
        cwd=team.a_root,
        env=env,
        capture_output=True,
        check=True,
    )
    assert git(team.bare, "for-each-ref", "--format=%(refname)", "refs/ledger/") == team.ref
    removed = uninstall_pre_push(team.a_root)
    assert removed is not None
    assert removed.action == "removed"
    assert not (team.a_root / ".git" / "hooks" / "pre-push").exists()


def test_pre_push_install_leaves_another_tools_hook_alone(team: Team) -> None:
    from ledger import install_pre_push, uninstall_pre_push  # noqa: PLC0415

    theirs = team.a_root / ".git" / "hooks" / "pre-push"
    theirs.write_text("#!/bin/sh\nnpx husky run pre-push\n")
    skipped = install_pre_push(team.a_root, ledger_cmd="ledger")
    assert skipped.action == "skipped"
    assert 'ledger push "$1"' in skipped.detail
    assert uninstall_pre_push(team.a_root) is None
    assert theirs.read_text() == "#!/bin/sh\nnpx husky run pre-push\n"
