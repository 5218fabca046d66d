"""The floor of Claude Code's ``mcp_tool`` transport: an MCP server that answers every hook at once.

Stdlib only, one JSON-RPC message per line on stdio (the MCP stdio transport). It serves the
same server name and hook tool as ``ledger mcp`` and answers each hook call ``{}`` (proceed)
without reading it, so a session run through it measures what the client itself adds per
``mcp_tool`` hook: ``bench_claude_hooks.py``'s ``floor`` workspace. Not a product path.

Given a file (``python bench/mcp_floor_server.py LOG``), it also appends each hook call's
``params`` there as a JSON line: the server an agent would swap in for ``ledger``'s, as
``tests/conformance/test_claude_mcp_hooks.py`` does to see which calls it got.
"""

from __future__ import annotations

import json
import sys

TOOL = {
    "name": "hook",
    "description": "floor: answers every hook call at once",
    "inputSchema": {"type": "object", "additionalProperties": True},
}


def _answer(request: dict[str, object]) -> dict[str, object] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification (notifications/initialized, cancelled): no answer
    result: object
    if method == "initialize":
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        result = {
            "protocolVersion": version or "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ledger", "version": "floor"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "{}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    log = sys.argv[1] if len(sys.argv) > 1 else None
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if log is not None and request.get("method") == "tools/call":
            with open(log, "a", encoding="utf-8") as calls:
                calls.write(json.dumps(request.get("params")) + "\n")
        answer = _answer(request)
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
