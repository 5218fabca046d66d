"""Upcasting: read old record format versions as the current one, never rewriting history.

Records on disk keep the bytes they were signed with; verification always checks those bytes
under the rules of their own version. Readers that want the current shape (projections, blame,
exports) call :func:`upcast`, which applies ``UPCASTERS[v]`` (``v`` → ``v + 1``) in order, as
the eventsourcing library does with ``upcast_v1_v2`` … (style-anchors §4).

Format 1 → 2: ``hook.post`` kept what the session saw and changed in free keys of ``data``
(``seen``, ``changed``, ``added_lines``, ``file_sha256``), where a later hook's value silently
overwrote an earlier one's. Format 2 has typed fields: ``observed`` (path → SHA-256) and
``attribution`` (per file: its SHA-256 after the change and the written line ranges; see
``ledger/_evidence/models.py``). v1 did not record the old side of a change, so upcast hunks
carry ``old_start``/``old_lines`` as ``null`` and ``exact: false``: blame treats them as
"these lines were written here", never as a replayable diff.

Format 2 → 3: content fields became commitments in new records; a v2 record keeps its plain
values (``ledger doctor`` counts such records, and ``ledger push`` publishes them only when told
to publish verbatim content).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger._errors import InputError
from ledger._evidence.format import FORMAT_VERSION

__all__ = ["UPCASTERS", "upcast"]


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    out["v"] = 2
    if data.get("kind") != "hook.post" or not isinstance(data.get("body"), dict):
        return out
    body = dict(data["body"])
    facts = dict(body.get("data") or {})
    seen = facts.pop("seen", None)
    changed = facts.pop("changed", None)
    added = facts.pop("added_lines", None)
    facts.pop("file_sha256", None)  # the single-file copy of seen[path]
    observed = seen if isinstance(seen, dict) else {}
    body["data"] = facts
    body["observed"] = observed
    body["attribution"] = None
    if isinstance(changed, list):
        ranges = added if isinstance(added, dict) else {}
        body["attribution"] = {
            "source": "v1",
            "files": [
                {
                    "path": path,
                    "change": None,
                    "previous_path": None,
                    "sha256": observed.get(path),
                    "old_sha256": None,
                    "lines": None,
                    "mutation_class": facts.get("mutation_class"),
                    "exact": False,
                    "hunks": [
                        {
                            "old_start": None,
                            "old_lines": None,
                            "new_start": start,
                            "new_lines": end - start + 1,
                            "content_hash": None,
                            "line_hashes": None,
                        }
                        for start, end in ranges.get(path, [])
                    ],
                }
                for path in changed
                if isinstance(path, str)
            ],
        }
    out["body"] = body
    return out


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v2 bodies hold their content plain, which a v3 reader shows as it is (a plain value
    where v3 has a commitment): nothing moves, only the version."""
    return {**data, "v": 3}


#: ``UPCASTERS[v]`` turns a version-``v`` record dict into a version-``v + 1`` one.
UPCASTERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}


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
