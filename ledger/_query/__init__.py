"""Traceability queries over the ledger: DuckDB over the JSONL, locked down (findings §5)."""

from ledger._query.engine import DEFAULT_MEMORY_LIMIT as DEFAULT_QUERY_MEMORY
from ledger._query.engine import DEFAULT_TIMEOUT as DEFAULT_QUERY_TIMEOUT
from ledger._query.engine import QuerySession
from ledger._query.output import FORMATS as QUERY_FORMATS
from ledger._query.output import format_table, write_result
from ledger._query.report import build_report
from ledger._query.report_html import render_report_html
from ledger._query.sources import LedgerSource, Verification, fetched_sources
from ledger._query.views import (
    Column,
    FoldView,
    SqlView,
    ViewDefinition,
    register_view,
    registered_views,
    view_schema_json,
    view_schema_text,
)

__all__ = [
    "DEFAULT_QUERY_MEMORY",
    "DEFAULT_QUERY_TIMEOUT",
    "QUERY_FORMATS",
    "Column",
    "FoldView",
    "LedgerSource",
    "QuerySession",
    "SqlView",
    "Verification",
    "ViewDefinition",
    "build_report",
    "fetched_sources",
    "format_table",
    "register_view",
    "registered_views",
    "render_report_html",
    "view_schema_json",
    "view_schema_text",
    "write_result",
]
