"""ledger: governed, auditable AI coding agents.

The library is the product; the ``ledger`` CLI is a thin shell over it. Importing ``ledger`` is
cheap: names resolve lazily (PEP 562), so a hook that only appends never imports pydantic,
DuckDB or Typer.

Typical use from hook code::

    from ledger import Ledger

    ledger = Ledger.open()                     # finds .orchestration/ like git
    ledger.append("hook.pre", {"tool": "Write"}, actor={"client": "claude-code"})
    report = ledger.verify()                   # VerifyReport, truthy when intact
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ledger._errors import (
    CanonicalizationError,
    CheckpointError,
    ConfigError,
    InputError,
    IntegrityError,
    KeyNotFoundError,
    LedgerError,
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
    from ledger._adapters import HookDecision, HookEvent, parse_payload, render_response
    from ledger._canonical import canonical_bytes
    from ledger._checkpoint import Checkpoint, parse_checkpoint
    from ledger._engine import (
        HookEngine,
        HookOutcome,
        Invocation,
        InvocationResult,
        MergedDecision,
    )
    from ledger._executors import CommandHook, HttpHook, PromptHook
    from ledger._governed import handle_event
    from ledger._install import install, uninstall
    from ledger._intents import Intent, IntentsFile, load_intents_file
    from ledger._keys import KeyEntry, Keyring, SigningKey
    from ledger._ledger import MAX_RECORD_BYTES, Entry, Ledger, RepairResult
    from ledger._record import FORMAT_VERSION, Record
    from ledger._verify import CheckpointResult, Problem, VerifyReport, verify_lines
    from ledger._workspace import Workspace, find_root

__all__ = [
    "FORMAT_VERSION",
    "MAX_RECORD_BYTES",
    "CanonicalizationError",
    "Checkpoint",
    "CheckpointError",
    "CheckpointResult",
    "CommandHook",
    "ConfigError",
    "Entry",
    "HookDecision",
    "HookEngine",
    "HookEvent",
    "HookOutcome",
    "HttpHook",
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
    "MergedDecision",
    "NotInitializedError",
    "PolicyError",
    "Problem",
    "PromptHook",
    "Record",
    "RepairRefusedError",
    "RepairResult",
    "SigningKey",
    "StorageError",
    "TornTailError",
    "UnverifiableError",
    "VerifyReport",
    "Workspace",
    "WorkspaceNotFoundError",
    "__version__",
    "canonical_bytes",
    "find_root",
    "handle_event",
    "install",
    "load_intents_file",
    "parse_checkpoint",
    "parse_payload",
    "render_response",
    "uninstall",
    "verify_lines",
]

_LAZY = {
    "HookDecision": "ledger._adapters",
    "HookEvent": "ledger._adapters",
    "parse_payload": "ledger._adapters",
    "render_response": "ledger._adapters",
    "HookEngine": "ledger._engine",
    "HookOutcome": "ledger._engine",
    "Invocation": "ledger._engine",
    "InvocationResult": "ledger._engine",
    "MergedDecision": "ledger._engine",
    "CommandHook": "ledger._executors",
    "HttpHook": "ledger._executors",
    "PromptHook": "ledger._executors",
    "handle_event": "ledger._governed",
    "install": "ledger._install",
    "uninstall": "ledger._install",
    "Intent": "ledger._intents",
    "IntentsFile": "ledger._intents",
    "load_intents_file": "ledger._intents",
    "canonical_bytes": "ledger._canonical",
    "Checkpoint": "ledger._checkpoint",
    "parse_checkpoint": "ledger._checkpoint",
    "KeyEntry": "ledger._keys",
    "Keyring": "ledger._keys",
    "SigningKey": "ledger._keys",
    "MAX_RECORD_BYTES": "ledger._ledger",
    "Entry": "ledger._ledger",
    "Ledger": "ledger._ledger",
    "RepairResult": "ledger._ledger",
    "FORMAT_VERSION": "ledger._record",
    "Record": "ledger._record",
    "CheckpointResult": "ledger._verify",
    "Problem": "ledger._verify",
    "VerifyReport": "ledger._verify",
    "verify_lines": "ledger._verify",
    "Workspace": "ledger._workspace",
    "find_root": "ledger._workspace",
}


def __getattr__(name: str) -> Any:  # noqa: ANN401 -- PEP 562 returns any public name
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
