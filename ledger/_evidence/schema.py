"""Generate ``schemas/`` from the pydantic models: ``python -m ledger._evidence.schema [DIR]``.

``tests/test_schemas.py`` regenerates in memory and fails when the committed files differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ledger._evidence.models import KIND_BODIES, RecordModel
from ledger._evidence.record import FORMAT_VERSION

__all__ = ["generate_schemas", "main", "write_schemas"]


def generate_schemas() -> dict[str, dict[str, Any]]:
    """File name → JSON Schema, for the record envelope and each documented body kind."""
    schemas = {f"record.v{FORMAT_VERSION}.schema.json": RecordModel.model_json_schema()}
    for kind, model in sorted(KIND_BODIES.items()):
        schema = model.model_json_schema()
        schema["$id"] = f"https://ledger.dev/schemas/body/{kind}.schema.json"
        schemas[f"body/{kind}.schema.json"] = schema
    return schemas


def render(schema: dict[str, Any]) -> str:
    """Stable text form of a schema."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(schemas: dict[str, dict[str, Any]], argv: list[str] | None = None) -> int:
    """Write ``schemas`` (file name → schema) under ``DIR`` (argv[0]; default ``schemas``)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0] if args else "schemas")
    for name, schema in schemas.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Write every record schema under ``DIR`` (default ``schemas``)."""
    return write_schemas(generate_schemas(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
