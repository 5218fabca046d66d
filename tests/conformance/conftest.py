"""Fixtures for the conformance suite: the real client binaries, installed on first use.

A client that cannot be installed (no npm/node, no registry) skips its tests with the reason in
capitals, unless ``LEDGER_CONFORMANCE_REQUIRED=1`` (set by ``.ci/run``), which makes it a
failure: CI must never pass by silently skipping the real clients.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ._clients import CLIENTS, REQUIRED_ENV, ClientUnavailableError, ensure_client, version_of


def _binary(name: str) -> Path:
    spec = CLIENTS[name]
    try:
        return ensure_client(spec)
    except ClientUnavailableError as exc:
        message = (f"CONFORMANCE SUITE NOT RUN: the real {spec.package}@{version_of(spec)} "
                   f"is unavailable: {exc}")
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
