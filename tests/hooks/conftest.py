"""Fixtures the hook tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process counts as a person's terminal (the suite may itself run under an agent)."""
    monkeypatch.setattr("ledger._governance.person.ancestor_chain", lambda: [])
