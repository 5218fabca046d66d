"""Register ``ledger mcp`` in each client's MCP configuration (``ledger install``, decision 0015).

Where each client reads its servers is data in the registry (:class:`McpConfig`): Claude Code's
``.mcp.json`` (approved in ``.claude/settings.local.json`` by ``enabledMcpjsonServers``, or
Claude Code asks a person before starting it), ``.cursor/mcp.json``, Gemini CLI's
``mcpServers`` in ``.gemini/settings.json``, Codex's ``[mcp_servers.ledger]`` in
``.codex/config.toml`` (a block ledger owns, as for ``--hardened``), and Cline's per-user
``cline_mcp_settings.json``. The entry is named ``ledger`` (:data:`LEDGER_MCP_SERVER`), which
is how the hook recognises the server's tools (``mcp__ledger__select_active_intent``).

The entry runs this machine's ``ledger`` (the same absolute command as the hooks) with
``mcp --root <workspace>`` at project scope, so it serves this workspace whatever directory the
client starts it in; with ``--user`` it has no root and finds the workspace from where the
client starts it. A project install writes nothing outside the project: Cline, which reads MCP
servers per user only, gets a note asking for ``--user``. Idempotent; an entry named
``ledger`` that is not ours is left alone with a note; ``uninstall`` removes ours and leaves no
empty file behind.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any, Final

from ledger._clients.hardening import HARDENED_CODEX_BEGIN
from ledger._clients.registry import ClientSpec, McpConfig
from ledger._clients.settings import Action, Change, load_settings, save_settings, save_text
from ledger._errors import ConfigError, StorageError
from ledger._governance.analysis.ledger_mcp import LEDGER_MCP_SERVER

__all__ = [
    "mcp_config_path",
    "mcp_entry",
    "register_server",
    "registered_in",
    "unregister_server",
]

_TOML_BEGIN: Final = "# >>> ledger mcp server (ledger install codex; ledger uninstall removes it)"
_TOML_END: Final = "# <<< ledger mcp server"


def mcp_config_path(config: McpConfig, *, user: bool, root: Path, home: Path) -> Path:
    """The file ``ledger install`` registers the server in."""
    if user or config.project_file is None:
        return home / config.user_file
    return root / config.project_file


def mcp_entry(ledger_cmd: str, root: Path | None) -> dict[str, Any]:
    """The server entry: ``{"command", "args"}`` running ``ledger mcp [--root ROOT]``."""
    words = shlex.split(ledger_cmd) or ["ledger"]
    args = [*words[1:], "mcp"]
    if root is not None:
        args += ["--root", str(root)]
    return {"command": words[0], "args": args}


def _ours(entry: object) -> bool:
    """An entry ledger wrote: it runs a ``ledger`` executable (itself, or by its interpreter:
    ``python -I /path/ledger``) with ``mcp``."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or "mcp" not in args:
        return False
    runs = [command, *args[: args.index("mcp")]]
    return any(isinstance(word, str) and Path(word).name == "ledger" for word in runs)


# --- JSON files --------------------------------------------------------------------------------


def _remove(path: Path, stop: Path) -> None:
    try:
        path.unlink()
    except OSError as exc:
        raise StorageError(f"cannot remove {path}: {exc.strerror}") from None
    directory = path.parent
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _json_register(path: Path, key: str, entry: dict[str, Any]) -> list[Change]:
    data = load_settings(path)
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: {key} must be an object of servers")
    found = servers.get(LEDGER_MCP_SERVER)
    if found == entry:
        return [Change("unchanged", str(path), "MCP server ledger already registered")]
    if found is not None and not _ours(found):
        return [
            Change(
                "skipped",
                str(path),
                f"{key}.{LEDGER_MCP_SERVER} is another server; rename it to let ledger "
                "register its own",
            )
        ]
    servers[LEDGER_MCP_SERVER] = entry
    save_settings(path, data)
    action: Action = "updated" if found is not None else "added"
    return [Change(action, str(path), f"MCP server {LEDGER_MCP_SERVER}: {_shown(entry)}")]


def _json_unregister(path: Path, key: str, stop: Path) -> list[Change]:
    if not path.exists():
        return []
    data = load_settings(path)
    servers = data.get(key)
    if not isinstance(servers, dict) or not _ours(servers.get(LEDGER_MCP_SERVER)):
        return []
    del servers[LEDGER_MCP_SERVER]
    if not servers:
        del data[key]
    if data:
        save_settings(path, data)
    else:
        _remove(path, stop)
    return [Change("removed", str(path), f"MCP server {LEDGER_MCP_SERVER}")]


def _enable(path: Path, key: str, *, on: bool, stop: Path) -> list[Change]:
    """Add (or remove) the server in the client's list of approved project servers."""
    if not on and not path.exists():
        return []
    data = load_settings(path)
    listed = data.get(key, [])
    if not isinstance(listed, list):
        raise ConfigError(f"{path}: {key} must be a list of server names")
    if on == (LEDGER_MCP_SERVER in listed):
        return []  # the server entry's own change says whether anything changed
    if on:
        data[key] = [*listed, LEDGER_MCP_SERVER]
    else:
        rest = [name for name in listed if name != LEDGER_MCP_SERVER]
        if rest:
            data[key] = rest
        else:
            del data[key]
    if data:
        save_settings(path, data)
    else:
        _remove(path, stop)
    return [Change("added" if on else "removed", str(path), f"{key}: {LEDGER_MCP_SERVER}")]


# --- Codex: a TOML block of our own ------------------------------------------------------------


def _strip_block(text: str) -> str:
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\n")
        if bare == _TOML_BEGIN:
            inside = True
        elif inside:
            inside = bare != _TOML_END
        else:
            out.append(line)
    return "".join(out)


def _toml_block(key: str, entry: dict[str, Any]) -> str:
    # A TOML basic string is a JSON string for these values (paths, words).
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return "\n".join(
        [
            _TOML_BEGIN,
            f"[{key}.{LEDGER_MCP_SERVER}]",
            f"command = {json.dumps(entry['command'])}",
            f"args = [{args}]",
            _TOML_END,
            "",
        ]
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None


def _toml_register(path: Path, key: str, entry: dict[str, Any]) -> list[Change]:
    existing = _read(path)
    rest = _strip_block(existing)
    try:
        parsed = tomllib.loads(rest)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it first") from None
    servers = parsed.get(key, {})
    if isinstance(servers, dict) and LEDGER_MCP_SERVER in servers:
        return [
            Change(
                "skipped",
                str(path),
                f"[{key}.{LEDGER_MCP_SERVER}] is set outside ledger's block; remove it to let "
                "ledger register its own",
            )
        ]
    block = _toml_block(key, entry)
    if block in existing:
        return [Change("unchanged", str(path), "MCP server ledger already registered")]
    # Before --hardened's block when there is one: that block ends the file after every
    # hardened install, so this order is the one both installs keep (idempotent).
    lines = rest.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if ln.rstrip("\n") == HARDENED_CODEX_BEGIN), None)
    head, tail = (rest, "") if at is None else ("".join(lines[:at]), "".join(lines[at:]))
    body = head.rstrip("\n")
    text = (body + "\n\n" if body else "") + block + ("\n" + tail if tail else "")
    tomllib.loads(text)  # what we write parses, or we raise before writing
    if text == existing:
        return [Change("unchanged", str(path), "MCP server ledger already registered")]
    save_text(path, text)
    action: Action = "updated" if _TOML_BEGIN in existing else "added"
    return [Change(action, str(path), f"MCP server {LEDGER_MCP_SERVER}: {_shown(entry)}")]


def _toml_unregister(path: Path, stop: Path) -> list[Change]:
    existing = _read(path)
    if _TOML_BEGIN not in existing:
        return []
    rest = _strip_block(existing).rstrip("\n")
    if rest.strip():
        save_text(path, rest + "\n")
    else:
        _remove(path, stop)
    return [Change("removed", str(path), f"MCP server {LEDGER_MCP_SERVER}")]


def registered_in(spec: ClientSpec, *, root: Path, home: Path) -> Path | None:
    """The file where ``spec`` finds ledger's ``ledger mcp`` entry (project first, then the
    user's), or ``None``. Reads files only; an unreadable one counts as not registering it."""
    config = spec.mcp
    for user in (False, True):
        if not user and config.project_file is None:
            continue
        path = mcp_config_path(config, user=user, root=root, home=home)
        try:
            if config.format == "toml":
                servers = tomllib.loads(_read(path)).get(config.key, {})
            else:
                servers = load_settings(path).get(config.key, {})
        except (ConfigError, StorageError, tomllib.TOMLDecodeError):
            continue
        if isinstance(servers, dict) and _ours(servers.get(LEDGER_MCP_SERVER)):
            return path
    return None


# --- install / uninstall --------------------------------------------------------------------


def _shown(entry: dict[str, Any]) -> str:
    return shlex.join([entry["command"], *entry["args"]])


def register_server(
    spec: ClientSpec, *, root: Path, user: bool, home: Path, ledger_cmd: str
) -> list[Change]:
    """Register ``ledger mcp`` in ``spec``'s MCP configuration (idempotent)."""
    config = spec.mcp
    path = mcp_config_path(config, user=user, root=root, home=home)
    entry = mcp_entry(ledger_cmd, None if user else root)
    if not user and config.project_file is None:
        # A project install writes nothing outside the project: the person chooses --user.
        return [
            Change(
                "note",
                str(path),
                f"{spec.title} reads MCP servers per user only: run `ledger install "
                f"{spec.name} --user` to register ledger's tools (select_active_intent ...) there",
            )
        ]
    if config.format == "toml":
        changes = _toml_register(path, config.key, entry)
    else:
        changes = _json_register(path, config.key, entry)
    if config.enable and not user and spec.local_file is not None:
        changes += _enable(root / spec.local_file, config.enable, on=True, stop=root)
    if not user and any(c.action in ("added", "updated") for c in changes):
        changes.append(
            Change(
                "note",
                str(config.project_file),
                "names this machine's ledger path: keep it out of git (each clone runs "
                "`ledger install`), or use --user",
            )
        )
    return changes


def unregister_server(spec: ClientSpec, *, root: Path, user: bool, home: Path) -> list[Change]:
    """Remove ``ledger mcp`` from ``spec``'s MCP configuration (only the entry ledger wrote)."""
    config = spec.mcp
    path = mcp_config_path(config, user=user, root=root, home=home)
    if not user and config.project_file is None:
        return []  # a project install wrote nothing there
    stop = home if user else root
    if config.format == "toml":
        changes = _toml_unregister(path, stop)
    else:
        changes = _json_unregister(path, config.key, stop)
    if config.enable and not user and spec.local_file is not None:
        changes += _enable(root / spec.local_file, config.enable, on=False, stop=root)
    return changes
