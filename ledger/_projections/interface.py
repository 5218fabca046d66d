"""The projection protocol: state rebuilt from the ledger's records alone.

A projection is a left fold over records in chain order (docs/architecture.md, "Projections"):
``state = initial(); for record in records: state = apply(state, record)``. It never reads a
file or a database; :mod:`ledger._projections.cache` feeds it the records through the one read
path and keeps its state between processes. ``version`` names the fold's logic: changing what
``apply`` computes means a new version, and every cached state of the old one is rebuilt.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

__all__ = ["Projection", "StateT"]

StateT = TypeVar("StateT")


class Projection(Protocol[StateT]):
    """A named, versioned fold over ledger records (the records are upcast, unverified dicts)."""

    @property
    def name(self) -> str:
        """Stable identifier; also the cache file's name (``[a-z0-9_-]+``)."""
        ...

    @property
    def version(self) -> int:
        """Version of the fold's logic and of its dumped state."""
        ...

    def initial(self) -> StateT:
        """The state before the first record."""
        ...

    def apply(self, state: StateT, record: dict[str, Any]) -> StateT:
        """The state after ``record`` (may update ``state`` in place and return it)."""
        ...

    def dump(self, state: StateT) -> Any:  # noqa: ANN401 -- any JSON value
        """``state`` as JSON-ready data (for the cache)."""
        ...

    def load(self, data: Any) -> StateT:  # noqa: ANN401 -- what dump returned
        """The state ``dump`` produced (the cache has already checked its integrity)."""
        ...
