"""Intent state: per intent, its sessions, files touched, decisions by code, last activity.

A fold over records (decision 0008, "Intent state"). The intent of a tool call is the one its
session had selected when the call was recorded (``intent.selected`` / ``intent.cleared``), or
the one the hook named in the record's ``data.intent_id``. Decisions are counted per code:
``allowed``, ``asked``, ``rejected`` (a human turned an ``ask`` down) and, for denials, the deny
code (``SCOPE_VIOLATION``, ``STALE_FILE`` ...).

Lines currently attributed to an intent come from the blame projection (the line model), and
the effective scope from the intents file plus the grants of the governance state projection
(``ledger/_governance/state.py``: the one fold that knows which expansions a human approved and
which were withdrawn; this projection never counts grants itself, so ``ledger intents`` cannot
show a forged or withdrawn grant as approved): :func:`intent_summaries` puts them together.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "INTENTS",
    "IntentStateProjection",
    "intent_map_markdown",
    "intent_summaries",
    "write_intent_map",
]


class IntentStateProjection:
    """Per-intent activity, folded from ``intent.*`` and ``hook.*`` records."""

    name: Final = "intents"
    version: Final = 2  # 2: grants left to the governance state projection

    def initial(self) -> dict[str, Any]:
        """No intents, no sessions."""
        return {"intents": {}, "sessions": {}}

    def apply(self, state: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        """Fold one record in."""
        kind = record.get("kind")
        body = record.get("body")
        if not isinstance(body, dict):
            return state
        session = body.get("session", (record.get("actor") or {}).get("session"))
        sessions: dict[str, Any] = state["sessions"]
        if kind == "intent.selected":
            sessions[str(session)] = body.get("intent_id")
            self._touch(state, body.get("intent_id"), record, session)
        elif kind == "intent.cleared":
            sessions.pop(str(session), None)
        elif kind in ("hook.pre", "hook.post", "hook.event"):
            data = body.get("data") if isinstance(body.get("data"), dict) else {}
            intent_id = (data or {}).get("intent_id") or sessions.get(str(session))
            entry = self._touch(state, intent_id, record, session)
            if entry is None:
                return state
            error = body.get("error") if isinstance(body.get("error"), dict) else None
            if kind == "hook.pre":
                decision = body.get("decision")
                code = {"allow": "allowed", "ask": "asked"}.get(str(decision)) or (
                    (error or {}).get("code") or "denied"
                )
                entry["decisions"][code] = entry["decisions"].get(code, 0) + 1
            elif kind == "hook.event" and (error or {}).get("code") == "HITL_REJECT":
                entry["decisions"]["rejected"] = entry["decisions"].get("rejected", 0) + 1
            attribution = body.get("attribution")
            if kind == "hook.post" and isinstance(attribution, dict):
                files = entry["files"]
                for change in attribution.get("files") or []:
                    if isinstance(change, dict) and change.get("path") not in files:
                        files.append(change.get("path"))
        return state

    @staticmethod
    def _touch(
        state: dict[str, Any],
        intent_id: Any,  # noqa: ANN401 -- whatever the record holds; checked below
        record: dict[str, Any],
        session: Any,  # noqa: ANN401 -- whatever the record holds
    ) -> dict[str, Any] | None:
        if not isinstance(intent_id, str):
            return None
        entry: dict[str, Any] = state["intents"].setdefault(
            intent_id,
            {"decisions": {}, "files": [], "last_seq": None, "last_ts": None, "sessions": []},
        )
        if isinstance(session, str) and session not in entry["sessions"]:
            entry["sessions"].append(session)
        entry["last_seq"], entry["last_ts"] = record.get("seq"), record.get("ts")
        return entry

    def dump(self, state: dict[str, Any]) -> dict[str, Any]:
        """JSON for the cache."""
        return state

    def load(self, data: Any) -> dict[str, Any]:  # noqa: ANN401 -- what dump returned
        """Back from the cache."""
        return dict(data)


INTENTS: Final = IntentStateProjection()


def _ranges(numbers: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def intent_summaries(
    root: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Every intent (from the intents file and the records): status, effective scope with
    approved expansions, sessions, files touched, lines it owns now (per file, as ranges, from
    the line model), decisions by code, last activity.

    Raises:
        LedgerError: no workspace, no ledger, or an unreadable intents file.
    """
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415
    from ledger._governance.intents import load_intents_file  # noqa: PLC0415
    from ledger._projections.blame import BLAME  # noqa: PLC0415
    from ledger._projections.cache import ProjectionCache  # noqa: PLC0415
    from ledger._projections.governance import GOVERNANCE_STATE  # noqa: PLC0415

    ledger = Ledger.open(root, environ=environ)
    cache = ProjectionCache(
        ledger.file.path, ledger.workspace.cache_dir, ledger.ledger_id, environ=environ
    )
    state = cache.state(INTENTS)
    grants = cache.state(GOVERNANCE_STATE).grants
    blame = cache.state(BLAME)
    path = ledger.workspace.intents_path
    declared = load_intents_file(path).intents if path.exists() else ()
    owned: dict[str, dict[str, list[int]]] = {}
    for file, model in blame.files.items():
        for index, ref in enumerate(model["refs"]):
            attribution = blame.ref(ref)
            if (
                attribution is not None
                and attribution["status"] == "agent"
                and attribution.get("intent_id")
            ):
                owned.setdefault(attribution["intent_id"], {}).setdefault(file, []).append(
                    index + 1
                )
    ids = [i.id for i in declared] + sorted(
        (set(state["intents"]) | set(grants)) - {i.id for i in declared}
    )
    by_id = {i.id: i for i in declared}
    out = []
    for intent_id in ids:
        intent = by_id.get(intent_id)
        activity = state["intents"].get(intent_id, {})
        lines = owned.get(intent_id, {})
        out.append(
            {
                "id": intent_id,
                "name": intent.name if intent else None,
                "status": intent.status if intent else "not in the intents file",
                "owned_scope": list(intent.owned_scope) if intent else [],
                "approved_expansions": list(grants.get(intent_id, [])),
                "sessions": list(activity.get("sessions", [])),
                "files_touched": sorted(activity.get("files", [])),
                "lines_attributed": sum(len(v) for v in lines.values()),
                "lines": {f: _ranges(v) for f, v in sorted(lines.items())},
                "decisions": dict(Counter(activity.get("decisions", {}))),
                "last_seq": activity.get("last_seq"),
                "last_ts": activity.get("last_ts"),
            }
        )
    return out


def intent_map_markdown(summaries: list[dict[str, Any]]) -> str:
    """``.orchestration/intent_map.md``: per intent, the files and line ranges it owns now."""
    out = [
        "# Intent map",
        "",
        "Generated by `ledger map` from the ledger's records: the lines each intent's agents "
        "wrote that are still in the files (as of the last record; `ledger blame` checks "
        "the disk). Do not edit by hand.",
        "",
    ]
    for summary in summaries:
        out.append(f"## {summary['id']}: {summary['name'] or '(unnamed)'} ({summary['status']})")
        scope = summary["owned_scope"] + summary["approved_expansions"]
        out.append(f"Scope: {', '.join(f'`{g}`' for g in scope) or 'none'}")
        out.append("")
        if not summary["lines"]:
            out.append("- no lines attributed")
        for file, ranges in summary["lines"].items():
            spans = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)
            out.append(f"- `{file}`: lines {spans}")
        out.append("")
    return "\n".join(out)


def write_intent_map(
    root: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """Regenerate ``.orchestration/intent_map.md`` (atomically); returns its path and the
    summaries it was made from."""
    from ledger._workspace import (  # noqa: PLC0415
        ORCHESTRATION_DIR,
        atomic_write,
        find_root,
    )

    summaries = intent_summaries(root, environ=environ)
    target = find_root(root, environ=environ) / ORCHESTRATION_DIR / "intent_map.md"
    atomic_write(target, intent_map_markdown(summaries).encode("utf-8"))
    return str(target), summaries
