"""ledger's own MCP tools as the hook sees them (``ledger mcp``, decision 0015).

Selection happens at the hook, where the session is known: the PreToolUse of
``select_active_intent`` is the ``ledger intent select`` of the design documents' handshake,
and ``request_scope_expansion`` is ``ledger intent expand``. Both become an
:class:`~ledger._governance.analysis.intent_command.IntentCommand` with ``via="mcp"``, so the one
``intent-command`` policy selects (recording ``intent.selected`` with ``via: "mcp"``), refuses
with the same reasons, asks a person, and records the approved grant after the call.

The other two tools only read; their names say so (``list``, ``explain`` are
:data:`~ledger._governance.analysis.tool_input.READ_WORDS`), and a path handed to
``explain_line`` is still checked like any read-only tool's: never the private key.

Tool names, as each client's adapter reports them (``ledger/_clients/``):
``mcp__ledger__<tool>``. Claude Code 2.1.330 and Codex 0.169.0 send that name themselves (seen
by tests/conformance/); Gemini CLI 0.61.0 sends ``mcp_ledger_<tool>`` with ``mcp_context``
naming server and tool, and Copilot CLI 1.0.102 ``ledger-<tool>``, which their adapters turn
into the same name; Cline's ``use_mcp_tool`` with ``server_name: ledger`` and Cursor's
``MCP:ledger:<tool>`` likewise; Cursor's ``beforeMCPExecution`` names no server, and its
adapter recognises ledger's by the ``ledger mcp`` command Cursor starts it with. A tool of
another server spelt like ours (``mcp__ledger__…``) gains nothing: selecting and asking are
what the agent may do through its shell anyway, and a grant still needs the person's answer to
the ``ask``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from ledger._governance.analysis.intent_command import IntentCommand

__all__ = [
    "LEDGER_HOOK_TOOL",
    "LEDGER_MCP_SERVER",
    "LEDGER_MCP_TOOLS",
    "intent_command_of",
    "is_hook_tool",
    "ledger_tool",
]

#: The server's name in every client's MCP configuration (``ledger install`` writes it).
LEDGER_MCP_SERVER: Final = "ledger"

#: ledger's MCP tools, in ``tools/list`` order -> what the hook does with a call.
LEDGER_MCP_TOOLS: Final[Mapping[str, Literal["select", "expand", "read"]]] = {
    "select_active_intent": "select",
    "list_intents": "read",
    "request_scope_expansion": "expand",
    "explain_line": "read",
}

#: The tool Claude Code's ``mcp_tool`` hooks call (``ledger/_clients/mcp_hook.py``). It is the
#: client's channel to ledger's hook, never the model's: ``ledger mcp`` keeps it out of
#: ``tools/list``, and a call of it by the model is denied (it would record forged hook calls).
LEDGER_HOOK_TOOL: Final = "hook"

#: Server names under which a client reports one of ledger's intent tools (Cursor's
#: ``beforeMCPExecution`` is named by its ``ledger mcp`` command: ledger/_clients/cursor.py).
_SERVERS: Final = frozenset({LEDGER_MCP_SERVER})


def ledger_tool(tool_name: str | None) -> str | None:
    """The ledger intent tool (``select_active_intent``, ``request_scope_expansion``) a neutral
    tool name calls, or ``None``."""
    if not tool_name or not tool_name.startswith("mcp__"):
        return None
    server, _, tool = tool_name.removeprefix("mcp__").partition("__")
    if server in _SERVERS and LEDGER_MCP_TOOLS.get(tool) in ("select", "expand"):
        return tool
    return None


def is_hook_tool(tool_name: str | None) -> bool:
    """Whether a (neutral) tool name calls ledger's hook tool, ``mcp__ledger__hook``."""
    return tool_name == f"mcp__{LEDGER_MCP_SERVER}__{LEDGER_HOOK_TOOL}"


def intent_command_of(tool: str, tool_input: Mapping[str, Any]) -> IntentCommand:
    """The intent command a call of ledger's ``tool`` (from :func:`ledger_tool`) asks for."""
    from ledger._governance.analysis.intent_command import IntentCommand  # noqa: PLC0415

    intent_id = tool_input.get("intent_id")
    identifier = intent_id if isinstance(intent_id, str) else None
    if LEDGER_MCP_TOOLS[tool] == "select":
        return IntentCommand("select", identifier, (), None, via="mcp")
    raw = tool_input.get("globs")
    globs = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    reason = tool_input.get("reason")
    return IntentCommand(
        "expand",
        identifier,
        tuple(str(g) for g in globs),
        reason if isinstance(reason, str) and reason else None,
        via="mcp",
    )
