"""render_response and fail_closed_response: each client's output format, exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._clients import (
    CLIENTS,
    HOOK_ERROR_CODES,
    HookDecision,
    HookEvent,
    fail_closed_response,
    hook_error,
    parse_payload,
    render_response,
)
from ledger._errors import InputError

from ._support import EXIT_CODE_CLIENTS, FIXTURES, blocks, output

CLAUDE_LIMIT = 10_000
CLINE_LIMIT = 50 * 1024


def load(rel: str) -> HookEvent:
    client = rel.split("/", 1)[0]
    return parse_payload(client, (FIXTURES / f"{rel}.json").read_bytes())


def render(rel: str, decision: HookDecision, **kwargs: Any) -> dict[str, Any]:
    event = load(rel)
    response = render_response(event.client, event, decision, **kwargs)
    assert response.exit_code == 0
    return output(response)


SCOPE_ERROR = hook_error(
    HOOK_ERROR_CODES.SCOPE_VIOLATION,
    "src/db/x.ts is outside INT-001's owned_scope",
    meta={"intent_id": "INT-001", "path": "src/db/x.ts"},
)
DENY = HookDecision(permission="deny", reason="Outside INT-001's scope.", error=SCOPE_ERROR)


# --- the standardized error ------------------------------------------------------------------


def test_error_codes_are_their_own_names():
    assert list(HOOK_ERROR_CODES) == list(HOOK_ERROR_CODES._fields)
    assert len(HOOK_ERROR_CODES) == 10
    assert "SCOPE_EXPANSION_REQUESTED" in HOOK_ERROR_CODES
    assert "TAMPER" in HOOK_ERROR_CODES  # the tripwire's denial (ledger/_hooks/tripwire.py)
    # what a configured hook's exit 2 produces is a code hook_error itself accepts
    assert hook_error("HOOK_BLOCKED", "no", error_type="hook_block")["type"] == "hook_block"
    assert HOOK_ERROR_CODES.STALE_FILE == "STALE_FILE"


def test_hook_error_shape_and_unknown_code():
    assert SCOPE_ERROR == {
        "type": "tool_error",
        "code": "SCOPE_VIOLATION",
        "message": "src/db/x.ts is outside INT-001's owned_scope",
        "meta": {"intent_id": "INT-001", "path": "src/db/x.ts"},
    }
    assert hook_error("HITL_REJECT", "no")["meta"] == {}
    with pytest.raises(ValueError, match="unknown hook error code"):
        hook_error("NOPE", "x")


# --- Claude Code and Codex -------------------------------------------------------------------


@pytest.mark.parametrize("rel", ["claude/PreToolUse-write", "codex/PreToolUse-bash"])
def test_claude_pretooluse_deny_is_json_with_the_error(rel: str):
    out = render(rel, DENY)
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Outside INT-001's scope.\n"
            + json.dumps(SCOPE_ERROR, ensure_ascii=False, separators=(",", ":")),
        }
    }
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert json.loads(reason.split("\n", 1)[1])["code"] == "SCOPE_VIOLATION"


def test_claude_allow_with_updated_input_and_context():
    decision = HookDecision(
        permission="allow",
        reason="in scope",
        updated_input={"command": "npm ci"},
        additional_context="<intent_context>...</intent_context>",
    )
    assert render("claude/PreToolUse-bash", decision) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "in scope",
            "updatedInput": {"command": "npm ci"},
            "additionalContext": "<intent_context>...</intent_context>",
        }
    }


def test_claude_no_opinion_is_an_empty_object():
    assert render("claude/PreToolUse-bash", HookDecision()) == {}


def test_claude_deny_via_exit_code():
    event = load("claude/PreToolUse-bash")
    response = render_response("claude", event, DENY, deny_via_exit_code=True)
    assert response.exit_code == 2
    assert response.stdout == ""
    assert response.stderr.startswith("Outside INT-001's scope.\n{")
    # allow never uses the exit code
    allow = render_response(
        "claude", event, HookDecision(permission="allow"), deny_via_exit_code=True
    )
    assert allow.exit_code == 0


@pytest.mark.parametrize(
    "rel",
    [
        "claude/Stop-basic",
        "claude/SubagentStop-basic",
        "claude/UserPromptSubmit-prompt",
        "claude/PostToolUse-edit",
        "claude/PostToolUseFailure-bash",
        "claude/PreCompact-auto",
        "codex/Stop-basic",
    ],
)
def test_claude_block_uses_top_level_decision(rel: str):
    out = render(rel, HookDecision(block=True, reason="Acceptance criteria not met."))
    assert out["decision"] == "block"
    assert out["reason"] == "Acceptance criteria not met."
    assert "hookSpecificOutput" not in out


def test_claude_block_via_exit_code_on_stop():
    event = load("claude/Stop-basic")
    response = render_response(
        "claude", event, HookDecision(block=True, reason="r"), deny_via_exit_code=True
    )
    assert (response.exit_code, response.stdout, response.stderr) == (2, "", "r")


@pytest.mark.parametrize(
    "rel", ["claude/SessionStart-startup", "claude/Notification-permission-prompt"]
)
def test_claude_cannot_block_non_blockable_events(rel: str):
    out = render(rel, HookDecision(block=True, permission="deny", reason="r"))
    assert "decision" not in out
    assert "permissionDecision" not in json.dumps(out)


@pytest.mark.parametrize(
    ("rel", "has_context"),
    [
        ("claude/SessionStart-startup", True),
        ("claude/UserPromptSubmit-prompt", True),
        ("claude/PostToolUse-bash", True),
        ("claude/SubagentStart-basic", True),
        ("claude/SessionEnd-logout", False),
        ("claude/Notification-permission-prompt", False),
    ],
)
def test_claude_additional_context_only_where_supported(rel: str, has_context: bool):
    out = render(rel, HookDecision(additional_context="ctx", system_message="note"))
    assert out["systemMessage"] == "note"
    if has_context:
        event = load(rel)
        assert out["hookSpecificOutput"] == {
            "hookEventName": event.client_event,
            "additionalContext": "ctx",
        }
    else:
        assert "hookSpecificOutput" not in out


def test_claude_permission_request():
    rel = "claude/PermissionRequest-bash"
    allow = render(
        rel, HookDecision(permission="allow", updated_input={"command": "rm -rf ./dist"})
    )
    assert allow["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": {"command": "rm -rf ./dist"}},
    }
    deny = render(rel, HookDecision(permission="deny", reason="no"))
    assert deny["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "no"}
    assert render(rel, HookDecision(permission="ask", reason="human")) == {}


def test_claude_strings_are_capped_at_10000_characters():
    long = "x" * 25_000
    out = render(
        "claude/PreToolUse-bash",
        HookDecision(permission="deny", reason=long, additional_context=long, system_message=long),
    )
    specific = out["hookSpecificOutput"]
    for text in (
        specific["permissionDecisionReason"],
        specific["additionalContext"],
        out["systemMessage"],
    ):
        assert len(text) == CLAUDE_LIMIT
        assert text.endswith("[... truncated by ledger]")
    short = render(
        "claude/PreToolUse-bash", HookDecision(permission="deny", reason="y" * CLAUDE_LIMIT)
    )
    assert short["hookSpecificOutput"]["permissionDecisionReason"] == "y" * CLAUDE_LIMIT


def test_codex_updated_input_maps_patch_back_to_command():
    out = render(
        "codex/PreToolUse-apply-patch",
        HookDecision(
            permission="allow", updated_input={"patch": "*** Begin Patch\n*** End Patch\n"}
        ),
    )
    assert out["hookSpecificOutput"]["updatedInput"] == {
        "command": "*** Begin Patch\n*** End Patch\n"
    }


# --- Cursor ----------------------------------------------------------------------------------


def test_cursor_before_shell_deny_and_ask():
    rel = "cursor/beforeShellExecution-basic"
    deny = render(rel, DENY)
    assert deny["permission"] == "deny"
    assert deny["user_message"] == "Outside INT-001's scope."
    assert json.loads(deny["agent_message"].split("\n", 1)[1]) == SCOPE_ERROR
    ask = render(rel, HookDecision(permission="ask", reason="confirm push"))
    assert ask == {
        "permission": "ask",
        "user_message": "confirm push",
        "agent_message": "confirm push",
    }
    assert render(rel, HookDecision(permission="allow", reason="fine")) == {"permission": "allow"}


@pytest.mark.parametrize(
    "rel",
    [
        "cursor/beforeReadFile-attachments",
        "cursor/preToolUse-shell",
        "cursor/subagentStart-basic",
        "cursor/beforeTabFileRead-basic",
    ],
)
def test_cursor_ask_becomes_deny_where_there_is_no_ask(rel: str):
    out = render(rel, HookDecision(permission="ask", reason="Secrets file."))
    assert out["permission"] == "deny"
    assert out["user_message"].startswith("Secrets file. (A human must approve")


def test_cursor_before_read_file_has_no_agent_message():
    out = render("cursor/beforeReadFile-attachments", DENY)
    assert set(out) == {"permission", "user_message"}


def test_cursor_pretooluse_updated_input_uses_cursor_names():
    out = render(
        "cursor/preToolUse-shell",
        HookDecision(permission="allow", updated_input={"command": "npm ci"}),
    )
    assert out == {"permission": "allow", "updated_input": {"command": "npm ci"}}


def test_cursor_before_submit_prompt():
    rel = "cursor/beforeSubmitPrompt-attachments"
    assert render(rel, HookDecision(block=True, reason="Select an intent first.")) == {
        "continue": False,
        "user_message": "Select an intent first.",
    }
    assert render(rel, HookDecision()) == {"continue": True}


@pytest.mark.parametrize(
    ("rel", "has_context"),
    [
        ("cursor/postToolUse-shell", True),
        ("cursor/sessionStart-basic", True),
        ("cursor/afterFileEdit-single", False),
        ("cursor/sessionEnd-basic", False),
    ],
)
def test_cursor_additional_context(rel: str, has_context: bool):
    out = render(rel, HookDecision(additional_context="ctx"))
    assert out == ({"additional_context": "ctx"} if has_context else {})


def test_cursor_blocked_stop_becomes_a_followup_message():
    out = render("cursor/stop-completed", HookDecision(block=True, reason="Run the tests first."))
    assert out == {"followup_message": "Run the tests first."}


def test_cursor_deny_via_exit_code():
    event = load("cursor/beforeMCPExecution-url")
    response = render_response("cursor", event, DENY, deny_via_exit_code=True)
    assert response.exit_code == 2
    assert response.stderr.startswith("Outside INT-001's scope.")


# --- Gemini CLI ------------------------------------------------------------------------------


def test_gemini_before_tool_deny_and_ask():
    rel = "gemini/BeforeTool-write-file"
    deny = render(rel, DENY)
    assert deny["decision"] == "deny"
    assert deny["reason"].startswith("Outside INT-001's scope.\n")
    ask = render(rel, HookDecision(permission="ask", reason="Wide change."))
    assert ask["decision"] == "deny"
    assert "A human must approve" in ask["reason"]
    assert render(rel, HookDecision(permission="allow")) == {"decision": "allow"}


def test_gemini_updated_input_and_context():
    out = render(
        "gemini/BeforeTool-read-file",
        HookDecision(permission="allow", updated_input={"file_path": "/home/dev/app/README.md"}),
    )
    # the payload said absolute_path, so the override must too
    assert out["hookSpecificOutput"]["tool_input"] == {"absolute_path": "/home/dev/app/README.md"}
    start = render(
        "gemini/SessionStart-startup", HookDecision(additional_context="ctx", system_message="hi")
    )
    assert start == {
        "systemMessage": "hi",
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"},
    }


@pytest.mark.parametrize(
    "rel",
    ["gemini/AfterAgent-response", "gemini/BeforeAgent-prompt", "gemini/AfterTool-object-response"],
)
def test_gemini_block_is_decision_deny(rel: str):
    out = render(rel, HookDecision(block=True, reason="r"))
    assert (out["decision"], out["reason"]) == ("deny", "r")


def test_gemini_advisory_events_take_no_decision():
    out = render(
        "gemini/SessionEnd-exit", HookDecision(block=True, reason="r", system_message="bye")
    )
    assert out == {"systemMessage": "bye"}


# --- Cline -----------------------------------------------------------------------------------


def test_cline_deny_ask_allow():
    rel = "cline/PreToolUse-write-to-file"
    deny = render(rel, DENY)
    assert deny["cancel"] is True
    assert deny["errorMessage"].startswith("Outside INT-001's scope.\n{")
    ask = render(rel, HookDecision(permission="ask", reason="Wide change."))
    assert ask["cancel"] is True
    assert "A human must approve" in ask["errorMessage"]
    assert render(rel, HookDecision(permission="allow")) == {"cancel": False}


def test_cline_context_modification_is_capped_at_50_kb():
    out = render("cline/TaskStart-basic", HookDecision(additional_context="é" * 60_000))
    context = out["contextModification"]
    assert len(context.encode("utf-8")) <= CLINE_LIMIT
    assert context.endswith("[... truncated by ledger]")
    assert out["cancel"] is False


def test_cline_ask_outside_a_tool_call_does_not_cancel():
    assert render("cline/UserPromptSubmit-prompt", HookDecision(permission="ask")) == {
        "cancel": False
    }
    assert render("cline/UserPromptSubmit-prompt", HookDecision(block=True))["cancel"] is True


# --- argument checking -----------------------------------------------------------------------


def test_render_rejects_unknown_client_and_permission():
    event = load("claude/PreToolUse-bash")
    with pytest.raises(InputError):
        render_response("zed", event, HookDecision())
    with pytest.raises(ValueError, match="permission"):
        render_response("claude", event, HookDecision(permission="maybe"))  # type: ignore[arg-type]


_decisions = st.builds(
    HookDecision,
    permission=st.sampled_from([None, "allow", "deny", "ask"]),
    reason=st.none() | st.text(max_size=12_000),
    additional_context=st.none() | st.text(max_size=12_000),
    updated_input=st.none() | st.just({"command": "ls"}),
    block=st.booleans(),
    error=st.none() | st.just(SCOPE_ERROR),
    system_message=st.none() | st.text(max_size=50),
)


@settings(max_examples=60, deadline=None)
@given(decision=_decisions, rel=st.sampled_from([
    "claude/PreToolUse-bash", "claude/Stop-basic", "cursor/preToolUse-shell",
    "cursor/beforeSubmitPrompt-attachments", "gemini/BeforeTool-shell",
    "cline/PreToolUse-read-file", "codex/PostToolUse-apply-patch",
]))  # fmt: skip
def test_any_decision_renders_valid_bounded_json(decision: HookDecision, rel: str):
    event = load(rel)
    response = render_response(event.client, event, decision)
    assert response.exit_code == 0
    out = output(response)
    if event.client == "claude":
        for text in _strings(out):
            assert len(text) <= CLAUDE_LIMIT
    if event.client == "cline" and "contextModification" in out:
        assert len(out["contextModification"].encode("utf-8", "surrogatepass")) <= CLINE_LIMIT
    if event.phase == "pre" and (decision.block or decision.permission == "deny"):
        assert blocks(event, response)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


# --- fail_closed_response --------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "claude/PreToolUse-edit",
        "codex/PreToolUse-apply-patch",
        "cursor/beforeShellExecution-basic",
        "cursor/preToolUse-shell",
        "cursor/beforeReadFile-attachments",
        "gemini/BeforeTool-write-file",
        "cline/PreToolUse-write-to-file",
    ],
)
def test_fail_closed_denies_a_parsed_pre_event(rel: str):
    event = load(rel)
    response = fail_closed_response(event.client, event, "KeyError: 'intents'\n  at line 3")
    assert response.exit_code == 0
    assert blocks(event, response)
    text = response.stdout
    assert "KeyError: 'intents' at line 3" in text  # one line
    if rel != "cursor/beforeReadFile-attachments":  # the only answer without an agent channel
        assert '"code":"HOOK_ERROR"' in text.replace("\\", "")
    assert response.stderr == "ledger: hook error (tool call denied): KeyError: 'intents' at line 3"


@pytest.mark.parametrize(
    "rel",
    [
        "claude/PostToolUse-edit",
        "claude/Stop-basic",
        "cursor/beforeSubmitPrompt-attachments",
        "cursor/afterFileEdit-single",
        "gemini/AfterAgent-response",
        "cline/PostToolUse-success",
        "cline/TaskStart-basic",
    ],
)
def test_fail_closed_never_blocks_other_events(rel: str):
    event = load(rel)
    response = fail_closed_response(event.client, event, "boom")
    assert response.exit_code == 0
    assert not blocks(event, response)
    assert "not blocking" in response.stderr


def test_fail_closed_blocks_claudes_prompt_the_resident_transports_guard():
    """Claude Code's prompt hook is a command whichever `ledger` server the session started
    (decision 0021): when ledger cannot decide it, the prompt does not go through."""
    event = load("claude/UserPromptSubmit-prompt")
    parsed = fail_closed_response("claude", event, "ConfigError: hooks.yaml: bad")
    garbage = fail_closed_response(
        "claude", None, "not JSON", raw=b"\x00 {", expected_event="UserPromptSubmit"
    )
    recovered = fail_closed_response(
        "claude", None, "truncated", raw=b'{"hook_event_name": "UserPromptSubmit", "prompt": "'
    )
    for response in (parsed, garbage, recovered):
        assert output(response)["decision"] == "block"
        assert "prompt was blocked (fail-closed)" in output(response)["reason"]
        assert response.stderr.startswith("ledger: hook error (prompt blocked): ")


@pytest.mark.parametrize("client", CLIENTS)
def test_fail_closed_recovers_a_pre_event_from_unparseable_bytes(client: str):
    key = "hookName" if client == "cline" else "hook_event_name"
    pre = {"claude": "PreToolUse", "codex": "PreToolUse", "cursor": "beforeShellExecution",
           "gemini": "BeforeTool", "cline": "PreToolUse",
           "copilot": "preToolUse", "antigravity": "PreToolUse",
           "windsurf": "pre_run_command", "vscode": "PreToolUse"}[client]  # fmt: skip
    raw = f'{{"{key}": "{pre}", "tool_input": {{"command": "rm -rf'.encode()
    response = fail_closed_response(client, None, "payload is not valid JSON", raw=raw)
    tools: dict[str, dict[str, object]] = {
        "cline": {"preToolUse": {"toolName": "execute_command"}},
        "cursor": {"command": "ls"},
        "copilot": {"toolName": "bash"},
        "antigravity": {"toolCall": {"name": "run_command"}},
        "windsurf": {"agent_action_name": pre, "tool_info": {"command_line": "ls"}},
    }
    tool = tools.get(client, {"tool_name": "Bash"})
    stub = parse_payload(client, json.dumps({key: pre, **tool}).encode())
    assert blocks(stub, response)
    if client in EXIT_CODE_CLIENTS:  # the reason goes to stderr, where the client shows it
        assert "hook error (tool call denied)" in response.stderr
    else:
        assert "HOOK_ERROR" in response.stdout


def test_fail_closed_pre_token_anywhere_counts_as_pre():
    raw = b'\xff\xfe {"hookName" "PreToolUse" broken'  # no usable key, but a pre-event token
    response = fail_closed_response("claude", None, "not UTF-8", raw=raw)
    assert output(response)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_fail_closed_recovered_post_event_does_not_block():
    raw = b'{"hook_event_name": "PostToolUse", "tool_response": {"stdout": "PreToolUse'
    response = fail_closed_response("claude", None, "truncated", raw=raw)
    assert output(response) == {}
    assert response.exit_code == 0


def test_fail_closed_expected_event_decides_when_nothing_is_recoverable():
    garbage = b"\x00\x01 not json at all"
    claude = fail_closed_response("claude", None, "x", raw=garbage)
    assert (claude.exit_code, output(claude)) == (0, {})
    hinted = fail_closed_response("claude", None, "x", raw=garbage, expected_event="PreToolUse")
    assert output(hinted)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # a neutral hint works for Cursor too, and answers in Cursor's own shape
    cursor = fail_closed_response("cursor", None, "x", raw=garbage, expected_event="PreToolUse")
    assert output(cursor)["permission"] == "deny"
    native = fail_closed_response(
        "cursor", None, "x", raw=garbage, expected_event="beforeShellExecution"
    )
    assert output(native)["permission"] == "deny"
    assert "agent_message" in output(native)
    # a recovered post event loses to a pre hint: fail closed
    post = b'{"hook_event_name": "PostToolUse", "x": '
    both = fail_closed_response("claude", None, "x", raw=post, expected_event="PreToolUse")
    assert output(both)["hookSpecificOutput"]["permissionDecision"] == "deny"
    prompt = fail_closed_response(
        "cursor", None, "x", raw=garbage, expected_event="beforeSubmitPrompt"
    )
    assert output(prompt) == {"continue": True}


def test_fail_closed_cline_without_evidence_blocks():
    response = fail_closed_response("cline", None, "x", raw=b"garbage")
    assert output(response)["cancel"] is True
    assert fail_closed_response("cline", None, "x", raw=None).stdout == response.stdout


def test_fail_closed_unknown_client_and_odd_messages():
    assert fail_closed_response("zed", None, "x", expected_event="PreToolUse").exit_code == 2
    assert fail_closed_response("zed", None, "x").exit_code == 1
    event = load("claude/PreToolUse-bash")
    response = fail_closed_response("claude", event, "\n\n")
    assert "internal error" in response.stderr
    long = fail_closed_response("claude", event, "y" * 5000)
    assert len(long.stderr) < 600


def test_codex_ask_becomes_deny_because_codex_runs_asked_commands():
    # Codex 0.169.0 runs a command whose PreToolUse hook answered "ask" (tests/conformance).
    out = render("codex/PreToolUse-bash", HookDecision(permission="ask", reason="rm removes files"))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].startswith("rm removes files")
    assert "A human must approve" in specific["permissionDecisionReason"]
    # Claude Code enforces ask, so it keeps it.
    claude = render("claude/PreToolUse-bash", HookDecision(permission="ask", reason="x"))
    assert claude["hookSpecificOutput"]["permissionDecision"] == "ask"
