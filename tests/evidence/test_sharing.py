"""Evidence that is safe to share: what push publishes, the blob cache, retention, doctor.

Attacks are named after what they break: a forgotten prompt must be in no object reachable
from the remote's refs (``git rev-list --objects --all`` + ``cat-file``); records from before
commitments must not leave the machine without the flag that says they carry content; a
``cat .env`` must leave no copy of ``.env`` behind.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from ledger import (
    DisclosureStore,
    ForgetSelector,
    Ledger,
    VerbatimContentError,
    push_evidence,
    run_checks,
)
from ledger._errors import ConfigError
from ledger._evidence import record as record_module
from ledger._evidence.disclosure import Content
from ledger._evidence.ledger import forget
from tests.evidence.test_remote import IDENTITY, KEY_A, Team, git, home
from tests.hooks._support import Session, Workspace, make_workspace

PROMPT = "the launch date is 2026-12-24, do not tell anyone"
SECRET_ENV = "STRIPE_KEY=sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "\n"


def _objects_text(bare: Path) -> bytes:
    """Every object reachable from any ref of the repository, as bytes."""
    listed = subprocess.run(
        ["git", *IDENTITY, "rev-list", "--objects", "--all"],
        cwd=bare,
        capture_output=True,
        check=True,
    ).stdout.decode()
    out = []
    for line in listed.splitlines():
        sha = line.split()[0]
        kind = git(bare, "cat-file", "-t", sha)
        out.append(
            subprocess.run(
                ["git", "cat-file", kind, sha], cwd=bare, capture_output=True, check=True
            ).stdout
        )
    return b"\n".join(out)


def test_push_publishes_no_prompt_and_forgotten_plaintext_is_unreachable_on_the_remote(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    env = home(tmp_path / "ha")
    ledger = Ledger.open(team.a_root, signing_key=KEY_A, environ=env)
    ledger._append_entries([("app.prompt", {"prompt": Content(PROMPT)})], internal=False)
    assert PROMPT in DisclosureStore.beside(ledger.workspace.ledger_path).path.read_text()
    push_evidence(ledger)
    assert PROMPT.encode() not in _objects_text(team.bare)
    done = forget(ledger, ForgetSelector(match="launch date"))
    assert done.fields == 1
    push_evidence(ledger)
    published = _objects_text(team.bare)
    assert PROMPT.encode() not in published
    assert b"launch date" not in published
    assert b"ledger.forgotten" in published  # the erasure itself is published, signed


def test_push_refuses_records_that_hold_content_verbatim_without_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = Team(tmp_path)
    ledger = Ledger.open(team.a_root, signing_key=KEY_A, environ=home(tmp_path / "ha"))
    monkeypatch.setattr(record_module, "FORMAT_VERSION", 2)  # as the previous release wrote
    ledger._append_entries([("hook.event", {"prompt": PROMPT})], internal=True)
    monkeypatch.undo()
    with pytest.raises(VerbatimContentError, match="--publish-verbatim-content"):
        push_evidence(ledger)
    assert PROMPT.encode() not in _objects_text(team.bare)
    doctor = {c.name: c for c in run_checks(team.a_root, environ=home(tmp_path / "ha"))}
    assert doctor["content"].status == "warn"
    assert "1 record(s) from before format v3" in doctor["content"].message
    pushed = push_evidence(ledger, publish_verbatim_content=True)
    assert pushed.status == "pushed"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def _blobs(ws: Workspace) -> Path:
    return ws.orchestration / ".cache" / "blobs"


def test_cat_dot_env_leaves_no_copy_of_it(ws: Workspace) -> None:
    ws.write(".env", SECRET_ENV)
    ws.write("src/auth/settings.py", "DEBUG = False\n")
    session = Session(ws, "s-env")
    session.select()
    session.pre("Bash", {"command": "cat .env src/auth/settings.py > src/auth/copy.txt"})
    blobs = _blobs(ws)
    kept = b"".join(p.read_bytes() for p in blobs.iterdir()) if blobs.exists() else b""
    assert b"sk_live_" not in kept
    assert b"DEBUG = False" in kept  # an ordinary file is still kept for attribution
    assert stat.S_IMODE(blobs.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in blobs.iterdir())


def test_a_file_the_detector_flags_is_never_copied(ws: Workspace) -> None:
    ws.write("src/auth/config.py", f'KEY = "{SECRET_ENV.split("=")[1].strip()}"\n')
    session = Session(ws, "s-flagged")
    session.select()
    session.pre("Bash", {"command": "cp src/auth/config.py src/auth/config.bak"})
    blobs = _blobs(ws)
    kept = b"".join(p.read_bytes() for p in blobs.iterdir()) if blobs.exists() else b""
    assert b"sk_live_" not in kept


def test_retention_in_hooks_yaml_forgets_at_a_sessions_end(ws: Workspace) -> None:
    ws.write(".orchestration/hooks.yaml", "retention:\n  prompt: 0m\n")
    session = Session(ws, "s-retention")
    session.event("UserPromptSubmit", prompt=PROMPT)
    session.select()
    session.event("SessionEnd", reason="prompt_input_exit")
    store = (ws.orchestration / "disclosures.jsonl").read_text()
    assert PROMPT not in store
    assert "tool_input.command" in store  # only the prompt's rule applied
    forgotten = [r for r in ws.records() if r.kind == "ledger.forgotten"]
    assert [r.body["by"] for r in forgotten] == [["retention"]]
    assert Ledger.open(ws.root, environ=ws.env).verify().ok


def test_a_bad_retention_setting_is_one_clear_line_on_the_first_call(ws: Workspace) -> None:
    ws.write(".orchestration/hooks.yaml", "retention:\n  prompt: soon\n")
    with pytest.raises(ConfigError, match=r"retention\.prompt must be an age such as 30d"):
        Session(ws, "s-bad").event("SessionStart", source="startup")
