"""``ledger``, ``ledger -h`` and ``ledger --help`` without importing Typer (~100 ms with pydantic).

The command list must name every command of the Typer app in ``cli._app``; a test compares them.
``ledger COMMAND --help`` is answered by the command itself.
"""

from __future__ import annotations

from typing import Final

from cli._exit import EXIT_CODES_HELP

COMMANDS: Final = (
    ("init", "Make this clone's ledger and signing key; keep the shared files."),
    ("log", "Recent records, one line each; filters; -f follows new ones."),
    ("show", "One record in full (default: the last)."),
    ("verify", "Verify every hash, signature, key, link and seq (and checkpoints)."),
    ("doctor", "Check this workspace: ledger, key, intents, hooks, checkpoint, tripwire."),
    ("checkpoint", "Sign a checkpoint of the head; keep it off this machine."),
    ("push", "Publish this clone's signed evidence to refs/ledger/<id> on a git remote."),
    ("fetch", "Fetch teammates' evidence from a git remote; verify it before keeping it."),
    ("repair", "Recover from a torn tail (crash mid-append)."),
    ("append", "Append one record whose body is the JSON object on stdin."),
    ("query", "One read-only SQL SELECT over the ledger (DuckDB, locked down)."),
    ("report", "A summary for humans; --out DIR also writes report.html."),
    ("export", "Data files, the raw segment, keys and a signed manifest, for auditors."),
    ("verify-export", "Check an export alone: signature, hashes, chain, every row."),
    ("blame", "Who wrote each line: agent, git or unknown (with the reason)."),
    ("review", "A git range for a PR or CI: agent lines, intents, governance, evidence."),
    ("intents", "Every intent: sessions, files, lines attributed now, decisions."),
    ("map", "Regenerate .orchestration/intent_map.md (lines each intent owns)."),
    ("intent", "Intents: list, show, select, clear, expand, expansions, withdraw."),
    ("tamper", "What the tripwire found; a person's accept or revert."),
    ("forget", "Erase disclosed content (prompts, commands, files); the chain still verifies."),
    ("serve", "The resident decider: hook calls answered from one warm process."),
    ("key", "Signing keys: list, rotate, revoke, add, pin, verifier."),
    ("install", "Add ledger's hooks to an agent client's settings."),
    ("uninstall", "Remove ledger's hooks from an agent client's settings."),
    ("hook", "Run as a client hook (what installed hooks call)."),
    ("mcp", "Serve select_active_intent and ledger's other tools to a client (MCP, stdio)."),
    ("demo", "A governed agent session on a throwaway workspace, narrated."),
)


def top_help() -> str:
    """The text of ``ledger --help``."""
    width = max(len(name) for name, _ in COMMANDS)
    commands = "\n".join(f"  {name:<{width}}  {summary}" for name, summary in COMMANDS)
    return (
        "Usage: ledger [OPTIONS] COMMAND [ARGS]...\n\n"
        "  Governed, auditable AI coding agents: a signed, hash-chained ledger of every agent\n"
        "  tool call.\n\n"
        f"Commands:\n{commands}\n\n"
        "Options:\n"
        "  -V, --version         Print the version and exit.\n"
        "  --install-completion  Install shell completion (bash, zsh, fish, PowerShell).\n"
        "  --show-completion     Print the completion script, to install it yourself.\n"
        "  -h, --help            Show this message and exit.\n\n"
        f"{EXIT_CODES_HELP}\n"
        "Run `ledger COMMAND --help` for a command's options.\n"
    )
