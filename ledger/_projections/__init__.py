"""Projections: state rebuilt from the ledger's records alone, behind one verified cache.

:data:`PROJECTIONS` is the one registry of projections (name → projection); blame, intent state
and the query layer's views plug in here (docs/architecture.md).

Names load lazily (PEP 562): ``ledger blame`` imports :mod:`ledger._projections.explain`, and
the package must not pull the cache's orjson and read path into that start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger._projections.blame import BLAME
    from ledger._projections.cache import ProjectionCache
    from ledger._projections.governance import GOVERNANCE_STATE
    from ledger._projections.intent_state import INTENTS
    from ledger._projections.interface import Projection

    PROJECTIONS: dict[str, Projection[Any]]

__all__ = ["BLAME", "GOVERNANCE_STATE", "INTENTS", "PROJECTIONS", "Projection", "ProjectionCache"]

_LAZY = {
    "BLAME": "ledger._projections.blame",
    "ProjectionCache": "ledger._projections.cache",
    "GOVERNANCE_STATE": "ledger._projections.governance",
    "INTENTS": "ledger._projections.intent_state",
    "Projection": "ledger._projections.interface",
}


def _registry() -> dict[str, Projection[Any]]:
    from ledger._projections.blame import BLAME  # noqa: PLC0415
    from ledger._projections.governance import GOVERNANCE_STATE  # noqa: PLC0415
    from ledger._projections.intent_state import INTENTS  # noqa: PLC0415

    return {GOVERNANCE_STATE.name: GOVERNANCE_STATE, BLAME.name: BLAME, INTENTS.name: INTENTS}


def __getattr__(name: str) -> Any:  # noqa: ANN401 -- PEP 562 returns any public name
    if name == "PROJECTIONS":
        value: Any = _registry()
    elif name in _LAZY:
        value = getattr(__import__(_LAZY[name], fromlist=(name,)), name)
    else:
        raise AttributeError(f"module 'ledger._projections' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
