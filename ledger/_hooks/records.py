"""The body of a ``hook.*`` record: what one hook call decided and saw, clipped to fit.

Tool inputs are clipped to 2 KiB per string (with the SHA-256 of what was cut), edits to 1 MiB
per string, and a body that would still exceed the record limit drops the edit for its hash. No
floats reach a record (client payloads may carry them): they become strings.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from ledger._clients.registry import delivery
from ledger._evidence.ledger import MAX_RECORD_BYTES
from ledger._governance.engine import Invocation
from ledger._governance.policies import edit_payload

__all__ = ["hook_body"]

_INPUT_STRING_LIMIT: Final = 2048
_EDIT_STRING_LIMIT: Final = 1024 * 1024
_CLIENT_STRING_LIMIT: Final = 4096


def _clip(value: Any, limit: int) -> Any:  # noqa: ANN401 -- any JSON value
    if isinstance(value, str) and len(value) > limit:
        digest = hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()
        return f"{value[:limit]}…[+{len(value) - limit} chars, sha256 {digest}]"
    if isinstance(value, dict):
        return {str(k): _clip(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v, limit) for v in value]
    if isinstance(value, float):  # records hold no floats (client payloads may)
        return str(value)
    return value


def hook_body(
    kind: str,
    decided: dict[str, Any],
    inv: Invocation,
    *,
    git_head: str | None,
    config: dict[str, Any],
    observed: dict[str, str],
    attribution: dict[str, Any] | None,
) -> dict[str, Any]:
    """The full body of a ``hook.pre``/``hook.post``/``hook.event`` record.

    Args:
        kind: the record kind.
        decided: what the engine decided (decision, reason, error, hooks, data).
        inv: the invocation.
        git_head: the workspace's git HEAD.
        config: SHA-256 of the governance configuration this decision used.
        observed, attribution: the post record's typed fields (format v2).
    """
    full: dict[str, Any] = {
        "invocation": inv.id,
        "event": inv.event,
        "tool": inv.tool_name,
        "tool_use_id": inv.tool_use_id,
        "git_head": git_head,
        "cwd": inv.cwd,
        "config": config,
        **decided,
    }
    if inv.client_event:
        full["client_event"] = inv.client_event
    phase = "pre" if kind == "hook.pre" else "post" if kind == "hook.post" else "other"
    delivered = delivery(inv.client, inv.client_event, phase, decided["decision"])
    if delivered is not None:
        full["delivered"] = delivered
    if kind == "hook.pre":
        full["tool_input"] = _clip(inv.tool_input, _INPUT_STRING_LIMIT)
    elif kind == "hook.post":
        full["outcome"] = inv.outcome
        full["duration_ms"] = inv.duration_ms
        full["tool_error"] = inv.error
        full["edit"] = edit_payload(inv)  # clipped with the whole body below
        full["observed"] = dict(observed)
        full["attribution"] = attribution
    else:
        # The client's own fields (SessionEnd's reason is "event_reason": "reason" is ours).
        told = {
            "prompt": inv.prompt,
            "source": inv.source,
            "event_reason": inv.event_reason,
            "agent_type": inv.agent_type,
        }
        for key, value in told.items():
            if value is not None:
                full[key] = _clip(value, _CLIENT_STRING_LIMIT)
    # One pass over the whole body: edit strings to 1 MiB, and no floats anywhere.
    full = _clip(full, _EDIT_STRING_LIMIT)
    if len(json.dumps(full)) > MAX_RECORD_BYTES - 4096:
        full["edit"] = {
            "omitted": "edit too large to record",
            "sha256": hashlib.sha256(json.dumps(full.get("edit")).encode()).hexdigest(),
        }
    return full
