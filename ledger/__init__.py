"""ledger: governed, auditable AI coding agents.

The library is the product; the ``ledger`` CLI is a thin shell over it. Importing ``ledger`` is
cheap: names resolve lazily (PEP 562), so a hook that only appends never imports pydantic,
DuckDB or Typer.

Typical use from hook code::

    from ledger import Ledger

    ledger = Ledger.open()                     # finds .orchestration/ like git
    ledger.append("app.deploy", {"env": "prod"}, actor={"client": "ci"})
    report = ledger.verify()                   # VerifyReport, truthy when intact
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ledger._errors import (
    CanonicalizationError,
    CheckpointError,
    ConfigError,
    InputError,
    IntegrityError,
    KeyNotFoundError,
    LedgerError,
    NotAPersonError,
    NotInitializedError,
    PolicyError,
    RepairRefusedError,
    StorageError,
    TornTailError,
    UnverifiableError,
    WorkspaceNotFoundError,
)
from ledger._version import __version__

if TYPE_CHECKING:
    from ledger._clients import (
        MAX_PAYLOAD_BYTES,
        HookDecision,
        HookEvent,
        HookResponse,
        parse_payload,
        render_response,
    )
    from ledger._clients.install import HookStatus, hook_status, install, uninstall
    from ledger._clients.registry import CLIENT_NAMES, CLIENTS, ClientSpec
    from ledger._doctor import Check, run_checks
    from ledger._evidence.canonical import canonical_bytes, loads_ledger_json
    from ledger._evidence.checkpoint import Checkpoint, parse_checkpoint, read_checkpoint_file
    from ledger._evidence.keys import KeyEntry, Keyring, SigningKey
    from ledger._evidence.ledger import (
        MAX_RECORD_BYTES,
        AutoCheckpoint,
        Entry,
        Ledger,
        RepairResult,
    )
    from ledger._evidence.read import (
        StoredRecord,
        parse_stored,
        read_records,
        record_at,
        tail_records,
    )
    from ledger._evidence.record import APPEND_RESERVED_PREFIXES, FORMAT_VERSION, Record
    from ledger._evidence.verify import CheckpointResult, Problem, VerifyReport, verify_lines
    from ledger._export import (
        EXPORT_FORMATS,
        ExportCheck,
        ExportOptions,
        ExportProblem,
        ExportResult,
        discover_sources,
        export_ledger,
        verify_export,
    )
    from ledger._governance.engine import (
        HookEngine,
        HookOutcome,
        Invocation,
        InvocationResult,
        MergedDecision,
    )
    from ledger._governance.executors import CommandHook, HttpHook, PromptHook
    from ledger._governance.intents import (
        INTENT_STATUSES,
        INTENTS_FILE,
        WORKABLE_STATUSES,
        Intent,
        IntentsFile,
        did_you_mean,
        expansion_problem,
        intent_refusal,
        load_intents_cached,
        load_intents_file,
        missing_intents_message,
        render_intent_context,
    )
    from ledger._governance.person import agent_marker, ancestor_chain
    from ledger._hooks.service import GovernedWorkspace, TamperResolution, handle_event, run_hook
    from ledger._mcp import MCP_SERVER_NAME, MCP_TOOL_NAMES, McpTools, serve_mcp
    from ledger._projections import GOVERNANCE_STATE, PROJECTIONS, Projection, ProjectionCache
    from ledger._projections.explain import BlameLine, BlameReport, blame_file, current_lines
    from ledger._projections.intent_state import (
        intent_map_markdown,
        intent_summaries,
        write_intent_map,
    )
    from ledger._query import (
        DEFAULT_QUERY_MEMORY,
        DEFAULT_QUERY_TIMEOUT,
        QUERY_FORMATS,
        LedgerSource,
        QuerySession,
        Verification,
        build_report,
        format_table,
        register_view,
        registered_views,
        render_report_html,
        view_schema_json,
        view_schema_text,
        write_result,
    )
    from ledger._setup import InitReport, active_key_id, init_workspace
    from ledger._workspace import Workspace, find_root

__all__ = [
    "APPEND_RESERVED_PREFIXES",
    "CLIENTS",
    "CLIENT_NAMES",
    "DEFAULT_QUERY_MEMORY",
    "DEFAULT_QUERY_TIMEOUT",
    "EXPORT_FORMATS",
    "FORMAT_VERSION",
    "GOVERNANCE_STATE",
    "INTENTS_FILE",
    "INTENT_STATUSES",
    "MAX_PAYLOAD_BYTES",
    "MAX_RECORD_BYTES",
    "MCP_SERVER_NAME",
    "MCP_TOOL_NAMES",
    "PROJECTIONS",
    "QUERY_FORMATS",
    "WORKABLE_STATUSES",
    "AutoCheckpoint",
    "BlameLine",
    "BlameReport",
    "CanonicalizationError",
    "Check",
    "Checkpoint",
    "CheckpointError",
    "CheckpointResult",
    "ClientSpec",
    "CommandHook",
    "ConfigError",
    "Entry",
    "ExportCheck",
    "ExportOptions",
    "ExportProblem",
    "ExportResult",
    "GovernedWorkspace",
    "HookDecision",
    "HookEngine",
    "HookEvent",
    "HookOutcome",
    "HookResponse",
    "HookStatus",
    "HttpHook",
    "InitReport",
    "InputError",
    "IntegrityError",
    "Intent",
    "IntentsFile",
    "Invocation",
    "InvocationResult",
    "KeyEntry",
    "KeyNotFoundError",
    "Keyring",
    "Ledger",
    "LedgerError",
    "LedgerSource",
    "McpTools",
    "MergedDecision",
    "NotAPersonError",
    "NotInitializedError",
    "PolicyError",
    "Problem",
    "Projection",
    "ProjectionCache",
    "PromptHook",
    "QuerySession",
    "Record",
    "RepairRefusedError",
    "RepairResult",
    "SigningKey",
    "StorageError",
    "StoredRecord",
    "TamperResolution",
    "TornTailError",
    "UnverifiableError",
    "Verification",
    "VerifyReport",
    "Workspace",
    "WorkspaceNotFoundError",
    "__version__",
    "active_key_id",
    "agent_marker",
    "ancestor_chain",
    "blame_file",
    "build_report",
    "canonical_bytes",
    "current_lines",
    "did_you_mean",
    "discover_sources",
    "expansion_problem",
    "export_ledger",
    "find_root",
    "format_table",
    "handle_event",
    "hook_status",
    "init_workspace",
    "install",
    "intent_map_markdown",
    "intent_refusal",
    "intent_summaries",
    "load_intents_cached",
    "load_intents_file",
    "loads_ledger_json",
    "missing_intents_message",
    "parse_checkpoint",
    "parse_payload",
    "parse_stored",
    "read_checkpoint_file",
    "read_records",
    "record_at",
    "register_view",
    "registered_views",
    "render_intent_context",
    "render_report_html",
    "render_response",
    "run_checks",
    "run_hook",
    "serve_mcp",
    "tail_records",
    "uninstall",
    "verify_export",
    "verify_lines",
    "view_schema_json",
    "view_schema_text",
    "write_intent_map",
    "write_result",
]

_LAZY = {
    "MCP_SERVER_NAME": "ledger._mcp",
    "MCP_TOOL_NAMES": "ledger._mcp",
    "McpTools": "ledger._mcp",
    "serve_mcp": "ledger._mcp",
    "did_you_mean": "ledger._governance.intents",
    "expansion_problem": "ledger._governance.intents",
    "load_intents_cached": "ledger._governance.intents",
    "missing_intents_message": "ledger._governance.intents",
    "INTENTS_FILE": "ledger._governance.intents",
    "GovernedWorkspace": "ledger._hooks.service",
    "TamperResolution": "ledger._hooks.service",
    "agent_marker": "ledger._governance.person",
    "ancestor_chain": "ledger._governance.person",
    "ProjectionCache": "ledger._projections",
    "GOVERNANCE_STATE": "ledger._projections",
    "PROJECTIONS": "ledger._projections",
    "Projection": "ledger._projections",
    "read_records": "ledger._evidence.read",
    "record_at": "ledger._evidence.read",
    "tail_records": "ledger._evidence.read",
    "parse_stored": "ledger._evidence.read",
    "StoredRecord": "ledger._evidence.read",
    "loads_ledger_json": "ledger._evidence.canonical",
    "format_table": "ledger._query",
    "Verification": "ledger._query",
    "build_report": "ledger._query",
    "render_report_html": "ledger._query",
    "EXPORT_FORMATS": "ledger._export",
    "ExportCheck": "ledger._export",
    "ExportOptions": "ledger._export",
    "ExportProblem": "ledger._export",
    "ExportResult": "ledger._export",
    "export_ledger": "ledger._export",
    "verify_export": "ledger._export",
    "DEFAULT_QUERY_MEMORY": "ledger._query",
    "DEFAULT_QUERY_TIMEOUT": "ledger._query",
    "QUERY_FORMATS": "ledger._query",
    "LedgerSource": "ledger._query",
    "QuerySession": "ledger._query",
    "discover_sources": "ledger._export",
    "register_view": "ledger._query",
    "registered_views": "ledger._query",
    "view_schema_json": "ledger._query",
    "view_schema_text": "ledger._query",
    "write_result": "ledger._query",
    "HookDecision": "ledger._clients",
    "HookEvent": "ledger._clients",
    "parse_payload": "ledger._clients",
    "render_response": "ledger._clients",
    "HookEngine": "ledger._governance.engine",
    "HookOutcome": "ledger._governance.engine",
    "Invocation": "ledger._governance.engine",
    "InvocationResult": "ledger._governance.engine",
    "MergedDecision": "ledger._governance.engine",
    "CommandHook": "ledger._governance.executors",
    "HttpHook": "ledger._governance.executors",
    "PromptHook": "ledger._governance.executors",
    "handle_event": "ledger._hooks.service",
    "run_hook": "ledger._hooks.service",
    "MAX_PAYLOAD_BYTES": "ledger._clients",
    "HookResponse": "ledger._clients",
    "InitReport": "ledger._setup",
    "active_key_id": "ledger._setup",
    "init_workspace": "ledger._setup",
    "BlameLine": "ledger._projections.explain",
    "BlameReport": "ledger._projections.explain",
    "blame_file": "ledger._projections.explain",
    "current_lines": "ledger._projections.explain",
    "intent_map_markdown": "ledger._projections.intent_state",
    "intent_summaries": "ledger._projections.intent_state",
    "write_intent_map": "ledger._projections.intent_state",
    "install": "ledger._clients.install",
    "HookStatus": "ledger._clients.install",
    "hook_status": "ledger._clients.install",
    "CLIENTS": "ledger._clients.registry",
    "CLIENT_NAMES": "ledger._clients.registry",
    "ClientSpec": "ledger._clients.registry",
    "Check": "ledger._doctor",
    "run_checks": "ledger._doctor",
    "uninstall": "ledger._clients.install",
    "Intent": "ledger._governance.intents",
    "IntentsFile": "ledger._governance.intents",
    "load_intents_file": "ledger._governance.intents",
    "INTENT_STATUSES": "ledger._governance.intents",
    "WORKABLE_STATUSES": "ledger._governance.intents",
    "intent_refusal": "ledger._governance.intents",
    "render_intent_context": "ledger._governance.intents",
    "canonical_bytes": "ledger._evidence.canonical",
    "Checkpoint": "ledger._evidence.checkpoint",
    "parse_checkpoint": "ledger._evidence.checkpoint",
    "read_checkpoint_file": "ledger._evidence.checkpoint",
    "AutoCheckpoint": "ledger._evidence.ledger",
    "APPEND_RESERVED_PREFIXES": "ledger._evidence.record",
    "KeyEntry": "ledger._evidence.keys",
    "Keyring": "ledger._evidence.keys",
    "SigningKey": "ledger._evidence.keys",
    "MAX_RECORD_BYTES": "ledger._evidence.ledger",
    "Entry": "ledger._evidence.ledger",
    "Ledger": "ledger._evidence.ledger",
    "RepairResult": "ledger._evidence.ledger",
    "FORMAT_VERSION": "ledger._evidence.record",
    "Record": "ledger._evidence.record",
    "CheckpointResult": "ledger._evidence.verify",
    "Problem": "ledger._evidence.verify",
    "VerifyReport": "ledger._evidence.verify",
    "verify_lines": "ledger._evidence.verify",
    "Workspace": "ledger._workspace",
    "find_root": "ledger._workspace",
}


def __getattr__(name: str) -> Any:  # noqa: ANN401 -- PEP 562 returns any public name
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    # __import__ (the import statement's own path), not importlib.import_module: the same
    # result, and `python -X importtime` then reports what a lazy name loads.
    value = getattr(__import__(module, fromlist=(name,)), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
