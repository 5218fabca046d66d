"""Governance policies, driven through handle_event with Claude Code payloads."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ledger import Revealer
from ledger._errors import ConfigError
from ledger._governance.engine import invocation_id_for

from ._support import (
    Fired,
    Session,
    Workspace,
    added_ranges,
    claude_payload,
    clean_env,
    edit_response,
    error_json_from_reason,
    file_sha256_after,
    fire,
    make_workspace,
    sha256_hex,
    write_response,
    written_ranges,
)

AUTH_FILE = "src/auth/middleware.ts"
AUTH_TEXT = "".join(f"export const line{i} = {i};\n" for i in range(1, 41))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    workspace.write(AUTH_FILE, AUTH_TEXT)
    workspace.write("src/auth/old.ts", "export const old = 1;\n")
    workspace.write("src/other/util.ts", "export const util = 1;\n")
    workspace.write("README.md", "# app\n")
    return workspace


def kinds(ws: Workspace) -> list[str]:
    return [r.kind for r in ws.records()]


def last(ws: Workspace, kind: str) -> Any:
    return next(r for r in reversed(ws.records()) if r.kind == kind)


def blocked(fired: Fired) -> bool:
    return fired.permission == "deny"


def passes(fired: Fired) -> bool:
    """Neither denied nor sent to a human."""
    return fired.permission in (None, "allow") and fired.response.exit_code == 0


# --- INTENT_REQUIRED --------------------------------------------------------------------------


def mutating_calls(ws: Workspace) -> list[tuple[str, dict[str, Any]]]:
    path = str(ws.path(AUTH_FILE))
    return [
        ("Write", {"file_path": path, "content": "x\n"}),
        (
            "Edit",
            {
                "file_path": path,
                "old_string": "line1 ",
                "new_string": "first ",
                "replace_all": False,
            },
        ),
        ("MultiEdit", {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}),
        (
            "NotebookEdit",
            {
                "notebook_path": str(ws.path("src/auth/n.ipynb")),
                "new_source": "print(1)",
                "cell_id": "c1",
                "edit_mode": "replace",
            },
        ),
        (
            "ApplyPatch",
            {
                "patch": "*** Begin Patch\n*** Update File: src/auth/middleware.ts\n"
                "@@\n-export const line1 = 1;\n+export const line1 = 2;\n"
                "*** End Patch\n"
            },
        ),
        ("Bash", {"command": "rm src/auth/old.ts", "description": "Remove the old module"}),
    ]


@pytest.mark.parametrize(
    "index",
    range(6),
    ids=["Write", "Edit", "MultiEdit", "NotebookEdit", "ApplyPatch", "destructive-Bash"],
)
def test_mutating_tools_need_an_intent(ws: Workspace, index: int) -> None:
    tool, tool_input = mutating_calls(ws)[index]
    session = Session(ws, "no-intent")
    tool_use_id = session.tool_use_id()
    fired = session.pre(tool, tool_input, tool_use_id=tool_use_id)
    assert blocked(fired)
    assert fired.code == "INTENT_REQUIRED"
    reason = fired.out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("INTENT_REQUIRED")
    assert "INT-001" in reason  # tells the agent what it can select
    assert "INT-009" not in reason.split("\n")[0]  # a done intent is not offered
    error = error_json_from_reason(reason)
    assert error == fired.decision.error
    assert set(error) == {"type", "code", "message", "meta"}
    assert error["meta"]["invocation_id"] == invocation_id_for("claude", "no-intent", tool_use_id)
    assert error["meta"]["tool"] == tool
    record = last(ws, "hook.pre")
    assert record.body["decision"] == "deny"
    assert record.body["tool_use_id"] == tool_use_id
    assert record.actor["session"] == "no-intent"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "{root}/src/other/util.ts"}),
        ("Grep", {"pattern": "export", "path": "{root}/src", "output_mode": "content"}),
        ("Glob", {"pattern": "**/*.ts"}),
        ("Bash", {"command": "npm test -- src/auth", "description": "Run auth tests"}),
        ("Bash", {"command": "git status && ls -la src | wc -l"}),
        ("Bash", {"command": "echo hi > /dev/null"}),
        ("mcp__memory__create_entities", {"entities": []}),
    ],
)
def test_non_mutating_tools_pass_without_an_intent(
    ws: Workspace, tool: str, tool_input: dict[str, Any]
) -> None:
    filled = json.loads(json.dumps(tool_input).replace("{root}", str(ws.root)))
    fired = Session(ws, "reader").pre(tool, filled)
    assert passes(fired)
    assert fired.decision.error is None
    assert last(ws, "hook.pre").body["decision"] == "allow"


# --- intent select / clear --------------------------------------------------------------------


def test_intent_select_binds_the_intent_to_the_payload_session(ws: Workspace) -> None:
    alice, bob = Session(ws, "alice"), Session(ws, "bob")
    selected = alice.select("INT-001")
    assert selected.permission == "allow"
    context = selected.out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<intent_context>")
    assert context.endswith("</intent_context>")
    assert "<id>INT-001</id>" in context
    assert "<glob>src/auth/**</glob>" in context
    assert "keep the public API of src/auth stable" in context
    assert "auth tests pass" in context
    record = last(ws, "intent.selected")
    assert record.body["intent_id"] == "INT-001"
    assert record.body["session"] == "alice"
    assert record.body["via"] == "hook"
    assert len(record.body["intents_sha256"]) == 64
    pre = last(ws, "hook.pre")
    assert pre.seq == record.seq - 1  # appended together
    assert pre.body["data"]["intent_id"] == "INT-001"

    write = {"file_path": str(ws.path("src/auth/new.ts")), "content": "x\n"}
    assert passes(alice.pre("Write", write))
    assert bob.pre("Write", write).code == "INTENT_REQUIRED"  # bound to alice only

    count = kinds(ws).count("intent.selected")
    assert alice.select("INT-001").permission == "allow"  # selecting again: no new record
    assert kinds(ws).count("intent.selected") == count


@pytest.mark.parametrize(
    "command",
    [
        "ledger intent select INT-002",
        "cd {root} && ledger intent select INT-002",
        "led''ger intent select INT-002",  # the real ledger, quoted (decision 0004)
        "command ledger intent select INT-002",
    ],
)
def test_intent_select_forms(ws: Workspace, command: str) -> None:
    session = Session(ws, "forms")
    fired = session.pre("Bash", {"command": command.format(root=ws.root)})
    assert fired.permission == "allow"
    assert "<id>INT-002</id>" in fired.out["hookSpecificOutput"]["additionalContext"]
    assert passes(
        session.pre("Write", {"file_path": str(ws.path("src/billing/a.ts")), "content": "x"})
    )
    assert (
        session.pre("Write", {"file_path": str(ws.path("src/auth/a.ts")), "content": "x"}).code
        == "SCOPE_VIOLATION"
    )


@pytest.mark.parametrize(("intent_id", "word"), [("INT-404", "unknown"), ("INT-009", "done")])
def test_selecting_an_unknown_or_closed_intent_is_denied(
    ws: Workspace, intent_id: str, word: str
) -> None:
    session = Session(ws, "picky")
    fired = session.select(intent_id)
    assert blocked(fired)
    assert fired.code == "INTENT_REQUIRED"
    assert word in fired.reason
    assert "INT-001" in fired.reason
    assert "intent.selected" not in kinds(ws)
    assert (
        session.pre("Write", {"file_path": str(ws.path("legacy/a.ts")), "content": "x"}).code
        == "INTENT_REQUIRED"
    )


def test_intent_clear_unbinds(ws: Workspace) -> None:
    session = Session(ws, "clearer")
    session.select()
    write = {"file_path": str(ws.path("src/auth/a.ts")), "content": "x"}
    assert passes(session.pre("Write", write))
    cleared = session.pre("Bash", {"command": "ledger intent clear"})
    assert cleared.permission == "allow"
    assert last(ws, "intent.cleared").body["session"] == "clearer"
    assert session.pre("Write", write).code == "INTENT_REQUIRED"


# --- SCOPE_VIOLATION and the .orchestration guard --------------------------------------------


def _scope_attacks(ws: Workspace, tmp_path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    root = ws.root
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("s\n", encoding="utf-8")
    (root / "src/auth/escape").symlink_to(outside)
    (root / "src/auth/secret-link.ts").symlink_to(outside / "secret.txt")
    (root / "src/auth/other-dir").symlink_to(root / "src/other")
    return {
        "dotdot-outside": (
            "Write",
            {"file_path": f"{root}/src/auth/../../../outside/x.ts", "content": "x"},
        ),
        "dotdot-inside-out-of-scope": (
            "Write",
            {"file_path": f"{root}/src/auth/../other/x.ts", "content": "x"},
        ),
        "relative-dotdot": ("Write", {"file_path": "../outside/x.ts", "content": "x"}),
        "absolute-outside": ("Write", {"file_path": "/etc/passwd", "content": "x"}),
        "home": ("Write", {"file_path": "~/.bashrc", "content": "x"}),
        "absolute-inside-out-of-scope": (
            "Edit",
            {"file_path": f"{root}/src/other/util.ts", "old_string": "1", "new_string": "2"},
        ),
        "symlink-dir-outside": (
            "Write",
            {"file_path": f"{root}/src/auth/escape/x.ts", "content": "x"},
        ),
        "symlink-file-outside": (
            "Edit",
            {"file_path": f"{root}/src/auth/secret-link.ts", "old_string": "s", "new_string": "t"},
        ),
        "symlinked-directory-out-of-scope": (
            "Write",
            {"file_path": f"{root}/src/auth/other-dir/x.ts", "content": "x"},
        ),
        "write-orchestration": (
            "Write",
            {"file_path": f"{root}/.orchestration/agent_trace.jsonl", "content": "{}\n"},
        ),
        "write-orchestration-case": (
            "Write",
            {"file_path": f"{root}/.Orchestration/keys/k", "content": "x"},
        ),
        "edit-intents": (
            "Edit",
            {
                "file_path": f"{root}/.orchestration/active_intents.yaml",
                "old_string": "src/auth/**",
                "new_string": "**",
            },
        ),
        "multiedit-orchestration": (
            "MultiEdit",
            {
                "file_path": f"{root}/.orchestration/hooks.yaml",
                "edits": [{"old_string": "", "new_string": "policies: {scope: false}"}],
            },
        ),
        "write-root": ("Write", {"file_path": str(root), "content": "x"}),
        "redirect-into-trace": ("Bash", {"command": "echo x > .orchestration/agent_trace.jsonl"}),
        "append-into-trace": ("Bash", {"command": "echo '{}' >> .orchestration/agent_trace.jsonl"}),
        "rm-orchestration": ("Bash", {"command": "rm -rf .orchestration"}),
        "mv-orchestration": ("Bash", {"command": "mv .orchestration /tmp/gone"}),
        "cp-key-in": ("Bash", {"command": "cp key.pub .orchestration/keys/evil.pub"}),
        "bash-c-rm-src": ("Bash", {"command": 'bash -c "rm -rf src"'}),
        "cd-dotdot-rm": ("Bash", {"command": "cd .. && rm -rf x"}),
        "find-delete": ("Bash", {"command": "find . -delete"}),
        "redirect-out-of-scope": ("Bash", {"command": "echo x > src/other/util.ts"}),
        "sed-i-out-of-scope": ("Bash", {"command": "sed -i s/1/2/ src/other/util.ts"}),
        "rm-absolute-outside": ("Bash", {"command": f"rm -f {outside}/secret.txt"}),
        "patch-out-of-scope": (
            "ApplyPatch",
            {
                "patch": "*** Begin Patch\n*** Update File: src/other/util.ts\n@@\n-a\n+b\n"
                "*** End Patch\n"
            },
        ),
        "patch-orchestration": (
            "ApplyPatch",
            {"patch": "*** Begin Patch\n*** Add File: .orchestration/x\n+x\n*** End Patch\n"},
        ),
    }


ATTACKS = [
    ("dotdot-outside", "SCOPE_VIOLATION", "outside the workspace"),
    ("dotdot-inside-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("relative-dotdot", "SCOPE_VIOLATION", "outside the workspace"),
    ("absolute-outside", "SCOPE_VIOLATION", "outside the workspace"),
    ("home", "ORCHESTRATION_PROTECTED", "login shell"),  # ~/.bashrc runs in every terminal
    ("absolute-inside-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("symlink-dir-outside", "SCOPE_VIOLATION", "outside the workspace"),
    ("symlink-file-outside", "SCOPE_VIOLATION", "outside the workspace"),
    ("symlinked-directory-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("write-orchestration", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("write-orchestration-case", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("edit-intents", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("multiedit-orchestration", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("write-root", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("redirect-into-trace", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("append-into-trace", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("rm-orchestration", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("mv-orchestration", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("cp-key-in", "ORCHESTRATION_PROTECTED", ".orchestration"),
    ("bash-c-rm-src", "SCOPE_VIOLATION", "src is outside the scope"),
    ("cd-dotdot-rm", "SCOPE_VIOLATION", "outside the workspace"),
    ("find-delete", {"SCOPE_VIOLATION", "ORCHESTRATION_PROTECTED"}, ""),
    ("redirect-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("sed-i-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("rm-absolute-outside", "SCOPE_VIOLATION", "outside the workspace"),
    ("patch-out-of-scope", "SCOPE_VIOLATION", "outside the scope of INT-001"),
    ("patch-orchestration", "ORCHESTRATION_PROTECTED", ".orchestration"),
]


@pytest.mark.parametrize(("attack", "code", "words"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_scope_attacks_are_denied(
    ws: Workspace, tmp_path: Path, attack: str, code: str | set[str], words: str
) -> None:
    tool, tool_input = _scope_attacks(ws, tmp_path)[attack]
    session = Session(ws, "attacker")
    session.select("INT-001")
    before = {p: p.read_bytes() for p in ws.orchestration.glob("*") if p.is_file()}
    fired = session.pre(tool, tool_input)
    assert blocked(fired), fired.response
    assert fired.code in (code if isinstance(code, set) else {code})
    assert words in fired.reason
    assert "\n" not in fired.reason  # one line for these refusals
    assert fired.decision.error is not None
    assert fired.decision.error["meta"]["tool"] == tool
    assert (
        error_json_from_reason(fired.out["hookSpecificOutput"]["permissionDecisionReason"])
        == fired.decision.error
    )
    # Nothing in .orchestration/ other than the ledger, its disclosures (and caches) changed.
    for path, data in before.items():
        if path.name not in ("agent_trace.jsonl", "disclosures.jsonl"):
            assert path.read_bytes() == data


def test_scope_allows_in_scope_writes_through_every_spelling(ws: Workspace) -> None:
    session = Session(ws, "good")
    session.select("INT-001")
    (ws.root / "docs").mkdir()
    (ws.root / "docs/auth-link").symlink_to(ws.root / "src/auth")
    for path in (
        f"{ws.root}/src/auth/new.ts",
        f"{ws.root}/src/other/../auth/new2.ts",
        "src/auth/rel.ts",
        f"{ws.root}/docs/auth-link/via-link.ts",
    ):
        fired = session.pre("Write", {"file_path": path, "content": "x"})
        assert passes(fired), (path, fired.decision.reason)
        assert fired.decision.error is None


def test_scope_violation_error_meta(ws: Workspace) -> None:
    session = Session(ws, "meta")
    session.select("INT-001")
    tool_use_id = session.tool_use_id()
    fired = session.pre(
        "Write",
        {"file_path": str(ws.path("src/other/x.ts")), "content": "x"},
        tool_use_id=tool_use_id,
    )
    error = fired.error
    assert error["type"] == "tool_error"
    assert error["code"] == "SCOPE_VIOLATION"
    assert "src/other/x.ts" in error["message"]
    assert "ledger intent expand INT-001" in error["message"]
    assert error["meta"]["invocation_id"] == invocation_id_for("claude", "meta", tool_use_id)
    assert error["meta"]["intent_id"] == "INT-001"
    assert error["meta"]["tool"] == "Write"
    assert error["meta"]["path"] == "src/other/x.ts"
    assert error["meta"]["affected_files"] == ["src/other/x.ts"]
    record = last(ws, "hook.pre")
    assert revealed(ws, record.body)["error"] == error  # the message committed, then disclosed
    assert record.body["invocation"] == error["meta"]["invocation_id"]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (
            "ApplyPatch",
            {
                "patch": "--- a/src/other/util.ts\n+++ b/src/other/util.ts\n@@ -1 +1 @@\n"
                "-export const util = 1;\n+export const util = 2;\n"
            },
        ),
        ("Write", {"content": "x"}),
    ],
    ids=["unified-diff-patch", "write-without-path"],
)
def test_mutating_call_with_unknown_targets_is_not_silently_allowed(
    ws: Workspace, tool: str, tool_input: dict[str, Any]
) -> None:
    session = Session(ws, "vague")
    session.select("INT-001")
    fired = session.pre(tool, tool_input)
    assert fired.permission in ("deny", "ask")


@pytest.mark.parametrize(
    "command",
    [
        "ledger intent expand INT-001 'docs/**' && true",
        "env ledger intent expand INT-001 'docs/**'",
        "ledger append --kind intent.scope_expanded < grant.json",
    ],
)
def test_agent_cannot_run_ledger_scope_commands_without_a_human(
    ws: Workspace, command: str
) -> None:
    session = Session(ws, "sneaky")
    session.select("INT-001")
    fired = session.pre("Bash", {"command": command})
    assert fired.permission in ("ask", "deny")


def test_agent_cannot_self_grant_scope_end_to_end(ws: Workspace) -> None:
    session = Session(ws, "sneaky2")
    session.select("INT-001")
    command = "ledger intent expand INT-001 'docs/**' && true"
    fired = session.pre("Bash", {"command": command})
    if fired.permission not in ("ask", "deny"):  # the agent's shell runs it
        env = clean_env(ws.home)
        env["CLAUDE_CODE_SESSION_ID"] = "sneaky2"
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        subprocess.run(  # noqa: S602
            command,
            shell=True,
            cwd=ws.root,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
    docs = session.pre("Write", {"file_path": str(ws.path("docs/x.md")), "content": "x"})
    assert docs.code == "SCOPE_VIOLATION"


# --- STALE_FILE -------------------------------------------------------------------------------


def _edit(ws: Workspace, old: str = "line2 ", new: str = "second ") -> dict[str, Any]:
    return {
        "file_path": str(ws.path(AUTH_FILE)),
        "old_string": old,
        "new_string": new,
        "replace_all": False,
    }


def test_stale_file_after_another_sessions_write(ws: Workspace) -> None:
    a, b = Session(ws, "session-a"), Session(ws, "session-b")
    a.select()
    b.select()
    assert a.read(AUTH_FILE).decision.error is None
    b.read(AUTH_FILE)
    path = ws.path(AUTH_FILE)
    original = path.read_text(encoding="utf-8")
    content = original.replace("export const line7 = 7;", "export const line7 = 777;")
    write = {"file_path": str(path), "content": content}
    tool_use_id = b.tool_use_id()
    assert passes(b.pre("Write", write, tool_use_id=tool_use_id))
    path.write_text(content, encoding="utf-8")
    b.post("Write", write, write_response(path, content, original), tool_use_id=tool_use_id)

    fired = a.pre("Edit", _edit(ws))
    assert blocked(fired)
    assert fired.code == "STALE_FILE"
    reason = fired.reason
    assert reason.startswith("STALE_FILE: src/auth/middleware.ts changed on disk")
    assert "-export const line7 = 7;" in reason  # the diff preview
    assert "+export const line7 = 777;" in reason
    meta = fired.error["meta"]
    assert meta["path"] == AUTH_FILE
    assert meta["current_sha256"] == sha256_hex(path)
    assert meta["expected_sha256"] != meta["current_sha256"]

    # B wrote it itself: no false stale for B.
    assert passes(b.pre("Edit", _edit(ws)))
    # A reads again: A may edit now.
    a.read(AUTH_FILE)
    assert passes(a.pre("Edit", _edit(ws)))


def test_stale_file_after_a_human_edit(ws: Workspace) -> None:
    a = Session(ws, "session-h")
    a.select()
    a.read(AUTH_FILE)
    assert passes(a.pre("Edit", _edit(ws)))
    path = ws.path(AUTH_FILE)
    path.write_text(path.read_text(encoding="utf-8") + "// a human was here\n", encoding="utf-8")
    fired = a.pre("Edit", _edit(ws))
    assert fired.code == "STALE_FILE"
    assert "+// a human was here" in fired.reason
    assert len(fired.reason.splitlines()) <= 1 + 20  # message + at most 20 lines


def test_own_edits_update_what_the_session_has_seen(ws: Workspace) -> None:
    a = Session(ws, "session-own")
    a.select()
    a.read(AUTH_FILE)
    path = ws.path(AUTH_FILE)
    for step in range(3):
        original = path.read_text(encoding="utf-8")
        old, new = f"line{step + 1} ", f"renamed{step + 1} "
        edit = _edit(ws, old, new)
        tool_use_id = a.tool_use_id()
        fired = a.pre("Edit", edit, tool_use_id=tool_use_id)
        assert passes(fired), fired.decision.reason
        path.write_text(original.replace(old, new, 1), encoding="utf-8")
        a.post("Edit", edit, edit_response(path, old, new, original), tool_use_id=tool_use_id)


def test_observed_content_hash_mismatch_denies(ws: Workspace) -> None:
    a = Session(ws, "hasher")
    a.select()
    path = ws.path(AUTH_FILE)
    wrong = {**_edit(ws), "observed_content_hash": "sha256:" + "0" * 64}
    fired = a.pre("Edit", wrong)
    assert fired.code == "STALE_FILE"
    assert fired.error["meta"]["current_sha256"] == sha256_hex(path)
    right = {**_edit(ws), "observed_content_hash": "sha256:" + sha256_hex(path)}
    assert passes(a.pre("Edit", right))
    bare = {**_edit(ws), "observed_content_hash": sha256_hex(path)}
    assert passes(a.pre("Edit", bare))


def test_stale_check_can_be_switched_off(ws: Workspace) -> None:
    (ws.orchestration / "hooks.yaml").write_text(
        "policies:\n  stale_file: false\n", encoding="utf-8"
    )
    a = Session(ws, "unlocked")
    a.select()
    a.read(AUTH_FILE)
    ws.write(AUTH_FILE, "changed\n")
    assert passes(a.pre("Write", {"file_path": str(ws.path(AUTH_FILE)), "content": "x"}))


def test_stale_file_error_message_is_one_line(ws: Workspace) -> None:
    a, b = Session(ws, "one-a"), Session(ws, "one-b")
    a.select()
    a.read(AUTH_FILE)
    ws.write(AUTH_FILE, AUTH_TEXT.replace("line3 = 3", "line3 = 33"))
    b.select()
    fired = a.pre("Edit", _edit(ws))
    assert fired.code == "STALE_FILE"
    assert "\n" not in fired.error["message"]


# --- DESTRUCTIVE ------------------------------------------------------------------------------


def test_destructive_bash_in_scope_asks_with_a_preview(ws: Workspace) -> None:
    session = Session(ws, "destroyer")
    session.select()
    fired = session.pre("Bash", {"command": f"rm {AUTH_FILE}", "description": "remove"})
    assert fired.permission == "ask"
    assert fired.response.exit_code == 0
    reason = fired.out["hookSpecificOutput"]["permissionDecisionReason"]
    first, *preview = reason.splitlines()
    assert first.startswith("DESTRUCTIVE:")
    assert "INT-001" in first
    assert "JWT hardening" in first
    assert AUTH_FILE in first
    assert "Mutation class: INTENT_EVOLUTION" in first
    assert 0 < len(preview) <= 20  # the file has 40 lines: the preview is cut at 20
    assert preview[0] == f"--- {AUTH_FILE}"
    assert preview[1] == "-export const line1 = 1;"
    error = fired.error
    assert error["code"] == "DESTRUCTIVE_COMMAND"
    assert error["meta"]["risk"] == "DESTRUCTIVE"
    assert error["meta"]["mutation_class"] == "INTENT_EVOLUTION"
    assert error["meta"]["affected_files"] == [AUTH_FILE]
    assert error["meta"]["intent_id"] == "INT-001"
    record = last(ws, "hook.pre")
    assert record.body["decision"] == "ask"
    assert record.body["data"]["risk"] == "DESTRUCTIVE"
    assert record.body["data"]["affected_files"] == [AUTH_FILE]
    assert ws.path(AUTH_FILE).exists()  # the hook never runs the command


def test_destructive_directory_preview_counts_files(ws: Workspace) -> None:
    session = Session(ws, "dirs")
    session.select()
    fired = session.pre("Bash", {"command": "rm -rf src/auth"})
    assert fired.permission == "ask"
    assert "--- src/auth/ (directory: 2 files)" in fired.reason


@pytest.mark.parametrize(
    ("setting", "expected"), [("deny", "deny"), ("ask", "ask"), ("allow", None)]
)
def test_destructive_policy_setting(ws: Workspace, setting: str, expected: str | None) -> None:
    (ws.orchestration / "hooks.yaml").write_text(
        f"policies:\n  destructive: {setting}\n", encoding="utf-8"
    )
    session = Session(ws, "configured")
    session.select()
    fired = session.pre("Bash", {"command": "rm src/auth/old.ts"})
    assert fired.permission == expected
    if expected == "deny":
        assert fired.code == "DESTRUCTIVE_COMMAND"
        assert "src/auth/old.ts" in fired.out["hookSpecificOutput"]["permissionDecisionReason"]


def test_invalid_policies_config_is_refused(ws: Workspace) -> None:
    (ws.orchestration / "hooks.yaml").write_text(
        "policies:\n  destructive: maybe\n", encoding="utf-8"
    )
    session = Session(ws, "misconfigured")
    with pytest.raises(ConfigError, match="destructive"):
        session.pre("Bash", {"command": "ls"})


# --- scope expansion and HITL ------------------------------------------------------------------


def test_scope_expansion_asks_and_the_approval_is_recorded(ws: Workspace) -> None:
    session, other = Session(ws, "expander"), Session(ws, "billing")
    session.select("INT-001")
    other.select("INT-002")
    docs = {"file_path": str(ws.path("docs/auth.md")), "content": "# auth\n"}
    assert session.pre("Write", docs).code == "SCOPE_VIOLATION"

    command = {"command": "ledger intent expand INT-001 'docs/**' --reason 'document auth'"}
    tool_use_id = session.tool_use_id()
    asked = session.pre("Bash", command, tool_use_id=tool_use_id)
    assert asked.permission == "ask"
    assert asked.code == "SCOPE_EXPANSION_REQUESTED"
    assert "docs/**" in asked.reason
    assert "INT-001" in asked.reason
    assert asked.error["meta"]["globs"] == ["docs/**"]
    assert session.pre("Write", docs).code == "SCOPE_VIOLATION"  # not granted by asking
    assert "intent.scope_expanded" not in kinds(ws)

    # PostToolUse: the command ran, so the human approved.
    session.post(
        "Bash",
        command,
        {"stdout": "INT-001 scope: src/auth/**, docs/**\n", "stderr": "", "interrupted": False},
        tool_use_id=tool_use_id,
    )
    grant = last(ws, "intent.scope_expanded")
    assert grant.body["intent_id"] == "INT-001"
    assert grant.body["globs"] == ["docs/**"]
    assert grant.body["session"] == "expander"
    assert grant.body["tool_use_id"] == tool_use_id
    assert grant.body["reason"] == "document auth"
    assert "ask" in grant.body["approved_via"]

    assert passes(session.pre("Write", docs))
    assert other.pre("Write", docs).code == "SCOPE_VIOLATION"  # INT-002 did not get it
    fresh = Session(ws, "late-joiner")
    fresh.select("INT-001")
    assert passes(fresh.pre("Write", docs))  # the grant belongs to the intent
    count = kinds(ws).count("intent.scope_expanded")
    session.post("Bash", command, {"stdout": "", "stderr": "", "interrupted": False})
    assert kinds(ws).count("intent.scope_expanded") == count  # nothing new to grant


def test_permission_denied_after_ask_records_hitl_reject(ws: Workspace) -> None:
    session = Session(ws, "rejected")
    session.select()
    tool_use_id = session.tool_use_id()
    command = {"command": "rm src/auth/old.ts"}
    assert session.pre("Bash", command, tool_use_id=tool_use_id).permission == "ask"
    denied = session.event(
        "PermissionDenied",
        tool_name="Bash",
        tool_input=command,
        tool_use_id=tool_use_id,
        reason="The user rejected the action",
    )
    assert denied.response.exit_code == 0
    record = ws.records()[-1]
    assert record.kind == "hook.event"
    assert record.body["event"] == "PermissionDenied"
    assert record.body["tool_use_id"] == tool_use_id
    assert record.body["invocation"] == invocation_id_for("claude", "rejected", tool_use_id)
    assert record.body["data"]["hitl"] == "rejected"
    codes = [h["error"]["code"] for h in record.body["hooks"] if h["error"]]
    assert codes == ["HITL_REJECT"]
    assert record.body["event_reason"] == "The user rejected the action"

    # A denial of a call ledger never sent to a human is not a HITL reject.
    other = session.tool_use_id()
    session.pre("Bash", {"command": "ls"}, tool_use_id=other)
    session.event(
        "PermissionDenied",
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_use_id=other,
        reason="auto mode classifier",
    )
    record = ws.records()[-1]
    assert not any(h["error"] for h in record.body["hooks"])
    assert "hitl" not in record.body["data"]


# --- invalid intents file --------------------------------------------------------------------

BAD_INTENTS = """\
intents:
  - id: INT-001
    name: JWT hardening
    status: whenever
    owned_scope: ["src/auth/**"]
"""


@pytest.mark.parametrize(
    ("text", "line"),
    [(BAD_INTENTS, 4), ("intents: [\n  {id: x\n", None)],
    ids=["bad-status", "broken-yaml"],
)
def test_invalid_intents_file_fails_closed_for_writes_only(
    tmp_path: Path, text: str, line: int | None
) -> None:
    ws = make_workspace(tmp_path, intents=text)
    ws.write(AUTH_FILE, AUTH_TEXT)
    session = Session(ws, "broken")
    fired = session.pre("Write", {"file_path": str(ws.path(AUTH_FILE)), "content": "x"})
    assert blocked(fired)
    assert fired.code == "HOOK_ERROR"
    reason = fired.reason
    assert "\n" not in reason
    found = re.search(r"active_intents\.yaml:(\d+):", reason)
    assert found is not None, reason
    if line is not None:
        assert int(found.group(1)) == line
    start = session.event("SessionStart", source="startup", model="claude-sonnet-4-5")
    assert start.response.exit_code == 0
    assert "decision" not in start.out
    assert passes(session.pre("Read", {"file_path": str(ws.path(AUTH_FILE))}))
    assert ws.records()[-1].body["decision"] == "allow"


# --- PostToolUse attribution ------------------------------------------------------------------


def test_post_edit_records_patch_hash_and_added_lines(ws: Workspace) -> None:
    session = Session(ws, "editor")
    session.select()
    session.read(AUTH_FILE)
    path = ws.path(AUTH_FILE)
    original = path.read_text(encoding="utf-8")
    old = "export const line20 = 20;\n"
    new = "export const line20 = 20;\nexport const extra1 = 1;\nexport const extra2 = 2;\n"
    edit = {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": False}
    tool_use_id = session.tool_use_id()
    assert passes(session.pre("Edit", edit, tool_use_id=tool_use_id))
    path.write_text(original.replace(old, new), encoding="utf-8")
    response = edit_response(path, old, new, original)
    session.post("Edit", edit, response, tool_use_id=tool_use_id, duration_ms=41)

    record = ws.records()[-1]
    assert record.kind == "hook.post"
    body = revealed(ws, record.body)
    assert body["tool"] == "Edit"
    assert body["outcome"] == "success"
    assert body["duration_ms"] == 41
    assert body["edit"]["structured_patch"] == response["structuredPatch"]
    assert body["edit"]["old_string"] == old
    assert body["edit"]["new_string"] == new
    assert file_sha256_after(body) == sha256_hex(path)
    assert [change["path"] for change in body["attribution"]["files"]] == [AUTH_FILE]
    assert body["data"]["intent_id"] == "INT-001"
    expected = added_ranges(response["structuredPatch"])
    assert expected == [[21, 22]]
    assert written_ranges(body) == {AUTH_FILE: expected}
    lines = path.read_text(encoding="utf-8").splitlines()
    added = [lines[i - 1] for start, end in expected for i in range(start, end + 1)]
    assert added == ["export const extra1 = 1;", "export const extra2 = 2;"]
    pre = [r for r in ws.records() if r.kind == "hook.pre"][-1]
    assert pre.body["invocation"] == body["invocation"]
    assert pre.body["tool_use_id"] == body["tool_use_id"] == tool_use_id


def test_post_edit_replace_all_yields_several_ranges(ws: Workspace) -> None:
    session = Session(ws, "replacer")
    session.select()
    path = ws.write(
        "src/auth/multi.ts",
        "".join("TODO\n" if i in (3, 30) else f"keep {i}\n" for i in range(1, 41)),
    )
    original = path.read_text(encoding="utf-8")
    edit = {
        "file_path": str(path),
        "old_string": "TODO\n",
        "new_string": "done\nchecked\n",
        "replace_all": True,
    }
    tool_use_id = session.tool_use_id()
    assert passes(session.pre("Edit", edit, tool_use_id=tool_use_id))
    path.write_text(original.replace("TODO\n", "done\nchecked\n"), encoding="utf-8")
    response = edit_response(path, "TODO\n", "done\nchecked\n", original, replace_all=True)
    assert len(response["structuredPatch"]) == 2
    session.post("Edit", edit, response, tool_use_id=tool_use_id)
    ranges = written_ranges(ws.records()[-1].body)["src/auth/multi.ts"]
    assert ranges == added_ranges(response["structuredPatch"]) == [[3, 4], [31, 32]]
    lines = path.read_text(encoding="utf-8").splitlines()
    for start, end in ranges:
        assert lines[start - 1 : end] == ["done", "checked"]


def test_post_write_create_attributes_every_line(ws: Workspace) -> None:
    session = Session(ws, "creator")
    session.select()
    path = ws.path("src/auth/tokens.ts")
    content = "import jwt from 'jsonwebtoken';\n\nexport const ttl = 900;\n"
    write = {"file_path": str(path), "content": content}
    tool_use_id = session.tool_use_id()
    assert passes(session.pre("Write", write, tool_use_id=tool_use_id))
    path.write_text(content, encoding="utf-8")
    session.post("Write", write, write_response(path, content, None), tool_use_id=tool_use_id)
    body = revealed(ws, ws.records()[-1].body)
    assert body["edit"]["created"] is True
    assert body["edit"]["write_type"] == "create"
    assert written_ranges(body) == {"src/auth/tokens.ts": [[1, 3]]}
    assert file_sha256_after(body) == sha256_hex(path)


def test_post_tool_use_failure_is_recorded_as_failure(ws: Workspace) -> None:
    session = Session(ws, "failing")
    session.select()
    fired = session.event(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "npm test"},
        tool_use_id=session.tool_use_id(),
        error="Exit code 1\nFAIL src/auth",
        duration_ms=1200,
    )
    assert fired.response.exit_code == 0
    body = revealed(ws, ws.records()[-1].body)
    assert body["outcome"] == "failure"
    assert body["tool_error"].startswith("Exit code 1")
    assert body["observed"] == {}
    assert body["attribution"] is None


# --- git -------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_records_carry_git_head(ws: Workspace) -> None:
    env = clean_env(ws.home)
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=ws.root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()

    session = Session(ws, "gitless")
    session.pre("Read", {"file_path": str(ws.path(AUTH_FILE))})
    assert ws.records()[-1].body["git_head"] is None
    git("init", "-q")
    git("add", "src")
    git("commit", "-q", "-m", "initial")
    head = git("rev-parse", "HEAD")
    session.pre("Read", {"file_path": str(ws.path(AUTH_FILE))})
    assert ws.records()[-1].body["git_head"] == head
    ws.write("src/auth/more.ts", "x\n")
    git("add", "src")
    git("commit", "-q", "-m", "second")
    second = git("rev-parse", "HEAD")
    assert second != head
    session.post("Read", {"file_path": str(ws.path(AUTH_FILE))}, {})
    assert ws.records()[-1].body["git_head"] == second


# --- misc -------------------------------------------------------------------------------------


def test_every_decision_is_recorded_and_the_ledger_verifies(ws: Workspace) -> None:
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415

    session = Session(ws, "audited")
    session.pre("Write", {"file_path": str(ws.path(AUTH_FILE)), "content": "x"})
    session.select()
    session.pre("Bash", {"command": "rm src/auth/old.ts"})
    session.event("Stop", stop_hook_active=False, last_assistant_message="done")
    assert kinds(ws) == [
        "ledger.genesis",
        "governance.tripwire_armed",  # the first hook call seals the protected set
        "hook.pre",
        "hook.pre",
        "intent.selected",
        "hook.pre",
        "hook.event",
    ]
    assert [r.body.get("decision") for r in ws.records()[2:]] == [
        "deny",
        "allow",
        None,
        "ask",
        "allow",
    ]
    assert Ledger.open(ws.root, environ=ws.env).verify().ok


def test_payload_cwd_locates_the_workspace(ws: Workspace, tmp_path: Path) -> None:
    sub = ws.root / "src" / "auth"
    payload = claude_payload(
        "PreToolUse",
        ws,
        "nested",
        cwd=sub,
        tool_name="Write",
        tool_input={"file_path": str(sub / "x.ts"), "content": "x"},
        tool_use_id="toolu_nested",
    )
    assert fire(ws, payload).code == "INTENT_REQUIRED"
    assert ws.records()[-1].body["cwd"] == str(sub.relative_to(ws.root))  # kept relative
    assert tmp_path in ws.root.parents


def revealed(ws: Workspace, body: dict[str, Any]) -> Any:
    """A record body as a person reads it: commitments opened from the disclosure store."""
    return Revealer.beside(ws.orchestration / "agent_trace.jsonl").body(body)
