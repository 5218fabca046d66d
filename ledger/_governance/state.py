"""Workspace state as a projection of ledger records: sessions, intents, grants, seen files.

Intent state is not a mutable file: it is folded from ``intent.*`` and ``hook.*`` records by
:func:`fold` (pure). A hook process must not replay a long ledger on every tool call, so
:func:`load_state` keeps the folded state in ``.orchestration/.cache/state.json`` together with
the position it was folded to (seq, record hash, byte offset). On load, the record at that
offset must still carry that hash -- otherwise the cache is discarded and the state is rebuilt
from the start. The cache is derived data, never evidence; deleting it is always safe.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import orjson

from ledger._errors import LedgerError
from ledger._evidence.store import LedgerFile

__all__ = ["WorkspaceState", "fold", "load_state"]

CACHE_VERSION: Final = 1
RECENT_CHANGES: Final = 10


class WorkspaceState:
    """What the governance policies need to know, folded from the ledger.

    Attributes:
        sessions: session id → ``{"intent": id|None, "model": str|None,
            "seen": {path: sha256}, "fired": [hook names]}``.
        grants: intent id → globs added to its scope by approved expansions.
        recent: intent id → the last few changed paths (``"path (seq N)"``), newest last.
        decisions: tool_use_id → pre decision (to recognise a rejected ``ask``).
        seq, hash: the last folded record.
    """

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.sessions: dict[str, dict[str, Any]] = data.get("sessions", {})
        self.grants: dict[str, list[str]] = data.get("grants", {})
        self.recent: dict[str, list[str]] = data.get("recent", {})
        self.decisions: dict[str, str] = data.get("decisions", {})
        self.seq: int = data.get("seq", -1)
        self.hash: str | None = data.get("hash")

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"decisions": self.decisions, "grants": self.grants, "hash": self.hash,
                "recent": self.recent, "seq": self.seq, "sessions": self.sessions}

    def session(self, session_id: str | None) -> dict[str, Any]:
        """The (possibly new) state of one session."""
        key = session_id or ""
        found = self.sessions.get(key)
        if found is None:
            found = {"fired": [], "intent": None, "model": None, "seen": {}}
            self.sessions[key] = found
        return found

    def intent_of(self, session_id: str | None) -> str | None:
        """The intent selected for ``session_id``."""
        found = self.sessions.get(session_id or "")
        return None if found is None else found.get("intent")

    def fired_once(self) -> list[tuple[str | None, str]]:
        """``(session, hook name)`` pairs for the engine's ``once`` bookkeeping."""
        return [(sid or None, name) for sid, s in self.sessions.items() for name in s["fired"]]


def _apply(state: WorkspaceState, record: dict[str, Any]) -> None:
    kind = record.get("kind")
    body = record.get("body") or {}
    actor = record.get("actor") or {}
    session_id = body.get("session", actor.get("session"))
    if kind == "intent.selected":
        state.session(session_id)["intent"] = body.get("intent_id")
    elif kind == "intent.cleared":
        state.session(session_id)["intent"] = None
    elif kind == "intent.scope_expanded":
        globs = state.grants.setdefault(str(body.get("intent_id")), [])
        globs.extend(g for g in body.get("globs", []) if g not in globs)
    elif kind in ("hook.pre", "hook.post", "hook.event"):
        session = state.session(session_id)
        if actor.get("model"):
            session["model"] = actor["model"]
        fired = session["fired"]
        fired.extend(h["name"] for h in body.get("hooks", []) if h.get("name") not in fired)
        data = body.get("data") or {}
        for path, digest in (data.get("seen") or {}).items():
            session["seen"][path] = digest
        if kind == "hook.pre" and body.get("tool_use_id"):
            state.decisions[str(body["tool_use_id"])] = str(body.get("decision"))
            if len(state.decisions) > 1000:  # keep the cache small: only recent calls matter
                for old in list(state.decisions)[:200]:
                    del state.decisions[old]
        intent_id = data.get("intent_id")
        changed = data.get("changed") or []
        if kind == "hook.post" and intent_id and changed:
            recent = state.recent.setdefault(str(intent_id), [])
            recent.extend(f"{path} (seq {record.get('seq')})" for path in changed)
            del recent[:-RECENT_CHANGES]
    state.seq = int(record.get("seq", state.seq))
    state.hash = record.get("hash")


def fold(records: Iterable[dict[str, Any]], state: WorkspaceState | None = None) -> WorkspaceState:
    """Fold records (parsed dicts, in order) into ``state`` (pure; returns the state)."""
    state = state or WorkspaceState()
    for record in records:
        _apply(state, record)
    return state


def _fold_from(path: Path, offset: int, state: WorkspaceState) -> int:
    """Fold the complete records after ``offset`` into ``state``, streaming; the new offset."""
    end = offset
    for chunk_offset, chunk in LedgerFile(path).read_chunks(start=offset):
        cut = chunk.rfind(b"\n") + 1  # ignore a torn tail: it is not a record
        records = []
        for line in chunk[:cut].split(b"\n")[:-1]:
            try:
                records.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue  # a damaged line is verify's business, not the projection's
        fold(records, state)
        end = chunk_offset + cut
    return end


def load_state(ledger_path: Path, cache_dir: Path) -> WorkspaceState:
    """The current state: the cached projection advanced over new records (rebuilt if stale)."""
    cache = cache_dir / "state.json"
    state = WorkspaceState()
    offset = 0
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("version") == CACHE_VERSION and _position_holds(
                ledger_path, int(cached["offset"]), cached["state"].get("hash")):
            state = WorkspaceState(cached["state"])
            offset = int(cached["offset"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    try:
        new_offset = _fold_from(ledger_path, offset, state)
    except LedgerError:
        return state
    if new_offset != offset:
        _write_cache(cache, {"offset": new_offset, "state": state.to_json(),
                             "version": CACHE_VERSION})
    return state


def _position_holds(ledger_path: Path, offset: int, record_hash: object) -> bool:
    if offset == 0:
        return True
    if not isinstance(record_hash, str):
        return False
    with ledger_path.open("rb") as handle:
        start = max(0, offset - 4096)
        handle.seek(start)
        window = handle.read(offset - start)
    if not window.endswith(b"\n"):
        return False
    return f'"hash":"{record_hash}"'.encode() in window[window.rfind(b"\n", 0, -1) + 1:]


def _write_cache(cache: Path, payload: dict[str, Any]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".state.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload, sort_keys=True), encoding="utf-8")
        tmp.replace(cache)
    except OSError:
        pass  # a cache we cannot write only costs time
