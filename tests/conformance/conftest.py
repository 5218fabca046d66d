"""Fixtures for the conformance suite: the real client binaries, installed on first use.

A client that cannot be installed (no npm/node, no registry) skips its tests with the reason in
capitals, unless ``LEDGER_CONFORMANCE_REQUIRED=1`` (set by ``.ci/run``), which makes it a
failure: CI must never pass by silently skipping the real clients.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._clients import CLIENTS, REQUIRED_ENV, ClientUnavailableError, ensure_client, version_of
from ._harness import CREATED, stop_deciders
from ._payloads import SAVE_ENV, save_fixtures, unknown_fields


def _binary(name: str) -> Path:
    spec = CLIENTS[name]
    try:
        return ensure_client(spec)
    except ClientUnavailableError as exc:
        message = (
            f"CONFORMANCE SUITE NOT RUN: the real {spec.package}@{version_of(spec)} "
            f"is unavailable: {exc}"
        )
        if os.environ.get(REQUIRED_ENV) == "1":
            pytest.fail(f"{message} ({REQUIRED_ENV}=1)", pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    """The real Claude Code CLI at the pinned (or requested) version."""
    return _binary("claude")


@pytest.fixture(scope="session")
def codex_binary() -> Path:
    """The real Codex CLI at the pinned (or requested) version."""
    return _binary("codex")


@pytest.fixture(scope="session")
def gemini_binary() -> Path:
    """The real Gemini CLI at the pinned (or requested) version."""
    return _binary("gemini")


@pytest.fixture(scope="session")
def copilot_binary() -> Path:
    """The real GitHub Copilot CLI at the pinned (or requested) version."""
    return _binary("copilot")


@pytest.fixture(autouse=True, scope="session")
def _no_decider_left() -> Iterator[None]:
    yield
    stop_deciders()


@pytest.fixture(autouse=True)
def _collect_payloads(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each scenario: report payload fields the adapter does not know, save the
    normalized payloads when ``LEDGER_CONFORMANCE_SAVE=1``, and append what was seen to
    ``$LEDGER_CONFORMANCE_REPORT`` (JSON lines, read by run_latest.py)."""
    start = len(CREATED)
    yield
    made, CREATED[start:] = CREATED[start:], []
    scenario = request.node.name.removeprefix("test_")
    unknown: list[str] = []
    for index, ws in enumerate(made):
        version = version_of(CLIENTS[ws.client])
        calls = ws.hook_calls()
        if os.environ.get(SAVE_ENV) == "1":
            save_fixtures(ws, scenario if len(made) == 1 else f"{scenario}-{index}", version)
        for call in calls:
            fields = unknown_fields(ws.client, call.event, call.payload)
            if fields:
                unknown.append(f"{ws.client} {version} {call.event}: {', '.join(sorted(fields))}")
        report = os.environ.get("LEDGER_CONFORMANCE_REPORT")
        if report:
            with Path(report).open("a", encoding="utf-8") as out:
                out.write(
                    json.dumps(
                        {
                            "test": request.node.nodeid,
                            "client": ws.client,
                            "version": version,
                            "unknown": unknown,
                            "events": sorted({c.event for c in calls}),
                        }
                    )
                    + "\n"
                )
    if unknown:
        pytest.fail(
            "payload fields the adapter does not read and unread_fields.json does not "
            "list (read them, or list them with the reason):\n" + "\n".join(sorted(set(unknown))),
            pytrace=False,
        )
