"""``ledger mcp``: the stdio MCP server a client starts (``ledger.serve_mcp``).

Typer-free: a client starts the server once per session and waits for its first answer, so
``cli._entry`` dispatches here without loading Typer; the MCP SDK itself loads in the library.
"""

from __future__ import annotations

import os

from cli._exit import OK, guarded
from cli._log import CommandParser


def main(args: list[str]) -> int:
    """``ledger mcp [--root DIR]``."""
    parser = CommandParser(
        prog="ledger mcp",
        description=(
            "Serve ledger's tools (select_active_intent, list_intents, request_scope_expansion, "
            "explain_line) to an agent client over MCP on stdin/stdout. `ledger install "
            "<client>` registers it; the client starts it."
        ),
    )
    parser.add_argument(
        "--root",
        default=os.environ.get("LEDGER_ROOT") or None,
        help="Workspace root (default: nearest parent holding .orchestration/; env LEDGER_ROOT).",
    )

    def run() -> int:
        ns = parser.parse_args(args)
        from ledger import serve_mcp  # noqa: PLC0415

        serve_mcp(ns.root)
        return OK

    return guarded(run)
