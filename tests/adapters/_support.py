"""Helpers for the adapter tests: the payload fixtures and how to read a client's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledger._clients import HookEvent, HookResponse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "payloads"
FIXTURE_FILES = sorted(FIXTURES.glob("*/*.json"))


def fixture_id(path: Path) -> str:
    """``<client>/<event>-<shape>`` for a fixture file."""
    return f"{path.parent.name}/{path.stem}"


#: Clients whose payloads do not name their event: the installed command passes it
#: (``ledger hook copilot --event preToolUse``), so a fixture's file name does.
NAMELESS_EVENTS = frozenset({"copilot", "antigravity"})


def fixture_event(path: Path) -> str | None:
    """The event a fixture is for, when its payload does not say (else ``None``)."""
    return path.stem.split("-")[0] if path.parent.name in NAMELESS_EVENTS else None


#: Clients that read only the exit code (and stderr): ledger prints nothing on stdout.
EXIT_CODE_CLIENTS = frozenset({"windsurf"})


def output(response: HookResponse) -> dict[str, Any]:
    """The JSON object a response writes on stdout (asserting it is one); ``{}`` for no output
    (what exit-code clients get)."""
    if response.stdout == "":
        return {}
    value = json.loads(response.stdout)
    assert isinstance(value, dict), response.stdout
    return value


def blocks(event: HookEvent, response: HookResponse) -> bool:
    """Whether the client would stop the action, read the way the client reads the answer."""
    if response.exit_code == 2:
        return True
    out = output(response)
    if event.client in ("claude", "codex", "vscode"):
        specific = out.get("hookSpecificOutput", {})
        if specific.get("permissionDecision") == "deny":
            return True
        if event.client == "vscode":
            # VS Code reads a stop's block inside hookSpecificOutput, a subagent's at the top
            # level, and nothing of the kind at UserPromptSubmit (microsoft/vscode-docs).
            if event.client_event == "Stop":
                return bool(specific.get("decision") == "block")
            return event.client_event == "SubagentStop" and out.get("decision") == "block"
        verdict = specific.get("decision")
        if isinstance(verdict, dict) and verdict.get("behavior") == "deny":
            return True
        return out.get("decision") == "block" or out.get("continue") is False
    if event.client == "cursor":
        return out.get("permission") == "deny" or out.get("continue") is False
    if event.client == "gemini":
        return out.get("decision") in ("deny", "block") or out.get("continue") is False
    if event.client == "copilot":
        return out.get("permissionDecision") == "deny" or out.get("decision") == "block"
    if event.client in EXIT_CODE_CLIENTS:
        return False  # exit 0: nothing else blocks
    if event.client == "antigravity":
        # `{}` at PreToolUse is a deny (akitaonrails/ai-memory#54).
        return out.get("decision") == "deny" or (event.client_event == "PreToolUse" and not out)
    assert event.client == "cline"
    return out["cancel"] is True


def asks(event: HookEvent, response: HookResponse) -> bool:
    """Whether the client would ask a human (the native ``ask``)."""
    out = output(response)
    if event.client in ("claude", "codex", "vscode"):
        permission: object = out.get("hookSpecificOutput", {}).get("permissionDecision")
        return permission == "ask"
    if event.client == "cursor":
        return out.get("permission") == "ask"
    if event.client in ("copilot", "antigravity"):
        return out.get("permissionDecision", out.get("decision")) == "ask"
    return False


def agent_facing_text(event: HookEvent, response: HookResponse) -> str:
    """All the text a client would show to the agent or user for this answer."""
    if response.exit_code == 2:
        return response.stderr
    return json.dumps(output(response), ensure_ascii=False)
