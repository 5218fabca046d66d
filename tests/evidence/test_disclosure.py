"""Commitments in the chain, disclosures beside it: what a hook call writes, what verify says.

Attacks are named after what they break: a doctored disclosure (value or salt changed) must
fail verify, located; a token in a prompt, a command or a file must reach no file ledger
writes; a deleted store leaves a chain that still verifies, with every field withheld.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ledger._evidence.record as record_module
from ledger import Ledger
from ledger._evidence.disclosure import (
    FORGOTTEN,
    WITHHELD,
    Content,
    DisclosureStore,
    Revealer,
    commitment_digest,
    commitments_in,
    reveal,
)
from tests.hooks._support import Session, Workspace, make_workspace
from tests.hooks._support import run_cli as _run


class Ran:
    """A ``ledger`` command's exit code and output, as text."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_cli(ws: Workspace, *args: str) -> Ran:
    done = _run([*args, "--root", str(ws.root)], ws.proc_env, cwd=ws.root)
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
AWS = "AKIA" + "QYLPMN5HHHFPZAM2"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYiLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlX29mX3Rva2Vu"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def _store(ws: Workspace) -> Path:
    return ws.orchestration / "disclosures.jsonl"


def _every_file_bytes(*folders: Path) -> bytes:
    return b"".join(
        path.read_bytes() for folder in folders for path in folder.rglob("*") if path.is_file()
    )


def _governed_session_with_secrets(ws: Workspace) -> Session:
    session = Session(ws, "s-secret")
    session.event("UserPromptSubmit", prompt=f"use my token {TOKEN} to push")
    session.select()
    ws.write("src/auth/config.py", "x = 1\n")
    session.read("src/auth/config.py")
    content = f'API_KEY = "{AWS}"\nGITHUB = "{TOKEN}"\n'
    pre = session.pre(
        "Write", {"file_path": str(ws.path("src/auth/config.py")), "content": content}
    )
    assert pre.code is None  # allowed: decided on the raw payload, as before
    session.pre(
        "Bash",
        {"command": f'curl -H "Authorization: Bearer {BEARER}" https://api.example.com/v1'},
    )
    return session


def test_a_token_in_a_prompt_a_command_or_a_file_reaches_no_file_ledger_writes(
    ws: Workspace,
) -> None:
    _governed_session_with_secrets(ws)
    written = _every_file_bytes(ws.orchestration, ws.home)
    for secret in (TOKEN, AWS, BEARER):
        assert secret.encode() not in written
    values = [line["value"] for line in DisclosureStore(_store(ws)).lines()]
    text = json.dumps(values)
    assert "[secret:github-token]" in text
    assert "[secret:aws-access-key-id]" in text
    assert "use my token [secret:github-token] to push" in values


def test_content_is_committed_and_what_blame_needs_stays_plain(ws: Workspace) -> None:
    _governed_session_with_secrets(ws)
    records = ws.records()
    prompt = next(r for r in records if r.body.get("event") == "UserPromptSubmit")
    assert prompt.data["v"] == 3
    assert list(commitments_in(prompt.body)) == [("prompt", prompt.body["prompt"]["commitment"])]
    write = next(r for r in records if r.kind == "hook.pre" and r.body.get("tool") == "Write")
    assert write.body["tool_input"]["file_path"] == "src/auth/config.py"  # relative, plain
    assert set(write.body["tool_input"]["content"]) == {"commitment"}
    assert len(write.body["attempted_lines"]) == 2
    assert write.body["decision"] == "allow"
    assert all(r.body.get("cwd") in (None, ".") for r in records if r.kind.startswith("hook."))
    assert str(ws.root).encode() not in ws.ledger_bytes()


def test_the_store_is_private_and_never_committed(ws: Workspace) -> None:
    _governed_session_with_secrets(ws)
    assert stat.S_IMODE(_store(ws).stat().st_mode) == 0o600
    ignored = (ws.orchestration / ".gitignore").read_text().split()
    assert "disclosures.jsonl" in ignored


def test_verify_counts_withheld_fields_and_passes_with_the_store_deleted(ws: Workspace) -> None:
    _governed_session_with_secrets(ws)
    ok = run_cli(ws, "verify")
    assert ok.returncode == 0, ok.stderr
    assert "0 fields withheld (0 forgotten)" in ok.stdout
    committed = sum(len(list(commitments_in(r.body))) for r in ws.records())
    _store(ws).unlink()
    gone = run_cli(ws, "verify")
    assert gone.returncode == 0, gone.stderr
    assert f"{committed} fields withheld (0 forgotten)" in gone.stdout


@pytest.mark.parametrize("what", ["value", "salt"])
def test_doctored_disclosure_fails_verify_naming_seq_and_field(ws: Workspace, what: str) -> None:
    _governed_session_with_secrets(ws)
    lines = _store(ws).read_text().splitlines()
    entry = json.loads(lines[0])
    entry["disclosed"][what] = "ff" * 16 if what == "salt" else "a different prompt"
    lines[0] = json.dumps(entry)
    _store(ws).write_text("\n".join(lines) + "\n")
    bad = run_cli(ws, "verify")
    assert bad.returncode == 1
    assert f"seq {entry['seq']}" in bad.stdout + bad.stderr
    assert entry["disclosed"]["field"] in bad.stdout + bad.stderr
    assert "bad-disclosure" in bad.stdout + bad.stderr
    # A reader never shows the doctored value.
    shown = run_cli(ws, "show", str(entry["seq"]))
    assert "a different prompt" not in shown.stdout


def test_a_disclosure_no_record_holds_is_ignored(ws: Workspace) -> None:
    _governed_session_with_secrets(ws)
    salt = "00" * 16
    orphan = {
        "commitment": commitment_digest("prompt", salt, "planted"),
        "seq": 1,
        "disclosed": {"field": "prompt", "salt": salt, "value": "planted"},
    }
    with _store(ws).open("a") as handle:
        handle.write(json.dumps(orphan) + "\n")
    report = Ledger.open(ws.root, environ=ws.env).verify()
    assert report.ok
    assert report.disclosures is not None
    assert report.disclosures.orphans == 1


def test_log_and_show_reveal_disclosed_values_and_say_withheld_otherwise(ws: Workspace) -> None:
    _governed_session_with_secrets(ws)
    seq = next(r.seq for r in ws.records() if r.body.get("event") == "UserPromptSubmit")
    shown = run_cli(ws, "show", str(seq))
    assert "use my token [secret:github-token] to push" in shown.stdout
    as_json = run_cli(ws, "show", str(seq), "--json")
    assert '"prompt":{"commitment":"' in as_json.stdout
    _store(ws).unlink()
    withheld = run_cli(ws, "show", str(seq))
    assert WITHHELD in withheld.stdout
    assert "use my token" not in withheld.stdout


def test_records_of_the_previous_format_verify_and_read_unchanged(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    monkeypatch.setattr(record_module, "FORMAT_VERSION", 2)  # as the previous release wrote
    old = ledger.append("app.note", {"text": "plain, as v2 kept it"})
    monkeypatch.undo()
    new = ledger.append("app.note", {"text": "and a v3 one"})
    assert (old.data["v"], new.data["v"]) == (2, 3)
    assert ledger.verify().ok
    assert [r.body.get("text") for r in ledger.records()][-2:] == [
        "plain, as v2 kept it",
        "and a v3 one",
    ]


def test_a_value_too_large_to_scan_is_committed_and_withheld(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ledger._evidence.disclosure.SCAN_LIMIT", 1000)
    ledger = Ledger.open(ws.root, environ=ws.env)
    record = ledger._append_entries([("app.big", {"blob": Content("x" * 5000)})], internal=False)[0]
    assert set(record.body["blob"]) == {"commitment"}
    assert not _store(ws).exists() or "x" * 100 not in _store(ws).read_text()
    assert Revealer.beside(ledger.workspace.ledger_path).record(record.data)["body"] == {
        "blob": WITHHELD
    }


@given(
    st.text(max_size=40),
    st.text(max_size=200),
    st.text(max_size=200),
)
def test_a_commitment_opens_only_with_its_field_salt_and_value(
    field: str, value: str, other: str
) -> None:
    salt = os.urandom(16).hex()
    digest = commitment_digest(field, salt, value)
    body = {"commitment": digest}
    disclosed = {digest: {"field": field, "salt": salt, "value": value}}
    assert reveal(body, disclosed, frozenset(), field) == value
    if other != value:
        assert (
            reveal(body, {digest: {"salt": salt, "value": other}}, frozenset(), field) == WITHHELD
        )
    assert reveal(body, {}, frozenset({digest}), field) == FORGOTTEN
    assert commitment_digest(field, os.urandom(16).hex(), value) != digest
