"""schemas/ is generated from the pydantic models; fail when they drift apart."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from ledger._evidence.schema import generate_schemas, render

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@pytest.mark.parametrize("name", sorted(generate_schemas()))
def test_committed_schema_matches_models(name: str) -> None:
    committed = SCHEMAS / name
    assert committed.exists(), f"{name} missing: run `python -m ledger._evidence.schema`"
    assert committed.read_text(encoding="utf-8") == render(generate_schemas()[name]), (
        f"{name} drifted from the models: run `python -m ledger._evidence.schema` and commit"
    )


def test_no_stale_schema_files() -> None:
    on_disk = {str(p.relative_to(SCHEMAS)) for p in SCHEMAS.rglob("*.json")}
    assert on_disk == set(generate_schemas())


@pytest.mark.parametrize("name", sorted(generate_schemas()))
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(generate_schemas()[name])
