"""The ``ledger blame --json`` contract as pydantic models, and its generated JSON Schema.

``python -m ledger._projections.blame_schema [DIR]`` writes ``DIR/blame.v1.schema.json``
(default ``schemas``); ``tests/blame/test_blame_schema.py`` fails when the committed file drifts
from these models, and validates real ``--json`` output against it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

__all__ = ["SCHEMA_FILE", "BlameOutput", "blame_schema", "main"]

SCHEMA_FILE = "blame.v1.schema.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class DeniedAttempt(_Strict):
    """A refused write that tried to put this very line in the file."""

    seq: StrictInt | None
    record_hash: StrictStr | None
    session_id: StrictStr | None
    intent_id: StrictStr | None
    tool: StrictStr | None
    code: StrictStr | None = Field(
        description="DENY code (SCOPE_VIOLATION, STALE_FILE, HITL_REJECT ...)."
    )


class BlameLineModel(_Strict):
    """One line of the working-tree file."""

    line: StrictInt = Field(ge=1, description="1-based line number in the file on disk.")
    status: Literal["agent", "git", "unknown"] = Field(
        description="agent: a recorded, governed tool call wrote it; git: no record explains "
        "it but it is unchanged since a commit; unknown: neither explains it (see reason)."
    )
    content_hash: StrictStr = Field(
        description="First 12 hex digits of the SHA-256 of the "
        "line's text (no terminator; '' under --at for unknowns)."
    )
    seq: StrictInt | None = Field(default=None, description="agent: the hook.post record.")
    record_hash: StrictStr | None = None
    invocation_id: StrictStr | None = None
    tool_use_id: StrictStr | None = None
    tool: StrictStr | None = None
    intent_id: StrictStr | None = None
    session_id: StrictStr | None = None
    client: StrictStr | None = None
    model: StrictStr | None = None
    ts: StrictStr | None = None
    command: StrictStr | None = Field(
        default=None,
        description="agent, written by a shell call (tool Bash ...): its command (first 1,000 "
        "characters). Absent otherwise.",
    )
    ledger_id: StrictStr | None = Field(
        default=None,
        description="agent: the ledger whose record wrote it: this clone's own, or a "
        "teammate's verified ledger fetched with `ledger fetch` (blame in any clone).",
    )
    commit: StrictStr | None = Field(
        default=None,
        description="git: the commit (40 hex); also on a teammate's agent line, and on an "
        "unverified one, which are committed.",
    )
    author: StrictStr | None = None
    author_time: StrictInt | None = Field(default=None, description="git: Unix seconds.")
    orig_line: StrictInt | None = Field(
        default=None, description="git: the line number in that commit."
    )
    orig_file: StrictStr | None = None
    reason: StrictStr | None = Field(default=None, description="unknown: why (always set).")
    unverified: StrictBool | None = Field(
        default=None,
        description="unknown: true when a fetched ledger that does not verify here claims the "
        "line (its ledger_id and record fields name the claim, never trusted); reason ends "
        "with the command that fetches that ledger again.",
    )
    denied: list[DeniedAttempt] | None = None


class StatusCount(_Strict):
    lines: StrictInt
    percent: float


class Summary(_Strict):
    total: StrictInt
    agent: StatusCount
    git: StatusCount
    unknown: StatusCount
    unverified: StatusCount | None = Field(
        default=None,
        description="Of the unknown lines, those a fetched ledger that does not verify "
        "here claims.",
    )


class BlameOutput(_Strict):
    """``ledger blame --json``."""

    file: StrictStr = Field(description="Workspace-relative POSIX path.")
    at: StrictInt | None = Field(
        description="--at SEQ: the model as of that record "
        "(no disk, no git); null for the working tree now."
    )
    summary: Summary
    lines: list[BlameLineModel]


def blame_schema() -> dict[str, Any]:
    """The JSON Schema of ``--json``."""
    schema = BlameOutput.model_json_schema()
    schema["$id"] = f"https://ledger.dev/schemas/{SCHEMA_FILE}"
    return schema


def main(argv: list[str] | None = None) -> int:
    """Write ``DIR/blame.v1.schema.json``."""
    from ledger._evidence.schema import write_schemas  # noqa: PLC0415 -- the one schema writer

    return write_schemas({SCHEMA_FILE: blame_schema()}, argv)


if __name__ == "__main__":
    raise SystemExit(main())
