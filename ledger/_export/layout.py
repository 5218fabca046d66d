"""Names inside an export directory (docs/auditors.md)."""

from __future__ import annotations

from typing import Final

MANIFEST: Final = "manifest.json"
SIGNATURE: Final = "manifest.sig"
SEGMENT: Final = "segment/agent_trace.jsonl"
KEYS_DIR: Final = "keys"
DATA_DIR: Final = "data"
DISCLOSURES: Final = "disclosures.jsonl"
