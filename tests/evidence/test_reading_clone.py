"""``ledger verify`` in a clone that only reads (two clones and a bare remote): no ``ledger
init``, no key, no ledger of its own; it verifies the teammates' evidence it fetched, or what
the remote holds now, against the public keys committed in ``.orchestration/keys/``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.blame._clones import Clones
from tests.blame._world import git
from tests.cli.inprocess import run_in_process
from tests.hooks._support import clean_env


def _reading(tmp_path: Path, *, pull: bool = True) -> Clones:
    clones = Clones(tmp_path, reading=True)
    clones.a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    git(clones.a.root, "add", "-A")
    git(clones.a.root, "commit", "-qm", "work")
    assert clones.push()
    if pull:
        clones.pull()
    else:
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", str(clones.bare), str(clones.b_root)],
            check=True,
            capture_output=True,
        )
    return clones


def _verify(clones: Clones, *args: str) -> tuple[int, str, str]:
    env = {**clean_env(clones.b_home), "HOME": str(clones.b_home.parent / "b-user")}
    done = run_in_process(["verify", *args], stdin=b"", cwd=clones.b_root, env=env)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _forge(root: Path, ref: str) -> str:
    """A commit beside ``ref``'s whose segment claims a record its signer never signed."""
    good = git(root, "rev-parse", ref).strip()
    segment = git(root, "cat-file", "blob", f"{good}:agent_trace.jsonl")
    forged = segment.replace('"session":"s1"', '"session":"s9"')
    assert forged != segment
    blob = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
        input=forged.encode(),
        capture_output=True,
        check=True,
    ).stdout.decode()
    note = git(root, "rev-parse", f"{good}:checkpoint.note").strip()
    entries = (
        f"100644 blob {blob.strip()}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
    )
    tree = subprocess.run(
        ["git", "-C", str(root), "mktree"], input=entries.encode(), capture_output=True, check=True
    ).stdout.decode()
    return git(root, "commit-tree", tree.strip(), "-m", "x").strip()


def test_verify_in_a_clone_that_only_reads_checks_the_fetched_evidence(tmp_path: Path) -> None:
    clones = _reading(tmp_path)
    a_id = clones.a_ledger.ledger_id
    kept = f"refs/ledger-remotes/origin/{a_id}:agent_trace.jsonl"
    records = git(clones.b_root, "cat-file", "blob", kept).count("\n")
    code, out, err = _verify(clones)
    assert (code, err) == (0, "")
    assert out == f"ok: ledger {a_id}, {records} records, fetched from origin\n"
    code, out, _ = _verify(clones, "--remote", "origin")
    assert code == 0
    assert out == f"ok: ledger {a_id}, {records} records, as origin holds it now\n"
    code, out, _ = _verify(clones, "--json")
    assert code == 0
    assert json.loads(out)["ledgers"][0]["status"] == "verified"
    # it made nothing: no ledger, no key
    assert not (clones.b_root / ".orchestration" / "agent_trace.jsonl").exists()
    assert not (clones.b_home / "keys").exists()


def test_verify_before_any_fetch_says_there_is_nothing_to_verify(tmp_path: Path) -> None:
    clones = _reading(tmp_path, pull=False)
    (clones.b_root / ".orchestration").mkdir(exist_ok=True)
    code, out, err = _verify(clones)
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    assert out.startswith("nothing to verify: this clone has no ledger of its own")
    assert "ledger fetch" in out
    git(clones.a.root, "push", "-q", "origin", f":refs/ledger/{clones.a_ledger.ledger_id}")
    code, out, _ = _verify(clones, "--remote", "origin")
    assert code == 0
    assert out.startswith("nothing to verify")
    assert "origin holds no ledger evidence" in out


def test_a_fetched_ref_moved_by_hand_to_forged_evidence_fails_verify(tmp_path: Path) -> None:
    clones = _reading(tmp_path)
    ref = f"refs/ledger-remotes/origin/{clones.a_ledger.ledger_id}"
    git(clones.b_root, "update-ref", ref, _forge(clones.b_root, ref))
    code, out, _ = _verify(clones)
    assert code == 1
    assert out.startswith(f"refused: evidence of ledger {clones.a_ledger.ledger_id} refused")


def test_a_remote_rewritten_after_the_fetch_fails_verify_remote(tmp_path: Path) -> None:
    clones = _reading(tmp_path)
    a_id = clones.a_ledger.ledger_id
    forged = _forge(clones.b_root, f"refs/ledger-remotes/origin/{a_id}")
    git(clones.b_root, "push", "-q", "--force", str(clones.bare), f"{forged}:refs/ledger/{a_id}")
    code, out, _ = _verify(clones, "--remote", "origin")
    assert code == 1
    assert out.startswith("refused:")
    assert a_id in out
    assert _verify(clones)[0] == 0  # what this clone kept is still the verified evidence


def test_evidence_whose_keys_are_no_longer_committed_cannot_be_checked_exit_2(
    tmp_path: Path,
) -> None:
    clones = _reading(tmp_path)
    for key_file in (clones.b_root / ".orchestration" / "keys").iterdir():
        key_file.unlink()
    code, out, err = _verify(clones)
    assert (code, out) == (2, "")
    assert err.startswith("ledger: error: no public key to verify with")
    assert "Traceback" not in err


def test_checkpoint_in_a_clone_without_a_ledger_is_a_usage_error(tmp_path: Path) -> None:
    clones = _reading(tmp_path)
    code, out, err = _verify(clones, "--checkpoint", str(tmp_path / "cp"))
    assert (code, out) == (2, "")
    assert err.count("\n") <= 2
    assert "has none" in err
