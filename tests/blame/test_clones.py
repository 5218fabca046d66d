"""Blame in any clone (decision 0018): a teammate's clone, where no agent ever ran, resolves
committed lines to the records of the verified ledger it fetched, by content."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._evidence.remote import fetch_evidence
from ledger._projections.blame import REF_FIELDS
from tests.blame._clones import Clones
from tests.blame._world import git


def _git_in(root: Path, data: str, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], input=data.encode(), capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def _commit_all(clones: Clones, message: str = "work") -> None:
    git(clones.a.root, "add", "-A")
    git(clones.a.root, "commit", "-qm", message)


def _shared(tmp_path: Path, path: str, text: str) -> Clones:
    """Clone A's agent writes ``path``; A commits, pushes code and evidence; B pulls and
    fetches."""
    clones = Clones(tmp_path)
    clones.a.write("s1", path, text)
    _commit_all(clones)
    assert clones.push()
    clones.pull()
    return clones


def test_a_teammates_agent_lines_are_blamed_in_a_clone_where_no_agent_ran(
    tmp_path: Path,
) -> None:
    clones = _shared(tmp_path, "src/app.py", "alpha = 1\nbeta = 2\ngamma = 3\n")
    report = clones.blame_b("src/app.py")
    assert [row.status for row in report.lines] == ["agent"] * 3
    a_id = clones.a_ledger.ledger_id
    assert {row.facts["ledger_id"] for row in report.lines} == {a_id}
    assert {row.facts["session_id"] for row in report.lines} == {"s1"}
    assert report.ledger_id != a_id  # B's own ledger: these lines are a teammate's
    # the git facts stay with the line (porcelain's header names the commit)
    assert report.lines[0].facts["commit"] == git(clones.a.root, "rev-parse", "HEAD").strip()


def test_a_clone_that_only_reads_needs_no_init_and_no_key(tmp_path: Path) -> None:
    clones = Clones(tmp_path, reading=True)
    clones.a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    _commit_all(clones)
    assert clones.push()
    clones.pull()
    assert not (clones.b_root / ".orchestration" / "agent_trace.jsonl").exists()
    assert not (clones.b_home / "keys").exists()  # no key was made (only the cache secret)
    report = clones.blame_b("src/app.py")
    assert [row.status for row in report.lines] == ["agent", "agent"]
    assert {row.facts["ledger_id"] for row in report.lines} == {clones.a_ledger.ledger_id}
    # and through the commands a teammate types
    from tests.hooks._support import clean_env, run_cli  # noqa: PLC0415

    env = {**clean_env(clones.b_home), "HOME": str(tmp_path / "b-user")}
    fetched = run_cli(["fetch"], env, cwd=clones.b_root)
    assert fetched.returncode == 0, fetched.stderr
    blamed = run_cli(["blame", "src/app.py", "--json"], env, cwd=clones.b_root)
    assert blamed.returncode == 0, blamed.stderr
    assert [x["status"] for x in json.loads(blamed.stdout)["lines"]] == ["agent", "agent"]


def test_lines_survive_squash_merge_and_force_push(tmp_path: Path) -> None:
    clones = Clones(tmp_path)
    clones.a.write("s1", "app.py", "one\ntwo\n")
    _commit_all(clones, "first")
    assert clones.push()
    clones.pull()
    # A person squashes everything into a new root commit and force-pushes: no commit B saw
    # survives, the content does.
    clones.a.edit("s2", "app.py", "two\n", "two\nthree\n")
    git(clones.a.root, "checkout", "-q", "--orphan", "squashed")
    git(clones.a.root, "add", "-A")
    git(clones.a.root, "commit", "-qm", "squashed")
    git(clones.a.root, "branch", "-q", "-M", "main")
    assert clones.push(force=True)
    clones.pull()
    report = clones.blame_b("app.py")
    assert [(row.status, row.facts.get("session_id")) for row in report.lines] == [
        ("agent", "s1"),
        ("agent", "s1"),
        ("agent", "s2"),
    ]


def test_a_persons_line_and_an_uncommitted_line_in_the_clone_are_never_the_agents(
    tmp_path: Path,
) -> None:
    clones = Clones(tmp_path)
    clones.a.write("s1", "app.py", "one\ntwo\nthree\n")
    (clones.a.root / "app.py").write_text("one\nperson\nthree\n", encoding="utf-8")
    _commit_all(clones)
    assert clones.push()
    clones.pull()
    (clones.b_root / "app.py").write_text("one\nperson\nthree\nlocal\n", encoding="utf-8")
    report = clones.blame_b("app.py")
    assert [row.status for row in report.lines] == ["agent", "git", "agent", "unknown"]


def test_one_ledger_fetched_from_two_remotes_is_one_claim(tmp_path: Path) -> None:
    clones = _shared(tmp_path, "app.py", "one\n")
    # The same evidence fetched from an audit remote too: one ledger, not two claims (a gap).
    audit = tmp_path / "audit.git"
    git(tmp_path, "init", "-q", "--bare", str(audit))
    git(clones.a.root, "remote", "add", "audit", str(audit))
    from ledger._evidence.remote import push_evidence  # noqa: PLC0415

    push_evidence(clones.a_ledger, "audit")
    git(clones.b_root, "remote", "add", "audit", str(audit))
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415

    fetch_evidence(Ledger.open(clones.b_root, environ=clones.b_env), "audit")
    [row] = clones.blame_b("app.py").lines
    assert row.status == "agent"


def test_a_fetched_ref_moved_by_hand_to_unverified_evidence_never_attributes(
    tmp_path: Path,
) -> None:
    clones = _shared(tmp_path, "app.py", "one\ntwo\n")
    a_id = clones.a_ledger.ledger_id
    ref = f"refs/ledger-remotes/origin/{a_id}"
    # An agent in B plants a commit whose segment claims a forged record.
    good = git(clones.b_root, "rev-parse", ref).strip()
    segment = git(clones.b_root, "cat-file", "blob", f"{good}:agent_trace.jsonl")
    forged = segment.replace('"session":"s1"', '"session":"s9"')
    assert forged != segment
    blob = _git_in(clones.b_root, forged, "hash-object", "-w", "--stdin")
    note = git(clones.b_root, "rev-parse", f"{good}:checkpoint.note").strip()
    entries = f"100644 blob {blob}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
    tree = _git_in(clones.b_root, entries, "mktree")
    commit = git(clones.b_root, "commit-tree", tree, "-m", "x").strip()
    git(clones.b_root, "update-ref", ref, commit)
    report = clones.blame_b("app.py")
    # Never agent, and not silently git: its claim is named unverified (tests/blame/
    # test_blame_unverified.py runs the fix it prints).
    assert [(row.status, row.facts.get("unverified")) for row in report.lines] == [
        ("unknown", True),
        ("unknown", True),
    ]


def test_json_names_the_ledger_of_every_agent_line(tmp_path: Path) -> None:
    from tests.cli.inprocess import run_in_process  # noqa: PLC0415

    clones = _shared(tmp_path, "app.py", "one\n")
    import os  # noqa: PLC0415

    env = {**os.environ, **clones.b_env}
    done = run_in_process(["blame", "app.py", "--json"], stdin=b"", cwd=clones.b_root, env=env)
    assert done.returncode == 0, done.stderr
    [line] = json.loads(done.stdout)["lines"]
    assert line["ledger_id"] == clones.a_ledger.ledger_id
    porcelain = run_in_process(
        ["blame", "app.py", "--porcelain"], stdin=b"", cwd=clones.b_root, env=env
    )
    text = porcelain.stdout.decode()
    assert f"x-ledger-id {clones.a_ledger.ledger_id}\n" in text
    assert text.startswith(git(clones.a.root, "rev-parse", "HEAD").strip())
    table = run_in_process(["blame", "app.py"], stdin=b"", cwd=clones.b_root, env=env)
    assert f"agent@{clones.a_ledger.ledger_id[:4]}" in table.stdout.decode()


def test_fetched_refs_are_read_as_git_lists_them_loose_and_packed(tmp_path: Path) -> None:
    from ledger._evidence.remote import fetched_ledgers  # noqa: PLC0415
    from ledger._projections.foreign import _read_fetched_refs  # noqa: PLC0415

    clones = _shared(tmp_path, "app.py", "one\n")
    loose = _read_fetched_refs(clones.b_root)
    assert loose == fetched_ledgers(clones.b_root)
    assert loose is not None
    assert len(loose) == 1
    git(clones.b_root, "pack-refs", "--all")
    assert _read_fetched_refs(clones.b_root) == loose
    assert clones.blame_b("app.py").lines[0].status == "agent"


def test_an_older_committed_version_is_blamed_through_the_versions_the_records_kept(
    tmp_path: Path,
) -> None:
    """The code is pushed, the agent keeps working and its ledger is pushed later: B holds an
    older version of the file than the last one the records describe."""
    clones = Clones(tmp_path)
    clones.a.write("s1", "app.py", "one\ntwo\nthree\n")
    _commit_all(clones)
    git(clones.a.root, "push", "-q", "origin", "HEAD:main")
    clones.a.write("s2", "app.py", "uno\ndos\ntres\n")  # every line rewritten, not committed
    assert clones.push()  # the branch is current already; the ledger goes out
    clones.pull()
    report = clones.blame_b("app.py")
    assert [(row.status, row.facts.get("session_id")) for row in report.lines] == [
        ("agent", "s1")
    ] * 3


def test_a_line_two_teammates_ledgers_claim_is_a_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ledger._projections import foreign  # noqa: PLC0415

    clones = _shared(tmp_path, "app.py", "one\ntwo\n")
    real = foreign.foreign_models

    def two_ledgers(*args: Any, **kwargs: Any) -> list[foreign.ForeignModel]:
        [model] = real(*args, **kwargs)
        view = model.views["app.py"].view
        assert view.model is not None
        # Another ledger whose model holds the first line (not the second), by another call.
        table = [list(ref) for ref in view.refs]
        for ref in table:
            ref[REF_FIELDS.index("record_hash")] = "f" * 64
        hashes = [view.model["hashes"][0], None]
        other = view._replace(refs=table, model={**view.model, "hashes": hashes})
        second = foreign.ForeignFile(other, [])
        return [model, foreign.ForeignModel("other-ledger", "0" * 40, {"app.py": second})]

    monkeypatch.setattr(foreign, "foreign_models", two_ledgers)
    report = clones.blame_b("app.py")
    assert [row.status for row in report.lines] == ["git", "agent"]


def test_the_teammate_fold_skipping_other_kinds_equals_the_full_fold(tmp_path: Path) -> None:
    import orjson  # noqa: PLC0415

    from ledger._evidence.read import read_records  # noqa: PLC0415
    from ledger._projections.blame import BLAME  # noqa: PLC0415
    from ledger._projections.foreign import _hook_records  # noqa: PLC0415

    clones = Clones(tmp_path)
    clones.a.write("s1", "app.py", "one\ntwo\n")
    clones.a.edit("s2", "app.py", "two\n", "zwei\n")
    clones.a_ledger.append("app.event", {"n": 1})  # a kind the fold skips unparsed
    path = clones.a_ledger.file.path
    full, fast = BLAME.initial(), BLAME.initial()
    for stored in read_records(path):
        BLAME.apply(full, stored.data)
    for record in _hook_records(path):
        BLAME.apply(fast, record)
    assert fast.seq == full.seq > 0
    dump = orjson.OPT_SORT_KEYS
    assert orjson.dumps(BLAME.dump(fast), option=dump) == orjson.dumps(
        BLAME.dump(full), option=dump
    )


def test_fetched_refs_of_a_linked_worktree_are_the_repositorys(tmp_path: Path) -> None:
    from ledger._evidence.remote import fetched_ledgers  # noqa: PLC0415
    from ledger._projections.foreign import _read_fetched_refs  # noqa: PLC0415

    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "commit", "-q", "--allow-empty", "-m", "x")
    git(main, "update-ref", "refs/ledger-remotes/origin/abc-123", "HEAD")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    expected = [("abc-123", "origin", git(main, "rev-parse", "HEAD").strip())]
    for root in (main, tmp_path / "linked"):
        assert _read_fetched_refs(root) == expected == fetched_ledgers(root)
    # a workspace below the repository's top: git is asked
    (main / "sub").mkdir()
    assert _read_fetched_refs(main / "sub") is None
    assert fetched_ledgers(main / "sub") == expected


def test_fetch_notes_what_it_verified_and_the_first_blame_folds_it_without_verifying_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ledger._evidence import remote  # noqa: PLC0415

    clones = _shared(tmp_path, "app.py", "one\n")
    folder = clones.b_root / ".orchestration" / ".cache" / "projections" / "foreign"
    [ledger_dir] = folder.iterdir()
    assert {p.name for p in ledger_dir.iterdir()} == {"index.json"}, "fetch folds nothing"

    def verify_again(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("a commit this user's fetch verified was verified again")

    monkeypatch.setattr(remote, "verified_segment", verify_again)
    assert clones.blame_b("app.py").lines[0].status == "agent"
    assert len(list(ledger_dir.iterdir())) > 1, "the first blame keeps what it folded"


def test_a_missing_cached_slice_is_folded_again(tmp_path: Path) -> None:
    clones = _shared(tmp_path, "app.py", "one\n")
    assert clones.blame_b("app.py").lines[0].status == "agent"  # folds and keeps the slices
    folder = clones.b_root / ".orchestration" / ".cache" / "projections" / "foreign"
    [ledger_dir] = folder.iterdir()
    slices = [p for p in ledger_dir.iterdir() if p.name != "index.json"]
    assert slices
    for path in slices:
        path.unlink()  # two blames rewriting at once, a cleaner
    assert clones.blame_b("app.py").lines[0].status == "agent"
    assert {p.name for p in ledger_dir.iterdir()} == {"index.json", *(p.name for p in slices)}


def test_a_ledger_opened_with_an_environment_keeps_the_caller_out_of_the_real_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What takes a ledger and an optional environment uses the ledger's own when given none:
    a caller that opened the ledger with its ``LEDGER_HOME`` never reads or creates the
    process's ``~/.config/ledger/cache.secret`` (the suite did, through blame_state)."""
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415
    from ledger._evidence.remote import push_evidence  # noqa: PLC0415
    from ledger._projections.explain import blame_state  # noqa: PLC0415

    process_home = tmp_path / "process-home"
    process_home.mkdir()
    monkeypatch.setenv("HOME", str(process_home))
    for name in ("LEDGER_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    clones = _shared(tmp_path, "app.py", "one\ntwo\n")
    assert blame_state(clones.a_ledger).files  # the fold, through the verified cache
    push_evidence(clones.a_ledger)
    fetch_evidence(Ledger.open(clones.b_root, environ=clones.b_env))
    assert [row.status for row in clones.blame_b("app.py").lines] == ["agent", "agent"]
    from ledger import LedgerSource, QuerySession  # noqa: PLC0415

    source = LedgerSource.workspace(clones.a.root, environ=clones.a.ws.env)
    with QuerySession([source], "SELECT status FROM lines") as session:  # the blame fold
        assert session.run().fetchall() == [("agent",), ("agent",)]
    assert list(process_home.iterdir()) == []
    assert (clones.b_home / "cache.secret").is_file()
