"""Is a person running this command, or an agent? (decision 0013)

A scope grant, and accepting or reverting a tripwire, count only when a person did them. A
terminal is not a person: an agent wraps any command in a pty (``script -qc``, ``unbuffer``,
``python -c 'import pty; pty.spawn(...)'``) and ``isatty`` says yes. What an agent cannot
shed as easily is where it runs: every command an agent's shell starts is a descendant of the
agent's process, and the clients mark the environment they give their shell.

:func:`agent_marker` is the pure decision over (the environment, the chain of ancestor
processes); :func:`ancestor_chain` reads that chain from ``/proc`` (or ``ps`` elsewhere).
Neither is proof against an agent that can run arbitrary code and detach itself from its
parent (double fork, ``setsid``, then ``env -i``): that is what ``--hardened`` (the sandbox
cannot write the ledger) and the tripwire are for (docs/trust-model.md).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Final, Literal

from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "AGENT_ENV_MARKERS",
    "AGENT_PROCESS_NAMES",
    "APPROVAL_KINDS",
    "PERSON_ACTOR",
    "Ancestor",
    "PersonCommandKind",
    "agent_marker",
    "ancestor_chain",
]

#: The records a person's command writes (``ledger intent ...``, ``ledger tamper ...``).
PersonCommandKind = Literal[
    "intent.selected",
    "intent.cleared",
    "intent.scope_expanded",
    "intent.scope_withdrawn",
    "governance.tamper_accepted",
    "governance.tamper_reverted",
    "governance.evidence_refused",
]
#: Of those, the approvals: only a person outside any agent may record them.
APPROVAL_KINDS: Final = frozenset(
    ("intent.scope_expanded", "governance.tamper_accepted", "governance.tamper_reverted")
)
#: The actor's client on a person's command's records.
PERSON_ACTOR: Final = "ledger-cli"

#: Variables an agent client sets in its shell's environment, with the client. Source: the
#: agent-detection list compiled into Claude Code 2.1.330's own binary (``CLAUDECODE``,
#: ``CLAUDE_CODE``, ``REPL_ID``, ``GEMINI_CLI``, ``CODEX_SANDBOX``, ``CODEX_THREAD_ID``,
#: ``COPILOT_CLI``, ``JUNIE_DATA``, ``CURSOR_AGENT``), and the clients' own code (Gemini CLI
#: 0.61 ``GEMINI_CLI_IDENTIFICATION_ENV_VAR``; Claude Code ``CLAUDE_CODE_ENTRYPOINT``).
AGENT_ENV_MARKERS: Final[Mapping[str, str]] = {
    "CLAUDECODE": "Claude Code",
    "CLAUDE_CODE_ENTRYPOINT": "Claude Code",
    "CODEX_SANDBOX": "Codex",
    "CODEX_THREAD_ID": "Codex",
    "CODEX_SANDBOX_NETWORK_DISABLED": "Codex",
    "GEMINI_CLI": "Gemini CLI",
    "COPILOT_CLI": "GitHub Copilot CLI",
    "CURSOR_AGENT": "Cursor",
    "JUNIE_DATA": "Junie",
    "REPL_ID": "Replit Agent",
}

#: Process names (``comm``, or a ``cmdline`` word's base name) of agent clients, and the npm
#: package paths a node-based client runs from (its ``comm`` is often just ``node``).
AGENT_PROCESS_NAMES: Final[Mapping[str, str]] = {
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "cursor-agent": "Cursor",
    "cline": "Cline",
    "copilot": "GitHub Copilot CLI",
    "agy": "Antigravity CLI",
    "antigravity": "Antigravity CLI",
    "kiro-cli": "Kiro CLI",
    "windsurf": "Windsurf",
    "opencode": "OpenCode",
    "aider": "Aider",
    "amp": "Amp",
    "droid": "Factory Droid",
}
_AGENT_PACKAGES: Final[Mapping[str, str]] = {
    "@anthropic-ai/claude-code": "Claude Code",
    "@openai/codex": "Codex",
    "@google/gemini-cli": "Gemini CLI",
    "@github/copilot": "GitHub Copilot CLI",
    "cline": "Cline",
    "@sourcegraph/amp": "Amp",
}
#: Ancestors read at most (a chain longer than this is a loop or an attack; stop and say so).
_MAX_DEPTH: Final = 64


class Ancestor(NamedTuple):
    """One process above this one: its pid, ``comm`` and argv."""

    pid: int
    comm: str
    argv: tuple[str, ...]


def agent_marker(environ: Mapping[str, str], chain: Sequence[Ancestor]) -> str | None:
    """Why this process runs under an agent (a one-line reason), or None if nothing says so.

    Pure: ``environ`` is the process environment, ``chain`` its ancestors from the parent up.
    """
    for name, client in AGENT_ENV_MARKERS.items():
        if environ.get(name):
            return f"{client} set ${name} in this environment"
    for ancestor in chain:
        found = _agent_process(ancestor)
        if found is not None:
            shown = ancestor.comm or (ancestor.argv[0] if ancestor.argv else "?")
            return f"an ancestor process, {shown} (pid {ancestor.pid}), is {found}"
    if len(chain) >= _MAX_DEPTH:
        return f"the process tree is deeper than {_MAX_DEPTH} levels"
    return None


def _agent_process(ancestor: Ancestor) -> str | None:
    names = [ancestor.comm, *(PurePath(word).name for word in ancestor.argv[:3])]
    for name in names:
        client = AGENT_PROCESS_NAMES.get(name.lower().removesuffix(".exe"))
        if client is not None:
            return client
    for word in ancestor.argv[:3]:
        for package, client in _AGENT_PACKAGES.items():
            if f"/node_modules/{package}/" in word:
                return client
    return None


def ancestor_chain(pid: int | None = None) -> list[Ancestor]:
    """This process's ancestors, parent first, up to (not including) pid 1.

    Unreadable entries end the chain (a process may exit while we walk); on a system with
    neither ``/proc`` nor ``ps`` the chain is empty, and :func:`agent_marker` then relies on
    the environment alone.
    """
    current = os.getpid() if pid is None else pid
    chain: list[Ancestor] = []
    seen = {current}
    while len(chain) < _MAX_DEPTH:
        parent = _parent_of(current)
        if parent is None or parent <= 1 or parent in seen:
            break
        seen.add(parent)
        chain.append(_describe(parent))
        current = parent
    return chain


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return _ps_field(pid, "ppid=")
    # Fields after the last ')' (comm may hold spaces and parentheses): state, ppid, ...
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def _describe(pid: int) -> Ancestor:
    try:
        with open(f"/proc/{pid}/comm", "rb") as handle:
            comm = handle.read().decode("utf-8", "replace").strip()
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = tuple(w.decode("utf-8", "replace") for w in handle.read().split(b"\0") if w)
    except OSError:
        line = _ps_text(pid, "command=")
        argv = tuple(line.split()) if line else ()
        comm = PurePath(argv[0]).name if argv else ""
    return Ancestor(pid, comm, argv)


#: Where macOS and the BSDs keep ``ps`` (Linux reads ``/proc``).
_SYSTEM_PS = ("/bin/ps", "/usr/bin/ps")


def _ps_text(pid: int, field: str) -> str | None:
    """``ps -o FIELD -p PID`` where there is no ``/proc`` (macOS, the BSDs)."""
    if Path("/proc").is_dir():
        return None  # /proc was unreadable for this pid: it is gone, or hidden from us
    # The system's own ps, never one found on PATH: the caller's PATH is the process under
    # judgement's, and an agent's ps could describe it as a person's.
    ps = next((p for p in _SYSTEM_PS if os.access(p, os.X_OK)), None)
    if ps is None:
        return None
    try:
        done = subprocess.run(  # noqa: S603 -- fixed argv, no shell
            [ps, "-o", field, "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _ps_field(pid: int, field: str) -> int | None:
    text = _ps_text(pid, field)
    try:
        return int(text) if text else None
    except ValueError:
        return None
