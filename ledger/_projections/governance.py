"""The governance state projection: sessions, selected intents, grants, what each session saw.

The fold itself is governance's (:func:`ledger._governance.state.apply_record`, pure); this
module makes it a :class:`~ledger._projections.interface.Projection` so it runs behind the
verified projection cache like every other projection.
"""

from __future__ import annotations

from typing import Any, Final

from ledger._governance.state import WorkspaceState, apply_record

__all__ = ["GOVERNANCE_STATE", "GovernanceStateProjection"]


class GovernanceStateProjection:
    """What the policies need to know, folded from ``intent.*`` and ``hook.*`` records."""

    name: Final = "governance"
    # 2: format-v2 ``observed``/``attribution``, mutations; 3: grant approval proofs, config
    version: Final = 4  # 4: the tripwire's pending tamper and armed flag (decision 0011)

    def initial(self) -> WorkspaceState:
        """No sessions, no grants."""
        return WorkspaceState()

    def apply(self, state: WorkspaceState, record: dict[str, Any]) -> WorkspaceState:
        """Fold one record in."""
        apply_record(state, record)
        return state

    def dump(self, state: WorkspaceState) -> dict[str, Any]:
        """JSON for the cache."""
        return state.to_json()

    def load(self, data: Any) -> WorkspaceState:  # noqa: ANN401 -- what dump returned
        """Back from the cache."""
        return WorkspaceState(data)


GOVERNANCE_STATE: Final = GovernanceStateProjection()
