"""Realistic governed-session records for the query/export benchmark (not a benchmark itself).

``hook.pre`` / ``hook.post`` / ``intent.selected`` bodies shaped like the ones the hook service
writes (``ledger/_evidence/models.py``: HookPreBody, HookPostBody), so the ``decisions``,
``tool_calls`` and ``file_ranges`` views have real work to do.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

_TOOLS = ("Edit", "Edit", "Write", "Bash", "Read", "MultiEdit")
_DIRS = (
    "src/acme/api",
    "src/acme/models",
    "src/acme/billing",
    "tests/unit",
    "src/acme/auth",
    "docs",
    "migrations/versions",
)
_MODULES = ("user", "invoice", "session_store", "routes", "schema", "tasks", "payments")
_CODES = (
    "SCOPE_VIOLATION",
    "INTENT_REQUIRED",
    "STALE_FILE",
    "DESTRUCTIVE_COMMAND",
    "ORCHESTRATION_PROTECTED",
)
_MODELS = ("claude-sonnet-4-5", "claude-opus-4-1", "gpt-5-codex", "gemini-2.5-pro")
_CLIENTS = ("claude-code", "codex", "gemini-cli", "cursor")


def tool_call(
    rng: random.Random, turn: int, session: str, intent: str
) -> list[tuple[str, dict[str, Any]]]:
    """The (kind, body) records of one tool call: a pre, and a post when it was not denied."""
    tool = rng.choice(_TOOLS)
    path = f"{rng.choice(_DIRS)}/{rng.choice(_MODULES)}.py"
    invocation = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    tool_use_id = f"toolu_{rng.getrandbits(64):016x}"
    roll = rng.random()
    decision = "allow" if roll < 0.85 else ("deny" if roll < 0.97 else "ask")
    error = None
    if decision != "allow":
        code = "DESTRUCTIVE_COMMAND" if decision == "ask" else rng.choice(_CODES)
        error = {
            "code": code,
            "message": f"{code}: {path}",
            "type": "tool_error",
            "meta": {"invocation_id": invocation, "tool": tool},
        }
    common = {
        "client_event": None,
        "cwd": "/home/dev/acme",
        "event": "PreToolUse",
        "git_head": "4f1c2a9e0b7d",
        "invocation": invocation,
        "tool": tool,
        "tool_use_id": tool_use_id,
        "hooks": [
            {
                "decision": decision if decision != "allow" else None,
                "duration_ms": rng.randint(0, 9),
                "error": error,
                "name": name,
                "reason": None,
            }
            for name in ("owned-scope", "stale-file")
        ],
    }
    tool_input = (
        {"command": f"pytest -q {path}"}
        if tool == "Bash"
        else {"file_path": path, "old_string": "x = 1", "new_string": f"x = {turn}"}
    )
    pre = {
        **common,
        "decision": decision,
        "error": error,
        "reason": None if error is None else error["message"],
        "data": {"intent_id": intent, "paths": [path]},
        "tool_input": tool_input,
    }
    out: list[tuple[str, dict[str, Any]]] = [("hook.pre", pre)]
    if decision == "deny":
        return out
    observed: dict[str, str] = {}
    attribution = None
    if tool in ("Edit", "Write", "MultiEdit"):  # format 2: typed attribution (models.py)
        digest = f"{rng.getrandbits(256):064x}"
        start = rng.randint(1, 400)
        observed = {path: digest}
        attribution = {
            "source": "structured_patch",
            "files": [
                {
                    "path": path,
                    "change": "modified",
                    "previous_path": None,
                    "sha256": digest,
                    "mutation_class": None,
                    "exact": False,
                    "hunks": [
                        {
                            "old_start": None,
                            "old_lines": None,
                            "new_start": start,
                            "new_lines": rng.randint(1, 30),
                            "content_hash": f"sha256:{rng.getrandbits(256):064x}",
                        }
                    ],
                }
            ],
        }
    post = {
        **common,
        "event": "PostToolUse",
        "decision": "allow",
        "error": None,
        "reason": None,
        "data": {"intent_id": intent},
        "observed": observed,
        "attribution": attribution,
        "outcome": "success",
        "duration_ms": rng.randint(5, 4000),
        "tool_error": None,
        "edit": None if tool == "Bash" else {"new_string": f"x = {turn}", "old_string": "x = 1"},
    }
    out.append(("hook.post", post))
    return out


def session_records(
    rng: random.Random, count: int
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """About ``count`` (kind, body, actor) triples: sessions selecting intents and calling tools."""
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    while len(out) < count:
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        actor = {
            "agent": None,
            "client": rng.choice(_CLIENTS),
            "model": rng.choice(_MODELS),
            "session": session,
        }
        intent = f"INT-{rng.randint(1, 60):03d}"
        out.append(
            (
                "intent.selected",
                {"intent_id": intent, "intents_sha256": None, "session": session, "via": "hook"},
                actor,
            )
        )
        for turn in range(rng.randint(10, 80)):
            out.extend((kind, body, actor) for kind, body in tool_call(rng, turn, session, intent))
    return out[:count]
