"""Exports that auditors verify on their own, and the sources ``ledger query`` can union."""

from ledger._export.data import EXPORT_FORMATS
from ledger._export.export import ExportOptions, ExportResult, export_ledger
from ledger._export.sources import discover_sources
from ledger._export.verify import ExportCheck, ExportProblem, verify_export

__all__ = [
    "EXPORT_FORMATS",
    "ExportCheck",
    "ExportOptions",
    "ExportProblem",
    "ExportResult",
    "discover_sources",
    "export_ledger",
    "verify_export",
]
