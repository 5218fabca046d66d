"""Whether a change of the governance configuration loosens it (pure: bytes in, reasons out).

A change of ``hooks.yaml`` or the intents between two hook calls used to take effect at the
next call, recorded as ``governance.config_changed``: so code the agent left running
(``(sleep 4; echo 'policies: {scope: false}' > .orchestration/hooks.yaml) &``) could switch
governance off between calls. A change that *loosens* governance now waits for a person (the
tripwire denies every call until ``ledger tamper accept``, which an agent cannot run); one that
tightens it, or touches only intents that are not in progress, takes effect at once.

Loosening is:

* a policy switched off (``intent_required``, ``scope``, ``stale_file``, ``fail_closed``), or
  ``destructive`` made more permissive (deny > ask > allow);
* a configured hook removed or changed (``hooks:``): a protection taken away;
* an intent that is in progress given a scope it did not have (a glob added).

A file that cannot be read as configuration is not judged here: the hook fails closed on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from ledger._errors import ConfigError
from ledger._governance.config import policy_config
from ledger._governance.intents import WORKABLE_STATUSES, parse_intents

__all__ = ["HOOK_CONFIG_NAMES", "INTENTS_NAME", "loosenings"]

HOOK_CONFIG_NAMES: Final = ("hooks.yaml", "hooks.json")
INTENTS_NAME: Final = "active_intents.yaml"
_SWITCHES: Final = ("intent_required", "scope", "stale_file", "fail_closed")
_STRICTNESS: Final = {"allow": 0, "ask": 1, "deny": 2}


def loosenings(name: str, old: bytes | None, new: bytes | None) -> list[str]:
    """Why the change of ``.orchestration/<name>`` from ``old`` to ``new`` loosens governance
    (empty: it does not). ``None`` is an absent file."""
    if name in HOOK_CONFIG_NAMES:
        return _hook_config(name, old, new)
    if name == INTENTS_NAME:
        return _intents(old, new)
    return []


def _load_hooks(name: str, data: bytes | None) -> dict[str, Any] | None:
    if data is None or not data.strip():
        return {}
    try:
        if name.endswith(".json"):
            loaded = json.loads(data)
        else:
            import yaml  # noqa: PLC0415 -- only when the configuration changed

            loaded = yaml.safe_load(data)
    except Exception:  # noqa: BLE001 -- JSON's, YAML's, decoding: unreadable, not judged here
        return None
    return loaded if isinstance(loaded, dict) else None if loaded is not None else {}


def _hook_config(name: str, old: bytes | None, new: bytes | None) -> list[str]:
    before, after = _load_hooks(name, old), _load_hooks(name, new)
    if before is None or after is None:
        return []
    try:
        was, now = policy_config(before, Path(name)), policy_config(after, Path(name))
    except ConfigError:
        return []
    why = [
        f"policies.{s} switched off" for s in _SWITCHES if getattr(was, s) and not getattr(now, s)
    ]
    if _STRICTNESS.get(now.destructive, 0) < _STRICTNESS.get(was.destructive, 0):
        why.append(f"policies.destructive: {was.destructive} -> {now.destructive}")
    if not _contained(before.get("hooks"), after.get("hooks")):
        why.append("a configured hook was removed or changed")
    return why


def _contained(old: Any, new: Any) -> bool:  # noqa: ANN401 -- parsed YAML
    """Whether everything of ``old`` is still in ``new`` (lists: every item; mappings: every
    key, recursively): what was added is a new protection, what went is a removed one."""
    if old is None:
        return True
    if isinstance(old, dict):
        return isinstance(new, dict) and all(_contained(v, new.get(k)) for k, v in old.items())
    if isinstance(old, list):
        return isinstance(new, list) and all(any(_contained(o, n) for n in new) for o in old)
    return bool(old == new)


def _intents(old: bytes | None, new: bytes | None) -> list[str]:
    try:
        before = parse_intents((old or b"").decode("utf-8"), INTENTS_NAME)
        after = parse_intents((new or b"").decode("utf-8"), INTENTS_NAME)
    except (ConfigError, UnicodeDecodeError):
        return []
    why: list[str] = []
    for intent in before.intents:
        if intent.status not in WORKABLE_STATUSES:
            continue
        now = after.get(intent.id)
        if now is None or now.status not in WORKABLE_STATUSES:
            continue
        added = [g for g in now.owned_scope if g not in intent.owned_scope]
        if added:
            shown = ", ".join(repr(g) for g in added[:3])
            why.append(f"{intent.id} is in progress and its scope was widened ({shown})")
    return why
