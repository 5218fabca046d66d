"""A client's settings files as ledger reads and writes them: loading and saving JSON settings
atomically, finding ledger's own hook commands in them, and rewriting one (removing it once
nothing of the person's is left). What ``ledger install``, the sandbox hardening and the MCP
registration share, below all three.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, Literal

from ledger._clients.registry import ClientSpec
from ledger._errors import ConfigError, StorageError
from ledger._startup.namedtuple import NamedTuple
from ledger._startup.search_path import program_on_path

__all__ = [
    "Action",
    "Change",
    "default_ledger_command",
    "isolated_command",
    "ledger_command_of",
    "load_settings",
    "save_settings",
    "save_text",
    "script_interpreter",
    "site_free_runner",
]


Action = Literal["added", "updated", "removed", "unchanged", "skipped", "note"]


class Change(NamedTuple):
    """One thing install/uninstall did, found already done, or wants a person to know."""

    action: Action
    target: str
    detail: str


def _ours(command: object, client: str) -> bool:
    return isinstance(command, str) and (
        re.search(rf"(^|[/\s'\"])ledger['\"]? hook {client}\b", command) is not None
    )


def site_free_runner(ledger_cmd: str) -> str | None:
    """What runs a command hook without ``site`` (``cli/_thin.py``):
    ``'<python>' -I -S '<installation>/cli/_thin.py'``, put before the ``ledger`` script when
    ``ledger_cmd`` is that script, alone or as :func:`default_ledger_command` writes it
    (``'<python>' -I '<script>'``), and this very interpreter runs it (its ``#!`` line names
    it, or a name of it in the same folder: ``python3`` for ``python``), so the hook imports
    this installation's code with this interpreter, exactly as the script would; None for any
    other command (a path given by hand, ``python -m cli._entry``, a script of another
    environment): those run as written.

    ``-I`` also keeps the client's ``PYTHON*`` variables and the user's site-packages out of
    the hook's interpreter, as the isolated script command does."""
    import sys  # noqa: PLC0415

    script = ledger_script(ledger_cmd)
    if script is None:
        return None
    thin = Path(__file__).resolve().parents[2] / "cli" / "_thin.py"
    first = _first_line(Path(script))
    if first is None:
        return None
    interpreter = Path(first[2:].rstrip(b"\r\n").decode("utf-8", "replace"))
    running = Path(sys.executable)
    if (
        not first.startswith(b"#!/")
        or interpreter.parent != running.parent  # a venv is known by its folder
        or interpreter.resolve() != running.resolve()
        or not thin.is_file()
    ):
        return None
    return f"{shlex.quote(str(interpreter))} -I -S {shlex.quote(str(thin))}"


def ledger_script(ledger_cmd: str) -> str | None:
    """The absolute path of the ``ledger`` script ``ledger_cmd`` runs, when it is the script
    alone or ``<python> -I <script>``; None for any other command."""
    try:
        words = shlex.split(ledger_cmd)
    except ValueError:
        return None
    if len(words) == 3 and words[1] == "-I":
        words = words[2:]
    if len(words) != 1 or not words[0].startswith("/") or Path(words[0]).name != "ledger":
        return None
    return words[0]


def default_ledger_command() -> str:
    """How client hooks should call ledger: this installation's script, run by its own
    interpreter with ``-I`` (isolated mode: no ``PYTHON*`` variable, no user site folder and no
    script folder on the path), so a ``PYTHONPATH``, a ``PYTHONSTARTUP`` or a
    ``sitecustomize.py`` in the user site never runs inside the hook, which runs outside any
    sandbox. A ``ledger`` whose interpreter its ``#!`` line does not name runs as it is."""
    import sys  # noqa: PLC0415

    candidate = Path(sys.argv[0])
    if candidate.name == "ledger" and candidate.exists():
        return isolated_command(sys.executable, str(candidate.resolve()))
    found = program_on_path("ledger")  # never one in the current folder: it runs every hook
    if not found:
        return "ledger"
    interpreter = script_interpreter(Path(found))
    return isolated_command(str(interpreter), found) if interpreter else shlex.quote(found)


def isolated_command(interpreter: str, script: str) -> str:
    """``interpreter -I script``, quoted for a shell."""
    return f"{shlex.quote(interpreter)} -I {shlex.quote(script)}"


def _first_line(program: Path) -> bytes | None:
    """A script's first line (its ``#!`` line, if any), at most 4 KiB; None when unreadable."""
    try:
        with program.open("rb") as handle:
            return handle.readline(4096)
    except OSError:
        return None


def script_interpreter(program: Path) -> Path | None:
    """The interpreter a script's ``#!`` line names, if it has one."""
    first = _first_line(program)
    if first is None or not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:  # "#!/usr/bin/env python3"
        found = program_on_path(words[-1])
        return Path(found) if found else None
    return Path(words[0])


def ledger_command_of(installed: str) -> str | None:
    """The part of an installed hook command that runs ledger (``ledger``, or ``python -I
    /path/ledger``): its words before ``hook``; ``None`` when the command cannot be read."""
    try:
        words = shlex.split(installed)
    except ValueError:
        return None
    end = words.index("hook") if "hook" in words else min(len(words), 1)
    return shlex.join(words[:end]) or None


def load_settings(path: Path) -> dict[str, Any]:
    """A JSON settings file as an object ({} when missing or empty); one line on bad JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it before installing") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be an object")
    return data


def save_settings(path: Path, data: dict[str, Any]) -> None:
    """Write a JSON settings file atomically (indented, as people edit them)."""
    save_text(path, json.dumps(data, indent=2) + "\n")


def save_text(path: Path, text: str) -> None:
    """Write a client's settings file atomically (a temporary file beside it, then a rename).

    Raises:
        StorageError: it cannot be written (one line, the path named).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.ledger-tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None


def _is_empty(spec: ClientSpec, data: dict[str, Any]) -> bool:
    """Nothing left but what ledger itself adds (Cursor's ``version``)."""
    rest = {k: v for k, v in data.items() if not (k == spec.hooks_key and v == {})}
    for key, value in spec.file_fields.items():
        if rest.get(key) == value:
            del rest[key]
    return not rest


def _remove_empty_dirs(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and its parents while they are empty, never ``stop`` or above."""
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:  # not empty (or not ours to remove): stop here
            return
        directory = directory.parent


def _command_key(spec: ClientSpec) -> str:
    """The handler field holding the command: ``command``, or the flat layout's own
    (Copilot CLI's ``bash``)."""
    return spec.command_key if spec.layout == "flat" else "command"


def _handlers(spec: ClientSpec, entries: list[Any]) -> Iterator[dict[str, Any]]:
    """Every handler object in one event's list (nested groups flattened)."""
    for entry in entries:
        if spec.layout == "flat" or (
            spec.layout == "bundle" and isinstance(entry, dict) and "hooks" not in entry
        ):
            if isinstance(entry, dict):
                yield entry
        elif isinstance(entry, dict):
            yield from (h for h in entry.get("hooks", []) if isinstance(h, dict))


def _rewrite(
    path: Path, spec: ClientSpec, edit: Callable[[dict[str, Any]], list[Change]], stop: Path
) -> list[Change]:
    """Apply ``edit`` to one JSON settings file; save it, or remove it once nothing is left."""
    existed = path.exists()
    data = load_settings(path)
    changes = edit(data)
    if not any(c.action in ("added", "updated", "removed") for c in changes):
        return changes
    if _is_empty(spec, data):
        if existed:
            try:
                path.unlink()
            except OSError as exc:
                raise StorageError(f"cannot remove {path}: {exc.strerror}") from None
            _remove_empty_dirs(path.parent, stop)
    else:
        save_settings(path, data)
    return changes


def _our_handler(spec: ClientSpec, handler: dict[str, Any]) -> bool:
    """A handler ledger wrote: its command hook, or Claude Code's ``mcp_tool`` hook into
    ``ledger mcp`` (:mod:`ledger._clients.mcp_hook`)."""
    from ledger._clients.mcp_hook import is_our_hook_handler  # noqa: PLC0415

    return _ours(handler.get(_command_key(spec)), spec.name) or is_our_hook_handler(handler)


def hook_files(spec: ClientSpec, root: Path, home: Path) -> list[Path]:
    """The files ``spec``'s hooks can be installed in, in the order they are looked in: the
    workspace's machine-local and shared settings (none for a client that reads hooks only per
    user), then the user-wide one."""
    project = () if spec.user_only else (spec.local_file, spec.shared_file)
    return [*(root / f for f in project if f), home / spec.user_file]


#: How :func:`_installed_commands` shows an ``mcp_tool`` hook into ``ledger mcp`` (no command).
MCP_HOOK_MARK: Final = "mcp_tool: ledger/hook"


def _installed_commands(spec: ClientSpec, path: Path, *, with_mcp: bool = False) -> dict[str, str]:
    """event -> our installed command, read from ``path`` (with ``with_mcp``, also the events
    answered through ``ledger mcp``, as :data:`MCP_HOOK_MARK`)."""
    if spec.layout == "scripts":
        found = {}
        for entry in spec.hooks:
            script = path / entry.event
            if script.is_file():
                text = script.read_text(encoding="utf-8", errors="replace")
                if _ours(text, spec.name):
                    found[entry.event] = text.splitlines()[-1]
        return found
    try:
        data = load_settings(path)
    except (ConfigError, StorageError):
        return {}
    found = {}
    hooks = data.get(spec.hooks_key)
    if isinstance(hooks, dict):
        for event, entries in hooks.items():
            if isinstance(entries, list):
                for handler in _handlers(spec, entries):
                    command = handler.get(_command_key(spec))
                    if _ours(command, spec.name):
                        found[event] = str(command)
                    elif with_mcp and _our_handler(spec, handler):
                        found[event] = MCP_HOOK_MARK
    return found
