"""Whether a client's hooks, as installed, still fail closed on the client now on ``PATH``.

Claude Code's ``mcp_tool`` hooks block a call their server cannot answer only from the version
that honours ``onFailure: "block"`` (2.1.295, ``versions.CLAUDE_FEATURES``). A client
downgraded below it after ``ledger install`` keeps the hooks and ignores their ``onFailure``:
a dead or killed ``ledger mcp`` would let tool calls through. ``ledger doctor`` says so; the
prompt's command hook, which reaches ledger whatever the server is, refuses the prompt until a
person runs ``ledger install claude`` (decision 0021), which writes command hooks for that
version. Files only, once a prompt: the settings ledger wrote and the client's
``package.json`` (or native install folder); the client itself is never run here, and a
version that cannot be read from files refuses nothing (doctor warns about it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ledger._clients.registry import CLIENTS
from ledger._clients.settings import MCP_HOOK_MARK, _installed_commands, hook_files
from ledger._clients.versions import CLAUDE_FEATURES, format_version, installed_version

__all__ = ["transport_refusal"]


def transport_refusal(
    client: str, root: Path, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why ``client``'s installed hooks would not fail closed on the version on ``PATH``, or
    None when they would (or it cannot be told from files)."""
    if client != "claude":
        return None
    spec = CLIENTS[client]
    home = Path(environ["HOME"]) if environ and environ.get("HOME") else Path.home()
    # Any of them: the client runs the hooks of every settings file (one it cannot read holds
    # none here; the hooks' own checks name it).
    if not any(
        MCP_HOOK_MARK in _installed_commands(spec, path, with_mcp=True).values()
        for path in hook_files(spec, root, home)
    ):
        return None
    on_failure = CLAUDE_FEATURES["hook-on-failure"]
    found = installed_version(client, environ, ask=False)
    if found.version is None or found.version >= on_failure.since:
        return None
    return (
        f"{spec.title} {found.text} ({found.how}) ignores onFailure (from "
        f"{format_version(on_failure.since)}), but this workspace's hooks go through `ledger "
        "mcp`: a dead server would let tool calls through. A person must run `ledger install "
        f"{client}` (command hooks for this version), then start a new session"
    )
