"""Agent Trace v0.1.0 records (``cursor/agent-trace``, still an RFC at 0.1.0; findings §2).

One trace record per ``hook.post`` record that attributed lines: each attributed file becomes a
``files[]`` entry with one conversation (the session), contributor ``ai`` with the model, ranges
with a ``sha256:`` content hash (recorded by format-2 hooks; for format 1 rebuilt from the
recorded edit where it can be: same definition, the written lines each ending in LF), and
``related`` links for the session and the intent. Ledger's own ids (seq, record hash, the
pre-hook decision) go under ``metadata["dev.ledger"]``. Deletions and integrity cannot be
expressed in the format (RFC #11); they stay in ledger's records.

Generation is deterministic (ids are UUIDv5 of ledger id and seq; keys sorted), so
``verify-export`` regenerates the file from the raw segment and compares it byte for byte.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import orjson

__all__ = ["AGENT_TRACE_VERSION", "range_text", "trace_lines", "trace_record"]

AGENT_TRACE_VERSION: Final = "0.1.0"
METADATA_KEY: Final = "dev.ledger"
_NAMESPACE: Final = uuid.UUID("5b0c3a57-1e3d-4c1a-9f6e-6c6564676572")
_MODEL_ID_MAX: Final = 250


#: models.dev provider prefixes for the model names clients report (spec §6.7: provider/model).
_PROVIDERS: Final = (
    ("claude-", "anthropic"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("codex-", "openai"),
    ("gemini-", "google"),
    ("grok-", "xai"),
)


def model_id(model: str) -> str:
    """``provider/model`` (models.dev) when the provider is known; the name as given otherwise."""
    if "/" not in model:
        for prefix, provider in _PROVIDERS:
            if model.startswith(prefix):
                model = f"{provider}/{model}"
                break
    return model[:_MODEL_ID_MAX]


def _lines_of(text: str) -> list[str]:
    return text.splitlines()


def range_text(edit: Mapping[str, Any] | None, start: int, end: int) -> str | None:
    """The text of lines ``start..end`` as the recorded edit wrote them, or None if unknown.

    Sources, most exact first: the client's ``structured_patch`` (added lines by new line
    number), a whole-file ``content``, or a ``new_string`` with exactly that many lines.
    """
    if not edit:
        return None
    wanted = end - start + 1
    patch = edit.get("structured_patch")
    if isinstance(patch, list) and patch:
        added: dict[int, str] = {}
        for hunk in patch:
            if not isinstance(hunk, dict):
                return None
            line = int(hunk.get("newStart", 1))
            for text in hunk.get("lines", []):
                if not isinstance(text, str):
                    return None
                if text.startswith("+"):
                    added[line] = text[1:]
                    line += 1
                elif text.startswith(" "):
                    line += 1
        picked = [added.get(n) for n in range(start, end + 1)]
        return None if None in picked else "".join(f"{t}\n" for t in picked if t is not None)
    content = edit.get("content")
    if isinstance(content, str) and "old_string" not in edit:
        lines = _lines_of(content)
        if end > len(lines):
            return None
        return "".join(f"{t}\n" for t in lines[start - 1 : end])
    news = [edit.get("new_string")] + [
        e.get("new_string") for e in edit.get("edits") or [] if isinstance(e, dict)
    ]
    for new in news:
        if isinstance(new, str) and len(_lines_of(new)) == wanted:
            return "".join(f"{t}\n" for t in _lines_of(new))
    return None


def trace_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """One Agent Trace record from a ``hook.post`` row (see :data:`TRACE_SQL` columns)."""
    edit = orjson.loads(row["edit"]) if row.get("edit") else None
    related = (
        [{"type": "session", "url": f"urn:ledger:session:{row['session']}"}]
        if row.get("session")
        else []
    )
    if row.get("intent"):
        related.append({"type": "intent", "url": f"urn:ledger:intent:{row['intent']}"})
    contributor: dict[str, Any] = {"type": "ai"}
    if row.get("model"):
        contributor["model_id"] = model_id(str(row["model"]))
    by_path: dict[str, list[dict[str, Any]]] = {}
    for item in row["ranges"]:
        entry: dict[str, Any] = {"start_line": item["start_line"], "end_line": item["end_line"]}
        if item.get("content_hash"):  # format 2 records it at hook time
            entry["content_hash"] = item["content_hash"]
        else:  # format 1: rebuild the written text from the recorded edit, where it can be
            text = range_text(edit, item["start_line"], item["end_line"])
            if text is not None:
                entry["content_hash"] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        by_path.setdefault(item["path"], []).append(entry)
    files = []
    for path, ranges in by_path.items():
        conversation: dict[str, Any] = {"contributor": contributor, "ranges": ranges}
        if related:
            conversation["related"] = related
        files.append({"path": path, "conversations": [conversation]})
    record: dict[str, Any] = {
        "version": AGENT_TRACE_VERSION,
        "id": str(uuid.uuid5(_NAMESPACE, f"{row['ledger_id']}:{row['seq']}")),
        "timestamp": row["ts"],
        "tool": {"name": row.get("client") or "unknown"},
        "files": files,
        "metadata": {
            METADATA_KEY: {
                "ledger_id": row["ledger_id"],
                "seq": row["seq"],
                "record_hash": row["hash"],
                "decision": row.get("decision"),
                "invocation": row.get("invocation"),
                "intent": row.get("intent"),
                "session": row.get("session"),
                "tool": row.get("tool"),
            }
        },
    }
    if row.get("git_head"):
        record["vcs"] = {"type": "git", "revision": row["git_head"]}
    return record


def trace_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[bytes]:
    """JSON lines (sorted keys) of the trace records."""
    for row in rows:
        yield orjson.dumps(trace_record(row), option=orjson.OPT_SORT_KEYS) + b"\n"
