"""The ``ledger review --json`` contract as pydantic models, and its generated JSON Schema.

``python -m ledger._review.schema [DIR]`` writes ``DIR/review.v1.schema.json`` (default
``schemas``); ``tests/review/test_review.py`` fails when the committed file drifts from these
models, and validates real ``--json`` output against it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

__all__ = ["SCHEMA_FILE", "ReviewOutput", "main", "review_schema"]

SCHEMA_FILE = "review.v1.schema.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Shares(_Strict):
    agent: float
    git: float
    unknown: float


class Counts(_Strict):
    """Lines by blame status; ``unverified`` lines are among the ``unknown`` ones."""

    agent: StrictInt
    git: StrictInt
    unknown: StrictInt
    unverified: StrictInt = Field(
        description="Lines only a ledger that does not verify here explains (counted unknown)."
    )
    total: StrictInt
    shares: Shares = Field(description="Percent of total per status.")


class Run(_Strict):
    """Consecutive lines with one explanation."""

    start: StrictInt
    end: StrictInt
    lines: StrictInt
    status: Literal["agent", "git", "unknown"]
    ledger_id: StrictStr | None = None
    seq: StrictInt | None = None
    record_hash: StrictStr | None = None
    session_id: StrictStr | None = None
    intent_id: StrictStr | None = None
    client: StrictStr | None = None
    model: StrictStr | None = None
    tool: StrictStr | None = None
    ts: StrictStr | None = None
    in_scope: StrictBool | None = Field(
        default=None,
        description="agent: inside the scope its session held when the record was written "
        "(owned_scope plus approved expansions); null when the intent is not declared.",
    )
    commit: StrictStr | None = None
    author: StrictStr | None = None
    reason: StrictStr | None = None
    unverified: StrictBool | None = None


class File(_Strict):
    path: StrictStr = Field(description="From the repository's top (see range.prefix).")
    old_path: StrictStr | None
    change: Literal[
        "added", "modified", "renamed", "copied", "deleted", "binary", "submodule", "symlink"
    ]
    added: StrictInt = Field(description="Lines the range adds or changes in this file.")
    removed: StrictInt
    note: StrictStr | None
    lines: Counts
    runs: list[Run]


class Expansion(_Strict):
    glob: StrictStr
    approved_by: StrictStr | None = None
    ts: StrictStr | None = None
    seq: StrictInt | None = None
    record_hash: StrictStr | None = None
    ledger_id: StrictStr | None = None


class ScopeVersion(_Strict):
    """The intents file some of an intent's agent lines were written under."""

    intents_sha256: StrictStr | None = Field(
        description="SHA-256 of the intents file the writing record's decision used "
        "(config.intents_sha256); null: the record names none."
    )
    source: StrictStr | None = Field(
        description="Where that file was found: this checkout's, or `git <commit>:<path>`; "
        "null: found nowhere, so the scope was judged against this checkout's file (a note "
        "says so)."
    )
    owned_scope: list[StrictStr] | None = Field(
        description="The intent's owned_scope in the file used; null: not declared in it."
    )
    lines: StrictInt


class IntentEntry(_Strict):
    id: StrictStr
    name: StrictStr | None
    status: StrictStr | None
    owned_scope: list[StrictStr]
    acceptance_criteria: list[StrictStr]
    declared: StrictBool
    lines: StrictInt
    in_scope: StrictInt
    out_of_scope: StrictInt
    expansions_used: list[Expansion]
    sessions: list[StrictStr | None]
    scopes: list[ScopeVersion] = Field(
        description="in_scope/out_of_scope are judged against the intents file as of when "
        "each line was written: one entry per version its lines were written under."
    )


class GovernanceItem(_Strict):
    type: Literal[
        "denial",
        "ask",
        "scope_expansion",
        "scope_withdrawal",
        "tamper",
        "tamper_accepted",
        "tamper_reverted",
        "config_changed",
        "hook_error",
    ]
    seq: StrictInt
    record_hash: StrictStr | None
    ledger_id: StrictStr
    ts: StrictStr | None
    session_id: StrictStr | None
    code: StrictStr | None = None
    tool: StrictStr | None = None
    intent_id: StrictStr | None = None
    detail: StrictStr | None = None
    answer: StrictStr | None = None
    approved_by: StrictStr | None = None


class Checkpoint(_Strict):
    size: StrictInt
    name: StrictStr


class Pushed(_Strict):
    commit: StrictStr
    records: StrictInt | None


class Evidence(_Strict):
    ledger_id: StrictStr
    whose: StrictStr
    verified: StrictBool
    summary: StrictStr
    key: StrictStr | None
    pinned: StrictBool
    records: StrictInt | None
    newest_checkpoint: Checkpoint | None
    pushed: Pushed | None
    remote: StrictStr | None
    lines: StrictInt = Field(description="Agent lines of the range this ledger explains.")
    unverified_lines: StrictInt = Field(
        description="Lines of the range this ledger claims while it does not verify here "
        "(counted unknown and unverified, never agent)."
    )
    fix: StrictStr | None = Field(description="The command that fixes unverified evidence.")


class Range(_Strict):
    spec: StrictStr
    base: StrictStr
    head: StrictStr
    commits: StrictInt
    prefix: StrictStr = Field(
        description="The workspace's folder in the repository ('' at its top, else ending in "
        "'/'). Every path of the review (files, SARIF) is relative to the repository's top."
    )


class Group(_Strict):
    key: StrictStr
    agent: StrictInt
    git: StrictInt
    unknown: StrictInt
    unverified: StrictInt
    total: StrictInt
    shares: Shares


class History(_Strict):
    by: Literal["week", "intent", "model", "client", "author"]
    groups: list[Group]


class ReviewOutput(_Strict):
    """``ledger review --json``."""

    version: Literal[1]
    generated_at: StrictStr
    range: Range
    totals: Counts
    files: list[File]
    intents: list[IntentEntry]
    governance: list[GovernanceItem]
    evidence: list[Evidence]
    notes: list[StrictStr]
    history: History | None


def review_schema() -> dict[str, Any]:
    """The JSON Schema of ``--json``."""
    schema = ReviewOutput.model_json_schema()
    schema["$id"] = f"https://ledger.dev/schemas/{SCHEMA_FILE}"
    return schema


def main(argv: list[str] | None = None) -> int:
    """Write ``DIR/review.v1.schema.json``."""
    from ledger._evidence.schema import write_schemas  # noqa: PLC0415 -- the one schema writer

    return write_schemas({SCHEMA_FILE: review_schema()}, argv)


if __name__ == "__main__":
    raise SystemExit(main())
