"""Fixtures for the adapter tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import FIXTURE_FILES, fixture_id


@pytest.fixture(params=FIXTURE_FILES, ids=fixture_id)
def fixture_file(request: pytest.FixtureRequest) -> Path:
    """Every payload fixture, one test per file."""
    path: Path = request.param
    return path
