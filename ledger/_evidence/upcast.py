"""Upcasting: read old record format versions as the current one, never rewriting history.

Records on disk keep the bytes they were signed with; verification always checks those bytes
under the rules of their own version. Readers that want the current shape (projections, blame,
exports) call :func:`upcast`, which applies ``UPCASTERS[v]`` (``v`` → ``v + 1``) in order, as
the eventsourcing library does with ``upcast_v1_v2`` … (style-anchors §4).

Format 1 is the first released format, so the registry is empty today; the mechanism is tested
with a synthetic version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger._errors import InputError
from ledger._evidence.record import FORMAT_VERSION

__all__ = ["UPCASTERS", "upcast"]

#: ``UPCASTERS[v]`` turns a version-``v`` record dict into a version-``v + 1`` one.
UPCASTERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def upcast(data: dict[str, Any]) -> dict[str, Any]:
    """Return ``data`` in the current format version (a new dict; ``data`` is not modified).

    Raises:
        InputError: the version is unknown or newer than this reader.
    """
    version = data.get("v")
    if type(version) is not int or version < 1:
        raise InputError(f"record has no valid format version (v={version!r})")
    if version > FORMAT_VERSION:
        raise InputError(
            f"record format v{version} is newer than this ledger (v{FORMAT_VERSION}); upgrade"
        )
    current = dict(data)
    while current["v"] < FORMAT_VERSION:
        step = UPCASTERS.get(current["v"])
        if step is None:
            raise InputError(f"no upcaster from record format v{current['v']}")
        current = step(current)
    return current
