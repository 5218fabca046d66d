"""``ledger install|uninstall <client>``: put ledger's hooks where each client reads them.

Everything client-specific comes from the registry (:data:`~ledger._clients.registry.CLIENTS`):
where the settings live, their layout, the events, and which events gate tool calls (the
adapter's ``native_phase``). Three rules hold for every client:

* **Machine-specific commands go where the client keeps this machine's settings.** The command
  names this installation's absolute ``ledger`` path, so it goes to the client's local file
  (Claude Code: ``.claude/settings.local.json``). Clients without one get the shared file and a
  note saying so; ``--user`` writes the user-wide file.
* **A hook that cannot run fails closed on tool-gating events.** Each tool-gating command ends
  in a guard that exits 2 (block) whenever ``ledger`` itself could not answer: a moved venv
  (127), a broken interpreter (126), a crash. Observational events (Stop, SessionStart ...) end
  in the client's *non-blocking* exit instead, so a broken ``ledger`` never blocks them.
* **Uninstall leaves nothing behind it created:** no ``{}`` file, no empty hook folder.

Each install also registers the ``ledger mcp`` server in the client's MCP configuration
(:mod:`ledger._clients.mcp_config`), and uninstall removes it.

``hardened=True`` also configures the client's own OS sandbox where it has one
(:mod:`ledger._clients.hardening`). Idempotent: an entry already present is left alone, an
entry of ours with another command is updated, every other setting is kept.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from ledger._clients.registry import ClientSpec, adapter, client_spec
from ledger._clients.settings import (
    MCP_HOOK_MARK,
    Action,
    Change,
    _command_key,
    _handlers,
    _installed_commands,
    _our_handler,
    _ours,
    _remove_empty_dirs,
    _rewrite,
    default_ledger_command,
    hook_files,
    isolated_command,
    ledger_script,
    script_interpreter,
    site_free_runner,
)
from ledger._errors import ConfigError, InputError, StorageError
from ledger._startup.namedtuple import NamedTuple
from ledger._startup.search_path import program_on_path

__all__ = [
    "Action",
    "Change",
    "HookStatus",
    "default_ledger_command",
    "hook_command",
    "hook_status",
    "install",
    "settings_path",
    "uninstall",
]

#: Marks the scripts ledger writes for Cline (a directory of executables has no JSON to tag).
_SCRIPT_MARK: Final = "# installed by ledger"


def settings_path(client: str, *, user: bool, root: Path, home: Path | None = None) -> Path:
    """Where ``ledger install`` writes ``client``'s hooks.

    Project scope: the client's machine-local settings file when it has one, else its shared
    one. ``user``: the user-wide file under ``home``.

    Raises:
        InputError: unknown client.
    """
    spec = client_spec(client)
    if user:
        return (home or Path.home()) / spec.user_file
    return root / (spec.local_file or spec.shared_file)


def hook_command(spec: ClientSpec, event: str, ledger_cmd: str) -> str:
    """The shell command installed for ``event``, with its fail-closed or fail-open guard.

    This installation's own ``ledger`` script runs through its interpreter without ``site``
    (:func:`~ledger._clients.settings.site_free_runner`, ``cli/_thin.py``): most of a hook's
    start-up beyond a bare interpreter's is ``site``, which the resident decider's thin client
    never needs.

    ``ledger hook`` answers tool-gating events with exit 0 (JSON) or 2 itself, so any other
    status means it never ran or crashed: the guard turns that into a block (exit 2) with a
    reason naming the fix; so it does on the events that guard a resident transport
    (:attr:`~ledger._clients.registry.ClientSpec.guards`, Claude Code's prompt). On other
    events it turns every failure, 2 included (Python exits 2 when it cannot open the script),
    into the client's non-blocking exit.
    """
    runner = site_free_runner(ledger_cmd)
    script = ledger_script(ledger_cmd)
    start = f"{runner} {shlex.quote(script)}" if runner and script else ledger_cmd
    base = f"{start} hook {spec.name} --event {event}"
    again = f"ledger install {spec.name}" + (" --user" if spec.user_only else "")
    gating = adapter(spec.name).native_phase(event) == "pre"
    if gating or event in spec.guards:
        what = "tool call" if gating else "prompt"
        return (
            f'{base} || {{ s=$?; [ "$s" = 2 ] || echo "ledger: the hook could not run (exit'
            f' $s), so this {what} is blocked; run: {again}" >&2; exit 2; }}'
        )
    return f"{base} || exit {spec.nonblocking_exit}"


# --- JSON settings files ----------------------------------------------------------------------


def _hook_lists(
    spec: ClientSpec, data: dict[str, Any], *, create: bool
) -> Iterator[tuple[str, str | None, list[Any]]]:
    """(event, matcher, list of entries) for each installed event, validating shapes."""
    key = spec.hooks_key
    if create and spec.layout == "bundle":
        hooks = data.setdefault(key, {"enabled": True})  # ledger's own named bundle
    else:
        hooks = data.setdefault(key, {}) if create else data.get(key)
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise ConfigError(f"settings: {key} must be an object of event names")
    events = (
        [(e.event, e.matcher) for e in spec.hooks]
        if create
        else [(event, None) for event in list(hooks)]
    )
    for event, matcher in events:
        entries = hooks.setdefault(event, []) if create else hooks[event]
        if not isinstance(entries, list):
            if create:
                raise ConfigError(f"settings: hooks.{event} must be a list")
            continue
        if spec.layout in ("nested", "bundle"):
            for group in entries:
                if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                    raise ConfigError(
                        f"settings: every hooks.{event} entry must be an object whose hooks "
                        "is a list"
                    )
        yield event, matcher, entries


def _json_install(
    spec: ClientSpec,
    data: dict[str, Any],
    ledger_cmd: str,
    mcp_events: frozenset[str] = frozenset(),
) -> list[Change]:
    """Install the hooks in one JSON settings object; ``mcp_events`` (Claude Code only) go
    through ``ledger mcp``'s hook tool, the others run the command."""
    from ledger._clients.mcp_hook import hook_handler, is_our_hook_handler  # noqa: PLC0415

    for key, value in spec.file_fields.items():  # Cursor's and Copilot's "version": 1
        data.setdefault(key, value)
    changes = []
    for event, matcher, entries in _hook_lists(spec, data, create=True):
        command = hook_command(spec, event, ledger_cmd)
        key = _command_key(spec)
        mine = [h for h in _handlers(spec, entries) if _our_handler(spec, h)]
        if event in mcp_events:
            wanted = hook_handler(event)
            if mine and all(h == wanted for h in mine):
                changes.append(Change("unchanged", event, "already installed"))
            elif mine:
                for handler in mine:
                    handler.clear()
                    handler.update(wanted)
                changes.append(Change("updated", event, "mcp_tool hook into `ledger mcp`"))
            else:
                group: dict[str, Any] = {"hooks": [wanted]}
                entries.append({"matcher": matcher, **group} if matcher is not None else group)
                changes.append(Change("added", event, "mcp_tool hook into `ledger mcp`"))
            continue
        if mine and all(h.get(key) == command for h in mine):
            changes.append(Change("unchanged", event, "already installed"))
            continue
        if mine:
            for handler in mine:
                if is_our_hook_handler(handler):  # back from the mcp_tool transport
                    handler.clear()
                    handler.update({"type": "command", **spec.handler_fields})
                handler[key] = command
            changes.append(Change("updated", event, command))
            continue
        if spec.layout == "flat":
            entry: dict[str, Any] = {**spec.handler_fields, key: command}
            if adapter(spec.name).native_phase(event) == "pre":
                entry.update(spec.pre_handler_fields)  # Cursor: failClosed
            entries.append(entry)
        elif spec.layout == "bundle" and matcher is None:  # lifecycle events: plain handlers
            entries.append({"type": "command", "command": command, **spec.handler_fields})
        else:
            handler = {"type": "command", "command": command, **spec.handler_fields}
            group = {"hooks": [handler]}
            entries.append({"matcher": matcher, **group} if matcher is not None else group)
        changes.append(Change("added", event, command))
    return changes


def _json_uninstall(spec: ClientSpec, data: dict[str, Any]) -> list[Change]:
    changes = []
    hooks = data.get(spec.hooks_key)
    for event, _, entries in list(_hook_lists(spec, data, create=False)):
        kept: list[Any] = []
        for entry in entries:
            if spec.layout == "flat" or (
                spec.layout == "bundle" and isinstance(entry, dict) and "hooks" not in entry
            ):
                if isinstance(entry, dict) and _our_handler(spec, entry):
                    changes.append(Change("removed", event, "ledger hook"))
                else:
                    kept.append(entry)
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
                kept.append(entry)
                continue
            inner = [
                h for h in entry["hooks"] if not (isinstance(h, dict) and _our_handler(spec, h))
            ]
            if len(inner) != len(entry["hooks"]):
                changes.append(Change("removed", event, "ledger hook"))
            if inner:
                kept.append({**entry, "hooks": inner})
        if kept:
            assert isinstance(hooks, dict)  # noqa: S101 - _hook_lists yielded from it
            hooks[event] = kept
        elif isinstance(hooks, dict):
            del hooks[event]
    if isinstance(hooks, dict) and not hooks and spec.layout == "nested":
        del data["hooks"]
    if (
        spec.layout == "bundle"
        and isinstance(hooks, dict)
        and not any(isinstance(v, list) for v in hooks.values())
    ):
        del data[spec.hooks_key]  # ledger's bundle holds no hook any more
    return changes


# --- Cline: a directory of executables ---------------------------------------------------------


def _script(spec: ClientSpec, event: str, ledger_cmd: str) -> str:
    return f"#!/bin/sh\n{_SCRIPT_MARK}\n{hook_command(spec, event, ledger_cmd)}\n"


def _scripts(
    spec: ClientSpec, directory: Path, ledger_cmd: str, *, remove: bool, stop: Path
) -> list[Change]:
    """Cline: one executable per hook, named exactly after it, in the hooks directory."""
    changes = []
    for entry in spec.hooks:
        path = directory / entry.event
        wanted = _script(spec, entry.event, ledger_cmd)
        existing = path.read_text(encoding="utf-8") if path.is_file() else None
        ours = existing is not None and _ours(existing, spec.name)
        try:
            if remove:
                if ours:
                    path.unlink()
                    changes.append(Change("removed", str(path), "ledger hook"))
                continue
            if ours and existing == wanted:
                changes.append(Change("unchanged", str(path), "already installed"))
                continue
            if existing is not None and not ours:
                changes.append(
                    Change(
                        "skipped",
                        str(path),
                        "a different hook script exists; "
                        f"add `{hook_command(spec, entry.event, ledger_cmd)}` "
                        "to it",
                    )
                )
                continue
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {exc.strerror}") from None
        changes.append(Change("updated" if ours else "added", str(path), "hook script"))
    if remove:
        _remove_empty_dirs(directory, stop)
    return changes


# --- install / uninstall -------------------------------------------------------------------------


def _notes(spec: ClientSpec, *, user: bool, root: Path) -> list[Change]:
    """What a person must know or do before the installed hooks govern anything."""
    from ledger._clients.hardening import trust_instructions  # noqa: PLC0415

    notes = []
    if spec.user_only:
        notes.append(
            Change(
                "note",
                spec.title,
                f"{spec.title} reads hooks only per user, so ledger now governs every project "
                "its agent opens: in one without `ledger init` a tool call is denied "
                f"(HOOK_ERROR) until you run `ledger init` there or `ledger uninstall "
                f"{spec.name} --user`",
            )
        )
    elif not user and spec.local_file is None:
        notes.append(
            Change(
                "note",
                spec.shared_file,
                f"{spec.title} has no machine-local settings file, so this file now holds this "
                "machine's ledger path: keep it out of git (each clone runs `ledger install`), "
                "or use --user",
            )
        )
    notes.extend(
        Change("note", spec.title, line) for line in trust_instructions(spec, root=root, user=user)
    )
    return notes


def _require_user(spec: ClientSpec, user: bool) -> None:
    """A client that reads hooks only per user is installed with ``--user``, never silently:
    its hooks then govern every project of this user (and deny in one without a ledger).

    Raises:
        InputError: ``spec`` is such a client and ``user`` is false.
    """
    if spec.user_only and not user:
        raise InputError(
            f"{spec.title} reads hooks only from ~/{spec.user_file}, for every project: run "
            f"`ledger install {spec.name} --user` (projects without `ledger init` then deny "
            "tool calls)"
        )


def install(
    client: str,
    *,
    root: Path,
    user: bool = False,
    ledger_cmd: str | None = None,
    home: Path | None = None,
    hardened: bool = False,
    environ: dict[str, str] | None = None,
) -> tuple[Path, list[Change]]:
    """Install ledger's hooks for ``client``; returns where they went and what changed.

    Args:
        client: a registered client name.
        root: the workspace root (project scope).
        user: write the user-wide settings instead of the project's.
        ledger_cmd: the command that runs ledger (default: this installation's absolute path).
        home: the home directory (default ``Path.home()``).
        hardened: also configure the client's OS sandbox and permission rules
            (:func:`ledger._clients.hardening.harden`).
        environ: the environment to read ``$LEDGER_HOME`` from (where the private key is).

    Raises:
        InputError: unknown client.
        ConfigError: an existing settings file is not valid JSON or has the wrong shape (it is
            left untouched); or ``--hardened`` cannot hold here (the hook's runtime is inside
            the workspace, a signing key is in the environment): nothing is written.
        StorageError: a file cannot be read or written.
    """
    spec = client_spec(client)
    _require_user(spec, user)
    home = home or Path.home()
    path = settings_path(client, user=user, root=root, home=home)
    stop = home if user else root
    cmd = ledger_cmd or default_ledger_command()
    if hardened:  # before anything is written: a refused --hardened changes nothing
        from ledger._clients.hardening import check_hardenable  # noqa: PLC0415

        check_hardenable(spec, root=root, user=user, home=home, ledger_cmd=cmd, environ=environ)
    mcp_events, transport = _transport(spec, environ)
    if spec.layout == "scripts":
        changes = _scripts(spec, path, cmd, remove=False, stop=stop)
    else:
        changes = _rewrite(
            path, spec, lambda data: _json_install(spec, data, cmd, mcp_events), stop
        )
        shared = root / spec.shared_file
        if not user and shared != path and shared.exists():
            # An earlier install put this machine's path in the shared file: move it out.
            moved = _rewrite(shared, spec, lambda data: _json_uninstall(spec, data), root)
            changes += [
                c._replace(target=f"{shared}: {c.target}", detail=f"moved to {path}") for c in moved
            ]
    from ledger._clients.mcp_config import register_server  # noqa: PLC0415

    # The MCP registration first: the sandbox protects only files that exist (.mcp.json).
    changes += register_server(spec, root=root, user=user, home=home, ledger_cmd=cmd)
    if hardened:
        from ledger._clients.hardening import harden  # noqa: PLC0415

        changes += harden(spec, root=root, user=user, home=home, environ=environ, ledger_cmd=cmd)
    if not any(c.action in ("added", "updated") for c in changes):
        transport = []  # nothing of the hooks changed: nothing new to say about them
    changes += transport + _notes(spec, user=user, root=root)
    if not user:
        changes = _keep_out_of_git(spec, root, path, changes)
    return path, changes


def _keep_out_of_git(
    spec: ClientSpec, root: Path, path: Path, changes: list[Change]
) -> list[Change]:
    """List the project files that now name this machine's paths in git's ``info/exclude``
    (:mod:`ledger._clients.git_exclude`); the notes asking a person to keep them out of git
    are then said by that line instead."""
    from ledger._clients.git_exclude import exclude  # noqa: PLC0415
    from ledger._clients.mcp_config import mcp_config_path  # noqa: PLC0415

    candidates = [path, mcp_config_path(spec.mcp, user=False, root=root, home=root)]
    if spec.local_file is not None:
        candidates.append(root / spec.local_file)
    names = sorted(
        {str(p.relative_to(root)) for p in candidates if p.is_relative_to(root) and p.is_file()}
    )
    listed = exclude(root, names)
    if listed is None:  # not a git repository: the notes say what to do
        return changes
    added, tracked = listed
    untracked = set(names) - set(tracked)
    kept = [
        c
        for c in changes
        if not (c.action == "note" and c.target in untracked and "git" in c.detail)
    ]
    if added:
        kept.append(
            Change(
                "added",
                ".git/info/exclude",
                f"{', '.join(added)}: name this machine's "
                "paths, so `git add -A` leaves them out (each clone runs `ledger install`)",
            )
        )
    kept += [
        Change(
            "note",
            name,
            "git tracks this file, so it stays in commits though it names this "
            "machine's paths: `git rm --cached` it, or use --user",
        )
        for name in tracked
    ]
    return kept


def _transport(
    spec: ClientSpec, environ: Mapping[str, str] | None
) -> tuple[frozenset[str], list[Change]]:
    """(events answered through ``ledger mcp``'s hook tool, a note saying why) for ``spec``:
    Claude Code from the version whose hooks honour ``onFailure: "block"``; command hooks for
    an older one, whose ignored ``onFailure`` would let a call through a dead server, and for
    one whose version cannot be read (a command hook fails closed on any version)."""
    if spec.name != "claude":
        return frozenset(), []
    from ledger._clients.mcp_hook import MCP_TOOL_EVENTS  # noqa: PLC0415
    from ledger._clients.versions import (  # noqa: PLC0415
        CLAUDE_FEATURES,
        format_version,
        installed_version,
    )

    found = installed_version(spec.name, environ)
    feature = CLAUDE_FEATURES["hook-on-failure"]
    since = format_version(feature.since)
    if found.version is not None and found.version >= feature.since:
        events = ", ".join(sorted(MCP_TOOL_EVENTS))
        return MCP_TOOL_EVENTS, [
            Change(
                "note",
                spec.title,
                f"{found.text} ({found.how}): {events} go through `ledger mcp` (mcp_tool "
                "hooks, onFailure: block: no process per call, and a dead server blocks); "
                "the other events run the command, the prompt's among them (it guards the "
                "server: docs/decisions/0021)",
            )
        ]
    why = (
        f"{found.text} ignores onFailure (from {since})"
        if found.version is not None
        else f"its version is unknown ({found.how})"
    )
    return frozenset(), [
        Change(
            "note",
            spec.title,
            f"command hooks: {why}; `ledger install {spec.name}` switches to mcp_tool hooks "
            f"once Claude Code {since} or later is on PATH",
        )
    ]


def uninstall(
    client: str,
    *,
    root: Path,
    user: bool = False,
    home: Path | None = None,
    environ: dict[str, str] | None = None,
) -> tuple[Path, list[Change]]:
    """Remove ledger's hooks (and hardening) for ``client``, leaving every other setting.

    A settings file left with nothing but what ledger added is removed, and so is a hook
    folder left empty.
    """
    from ledger._clients.hardening import unharden  # noqa: PLC0415
    from ledger._clients.mcp_config import unregister_server  # noqa: PLC0415

    spec = client_spec(client)
    _require_user(spec, user)
    home = home or Path.home()
    path = settings_path(client, user=user, root=root, home=home)
    stop = home if user else root
    # The sandbox's entries first, while the files they name (.mcp.json) still exist; then the
    # MCP entry: it may share the hooks' file (Gemini CLI), which is removed once nothing but
    # ledger's hooks is left in it.
    hardening = unharden(spec, root=root, user=user, home=home, environ=environ)
    server = unregister_server(spec, root=root, user=user, home=home)
    if spec.layout == "scripts":
        return path, hardening + server + _scripts(spec, path, "", remove=True, stop=stop) + (
            _forget_excluded(root) if not user else []
        )
    changes = server + hardening
    targets = [path]
    if not user and spec.local_file is not None:
        targets.append(root / spec.shared_file)  # hooks an older ledger wrote there
    for target in targets:
        if target.exists():
            found = _rewrite(target, spec, lambda data: _json_uninstall(spec, data), stop)
            changes += (
                found
                if target == path
                else [c._replace(target=f"{target}: {c.target}") for c in found]
            )
    return path, changes + (_forget_excluded(root) if not user else [])


def _forget_excluded(root: Path) -> list[Change]:
    """Drop the ``info/exclude`` lines of the files uninstall removed."""
    from ledger._clients.git_exclude import forget  # noqa: PLC0415

    gone = forget(root)
    return [Change("removed", ".git/info/exclude", ", ".join(gone))] if gone else []


# --- status (for `ledger doctor`) --------------------------------------------------------------


class HookStatus(NamedTuple):
    """Whether ``client``'s hooks will govern this workspace, and what to do if not.

    Attributes:
        client: the client name.
        path: the settings file (or directory) found holding ledger's hooks, or where
            ``ledger install`` would put them.
        installed: every registered event has a ledger hook there.
        command_runs: the installed command's executable exists and can start (its ``#!``
            interpreter too); ``None`` when nothing is installed.
        trusted: the client will run these hooks (trust gates passed); ``None`` when the client
            has no gate or ledger cannot tell.
        problems: one line per problem, each naming its fix; empty when all is well.
    """

    client: str
    path: Path
    installed: bool
    command_runs: bool | None
    trusted: bool | None
    problems: tuple[str, ...]


def _executable_starts(command: str) -> str | None:
    """Why the command's executable cannot start, or ``None`` when it can (and every file it
    names before ``hook``: the site-free runner's script and the ``ledger`` script)."""
    try:
        words = shlex.split(command)
        program = words[0]
    except (ValueError, IndexError):
        return f"cannot read the installed command {command!r}"
    named = words[1 : words.index("hook")] if "hook" in words else []
    for word in named:
        if word.startswith("/") and not Path(word).is_file():
            return f"{word} does not exist"
    if "/" not in program:
        found = program_on_path(program)
        if found is None:
            return f"`{program}` is not in PATH's absolute folders"
        program = found
    if not os.access(program, os.X_OK):
        return f"{program} does not exist or is not executable"
    try:
        with Path(program).open("rb") as handle:
            first = handle.readline(4096)
    except OSError as exc:
        return f"cannot read {program}: {exc.strerror}"
    if first.startswith(b"#!"):
        interpreter = first[2:].decode("utf-8", "replace").split()
        if interpreter and not os.access(interpreter[0], os.X_OK):
            return f"{program} names interpreter {interpreter[0]}, which cannot run"
    return None


def hook_status(client: str, root: Path, *, home: Path | None = None) -> HookStatus:
    """Detect whether ``client``'s hooks are installed, can run, and are trusted in ``root``.

    Looks in the machine-local, shared and user-wide locations, in that order. Reads files
    only: nothing is run, nothing is written.

    Raises:
        InputError: unknown client.
    """
    from ledger._clients.hardening import trust_state  # noqa: PLC0415

    spec = client_spec(client)
    home = home or Path.home()
    candidates = hook_files(spec, root, home)
    path, commands = candidates[0], {}
    for candidate in candidates:
        commands = _installed_commands(spec, candidate, with_mcp=True)
        if commands:
            path = candidate
            break
    problems: list[str] = []
    missing = [e.event for e in spec.hooks if e.event not in commands]
    installed = not missing
    if not commands:
        problems.append(f"no ledger hooks for {spec.title}: run `ledger install {client}`")
    elif missing:
        problems.append(
            f"{path}: no ledger hook for {', '.join(missing)}: run `ledger install {client}`"
        )
    command_runs: bool | None = None
    if commands:
        run = [c for c in commands.values() if c != MCP_HOOK_MARK]
        reasons = {r for r in map(_executable_starts, run) if r}
        command_runs = not reasons
        problems += [
            f"{reason}: run `ledger install {client}` from the ledger you use"
            for reason in sorted(reasons)
        ]
        unguarded = [e for e, c in commands.items() if "||" not in c and c != MCP_HOOK_MARK]
        if unguarded:
            problems.append(
                f"{path}: hooks without the fail-closed guard ({', '.join(unguarded)})"
                f": run `ledger install {client}`"
            )
    trusted, why = trust_state(spec, root=root, home=home, hooks_file=path)
    if trusted is False and commands:
        problems.append(why)
    return HookStatus(client, path, installed, command_runs, trusted, tuple(problems))


# --- the opt-in git pre-push hook (decision 0018: evidence travels with the code) -----------

#: The marker line of the pre-push hook ledger writes (never another tool's hook).
PRE_PUSH_MARK: Final = "# ledger: push this clone's signed evidence with the code"


def _pre_push_path(root: Path) -> Path:
    from ledger._git import repository_dirs  # noqa: PLC0415

    dirs = repository_dirs(root)
    if not dirs:
        raise InputError(
            f"{root} is not in a git repository: there is nothing to push evidence with"
        )
    return dirs[0] / "hooks" / "pre-push"


def pre_push_command(ledger_cmd: str) -> str:
    """How the pre-push hook runs ledger: a ``ledger`` script (alone or ``<python> -I
    <script>``) through the interpreter its ``#!`` line names, isolated (``-I``: no
    ``PYTHON*`` variable, no user site folder), as every client's hook runs it. The
    site-free thin client does not apply: ``ledger push`` is the full command line, which
    needs ``site``. Any other command (a path given by hand) runs as written."""
    script = ledger_script(ledger_cmd)
    interpreter = script_interpreter(Path(script)) if script else None
    if script is None or interpreter is None:
        return ledger_cmd
    return isolated_command(str(interpreter), script)


def install_pre_push(root: Path, *, ledger_cmd: str | None = None) -> Change:
    """Write ``.git/hooks/pre-push``: every ``git push`` first runs ``ledger push <remote>``.

    Fail-closed, like the clients' hooks: when the evidence could not be pushed (or ledger
    could not run at all: a moved installation, a broken interpreter), the code's push is
    stopped, with one line naming both ways on (``ledger push <remote>`` once fixed, or
    ``git push --no-verify`` to push the code alone, a person's choice git offers anyway).
    Code pushed without its evidence is what an agent that tampered with its ledger would
    want. Another tool's pre-push hook is left alone (one line says so); ours is rewritten
    when the command moved.

    Raises:
        InputError: ``root`` is not in a git repository.
        StorageError: the hook cannot be written.
    """
    path = _pre_push_path(root)
    cmd = pre_push_command(ledger_cmd or default_ledger_command())
    text = (
        "#!/bin/sh\n"
        f"{PRE_PUSH_MARK} (ledger install --pre-push; ledger uninstall removes it)\n"
        "# git pushes the code only if this exits 0: the evidence goes first.\n"
        f'{cmd} push "$1" </dev/null >&2 || {{\n'
        "  s=$?\n"
        '  echo "ledger: the evidence was not pushed (exit $s), so this push is stopped;'
        " run: ledger push $1, then push again (or push the code alone: git push"
        ' --no-verify)" >&2\n'
        "  exit 1\n"
        "}\n"
    )
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None
    if current == text:
        return Change("unchanged", str(path), "pushes the evidence with the code")
    if current is not None and PRE_PUSH_MARK not in current:
        return Change(
            "skipped",
            str(path),
            f'another pre-push hook is there; add this line to it: {cmd} push "$1"',
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None
    return Change("updated" if current else "added", str(path), "pushes the evidence with the code")


def uninstall_pre_push(root: Path) -> Change | None:
    """Remove the pre-push hook ledger wrote (another tool's is left alone)."""
    try:
        path = _pre_push_path(root)
        current = path.read_text(encoding="utf-8")
    except (InputError, OSError):
        return None
    if PRE_PUSH_MARK not in current:
        return None
    path.unlink()
    return Change("removed", str(path), "the evidence is no longer pushed with the code")
