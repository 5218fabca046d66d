"""The body of a ``hook.*`` record: what one hook call decided and saw, clipped to fit.

Tool inputs are clipped to 2 KiB per string (with the SHA-256 of what was cut), edits to 1 MiB
per string, and a body that would still exceed the record limit drops the edit for its hash. No
floats reach a record (client payloads may carry them): they become strings.

Content is marked :class:`~ledger._evidence.disclosure.Content` (format v3): the prompt, every
tool argument that is not a path, the edit, the tool's error, the reasons and messages (which
quote commands and paths) and a shell call's command line. The append commits each to a salted
digest and keeps the value in the disclosure store. What blame, the governance fold and the
queries need stays plain: decisions, codes, ids, paths (workspace- or ``~``-relative), line
hashes of a refused write (``attempted_lines``), the attribution's hunks.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Final

from ledger._clients.registry import delivery
from ledger._evidence.disclosure import Content
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


#: Tool arguments that name a path: kept plain (relative) for blame, scope and the queries.
_PATH_KEYS: Final = frozenset(
    (
        "file_path",
        "path",
        "notebook_path",
        "filePath",
        "absolute_path",
        "target_file",
        "dir_path",
        "directory",
        "cwd",
        "old_path",
        "new_path",
    )
)
_WRITTEN_KEYS: Final = ("content", "new_string", "new_source", "edits")


def relative_path(path: str, root: str | None, cwd: str | None = None) -> str:
    """``path`` as a record keeps it: relative to the workspace (``.`` for the root itself),
    else ``~/…`` under the home folder, else as it was. A relative path is taken from ``cwd``."""
    if root is None:
        return path
    absolute = path if os.path.isabs(path) or cwd is None else os.path.join(cwd, path)  # noqa: PTH117, PTH118 -- strings in, strings out
    absolute = os.path.normpath(absolute)
    root = os.path.normpath(root)
    if absolute == root:
        return "."
    if absolute.startswith(root.rstrip("/") + "/"):
        return absolute[len(root.rstrip("/")) + 1 :]
    home = os.path.expanduser("~")  # noqa: PTH111
    if home not in ("", "/") and absolute.startswith(home.rstrip("/") + "/"):
        return "~/" + absolute[len(home.rstrip("/")) + 1 :]
    return path


def _commit_content(full: dict[str, Any], root: str | None, cwd: str | None) -> None:
    """Mark the content of a clipped body as :class:`Content`, and make its paths relative."""
    if isinstance(full.get("reason"), str):
        full["reason"] = Content(full["reason"])
    full["error"] = _committed_error(full.get("error"), root, cwd)
    hooks = full.get("hooks")
    if isinstance(hooks, list):
        full["hooks"] = [_committed_hook(h, root, cwd) for h in hooks]
    tool_input = full.get("tool_input")
    if isinstance(tool_input, dict):
        if any(key in tool_input for key in _WRITTEN_KEYS):
            # Only a write's record needs blame's line hashes: a prompt, a command or a post
            # record does not import blame's line model.
            from ledger._projections.blame import attempted_line_hashes  # noqa: PLC0415

            full["attempted_lines"] = attempted_line_hashes(tool_input)
        full["tool_input"] = {
            key: relative_path(value, root, cwd)
            if key in _PATH_KEYS and isinstance(value, str)
            else Content(value)
            for key, value in tool_input.items()
        }
    for key in ("prompt", "tool_error", "edit"):
        if full.get(key) is not None:
            full[key] = Content(full[key])
    attribution = full.get("attribution")
    if isinstance(attribution, dict) and isinstance(attribution.get("command"), str):
        full["attribution"] = {**attribution, "command": Content(attribution["command"])}
    if isinstance(full.get("cwd"), str):
        full["cwd"] = relative_path(full["cwd"], root)


def _committed_hook(hook: Any, root: str | None, cwd: str | None) -> Any:  # noqa: ANN401
    if not isinstance(hook, dict):
        return hook
    out = dict(hook)
    if isinstance(out.get("reason"), str):
        out["reason"] = Content(out["reason"])
    if "error" in out:
        out["error"] = _committed_error(out["error"], root, cwd)
    return out


def _committed_error(error: Any, root: str | None, cwd: str | None) -> Any:  # noqa: ANN401
    """An error object with its message committed (it quotes commands and paths) and the
    paths of its meta made relative; the code stays plain."""
    if not isinstance(error, dict):
        return error
    out = dict(error)
    if isinstance(out.get("message"), str):
        out["message"] = Content(out["message"])
    if isinstance(out.get("meta"), dict):
        out["meta"] = _relative_meta(out["meta"], root, cwd)
    return out


def _relative_meta(meta: dict[str, Any], root: str | None, cwd: str | None) -> dict[str, Any]:
    out = dict(meta)
    for key in ("path", "paths", "affected_files"):
        value = out.get(key)
        if isinstance(value, str):
            out[key] = relative_path(value, root, cwd)
        elif isinstance(value, list):
            out[key] = [relative_path(v, root, cwd) if isinstance(v, str) else v for v in value]
    return out


def hook_body(
    kind: str,
    decided: dict[str, Any],
    inv: Invocation,
    *,
    git_head: str | None,
    config: dict[str, Any],
    observed: dict[str, str],
    attribution: dict[str, Any] | None,
    root: str | None = None,
) -> dict[str, Any]:
    """The full body of a ``hook.pre``/``hook.post``/``hook.event`` record.

    Args:
        kind: the record kind.
        decided: what the engine decided (decision, reason, error, hooks, data).
        inv: the invocation.
        git_head: the workspace's git HEAD.
        config: SHA-256 of the governance configuration this decision used.
        observed, attribution: the post record's typed fields (format v2).
        root: the workspace root, which recorded paths are made relative to.
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
    _commit_content(full, root, inv.cwd)
    return full
