"""The payloads real clients sent: normalized, saved as fixtures, and checked for unknown fields.

Normalization makes a capture reproducible: the workspace, home and run directories become
``/workspace``, ``/home/user`` and ``/run``; every UUID (session ids, prompt ids ...) becomes a
sequential one in order of appearance; ISO timestamps and durations are zeroed. Tool-use ids need
nothing: the scripted model hands them out deterministically.

"Unknown field" means a top-level payload field the adapter does not read: dropping it leaves
the parsed :class:`ledger.HookEvent` unchanged. Each one must be listed, with the reason it is
not used, in ``tests/adapters/unread_fields.json``; anything new is reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from ledger import InputError, parse_payload

from ._harness import Workspace

REPO: Final = Path(__file__).resolve().parents[2]
REAL_FIXTURES: Final = REPO / "tests" / "fixtures" / "payloads" / "real"
UNREAD_FIELDS: Final = REPO / "tests" / "adapters" / "unread_fields.json"
SAVE_ENV: Final = "LEDGER_CONFORMANCE_SAVE"

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP: Final = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?$")
_DURATION_KEY: Final = re.compile(
    r"(^|_)(duration|elapsed|time)(_?ms|Ms)?$|Ms$|_ms$", re.IGNORECASE
)


class Normalizer:
    """Rewrites run-specific values; one instance per workspace keeps UUID numbering stable."""

    def __init__(self, ws: Workspace) -> None:
        root = str(ws.root.resolve())
        self._paths = sorted(
            {
                (root, "/workspace"),
                (str(ws.root), "/workspace"),
                (str(ws.home), "/home/user"),
                (str(ws.base), "/run"),
                # Claude Code names per-project directories after the path.
                (re.sub(r"[^A-Za-z0-9]", "-", root), "-workspace"),
            },
            key=lambda pair: -len(pair[0]),
        )
        self._uuids: dict[str, str] = {}

    def _uuid(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in self._uuids:
            self._uuids[found] = f"00000000-0000-4000-8000-{len(self._uuids) + 1:012d}"
        return self._uuids[found]

    def text(self, value: str) -> str:
        if _TIMESTAMP.match(value):
            return "2026-01-01T00:00:00.000Z"
        for old, new in self._paths:
            value = value.replace(old, new)
        return _UUID.sub(self._uuid, value)

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {self.text(k): self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, str):
            return self.text(value)
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and _DURATION_KEY.search(key)
        ):
            return 0
        return value


def fixture_name(index: int, payload: dict[str, Any], event: str) -> str:
    """``NN-<Event>[-<tool>].json``."""
    tool = payload.get("tool_name") or payload.get("toolName")  # Copilot CLI: camelCase
    suffix = f"-{re.sub(r'[^A-Za-z0-9_]', '_', tool)}" if isinstance(tool, str) else ""
    return f"{index:02d}-{event}{suffix}.json"


def save_fixtures(ws: Workspace, scenario: str, version: str) -> Path:
    """Write ``ws``'s normalized payloads to ``real/<client>-<version>/<scenario>/``."""
    target = REAL_FIXTURES / f"{ws.client}-{version}" / scenario
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.json"):
        old.unlink()
    normalizer = Normalizer(ws)
    for index, call in enumerate(ws.hook_calls()):
        payload = normalizer.value(call.payload)
        (target / fixture_name(index, call.payload, call.event)).write_text(
            json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    return target


#: Clients whose payloads do not name their event: the installed command passes it (GitHub
#: Copilot CLI's camelCase payloads), so it is given when a payload is parsed.
NAMELESS_EVENTS = frozenset({"copilot", "antigravity"})


def _parsed(client: str, payload: dict[str, Any], event: str | None) -> tuple[Any, ...] | None:
    try:
        parsed = parse_payload(
            client,
            json.dumps(payload).encode(),
            expected_event=event if client in NAMELESS_EVENTS else None,
        )
    except InputError:
        return None
    return tuple(parsed._replace(raw={}))


def unread_fields(client: str, payload: dict[str, Any], event: str | None = None) -> set[str]:
    """Top-level fields whose removal leaves the parsed event unchanged (raw aside)."""
    whole = _parsed(client, payload, event)
    return {
        key
        for key in payload
        if _parsed(client, {k: v for k, v in payload.items() if k != key}, event) == whole
    }


def unread_table(client: str) -> dict[str, dict[str, str]]:
    """``client``'s allow-list: event (``*``: every event) -> field -> why it is not read."""
    table: dict[str, dict[str, str]] = json.loads(UNREAD_FIELDS.read_text(encoding="utf-8")).get(
        client, {}
    )
    return table


def allowed_unread(client: str, event: str) -> dict[str, str]:
    """The allow-listed unread fields of ``client``'s ``event``, with why."""
    table = unread_table(client)
    return {**table.get("*", {}), **table.get(event, {})}


def unknown_fields(client: str, event: str, payload: dict[str, Any]) -> set[str]:
    """Fields the adapter ignores that nobody has looked at yet."""
    return unread_fields(client, payload, event) - set(allowed_unread(client, event))
