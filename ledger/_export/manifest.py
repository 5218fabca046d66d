"""The export manifest: the signed table of contents of an export directory.

These models *define* ``manifest.json``; ``schemas/export/manifest.v1.schema.json`` is generated
from them (``python -m ledger._export.manifest``) and a test fails when the two drift apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from ledger._evidence.schema import render, write_schemas

__all__ = ["MANIFEST_FORMAT", "ExportManifest", "generate_schemas", "main", "render"]

MANIFEST_FORMAT = "ledger.export/1"
Hex64 = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
Seq = Annotated[StrictInt, Field(ge=0, le=2**53 - 1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ToolInfo(_Strict):
    """What wrote the export."""

    name: Literal["ledger"]
    version: StrictStr


class Filters(_Strict):
    """The filters the export was asked for (null: not filtered)."""

    since: StrictStr | None = Field(description="Inclusive lower bound on ts (RFC 3339, UTC).")
    until: StrictStr | None = Field(description="Exclusive upper bound on ts (RFC 3339, UTC).")
    intent: StrictStr | None = Field(description="Only records of this intent.")
    session: StrictStr | None = Field(description="Only records of this session.")


class SegmentInfo(_Strict):
    """The raw, contiguous run of ledger lines the export covers, copied byte for byte."""

    path: StrictStr
    first_seq: Seq
    last_seq: Seq
    first_prev: Hex64 = Field(
        description="prev of the first record: links the segment to the "
        "chain before it (64 zeros from genesis)."
    )
    first_hash: Hex64
    last_hash: Hex64
    records: Seq = Field(description="Lines in the segment file.")


class Partition(_Strict):
    """The hive partition of a Parquet file."""

    ledger_id: StrictStr
    date: StrictStr


class FileEntry(_Strict):
    """One file of the export."""

    path: StrictStr = Field(description="Relative to the export directory, '/'-separated.")
    role: Literal["data", "segment", "key", "disclosures"]
    sha256: Hex64
    bytes: Seq
    rows: Seq | None = Field(
        description="Rows (data), records (segment) or lines (disclosures); null for keys."
    )
    query: StrictStr | None = Field(
        default=None,
        description="The exact DuckDB query over the segment that yields this "
        "data file's rows (run it from the export directory).",
    )
    partition: Partition | None = None


class KeyWindow(_Strict):
    """A public key shipped with the export and when it may sign."""

    kid: StrictStr
    path: StrictStr
    created: StrictStr | None
    first_seq_signed: Seq | None = Field(description="First segment record it signed.")
    last_seq_signed: Seq | None = Field(description="Last segment record it signed.")
    retired_after_seq: Seq | None
    revoked_from_seq: Seq | None


class Verification(_Strict):
    """``ledger verify`` of the whole ledger at export time."""

    state: Literal["verified", "failed", "not-run"]
    summary: StrictStr
    records: Seq | None
    head_seq: Seq | None
    head_hash: Hex64 | None
    problem_count: Seq | None


class Gap(_Strict):
    """Seqs missing from the segment."""

    from_seq: Seq
    to_seq: Seq
    reason: StrictStr


class GapReport(_Strict):
    """Completeness of the segment: contiguous seqs from first_seq to last_seq, or not."""

    state: Literal["none", "gaps"]
    missing: list[Gap]


class Retention(_Strict):
    """How long the export must be kept."""

    period_months: Annotated[StrictInt, Field(ge=1, le=1200)]
    retain_until: StrictStr = Field(description="Export date plus the period (YYYY-MM-DD).")
    basis: StrictStr


class ExportManifest(_Strict):
    """``manifest.json`` of a ledger export (signed by ``manifest.sig``)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        title="LedgerExportManifest",
        json_schema_extra={"$id": "https://ledger.dev/schemas/export/manifest.v1.schema.json"},
    )

    format: Literal["ledger.export/1"]
    ledger_id: StrictStr
    tool: ToolInfo
    exported_at: StrictStr
    export_format: Literal["agent-trace", "jsonl", "csv", "parquet"]
    filters: Filters
    selected_records: Seq = Field(description="Records the filters selected.")
    segment: SegmentInfo
    files: list[FileEntry]
    keys: list[KeyWindow]
    signing_key: StrictStr = Field(
        description="Key id whose Ed25519 signature over the exact "
        "bytes of manifest.json is manifest.sig (base64)."
    )
    verification: Verification
    gaps: GapReport
    retention: Retention
    complete: StrictBool = Field(description="No gap and the ledger verified.")
    disclose: Literal["none", "policy", "all"] = Field(
        default="none",
        description="What the export carries of the content its records commit to: none "
        "(digests only, the default), policy (disclosures.jsonl with the disclosures of the "
        "fields disclosed_fields names, as `ledger push` publishes them) or all "
        "(disclosures.jsonl: every disclosure of the selected records that opens its "
        "commitment); with either, the tombstones of forgotten ones.",
    )
    disclosed_fields: list[StrictStr] | None = Field(
        default=None,
        description="The fields whose disclosures the export may carry (a name covers what is "
        "below it, [] any index): hooks.yaml's disclose: under policy, [] under none; null: "
        "every field (all). verify-export fails a carried disclosure of any other field.",
    )


def generate_schemas() -> dict[str, dict[str, Any]]:
    """File name (under ``schemas/``) → JSON Schema."""
    return {"export/manifest.v1.schema.json": ExportManifest.model_json_schema()}


def main(argv: list[str] | None = None) -> int:
    """Write the export schemas under ``DIR`` (default ``schemas``)."""
    return write_schemas(generate_schemas(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
