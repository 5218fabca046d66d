"""Projections: state rebuilt from the ledger's records alone, behind one verified cache.

:data:`PROJECTIONS` is the one registry of projections (name → projection); blame, intent state
and the query layer's views plug in here (docs/architecture.md).
"""

from __future__ import annotations

from typing import Any, Final

from ledger._projections.blame import BLAME
from ledger._projections.cache import ProjectionCache
from ledger._projections.governance import GOVERNANCE_STATE
from ledger._projections.intent_state import INTENTS
from ledger._projections.interface import Projection

__all__ = ["BLAME", "GOVERNANCE_STATE", "INTENTS", "PROJECTIONS", "Projection", "ProjectionCache"]

PROJECTIONS: Final[dict[str, Projection[Any]]] = {
    GOVERNANCE_STATE.name: GOVERNANCE_STATE,
    BLAME.name: BLAME,
    INTENTS.name: INTENTS,
}
