"""pydantic models of the record envelope and the documented event bodies.

These models *define* the format: ``schemas/`` is generated from them
(``python -m ledger._evidence.schema``) and ``tests/test_schemas.py`` fails when the two drift
apart. They are not on the hot path: appends build plain dicts (checked by the canonical encoder)
and verification works on the bytes; ``tests/test_models.py`` checks that everything the writer
produces validates here.

Readers that want typed records call :func:`parse_record`, which upcasts old format versions
first (``_upcast``) and never rewrites history.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from typing_extensions import TypeAliasType

from ledger._errors import InputError
from ledger._evidence.record import (
    ADDED_KIND,
    FORMAT_VERSION,
    GENESIS_KIND,
    REPAIRED_KIND,
    REVOKED_KIND,
    ROTATED_KIND,
)

__all__ = [
    "KIND_BODIES",
    "Actor",
    "Attribution",
    "BorrowedLine",
    "Commitment",
    "ConfigChangedBody",
    "Drift",
    "EvidenceRefusedBody",
    "FileChange",
    "ForgottenBody",
    "GenesisBody",
    "KeyAddedBody",
    "KeyRevokedBody",
    "KeyRotatedBody",
    "LedgerRepairedBody",
    "LineHunk",
    "RecordModel",
    "parse_record",
]

SafeInt = Annotated[StrictInt, Field(ge=-(2**53 - 1), le=2**53 - 1)]
Hex64 = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[StrictStr, Field(pattern=r"^ed25519-[0-9a-f]{16}$")]
Base64 = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9+/]*={0,2}$")]

# JSON without floats: what a record body may hold (RFC 8785 + ledger's no-float rule).
JsonValue = TypeAliasType(
    "JsonValue",
    "StrictStr | SafeInt | StrictBool | list[JsonValue] | dict[str, JsonValue] | None",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Commitment(_Strict):
    """A content field in format v3: the salted digest of its value, which the disclosure store
    holds (``SHA-256('ledger.commitment.v1\\0' || JCS({field, salt, value}))``)."""

    commitment: Hex64


ShortLineHash = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{12}$")]
# A content field: the value itself (format v1, v2) or its commitment (v3).
Committed = Annotated[StrictStr | Commitment, Field()]


class Actor(_Strict):
    """Who acted. Every field is present; ``null`` where the client did not say."""

    agent: StrictStr | None = Field(description="Subagent id, when the call came from one.")
    client: StrictStr | None = Field(description="Agent client, e.g. claude-code, cursor.")
    model: StrictStr | None = Field(description="Model id as the client reported it.")
    session: StrictStr | None = Field(description="Client session / conversation id.")


class RecordModel(_Strict):
    """One ledger record, format version 3 (one line of agent_trace.jsonl, RFC 8785 JSON)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        title="LedgerRecord",
        json_schema_extra={
            "$id": f"https://ledger.dev/schemas/record.v{FORMAT_VERSION}.schema.json"
        },
    )

    v: Literal[3] = Field(description="Record format version (older versions are upcast).")
    ledger: StrictStr = Field(min_length=1, description="Ledger id, fixed at init.")
    seq: Annotated[StrictInt, Field(ge=0, le=2**53 - 1)] = Field(
        description="Position in the chain, contiguous from 0."
    )
    prev: Hex64 = Field(description="Hash of record seq-1; 64 zeros for the genesis record.")
    ts: Annotated[StrictStr, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")] = (
        Field(description="UTC time, RFC 3339 with microseconds.")
    )
    kind: Annotated[StrictStr, Field(pattern=r"^[a-z][a-z0-9._-]{0,63}$")] = Field(
        description="What happened, e.g. hook.pre, hook.post, intent.selected, key.rotated."
    )
    actor: Actor
    body: dict[str, JsonValue] = Field(description="Kind-specific body; no floats.")
    key: KeyId = Field(description="Id of the signing key.")
    hash: Hex64 = Field(
        description="SHA-256 of 'ledger.record.v1\\0' || JCS(record without hash and sig)."
    )
    sig: Base64 = Field(
        description="Ed25519 over 'ledger.record-sig.v1\\0' || JCS({hash, ledger, seq})."
    )


class ForkedFrom(_Strict):
    """The ledger a fork continues from, as the copied workspace held it."""

    ledger_id: StrictStr = Field(min_length=1, description="The copied ledger's id.")
    seq: SafeInt = Field(description="Its head's seq, as the copy held it.")
    hash: Hex64 = Field(description="Its head's hash.")
    home: StrictStr = Field(description="The workspace it lives in (where it was copied from).")


class GenesisBody(_Strict):
    """``ledger.genesis`` (seq 0): the ledger's birth certificate."""

    created_by: StrictStr = Field(description="Tool and version that created the ledger.")
    format: Literal[1, 2, 3] = Field(description="Record format version at creation.")
    key: KeyId = Field(description="The first signing key.")
    forked_from: ForkedFrom | None = Field(
        default=None,
        description="``ledger init --fork`` in a copied workspace: the ledger it was copied "
        "with and that one's head, so the evidence before the fork stays traceable.",
    )


class LedgerRepairedBody(_Strict):
    """``ledger.repaired``: ``ledger repair`` fixed the end of the file: a torn line or
    trailing whitespace removed, or a complete last record's missing newline added."""

    added_newline: StrictBool = Field(
        default=False,
        description="The last record was complete and valid but lacked its "
        "final newline: kept, and the newline added.",
    )
    offset: SafeInt = Field(description="Byte offset the file was truncated at.")
    quarantine_file: StrictStr | None = Field(
        description="Where the removed bytes were moved (null when none were removed)."
    )
    removed_bytes: SafeInt = Field(description="How many bytes were removed.")
    removed_kind: Literal["torn", "whitespace"] | None = Field(
        default=None,
        description="A torn line (crash mid-append), or blank lines and "
        "whitespace after the last record; null when nothing was removed.",
    )
    removed_sha256: Hex64 | None = Field(description="SHA-256 of the removed bytes.")


class KeyRotatedBody(_Strict):
    """``key.rotated``: signed by the old key; the new key co-signs the rotation statement."""

    new_key: KeyId
    new_key_sig: Base64 = Field(
        description="New key's Ed25519 signature over 'ledger.key-rotation.v1\\0' || "
        "JCS({ledger, new_key, old_key, prev, seq})."
    )
    old_key: KeyId


class KeyAddedBody(_Strict):
    """``key.added``: a trusted key introduces another key (a teammate, another machine);
    records it signs after this one are trusted."""

    key: KeyId
    public_key: Base64 = Field(description="The Ed25519 public key, 32 bytes, base64.")


class KeyRevokedBody(_Strict):
    """``key.revoked``: records signed by ``key`` from ``from_seq`` on are invalid."""

    from_seq: Annotated[StrictInt, Field(ge=0, le=2**53 - 1)]
    key: KeyId
    reason: StrictStr
    successor: KeyId | None = Field(
        default=None, description="Key that replaced a revoked active key."
    )


class HookErrorObject(_Strict):
    """The standardized error a refusal carries (and the agent receives)."""

    code: StrictStr = Field(
        description="INTENT_REQUIRED, SCOPE_VIOLATION, STALE_FILE, "
        "DESTRUCTIVE_COMMAND, HITL_REJECT, HOOK_ERROR, "
        "ORCHESTRATION_PROTECTED, SCOPE_EXPANSION_REQUESTED, HOOK_BLOCKED, TAMPER"
    )
    message: Committed = Field(description="One line (v3: committed; it quotes paths).")
    meta: dict[str, JsonValue] = Field(
        description="invocation_id, tool, intent_id, risk, mutation_class, affected_files, ..."
    )
    type: StrictStr


class HookResult(_Strict):
    """What one hook (a built-in policy or a configured hook) said."""

    decision: Literal["allow", "deny", "ask"] | None
    duration_ms: SafeInt
    error: HookErrorObject | None
    name: StrictStr
    reason: Committed | None


class ConfigDigests(_Strict):
    """SHA-256 of each governance configuration file (null: the file does not exist)."""

    hooks_sha256: Hex64 | None = Field(description="hooks.yaml (or hooks.json).")
    intents_sha256: Hex64 | None = Field(description="active_intents.yaml.")


class ConfigChangedBody(_Strict):
    """``governance.config_changed``: the governance configuration changed between two
    decisions and no human-run ``ledger`` command recorded it. Written before the first decision
    that uses the new configuration, in the same write."""

    after: ConfigDigests
    before: ConfigDigests
    changed: list[Literal["hooks", "intents"]]
    via: Literal["detected", "cli"] = Field(
        description="'detected' by the hook path, or 'cli': recorded by a ledger command."
    )


class Delivered(_Strict):
    """What the client could do with ledger's decision (decision 0016)."""

    decision: Literal["allow", "deny", "ask"] = Field(
        description="The decision the client enforces: the decided one, or what the client "
        "makes of it (an ask delivered as deny by a client that cannot ask)."
    )
    why: StrictStr | None = Field(
        default=None, description="Why it differs from the decision; absent when it does not."
    )


class _HookBody(_Strict):
    invocation: StrictStr = Field(
        description="Invocation id; the pre and post records of one tool call share it."
    )
    event: StrictStr = Field(description="Neutral (Claude Code) event name.")
    client_event: StrictStr | None = Field(
        default=None, description="Event name as the client sent it."
    )
    tool: StrictStr | None = Field(description="Neutral tool name (Write, Edit, Bash, ...).")
    tool_use_id: StrictStr | None = Field(description="The client's id of the tool call.")
    git_head: StrictStr | None = Field(description="Workspace git HEAD, where it is a repo.")
    cwd: StrictStr | None
    decision: Literal["allow", "deny", "ask"] = Field(
        description="Merged decision: deny > ask > allow; allow also means 'no objection'."
    )
    reason: Committed | None
    error: HookErrorObject | None = Field(
        description="The deciding refusal's error; for allowed calls the first hook error."
    )
    hooks: list[HookResult] = Field(description="Every hook that ran, in order.")
    data: dict[str, JsonValue] = Field(
        description="Facts the policies established: intent_id, paths, risk, mutation_class, "
        "changed_symbols, ..."
    )
    config: ConfigDigests | None = Field(
        default=None, description="The governance configuration this decision used."
    )
    delivered: Delivered | None = Field(
        default=None,
        description="What the client could deliver of the decision (from the client registry); "
        "absent for clients ledger does not know and in records before decision 0016.",
    )


class HookPreBody(_HookBody):
    """``hook.pre``: the governance decision before a tool call."""

    tool_input: dict[str, JsonValue] = Field(
        description="The tool's input; strings over 2 KiB are clipped with their SHA-256. "
        "v3: paths plain and relative, every other argument a commitment."
    )
    attempted_lines: list[ShortLineHash] | None = Field(
        default=None,
        description="v3: short SHA-256 of each line a file write carries (blame of a refused "
        "write), kept plain beside the committed content.",
    )


Sha256Ref = Annotated[StrictStr, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


class LineHunk(_Strict):
    """One hunk of a file change, in git's zero-context form (``@@ -a,b +c,d @@``).

    Line numbers are 1-based. As in git, a pure insertion has ``old_lines == 0`` and
    ``old_start`` is the line *after which* the new lines go; a pure deletion has
    ``new_lines == 0``.
    """

    old_start: SafeInt | None = Field(
        description="First replaced line in the old file; null when the old side is unknown."
    )
    old_lines: SafeInt | None = Field(
        description="How many old lines the hunk replaces; null when unknown."
    )
    new_start: SafeInt = Field(description="First written line in the new file.")
    new_lines: SafeInt = Field(description="How many lines the change wrote there.")
    content_hash: Sha256Ref | None = Field(
        description="'sha256:' of the written lines, LF-normalised, each ending in LF; null "
        "when nothing was written or the text was not available."
    )
    line_hashes: list[ShortLineHash] | None = Field(
        description="Per written line, the first 12 hex digits of the SHA-256 of its text "
        "(no terminator): the line model's identity of each line, so blame can reconcile the "
        "file on disk with the records; null when the text was not available (v1)."
    )


class Drift(_Strict):
    """How a file changed outside every recorded call before a call wrote it (a person's edit,
    a tool ledger does not govern, a ``git checkout``): zero-context hunks from the last version
    the records describe to the call's old side (decision 0009)."""

    from_sha256: Hex64 = Field(
        description="SHA-256 of the last version the records describe (the line model's); the "
        "hunks apply to it and to nothing else."
    )
    hunks: list[LineHunk] = Field(
        description="From that version to the call's old side; their lines are nobody's the "
        "records know."
    )


class BorrowedLine(_Strict):
    """One line a shell command copied from another file it read."""

    line: SafeInt = Field(description="1-based line number in the new file.")
    path: StrictStr | None = Field(
        description="The file it was copied from, when the line is that file's only line with "
        "this text and the file was the version its last record left; null otherwise."
    )
    sha256: Hex64 | None = Field(description="That version's SHA-256 (the line model's).")
    source_line: SafeInt | None = Field(description="1-based line number in that version.")


class FileChange(_Strict):
    """What one tool call did to one file."""

    path: StrictStr = Field(description="Workspace-relative POSIX path after the change.")
    change: Literal["created", "modified", "deleted", "renamed"] | None = Field(
        description="Kind of change; null when the client did not say (v1 records)."
    )
    previous_path: StrictStr | None = Field(
        description="For a rename: the path the file had before."
    )
    sha256: Hex64 | None = Field(
        description="SHA-256 of the file's bytes after the change; null if deleted/unreadable."
    )
    old_sha256: Hex64 | None = Field(
        description="SHA-256 of the file before the change, when the hunks were computed "
        "against it (exact); null when the file did not exist or the old side is unknown."
    )
    lines: SafeInt | None = Field(
        description="Line count of the file after the change; null when unknown."
    )
    mutation_class: StrictStr | None = Field(
        description="AST_REFACTOR, INTENT_EVOLUTION, ... (see the policies), when classified."
    )
    exact: StrictBool = Field(
        description="True when the hunks are the exact diff (git's zero-context Myers hunks, "
        "old side included) so the line model can be replayed; false when only the written "
        "ranges are known (old_start/old_lines are then null)."
    )
    hunks: list[LineHunk]
    unknown_reason: StrictStr | None = Field(
        default=None,
        description="When exact is false and the recorder knows why the old side is unknown "
        "(e.g. the shell snapshot ran out of its time or file budget): blame says so. Absent "
        "otherwise.",
    )
    drift: Drift | None = Field(
        default=None,
        description="When the call's old side is not the last version the records describe: "
        "how it differs from that version, so the lines nobody changed keep their attribution. "
        "Absent otherwise.",
    )
    copied_from: StrictStr | None = Field(
        default=None,
        description="A file that appeared with the content of a version the records describe: "
        "that version's path; its lines keep their attribution, line by line. For a rename "
        "(previous_path) it is absent. Absent otherwise.",
    )
    borrowed: list[BorrowedLine] | None = Field(
        default=None,
        description="Lines a shell command wrote with the text of a line of another file it "
        "read (``cat a b > c``): copied, not written, so blame does not credit the command with "
        "them; each keeps the attribution of the line it was copied from when that line is "
        "certain. Absent otherwise.",
    )
    copied_sha256: Hex64 | None = Field(
        default=None,
        description="With copied_from: the SHA-256 of the version copied (the line model's).",
    )


class Attribution(_Strict):
    """``hook.post`` ``attribution``: which lines of which files this tool call wrote."""

    source: StrictStr = Field(
        description="Where the change came from: structured_patch, content, edit, patch, "
        "snapshot (a shell command's before/after), v1 (upcast)."
    )
    files: list[FileChange]
    command: Committed | None = Field(
        default=None,
        description="source snapshot: the shell command whose before/after these are (its "
        "first 1,000 characters), so blame names it. Absent otherwise.",
    )


class HookPostBody(_HookBody):
    """``hook.post``: the outcome of a tool call, with the edit itself for file writes."""

    observed: dict[str, Hex64] = Field(
        description="Path -> SHA-256 of each file this call read or wrote, as seen right "
        "after it (the session's memory for STALE_FILE)."
    )
    attribution: Attribution | None = Field(
        description="The lines this call wrote, per file; null for calls that wrote nothing."
    )

    outcome: Literal["success", "failure", "blocked"] | None
    duration_ms: SafeInt | None
    tool_error: Committed | None
    edit: dict[str, JsonValue] | None = Field(
        description="content / old_string+new_string / edits / patch, and the client's "
        "structured_patch; enough to rebuild line attribution from the ledger alone."
    )


class HookEventBody(_HookBody):
    """``hook.event``: any other client event (SessionStart, UserPromptSubmit, Stop, ...)."""

    prompt: Committed | None = Field(default=None, description="UserPromptSubmit's prompt.")
    source: StrictStr | None = Field(default=None, description="SessionStart's source.")
    event_reason: StrictStr | None = Field(default=None, description="SessionEnd's reason.")
    agent_type: StrictStr | None = None


class HookFailureBody(_Strict):
    """``hook.error``: the hook itself failed before it could decide (recorded, then the
    client's fail-closed answer)."""

    client: StrictStr
    message: StrictStr
    payload_bytes: SafeInt
    payload_sha256: Hex64 | None
    payload_truncated: StrictBool


class IntentSelectedBody(_Strict):
    """``intent.selected``: a session works under an intent from now on."""

    intent_id: StrictStr
    intents_sha256: StrictStr | None = Field(
        default=None, description="SHA-256 of active_intents.yaml when selected by a hook."
    )
    session: StrictStr | None
    via: Literal["hook", "cli", "mcp"] = Field(
        description="'hook': `ledger intent select` typed in the agent's shell; 'mcp': the "
        "select_active_intent tool of `ledger mcp`, recorded by the hook; 'cli': a person."
    )


class IntentClearedBody(_Strict):
    """``intent.cleared``: the session has no intent any more."""

    session: StrictStr | None
    via: Literal["hook", "cli"]


class ScopeExpandedBody(_Strict):
    """``intent.scope_expanded``: a human approved more scope for an intent.

    A grant widens scope only with an approval proof (``ledger/_governance/state.py``):
    ``approval`` is ``"tty"`` (``ledger intent expand`` run at a terminal), or ``tool_use_id``
    names an earlier ``hook.pre`` whose decision was ``ask`` (the client asked a person, and
    the command ran).
    """

    approval: Literal["person", "tty"] | None = Field(
        default=None,
        description="'person': `ledger intent expand` run by a person outside any agent "
        "(ledger/_governance/person.py); 'tty': the same, recorded before format 0.9.",
    )
    approved_via: StrictStr = Field(
        description="'cli' (a person ran ledger intent expand) or '<client> ask'."
    )
    globs: list[StrictStr]
    intent_id: StrictStr
    reason: StrictStr | None
    session: StrictStr | None
    tool_use_id: StrictStr | None


class ScopeWithdrawnBody(_Strict):
    """``intent.scope_withdrawn``: a person withdrew globs an earlier expansion granted."""

    globs: list[StrictStr]
    intent_id: StrictStr
    reason: StrictStr | None
    session: StrictStr | None
    via: StrictStr = Field(description="'cli': a person ran ledger intent withdraw.")


class TamperChange(_Strict):
    """One protected file the tripwire found changed (ledger/_hooks/tripwire.py)."""

    path: StrictStr
    rule: Literal[
        "config", "strict", "client-config", "git-config", "runtime", "append-only", "checkpoint"
    ]
    what: Literal["changed", "added", "removed"]


class TamperBody(_Strict):
    """``governance.tamper``: on this hook call the tripwire found ledger's protected files or
    records changed outside the hooks and a person's ledger commands. Every tool call is denied
    until ``governance.tamper_accepted`` or ``governance.tamper_reverted``."""

    changes: list[TamperChange]
    event: StrictStr = Field(description="The hook event that found it.")
    problems: list[StrictStr] = Field(description="One line each, at most 50.")
    session: StrictStr | None
    tool: StrictStr | None
    tool_use_id: StrictStr | None


class TamperResolvedBody(_Strict):
    """``governance.tamper_accepted`` / ``governance.tamper_reverted``: a person (outside any
    agent) looked at a tampering and kept the disk as it is, or put the sealed files back."""

    files: list[StrictStr] = Field(description="The protected files accepted or restored.")
    left: list[StrictStr] = Field(description="Files revert could not restore (no copy kept).")
    tamper_seq: SafeInt | None = Field(description="The governance.tamper record resolved.")
    replaced_ledger: StrictStr | None = Field(
        default=None,
        description="The ledger this workspace held before, when the person acknowledged its "
        "replacement by this one (``ledger verify`` flags a replaced ledger until then).",
    )


class TripwireArmedBody(_Strict):
    """``governance.tripwire_armed``: the first seal of the protected set for this ledger."""

    files: SafeInt = Field(description="How many protected files were sealed.")


class EvidenceRefusedBody(_Strict):
    """``governance.evidence_refused``: ``ledger fetch`` refused a teammate's evidence ref
    (rewritten, forked or badly signed); nothing of it was kept (decision 0018)."""

    remote: StrictStr = Field(description="The git remote it was fetched from.")
    ledger_id: StrictStr = Field(description="The ledger whose evidence ref was refused.")
    seq: SafeInt = Field(description="The first bad seq of that ledger.")
    reason: StrictStr = Field(description="The one-line refusal, as the command printed it.")


class ForgottenBody(_Strict):
    """``ledger.forgotten``: a person erased disclosures (``ledger forget``, or the retention
    policy). Their commitments stay in the chain and keep verifying; what they held cannot be
    opened or guessed any more. Never the content, nor the text a ``--match`` looked for."""

    commitments: list[Hex64] = Field(description="The commitments whose disclosures went.")
    fields: SafeInt = Field(description="How many fields were erased.")
    records: SafeInt = Field(description="How many records they belong to.")
    by: list[Literal["seq", "field", "session", "match", "older-than", "retention"]] = Field(
        description="The criteria used."
    )


KIND_BODIES: dict[str, type[BaseModel]] = {
    GENESIS_KIND: GenesisBody,
    REPAIRED_KIND: LedgerRepairedBody,
    ROTATED_KIND: KeyRotatedBody,
    REVOKED_KIND: KeyRevokedBody,
    ADDED_KIND: KeyAddedBody,
    "governance.config_changed": ConfigChangedBody,
    "governance.tamper": TamperBody,
    "governance.tamper_accepted": TamperResolvedBody,
    "governance.tamper_reverted": TamperResolvedBody,
    "governance.tripwire_armed": TripwireArmedBody,
    "governance.evidence_refused": EvidenceRefusedBody,
    "ledger.forgotten": ForgottenBody,
    "hook.pre": HookPreBody,
    "hook.post": HookPostBody,
    "hook.event": HookEventBody,
    "hook.error": HookFailureBody,
    "intent.selected": IntentSelectedBody,
    "intent.cleared": IntentClearedBody,
    "intent.scope_expanded": ScopeExpandedBody,
    "intent.scope_withdrawn": ScopeWithdrawnBody,
}


def parse_record(data: dict[str, Any]) -> tuple[RecordModel, BaseModel | None]:
    """Validate a record (upcast to the current format first) and its body if the kind is known.

    Returns:
        ``(record, body)``; ``body`` is ``None`` for kinds without a registered model.

    Raises:
        InputError: the record does not match the format.
    """
    from pydantic import ValidationError  # noqa: PLC0415

    from ledger._evidence.upcast import upcast  # noqa: PLC0415

    current = upcast(data)
    try:
        record = RecordModel.model_validate(current)
        model = KIND_BODIES.get(record.kind)
        body = model.model_validate(record.body) if model else None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"record does not match format v{FORMAT_VERSION}: {where}: {first['msg']}"
        ) from None
    return record, body
