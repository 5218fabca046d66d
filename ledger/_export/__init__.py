"""Exports that auditors verify on their own, and the sources ``ledger query`` can union."""

from ledger._export.sources import discover_sources

__all__ = ["discover_sources"]
