"""Disclosures shared through git: ``ledger push --disclose none|policy|all`` publishes them in
``refs/ledger-disclosures/<ledger id>`` (one parentless commit, rewritten every push), and a
teammate's ``ledger fetch`` keeps those that open the verified chain's commitments.

Attacks are named after what they break: a forgotten value must be in no object reachable from
the remote's refs after the next push, nor in any object of either clone; a doctored or
malformed disclosure must never be shown; a huge blob must not cost its size in memory.
"""

from __future__ import annotations

import io
import json
import subprocess
import tracemalloc
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import (
    DisclosureStore,
    ForgetSelector,
    Ledger,
    Revealer,
    fetch_evidence,
    push_evidence,
    run_checks,
)
from ledger._errors import ConfigError, RemoteError
from ledger._evidence.disclosure import (
    FETCHED_DISCLOSURES_DIR,
    FORGOTTEN,
    WITHHELD,
    Content,
    bounded_lines,
    disclosure_line,
    field_disclosed,
    seal_body,
    sift_fetched,
)
from ledger._evidence.ledger import forget
from ledger._evidence.remote import DISCLOSURE_REFS
from ledger._governance.config import disclose_policy
from tests.blame._clones import Clones
from tests.blame._world import git as blame_git
from tests.cli.inprocess import run_in_process
from tests.evidence.test_remote import IDENTITY, KEY_A, Team, git, home
from tests.hooks._support import Session, make_workspace

PROMPT = "the launch date is 2026-12-24, do not tell anyone"
FILE = "PLAN = 'acquire the competitor in March'\n"
COMMAND = "make deploy-staging"
REASON = "deploy-staging is outside the intent's scope"


def _objects(repo: Path, *, reachable: bool = True) -> bytes:
    """Every object reachable from any ref of ``repo`` (``rev-list --objects --all``), or every
    object it holds at all, as bytes."""
    if reachable:
        listed = git(repo, "rev-list", "--objects", "--all").splitlines()
    else:
        listed = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    out = []
    for line in listed:
        sha = line.split()[0]
        kind = git(repo, "cat-file", "-t", sha)
        out.append(
            subprocess.run(
                ["git", *IDENTITY, "cat-file", kind, sha], cwd=repo, capture_output=True, check=True
            ).stdout
        )
    return b"\n".join(out)


def _session(team: Team) -> Ledger:
    """Clone A's ledger with one call's content committed: a prompt, a command, a file's
    content and a refusal's reason."""
    ledger = Ledger.open(team.a_root, signing_key=KEY_A, environ=home(team.base / "ha"))
    body = {
        "prompt": Content(PROMPT),
        "tool_input": {"command": Content(COMMAND), "content": Content(FILE)},
        "reason": Content(REASON),
    }
    ledger._append_entries([("app.call", body)], internal=False)
    return ledger


def _commitment(ledger: Ledger, value: str) -> tuple[str, str]:
    """``(commitment, field)`` of the disclosure of ``value`` in ``ledger``'s store."""
    for line in DisclosureStore.beside(ledger.file.path).lines():
        if line.get("value") == value:
            return str(line["commitment"]), str(line["field"])
    raise AssertionError(f"no disclosure of {value!r}")


def _shown_in_b(team: Team, ledger: Ledger, value: str | tuple[str, str]) -> object:
    """What clone B shows for the field of A's record that committed ``value`` (or for the
    ``(commitment, field)`` given)."""
    digest, field = _commitment(ledger, value) if isinstance(value, str) else value
    revealer = Revealer.beside(team.b_root / ".orchestration" / "agent_trace.jsonl")
    return revealer.field({"commitment": digest}, field)


def _kept_in_b(team: Team, ledger: Ledger) -> Path:
    return team.b_root / ".git" / FETCHED_DISCLOSURES_DIR / "origin" / f"{ledger.ledger_id}.jsonl"


def test_the_default_policy_publishes_commands_and_reasons_but_no_prompt_and_no_file_content(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    pushed = push_evidence(ledger)
    assert pushed.disclosed == 2
    published = _objects(team.bare)
    assert COMMAND.encode() in published
    assert REASON.encode() in published
    assert PROMPT.encode() not in published
    assert b"acquire the competitor" not in published
    # The evidence ref is as before: the chain and its checkpoint, fast-forward only.
    evidence = git(team.bare, "ls-tree", "--name-only", pushed.ref).split()
    assert evidence == ["agent_trace.jsonl", "checkpoint.note"]
    ref = DISCLOSURE_REFS + ledger.ledger_id
    assert git(team.bare, "ls-tree", "--name-only", ref).split() == ["disclosures.jsonl"]
    assert git(team.bare, "rev-list", "--count", ref) == "1"  # parentless

    [got] = fetch_evidence(team.b)
    assert (got.status, got.disclosed, got.warnings) == ("new", 2, ())
    assert _shown_in_b(team, ledger, COMMAND) == COMMAND
    assert _shown_in_b(team, ledger, REASON) == REASON
    assert _shown_in_b(team, ledger, PROMPT) == WITHHELD
    assert _kept_in_b(team, ledger).stat().st_mode & 0o777 == 0o600
    [again] = fetch_evidence(team.b)  # nothing new: the kept file is not made again
    assert (again.status, again.disclosed) == ("current", 2)
    assert (_kept_in_b(team, ledger).parent.stat().st_mode & 0o777) == 0o700


def test_a_push_that_changes_nothing_moves_no_disclosures_ref(tmp_path: Path) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    ref = DISCLOSURE_REFS + ledger.ledger_id
    first = git(team.bare, "rev-parse", ref)
    again = push_evidence(ledger, disclose="all")
    assert (again.status, again.disclosed) == ("current", 4)
    assert git(team.bare, "rev-parse", ref) == first


def test_disclose_none_publishes_none_and_withdraws_what_was_published(tmp_path: Path) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    assert push_evidence(ledger, disclose="all").disclosed == 4
    assert PROMPT.encode() in _objects(team.bare)
    fetch_evidence(team.b)
    assert _shown_in_b(team, ledger, PROMPT) == PROMPT
    assert push_evidence(ledger, disclose="none").disclosed == 0
    assert DISCLOSURE_REFS not in git(team.bare, "for-each-ref")
    published = _objects(team.bare)
    assert PROMPT.encode() not in published
    assert COMMAND.encode() not in published
    [got] = fetch_evidence(team.b)
    assert got.disclosed == 0
    assert b"launch date" not in _kept_in_b(team, ledger).read_bytes()  # no longer carried
    assert _shown_in_b(team, ledger, PROMPT) == WITHHELD


def test_forgotten_plaintext_is_in_no_object_reachable_from_the_remote_after_the_next_push(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    assert PROMPT.encode() in _objects(team.bare)  # published, then erased below
    fetch_evidence(team.b)
    assert _shown_in_b(team, ledger, PROMPT) == PROMPT
    prompt = _commitment(ledger, PROMPT)

    assert forget(ledger, ForgetSelector(match="launch date")).fields == 1
    pushed = push_evidence(ledger, disclose="all")
    assert (pushed.status, pushed.disclosed) == ("pushed", 3)
    published = _objects(team.bare)
    assert b"launch date" not in published
    assert b"ledger.forgotten" in published  # the erasure itself is published, signed
    assert COMMAND.encode() in published  # what was not forgotten is still shared
    # Built and fetched in scratch repositories: neither clone's objects ever held a disclosure.
    for clone in (team.a_root, team.b_root):
        assert b"launch date" not in _objects(clone, reachable=False)

    [got] = fetch_evidence(team.b)
    assert (got.status, got.disclosed) == ("updated", 3)
    assert b"launch date" not in _kept_in_b(team, ledger).read_bytes()
    assert _shown_in_b(team, ledger, prompt) == FORGOTTEN
    assert _shown_in_b(team, ledger, COMMAND) == COMMAND


def test_a_forget_record_drops_a_value_the_remote_still_carries(tmp_path: Path) -> None:
    """A teammate whose clone pushed its chain but republished an old disclosures blob (by
    hand, or an old ledger): the signed forget record wins."""
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    ref = DISCLOSURE_REFS + ledger.ledger_id
    stale = git(team.bare, "rev-parse", ref)
    prompt = _commitment(ledger, PROMPT)
    forget(ledger, ForgetSelector(match="launch date"))
    push_evidence(ledger, disclose="all")
    git(team.bare, "update-ref", ref, stale)  # the old blob, prompt and all, back on the remote
    [got] = fetch_evidence(team.b)
    assert got.disclosed == 3
    assert b"launch date" not in _kept_in_b(team, ledger).read_bytes()
    assert _shown_in_b(team, ledger, prompt) == FORGOTTEN


def _published_all(tmp_path: Path) -> tuple[Team, Ledger, str]:
    """Clone A's session pushed with ``--disclose all``, and the published blob's text."""
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    ref = f"{DISCLOSURE_REFS}{ledger.ledger_id}:disclosures.jsonl"
    return team, ledger, git(team.bare, "cat-file", "blob", ref)


def _publish_blob(team: Team, ledger: Ledger, data: bytes, name: str = "disclosures.jsonl") -> None:
    """Point the remote's disclosures ref at a commit of ``data`` (what a hostile pusher could
    do)."""
    blob = git(team.bare, "hash-object", "-w", "--stdin", data=data)
    tree = git(team.bare, "mktree", data=f"100644 blob {blob}\t{name}\n".encode())
    commit = git(team.bare, "commit-tree", tree, data=b"x")
    git(team.bare, "update-ref", DISCLOSURE_REFS + ledger.ledger_id, commit)


def test_a_doctored_disclosure_is_warned_dropped_and_never_shown(tmp_path: Path) -> None:
    team, ledger, lines = _published_all(tmp_path)
    doctored = lines.replace("make deploy-staging", "make deploy-prod").encode() + b"\n"
    _publish_blob(team, ledger, doctored)
    [got] = fetch_evidence(team.b)
    assert got.status == "new"  # the evidence itself is fine
    assert got.disclosed == 3
    [warning] = got.warnings
    assert "do not open their commitment" in warning
    assert "field tool_input.command" in warning
    assert b"deploy-prod" not in _kept_in_b(team, ledger).read_bytes()
    assert _shown_in_b(team, ledger, COMMAND) == WITHHELD
    assert _shown_in_b(team, ledger, PROMPT) == PROMPT


@pytest.mark.parametrize(
    ("data", "name", "why"),
    [
        (
            b'not json\n[1, 2]\n{"commitment": 5}\n\xff\xfe\n',
            "disclosures.jsonl",
            "not disclosures",
        ),
        (b"{}\n", "other.txt", "holds no disclosures.jsonl"),
    ],
)
def test_a_malformed_disclosures_ref_is_a_warning_and_the_rest_proceeds(
    tmp_path: Path, data: bytes, name: str, why: str
) -> None:
    team, ledger, good = _published_all(tmp_path)
    _publish_blob(team, ledger, data + good.encode() + b"\n", name)
    # A disclosures ref of no ledger, and one whose name is no ledger id: ignored.
    commit = git(team.bare, "rev-parse", DISCLOSURE_REFS + ledger.ledger_id)
    git(team.bare, "update-ref", DISCLOSURE_REFS + "no-such-ledger", commit)
    [got] = fetch_evidence(team.b)
    assert got.status == "new"
    [warning] = got.warnings
    assert why in warning
    if name == "disclosures.jsonl":
        assert got.disclosed == 4  # the well-formed lines are kept
        assert _shown_in_b(team, ledger, PROMPT) == PROMPT
    else:
        assert not _kept_in_b(team, ledger).exists()


def test_a_huge_disclosures_blob_is_read_in_bounded_memory(tmp_path: Path) -> None:
    team, ledger, good = _published_all(tmp_path)
    huge = b'{"commitment":"' + b"a" * 64 + b'","value":"' + b"x" * (48 * 1024 * 1024) + b'"}\n'
    _publish_blob(team, ledger, huge + good.encode() + b"\n")
    del huge
    tracemalloc.start()
    try:
        [got] = fetch_evidence(team.b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.disclosed == 4
    assert "over 16 MiB" in got.warnings[0]
    assert peak < 40 * 1024 * 1024, peak  # one bounded line at a time, never the 48 MiB one


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.integers(min_value=1, max_value=30),
)
def test_bounded_lines_yields_each_short_line_whole_and_none_for_a_long_one(
    lines: list[bytes], limit: int
) -> None:
    data = b"".join(line + b"\n" for line in lines)
    got = list(bounded_lines(io.BytesIO(data), limit))
    assert got == [line + b"\n" if len(line) <= limit else None for line in lines]


def test_field_names_cover_what_is_below_them_and_any_index() -> None:
    assert field_disclosed("hooks[3].reason", ["hooks[].reason"])
    assert field_disclosed("tool_input.command", ["tool_input"])
    assert field_disclosed("edit.content", ["edit"])
    assert not field_disclosed("tool_input.content", ["tool_input.command"])
    assert not field_disclosed("prompt_extra", ["prompt"])
    assert not field_disclosed("reasons", ["reason"])


def test_hooks_yaml_disclose_names_the_published_fields(tmp_path: Path) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    hooks = team.a_root / ".orchestration" / "hooks.yaml"
    hooks.write_text("disclose: [prompt]\n", encoding="utf-8")
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    done = run_in_process(["push", "--json"], stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["disclosed"] == 1
    published = _objects(team.bare)
    assert PROMPT.encode() in published
    assert COMMAND.encode() not in published
    doctor = {c.name: c for c in run_checks(team.a_root, environ=home(team.base / "ha"))}
    assert doctor["sharing"].status == "ok"
    assert "publishes 1 disclosure(s)" in doctor["sharing"].message
    assert "disclose: [prompt]" in doctor["sharing"].message
    hooks.write_text("disclose: prompt\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"disclose must list the fields"):
        disclose_policy({"disclose": "prompt"}, hooks)
    done = run_in_process(["push"], stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert "disclose must list the fields" in done.stderr.decode()
    assert ledger.verify().ok


def test_disclose_bogus_is_one_line_and_exit_2(tmp_path: Path) -> None:
    team = Team(tmp_path)
    _session(team)
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    done = run_in_process(["push", "--disclose", "bogus"], stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert err.count("\n") == 1, err
    assert "--disclose 'bogus'" in err
    assert "none, policy, all" in err
    assert DISCLOSURE_REFS not in git(team.bare, "for-each-ref")


def test_push_and_fetch_print_the_disclosures(tmp_path: Path) -> None:
    team = Team(tmp_path)
    _session(team)
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    done = run_in_process(["push"], stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 0, done.stderr
    assert "; 2 disclosures (policy)" in done.stdout.decode()
    env_b = {**home(team.base / "hb"), "HOME": str(tmp_path / "user-b")}
    done = run_in_process(["fetch"], stdin=b"", cwd=team.b_root, env=env_b)
    assert done.returncode == 0, done.stderr
    assert "records, verified, 2 disclosures" in done.stdout.decode()


@pytest.mark.parametrize("reading", [False, True], ids=["clone-with-a-ledger", "reading-clone"])
def test_blame_in_a_teammates_clone_names_the_shared_command_until_it_is_forgotten(
    tmp_path: Path, reading: bool
) -> None:
    clones = Clones(tmp_path, reading=reading)
    session = clones.a.session("s1")
    command = "printf 'alpha = 1\\nbeta = 2\\n' > app.py"
    tid = session.tool_use_id()
    assert session.pre("Bash", {"command": command}, tool_use_id=tid).permission != "deny"
    subprocess.run(["bash", "-c", command], cwd=clones.a.root, check=True)
    response = {"stdout": "", "stderr": "", "interrupted": False}
    session.post("Bash", {"command": command}, response, tool_use_id=tid)
    blame_git(clones.a.root, "add", "-A")
    blame_git(clones.a.root, "commit", "-qm", "work")
    assert clones.push()  # ledger push: the default policy shares commands
    clones.pull()
    rows = clones.blame_b("app.py").lines
    assert [(r.status, r.facts.get("command")) for r in rows] == [("agent", command)] * 2

    forget(clones.a_ledger, ForgetSelector(sessions=frozenset({"s1"})))
    assert clones.push()
    clones.pull()
    rows = clones.blame_b("app.py").lines
    assert [(r.status, r.facts.get("command")) for r in rows] == [("agent", FORGOTTEN)] * 2


def test_a_fetch_keeps_no_copy_of_this_clones_own_disclosures(tmp_path: Path) -> None:
    """A copy in the git directory would outlive a local ``ledger forget``."""
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    [got] = fetch_evidence(ledger)
    assert (got.ledger_id, got.disclosed) == (ledger.ledger_id, 0)
    assert not (team.a_root / ".git" / FETCHED_DISCLOSURES_DIR).exists()


def test_a_bad_disclose_setting_is_refused_on_the_next_hook_call(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    ws.write(".orchestration/hooks.yaml", "disclose: {prompt: yes}\n")
    with pytest.raises(ConfigError, match=r"disclose must list the fields ledger push may"):
        Session(ws, "s-bad").event("SessionStart", source="startup")


def test_a_remote_that_refuses_rewrites_still_loses_what_was_forgotten(tmp_path: Path) -> None:
    """A server that refuses a non-fast-forward update of a ref (a pre-receive policy) but
    takes a deletion and a new ref: the ref is deleted and made again; one that refuses both
    is one line saying the erasure did not reach it."""
    team = Team(tmp_path)
    hook = team.bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nz=0000000000000000000000000000000000000000\n"
        'while read old new ref; do\n  case "$ref" in refs/ledger-disclosures/*)\n'
        '    [ "$old" != $z ] && [ "$new" != $z ] && { echo "no rewrites" >&2; exit 1; }\n'
        '    [ -e "$GIT_DIR/frozen" ] && { echo "frozen" >&2; exit 1; } ;;\n  esac\ndone\nexit 0\n',
        encoding="utf-8",
    )
    hook.chmod(0o755)
    ledger = _session(team)
    push_evidence(ledger, disclose="all")
    forget(ledger, ForgetSelector(match="launch date"))
    assert push_evidence(ledger, disclose="all").disclosed == 3
    assert b"launch date" not in _objects(team.bare)
    (team.bare / "frozen").touch()
    forget(ledger, ForgetSelector(match="deploy-staging"))
    with pytest.raises(RemoteError, match=r"the evidence was pushed, but origin refused") as err:
        push_evidence(ledger, disclose="all")
    assert "pre-receive hook declined" in str(err.value)
    assert str(err.value).count("\n") == 0


class _Record(NamedTuple):
    seq: int
    ts: str
    data: dict[str, object]


_SEALED = seal_body(
    {"prompt": Content(PROMPT), "tool_input": {"command": Content(COMMAND)}, "n": 1}
)[1]
_LINES = [
    disclosure_line(_Record(0, "2026-11-28T00:00:00.000000Z", {"actor": {"session": "s"}}), d)
    for d in _SEALED
]


@given(
    st.integers(min_value=0, max_value=len(_LINES) - 1),
    st.data(),
)
def test_sift_fetched_never_keeps_a_value_its_commitment_does_not_bind(
    which: int, data: st.DataObject
) -> None:
    """Any change to a published line (value, salt, field, commitment, framing) is dropped or
    leaves the value it was committed with: a teammate is never shown anything else."""
    line = bytearray(_LINES[which])
    at = data.draw(st.integers(min_value=0, max_value=len(line) - 1))
    line[at] = data.draw(st.integers(min_value=0, max_value=255).filter(lambda b: b != line[at]))
    original = {d.commitment: d.value for d in _SEALED}
    out = io.BytesIO()
    sifted = sift_fetched([bytes(line), *_LINES], dict.fromkeys(original, 0), set(), out)
    kept = [json.loads(raw) for raw in out.getvalue().splitlines()]
    assert sifted.kept == len(kept) == len(original)  # the genuine lines, once each
    for entry in kept:
        assert entry["disclosed"]["value"] == original[entry["commitment"]]
