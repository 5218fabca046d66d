"""``ledger install|uninstall <client>``: merge ledger's hook entries into a client's settings.

Idempotent (an entry already present is left alone), keeps every other hook, and reports what
changed. Our entries are recognised by their command, ``<ledger> hook <client>``. Locations and
layouts follow hook-protocols.md: Claude Code §1.1, Cursor §2, Gemini CLI §3, Codex §4, Cline §5.
"""

from __future__ import annotations

import json
import re
import shlex
import stat
from pathlib import Path
from typing import Any, Final, NamedTuple

from ledger._errors import ConfigError, InputError, StorageError

__all__ = ["CLIENT_EVENTS", "Change", "install", "settings_path", "uninstall"]

# Events each client gets, with a tool matcher where the client filters by tool.
CLIENT_EVENTS: Final[dict[str, tuple[tuple[str, str | None], ...]]] = {
    "claude": (("PreToolUse", "*"), ("PostToolUse", "*"), ("PostToolUseFailure", "*"),
               ("PermissionDenied", "*"), ("SessionStart", None), ("SessionEnd", None),
               ("UserPromptSubmit", None), ("Stop", None), ("SubagentStop", None)),
    "codex": (("PreToolUse", "*"), ("PostToolUse", "*"), ("SessionStart", None),
              ("UserPromptSubmit", None), ("Stop", None)),
    "gemini": (("BeforeTool", ".*"), ("AfterTool", ".*"), ("SessionStart", None),
               ("SessionEnd", None), ("BeforeAgent", None)),
    "cursor": (("preToolUse", None), ("postToolUse", None), ("postToolUseFailure", None),
               ("beforeShellExecution", None), ("afterShellExecution", None),
               ("beforeMCPExecution", None), ("afterMCPExecution", None),
               ("afterFileEdit", None), ("beforeSubmitPrompt", None), ("sessionStart", None),
               ("sessionEnd", None), ("stop", None)),
    "cline": (("PreToolUse", None), ("PostToolUse", None), ("TaskStart", None),
              ("TaskResume", None), ("TaskCancel", None), ("TaskComplete", None),
              ("UserPromptSubmit", None), ("PreCompact", None)),
}
_CURSOR_PRE: Final = frozenset({"preToolUse", "beforeShellExecution", "beforeMCPExecution"})


class Change(NamedTuple):
    """One thing install/uninstall did (or found already done)."""

    action: str  # added | removed | unchanged | skipped
    target: str
    detail: str


def settings_path(client: str, *, user: bool, root: Path, home: Path | None = None) -> Path:
    """Where ``client`` reads hooks from (project scope unless ``user``)."""
    home = home or Path.home()
    base = home if user else root
    if client == "claude":
        return base / ".claude" / "settings.json"
    if client == "codex":
        return base / ".codex" / "hooks.json"
    if client == "cursor":
        return base / ".cursor" / "hooks.json"
    if client == "gemini":
        return base / ".gemini" / "settings.json"
    if client == "cline":
        return (home / "Documents" / "Cline" / "Hooks") if user else (
            root / ".clinerules" / "hooks")
    raise InputError(f"unknown client {client!r}; expected one of {', '.join(CLIENT_EVENTS)}")


def _ours(command: object, client: str) -> bool:
    return isinstance(command, str) and re.search(
        rf"(^|[/\s'\"])ledger['\"]? hook {client}\b", command) is not None


def _command(ledger_cmd: str, client: str, event: str) -> str:
    return f"{ledger_cmd} hook {client} --event {event}"


def _load(path: Path) -> dict[str, Any]:
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


def _save(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.ledger-tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None


def _nested_install(data: dict[str, Any], client: str, ledger_cmd: str) -> list[Change]:
    """Claude Code / Codex / Gemini layout: {hooks: {Event: [{matcher, hooks: [handler]}]}}."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("settings: hooks must be an object")
    changes = []
    for event, matcher in CLIENT_EVENTS[client]:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"settings: hooks.{event} must be a list")
        for existing in groups:
            if not isinstance(existing, dict) or not isinstance(existing.get("hooks", []), list):
                raise ConfigError(f"settings: every hooks.{event} entry must be an object "
                                  "whose hooks is a list")
        present = any(_ours(h.get("command"), client) for g in groups
                      for h in g.get("hooks", []) if isinstance(h, dict))
        if present:
            changes.append(Change("unchanged", event, "already installed"))
            continue
        handler: dict[str, Any] = {"type": "command",
                                   "command": _command(ledger_cmd, client, event)}
        if client == "gemini":
            handler["name"] = "ledger"
        group: dict[str, Any] = {"hooks": [handler]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        groups.append(group)
        changes.append(Change("added", event, handler["command"]))
    return changes


def _nested_uninstall(data: dict[str, Any], client: str) -> list[Change]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changes = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"]
                    if not (isinstance(h, dict) and _ours(h.get("command"), client))]
            if len(kept) != len(group["hooks"]):
                changes.append(Change("removed", event, "ledger hook"))
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return changes


def _cursor_install(data: dict[str, Any], ledger_cmd: str) -> list[Change]:
    """Cursor layout: {version: 1, hooks: {event: [{command, failClosed?}]}} (flat list)."""
    data.setdefault("version", 1)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("hooks.json: hooks must be an object of event names")
    changes = []
    for event, _ in CLIENT_EVENTS["cursor"]:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"hooks.json: hooks.{event} must be a list")
        if any(isinstance(e, dict) and _ours(e.get("command"), "cursor") for e in entries):
            changes.append(Change("unchanged", event, "already installed"))
            continue
        entry: dict[str, Any] = {"command": _command(ledger_cmd, "cursor", event)}
        if event in _CURSOR_PRE:
            entry["failClosed"] = True  # Cursor fails open on a crashed hook unless told not to
        entries.append(entry)
        changes.append(Change("added", event, entry["command"]))
    return changes


def _cursor_uninstall(data: dict[str, Any]) -> list[Change]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changes = []
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept = [e for e in entries if not (isinstance(e, dict)
                                           and _ours(e.get("command"), "cursor"))]
        if len(kept) != len(entries):
            changes.append(Change("removed", event, "ledger hook"))
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return changes


def _cline(directory: Path, ledger_cmd: str, *, remove: bool) -> list[Change]:
    """Cline: one executable per hook, named exactly after it, in the hooks directory."""
    changes = []
    for event, _ in CLIENT_EVENTS["cline"]:
        path = directory / event
        script = f"#!/bin/sh\n# installed by ledger\nexec {_command(ledger_cmd, 'cline', event)}\n"
        existing = path.read_text(encoding="utf-8") if path.is_file() else None
        ours = existing is not None and _ours(existing, "cline")
        if remove:
            if ours:
                path.unlink()
                changes.append(Change("removed", str(path), "ledger hook"))
            continue
        if ours:
            changes.append(Change("unchanged", str(path), "already installed"))
        elif existing is not None:
            changes.append(Change("skipped", str(path), "a different hook script exists; "
                                  "add `" + _command(ledger_cmd, "cline", event) + "` to it"))
        else:
            try:
                directory.mkdir(parents=True, exist_ok=True)
                path.write_text(script, encoding="utf-8")
                path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            except OSError as exc:
                raise StorageError(f"cannot write {path}: {exc.strerror}") from None
            changes.append(Change("added", str(path), "hook script"))
    return changes


def default_ledger_command() -> str:
    """How client hooks should call ledger: the absolute path of this installation's script."""
    import shutil  # noqa: PLC0415
    import sys  # noqa: PLC0415

    candidate = Path(sys.argv[0])
    if candidate.name == "ledger" and candidate.exists():
        return shlex.quote(str(candidate.resolve()))
    found = shutil.which("ledger")
    return shlex.quote(found) if found else "ledger"


def install(client: str, *, root: Path, user: bool = False, ledger_cmd: str | None = None,
            home: Path | None = None) -> tuple[Path, list[Change]]:
    """Install ledger's hooks for ``client``. Returns the settings path and the changes."""
    path = settings_path(client, user=user, root=root, home=home)
    cmd = ledger_cmd or default_ledger_command()
    if client == "cline":
        return path, _cline(path, cmd, remove=False)
    data = _load(path)
    changes = _cursor_install(data, cmd) if client == "cursor" else _nested_install(
        data, client, cmd)
    if any(c.action == "added" for c in changes):
        _save(path, data)
    return path, changes


def uninstall(client: str, *, root: Path, user: bool = False,
              home: Path | None = None) -> tuple[Path, list[Change]]:
    """Remove ledger's hooks for ``client``, leaving every other hook in place."""
    path = settings_path(client, user=user, root=root, home=home)
    if client == "cline":
        return path, _cline(path, "", remove=True)
    if not path.exists():
        return path, []
    data = _load(path)
    changes = _cursor_uninstall(data) if client == "cursor" else _nested_uninstall(data, client)
    if changes:
        _save(path, data)
    return path, changes

