"""A teammate's fetched evidence in the readers: ``ledger log --ledger origin/<id>`` lists their
records and ``ledger show origin/<id>:SEQ`` shows one, with the disclosures fetched with them, or
``[withheld]`` / ``[forgotten]``.

Attacks are named after what they break: a doctored fetched disclosure must never be shown; a
fetched ref moved by hand to records that do not verify must never be read as evidence (one
line, exit 1, and the printed way out works as written); a missing or malformed name is one
line naming how to fetch, exit 3.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from ledger import (
    ForgetSelector,
    InputError,
    IntegrityError,
    Ledger,
    fetch_evidence,
    fetched_ledger_names,
    open_fetched_ledger,
    push_evidence,
)
from ledger._evidence.disclosure import FETCHED_DISCLOSURES_DIR, FORGOTTEN, WITHHELD
from ledger._evidence.ledger import forget
from tests.cli.inprocess import run_in_process
from tests.evidence.test_disclosure_sharing import COMMAND, PROMPT, REASON, _session
from tests.evidence.test_remote import Team, git, home


def _shared(tmp_path: Path) -> tuple[Team, Ledger, dict[str, str]]:
    """A's ledger with a call's content (prompt, command, file, reason) pushed under the
    default policy, fetched by B; B's environment for running ``ledger`` there."""
    team = Team(tmp_path)
    ledger = _session(team)
    push_evidence(ledger)
    fetch_evidence(team.b)
    env = {**home(team.base / "hb"), "HOME": str(tmp_path / "user")}
    return team, ledger, env


def _ledger(team: Team, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return run_in_process(list(args), stdin=b"", cwd=team.b_root, env=env)


def doctor_fetched_ref(team: Team, ledger_id: str) -> str:
    """Move B's fetched ref of ``ledger_id`` by hand to a commit whose records were changed
    (one value of an ``app.event``), the checkpoint kept; returns the ref."""
    ref = f"refs/ledger-remotes/origin/{ledger_id}"
    segment = git(team.b_root, "cat-file", "blob", f"{ref}:agent_trace.jsonl") + "\n"
    doctored = segment.replace('"n":2', '"n":9', 1)
    assert doctored != segment
    blob = git(team.b_root, "hash-object", "-w", "--stdin", data=doctored.encode())
    note = git(team.b_root, "rev-parse", f"{ref}:checkpoint.note")
    entries = f"100644 blob {blob}\tagent_trace.jsonl\n100644 blob {note}\tcheckpoint.note\n"
    tree = git(team.b_root, "mktree", data=entries.encode())
    parent = git(team.b_root, "rev-parse", ref)
    git(
        team.b_root,
        "update-ref",
        ref,
        git(team.b_root, "commit-tree", tree, "-p", parent, data=b"x"),
    )
    return ref


def _content_seq(ledger: Ledger) -> int:
    return next(r.seq for r in ledger.records() if r.kind == "app.call")


def test_log_and_show_read_a_teammates_fetched_records_with_their_disclosures(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    name = f"origin/{ledger.ledger_id}"
    assert [n for n, _, _ in fetched_ledger_names(team.b_root)] == [name]

    log = _ledger(team, "log", "--ledger", name, "--json", env=env)
    assert log.returncode == 0, log.stderr
    listed = [json.loads(line) for line in log.stdout.decode().splitlines()]
    assert [r["seq"] for r in listed] == list(range(_content_seq(ledger) + 1))
    assert {r["ledger"] for r in listed} == {ledger.ledger_id}
    plain = _ledger(team, "log", "--ledger", name, "--kind", "app.call", env=env)
    assert plain.returncode == 0, plain.stderr
    assert len(plain.stdout.decode().splitlines()) == 1

    seq = _content_seq(ledger)
    for args in (
        [f"{name}:{seq}"],
        [str(seq), "--ledger", name],
        [f"origin/{ledger.ledger_id[:8]}:{seq}"],
    ):
        shown = _ledger(team, "show", *args, env=env)
        assert shown.returncode == 0, shown.stderr
        text = shown.stdout.decode()
        assert f"seq {seq}  app.call" in text
        assert COMMAND in text  # the default policy published the command and the reason
        assert REASON in text
        assert PROMPT not in text
        assert json.dumps(WITHHELD) in text  # the prompt and the file content stay digests
    # Without a seq: the teammate's last record. B's own ledger is untouched by all this.
    last = _ledger(team, "show", name, env=env)
    assert last.returncode == 0, last.stderr
    assert f"seq {seq}  app.call" in last.stdout.decode()
    own = _ledger(team, "show", "--json", env=env)
    assert json.loads(own.stdout)["ledger"] == team.b.ledger_id
    # No such seq: the hint lists the ledger asked about (a short id gives the full name),
    # and works as written; B's own ledger's hint stays plain `ledger log`.
    missing = _ledger(team, "show", f"origin/{ledger.ledger_id[:8]}:{seq + 50}", env=env)
    assert missing.returncode == 2
    hint = missing.stderr.decode().splitlines()[-1]
    assert hint == f"hint: ledger log --ledger {name}"
    relisted = _ledger(team, *shlex.split(hint.removeprefix("hint: "))[1:], env=env)
    assert relisted.returncode == 0, relisted.stderr
    assert "app.call" in relisted.stdout.decode()  # the teammate's records, not B's
    mine = _ledger(team, "show", "9999", env=env)
    assert mine.returncode == 2
    assert mine.stderr.decode().splitlines()[-1] == "hint: ledger log"


def test_the_library_opens_a_fetched_ledger_and_cleans_up_its_copy(tmp_path: Path) -> None:
    team, ledger, _ = _shared(tmp_path)
    with open_fetched_ledger(
        team.b_root, f"origin/{ledger.ledger_id}", environ=home(team.base / "hb")
    ) as reading:
        assert reading.ledger_id == ledger.ledger_id
        assert reading.segment.read_bytes() == ledger.file.path.read_bytes()
        record = next(r for r in ledger.records() if r.kind == "app.call").data
        body = reading.revealer().record(record)["body"]
        assert (body["tool_input"]["command"], body["reason"]) == (COMMAND, REASON)
        assert (body["prompt"], body["tool_input"]["content"]) == (WITHHELD, WITHHELD)
        copy = reading.segment
    assert not copy.exists()


def test_show_says_forgotten_once_the_teammate_erased_it_and_fetched_again(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    assert forget(ledger, ForgetSelector(match="deploy-staging")).fields >= 1
    push_evidence(ledger)
    fetch_evidence(team.b)
    shown = _ledger(team, "show", f"origin/{ledger.ledger_id}:{_content_seq(ledger)}", env=env)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert json.dumps(FORGOTTEN) in text
    assert COMMAND not in text


def test_a_doctored_fetched_disclosure_is_never_shown(tmp_path: Path) -> None:
    team, ledger, env = _shared(tmp_path)
    kept = team.b_root / ".git" / FETCHED_DISCLOSURES_DIR / "origin" / f"{ledger.ledger_id}.jsonl"
    forged = "approved by the security team"
    kept.write_bytes(kept.read_bytes().replace(REASON.encode(), forged.encode()))
    shown = _ledger(team, "show", f"origin/{ledger.ledger_id}:{_content_seq(ledger)}", env=env)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert forged not in text
    assert REASON not in text
    assert COMMAND in text  # the others still open their commitments


def test_a_fetched_ref_moved_to_records_that_do_not_verify_is_refused_with_its_way_out(
    tmp_path: Path,
) -> None:
    team, ledger, env = _shared(tmp_path)
    name = f"origin/{ledger.ledger_id}"
    ref = doctor_fetched_ref(team, ledger.ledger_id)

    for args in (["log", "--ledger", name], ["show", f"{name}:1"]):
        done = _ledger(team, *args, env=env)
        assert done.returncode == 1, done.stdout
        err = done.stderr.decode()
        assert err.count("\n") == 1, err
        assert "does not verify here" in err
        assert '"n":9' not in done.stdout.decode()
    with (
        pytest.raises(IntegrityError, match="does not verify here"),
        open_fetched_ledger(team.b_root, name, environ=home(team.base / "hb")),
    ):
        pass
    # The way out, run as printed: the teammate's verified evidence reads again.
    fix = err.split("Fetch it again: ", 1)[1].strip()
    assert fix == f"git update-ref -d {ref} && ledger fetch origin"
    git(team.b_root, *shlex.split(fix.split(" && ")[0])[1:])
    fetched = _ledger(team, *shlex.split(fix.split(" && ")[1])[1:], env=env)
    assert fetched.returncode == 0, fetched.stderr
    again = _ledger(team, "log", "--ledger", name, "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert '"n":9' not in again.stdout.decode()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["log", "--ledger", "origin/0000dead"], "run `ledger fetch origin`"),
        (["log", "--ledger", "elsewhere/0000dead"], "run `ledger fetch elsewhere`"),
        (["log", "--ledger", "no slash here"], "use REMOTE/LEDGER_ID"),
        (["log", "--ledger", "origin/../../etc"], "use REMOTE/LEDGER_ID"),
        (["show", "origin/0000dead:3"], "run `ledger fetch origin`"),
    ],
    ids=["missing", "other-remote", "malformed", "escaping", "show-missing"],
)
def test_a_missing_or_malformed_fetched_ledger_name_is_one_line_naming_the_way_out(
    tmp_path: Path, args: list[str], said: str
) -> None:
    team, ledger, env = _shared(tmp_path)
    done = _ledger(team, *args, env=env)
    assert done.returncode == 3, (done.stdout, done.stderr)
    err = done.stderr.decode()
    assert err.count("\n") == 1, err
    assert said in err
    assert f"origin/{ledger.ledger_id}" in err  # what is fetched here is listed
    assert done.stdout == b""


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nothing:3"],
        ["show", "origin/x:-1"],
        ["show", "origin/x:two"],
        ["log", "--ledger", "origin/x", "-f"],
    ],
    ids=["no-remote", "negative", "not-a-number", "follow"],
)
def test_a_bad_show_target_or_follow_of_a_fetched_ledger_is_a_usage_error(
    tmp_path: Path, args: list[str]
) -> None:
    team, _, env = _shared(tmp_path)
    done = _ledger(team, *args, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert b"Traceback" not in done.stderr
    assert done.stdout == b""


def test_the_library_refuses_a_name_no_fetched_ledger_has(tmp_path: Path) -> None:
    team, _, _ = _shared(tmp_path)
    with (
        pytest.raises(InputError, match="no fetched ledger origin/zzzz"),
        open_fetched_ledger(team.b_root, "origin/zzzz", environ=home(team.base / "hb")),
    ):
        pass
