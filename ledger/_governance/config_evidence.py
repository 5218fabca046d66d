"""Governance configuration changes are evidence.

Every decision records the SHA-256 of the configuration it used (``config`` in ``hook.*``
bodies): the intents file and the hook config. When it differs from the configuration of the
previous decision and no human-run ``ledger`` command recorded the change, the hook path writes
``governance.config_changed`` first, in the same write as the decision that uses the new
configuration: a config that switches policies off or widens scope takes effect only once it is
on the record (``ledger log`` shows it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Final

__all__ = ["CONFIG_CHANGED_KIND", "config_change", "config_digests"]

CONFIG_CHANGED_KIND: Final = "governance.config_changed"
INTENTS_FILE: Final = "active_intents.yaml"
_FILES: Final = (("hooks", "hooks_sha256"), ("intents", "intents_sha256"))


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # absent (or unreadable: the loader reports that itself)


def config_digests(orchestration: Path) -> dict[str, str | None]:
    """``{hooks_sha256, intents_sha256}`` of the files the hook path loads (``hooks.yaml``, or
    ``hooks.json`` when only that exists; ``active_intents.yaml``)."""
    hooks = orchestration / "hooks.yaml"
    if not hooks.exists() and (orchestration / "hooks.json").exists():
        hooks = orchestration / "hooks.json"
    return {"hooks_sha256": _sha256(hooks), "intents_sha256": _sha256(orchestration / INTENTS_FILE)}


def config_change(
    before: dict[str, Any] | None, after: dict[str, str | None], *, via: str = "detected"
) -> dict[str, Any] | None:
    """The ``governance.config_changed`` body, or None when nothing changed (or no decision
    recorded a configuration before: the first decision's own ``config`` records it)."""
    if before is None or before == after:
        return None
    changed = [name for name, key in _FILES if before.get(key) != after.get(key)]
    return {
        "after": after,
        "before": {key: before.get(key) for _, key in _FILES},
        "changed": changed,
        "via": via,
    }
