"""``ledger install --hardened``: the client's own sandbox keeps the agent's shell off ledger.

Hooks see tool calls, not what a shell command does; the client's OS sandbox does. Where a
client has one, ``--hardened`` configures it so that sandboxed commands cannot write the
protected paths (``.orchestration/`` and every client's hook and settings files) nor ledger's
trust state outside the workspace (:func:`trust_state_paths`: the ledger home with the keys, the
trust pins and the cache secret; the state directory with the stored checkpoints), nor read the
private signing key or the cache secret, and adds permission deny rules that back up the hooks
for file tools. A checkpoint or pin an agent could rewrite would let a rollback or a re-signed
chain verify; a cache secret it could read would let it forge the workspace caches.

* **Claude Code** (``.claude/settings.local.json``): ``sandbox`` with ``denyWrite`` naming each
  protected file or folder and ``denyRead`` on the key folder and the cache secret (paths
  ``//abs`` or ``~/rel``, as the sandboxing docs define them), ``failIfUnavailable`` and no
  unsandboxed fallback; plus ``permissions.deny`` rules ``Edit(...)``/``Read(...)``. Never the
  whole ``.claude`` folder: that breaks every sandboxed command (the sandbox mounts
  ``.claude/commands`` inside it).
* **Codex** (``.codex/config.toml``, a block ledger owns): a permission profile extending
  ``:workspace`` with the protected folders and the trust state ``read`` and the key folder and
  the cache secret ``deny``, selected with ``default_permissions``. Codex ignores it when any
  config layer sets ``sandbox_mode``.
* **Gemini CLI** (``.gemini/settings.json``): ``tools.sandbox`` on. Its container mounts the
  workspace read-write, so ``.orchestration/`` stays writable; the ledger home and state outside
  are not mounted.
* **Cursor**: nothing ledger can add (``sandbox.json`` has no deny key); the installer checks
  that no ``sandbox.json`` lets sandboxed commands write the trust state (:func:`limits`).
* **Cline**: no sandbox.

Claude Code and Codex also get everything whose change runs code outside the sandbox
(:func:`runs_outside_paths`: the hook's runtime, git's configuration, the clients' user-wide
settings), and :func:`check_hardenable` refuses an install that cannot hold (the hook's runtime
where the sandbox writes, a signing key in the environment) before anything is written.

Also here: what each client's trust gate asks of a person (:func:`trust_instructions`) and
whether it has been passed (:func:`trust_state`), for the installer and ``ledger doctor``.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ledger._clients.registry import CLIENTS, ClientSpec
from ledger._clients.runs_outside import (
    git_config_paths,
    hook_runtime_paths,
    hooks_path_inside,
    refusals,
)
from ledger._clients.settings import (
    Change,
    _installed_commands,
    _rewrite,
    default_ledger_command,
    ledger_command_of,
    load_settings,
    save_text,
)
from ledger._errors import ConfigError, StorageError
from ledger._evidence.keys import key_home, private_key_dir
from ledger._governance.analysis.runs_later import CLIENT_FILES, login_shell_files
from ledger._workspace import ORCHESTRATION_DIR, cache_secret_path, decider_dirs, state_home

__all__ = [
    "check_hardenable",
    "claude_settings",
    "codex_block",
    "harden",
    "limits",
    "protected_paths",
    "runs_outside_paths",
    "trust_instructions",
    "trust_state",
    "trust_state_paths",
    "unharden",
]

_CODEX_BEGIN: Final = "# >>> ledger install --hardened (`ledger uninstall codex` removes it) >>>"
_CODEX_END: Final = "# <<< ledger install --hardened <<<"
#: Where ``--hardened``'s Codex block starts (``ledger install`` keeps its MCP block before it).
HARDENED_CODEX_BEGIN: Final = _CODEX_BEGIN
_CODEX_PROFILE: Final = "ledger"
_CLAUDE_SETTINGS: Final = ".claude/settings.json"
_CLAUDE_LOCAL: Final = ".claude/settings.local.json"


def protected_paths(root: Path) -> list[Path]:
    """The paths an agent's shell must not write, as they exist in ``root``.

    ``.orchestration/`` always; every file and folder a registered client reads hooks,
    settings or MCP servers from that exists (the one list,
    :data:`ledger._governance.analysis.runs_later.CLIENT_FILES`: a path that does not exist
    cannot be bound read-only, and binding one would make the sandbox create it). Claude
    Code's two settings files are always listed: the installer creates them.
    """
    paths = [root / ORCHESTRATION_DIR, root / _CLAUDE_SETTINGS, root / _CLAUDE_LOCAL]
    for name, *_ in CLIENT_FILES:
        if (root / name) not in paths and (root / name).exists():
            paths.append(root / name)
    return paths


def trust_state_paths(environ: Mapping[str, str] | None = None) -> tuple[list[Path], list[Path]]:
    """``(no_write, no_read)``: ledger's trust state outside every workspace, which no agent
    shell may write, and its secrets, which none may read.

    No write: the ledger home (private keys, the trust pins in ``trusted/``, the cache secret)
    and the state directory (the stored checkpoints, which ledger each workspace has), once when
    one holds the other (``$LEDGER_HOME/state``). No read: the key folder and the cache secret.
    """
    home, state = key_home(environ), state_home(environ)
    no_write = [home] if state == home or home in state.parents else [home, state]
    # Then the resident decider's socket folders: the decider runs outside the sandbox and
    # answers any process that reaches its socket (its proof authenticates the decider to
    # the caller, not the caller to it).
    return no_write, [private_key_dir(environ), cache_secret_path(environ), *_decider_dirs(environ)]


def _decider_dirs(environ: Mapping[str, str] | None) -> list[Path]:
    """The decider's socket folders the sandbox can hide: the ones this user's decider uses
    (made by :func:`_ensure_trust_state_dirs` when missing), and ``/tmp/ledger-<uid>`` only
    when it exists (a sandbox hides only an existing path; a fallback for long paths)."""
    *usual, fallback = decider_dirs(environ)
    return [*usual, *([fallback] if fallback.is_dir() else [])]


def runs_outside_paths(
    root: Path, *, home: Path, ledger_cmd: str, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """What the sandbox must keep the agent's shell from writing because a change runs code
    outside it (the one list, :mod:`ledger._governance.analysis.runs_later`): the hook's
    runtime, git's configuration (submodules' and worktrees' too), the login shell's files and
    every client's user-wide hook, settings and MCP files that exist."""
    found = [*hook_runtime_paths(ledger_cmd, home), *git_config_paths(root, home, environ)[0]]
    # A hook or MCP server added to a user-wide file runs unsandboxed in every project.
    found += [home / name for name, *_ in CLIENT_FILES if (home / name).exists()]
    found += [p for p in login_shell_files(home) if p.exists()]
    return [p for i, p in enumerate(found) if p not in found[:i]]


def check_hardenable(
    spec: ClientSpec,
    *,
    root: Path,
    user: bool,
    home: Path,
    ledger_cmd: str,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse, before anything is written, a ``--hardened`` install that could not hold.

    Raises:
        ConfigError: the hook's runtime lives where the sandbox lets the agent write, a
            variable makes code load from there, or a signing key is in the environment
            (:func:`ledger._clients.runs_outside.refusals`); the message says why and what
            to do.
    """
    if spec.sandbox_file is None or user:
        return
    env = os.environ if environ is None else environ
    why = refusals(spec.name, Path(os.path.realpath(root)), ledger_cmd, home, env)
    if why:
        raise ConfigError("refusing --hardened: " + "; and ".join(why))


def _ensure_git_hooks_dir(
    root: Path, home: Path, environ: Mapping[str, str] | None
) -> list[Change]:
    """Create a repository's missing ``hooks`` folder: a sandbox binds only what exists, and a
    folder the agent's shell created would be its own."""
    missing = git_config_paths(root, home, environ)[1]
    if missing is None:
        return []
    try:
        missing.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create {missing}: {exc.strerror}") from None
    return [Change("added", str(missing), "folder (so the sandbox can protect it)")]


def _ensure_trust_state_dirs(environ: Mapping[str, str] | None) -> list[Change]:
    """Create the trust state folders (0700) before a sandbox names them: a sandbox can bind
    only an existing path read-only (the first checkpoint would create the state folder later,
    unprotected until the client restarts)."""
    made: list[Change] = []
    for folder in [*trust_state_paths(environ)[0], *_decider_dirs(environ)]:
        if not folder.is_dir():
            try:
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create {folder}: {exc.strerror}") from None
            made.append(Change("added", str(folder), "folder (so the sandbox can protect it)"))
    return made


def _claude_path(path: Path, home: Path) -> str:
    """A path in Claude Code's sandbox syntax: ``~/rel`` under home, else ``//abs``."""
    if home in path.parents:
        return f"~/{path.relative_to(home).as_posix()}"
    return f"/{path.as_posix()}"


def claude_settings(
    root: Path,
    *,
    home: Path,
    environ: Mapping[str, str] | None = None,
    ledger_cmd: str | None = None,
) -> dict[str, Any]:
    """The ``sandbox`` and ``permissions`` settings ``--hardened`` merges for Claude Code
    (``ledger_cmd``: the installed hook command, default this installation's)."""
    outside, secrets = trust_state_paths(environ)
    runs = runs_outside_paths(
        root, home=home, ledger_cmd=ledger_cmd or default_ledger_command(), environ=environ
    )
    protected = [*protected_paths(root), *outside]
    protected += [p for p in runs if p not in protected]
    writes = [_claude_path(p, home) for p in protected]
    key, secret, *sockets = (_claude_path(p, home) for p in secrets)
    # Edit rules cover every file-writing tool (Write included); a folder needs its subtree.
    edits = [
        f"Edit({w}/**)"
        if p.is_dir() or p.name == ORCHESTRATION_DIR or p in outside or p.name == "hooks"
        else f"Edit({w})"
        for p, w in zip(protected, writes, strict=True)
    ]
    return {
        "sandbox": {
            "enabled": True,
            "failIfUnavailable": True,
            "allowUnsandboxedCommands": False,
            # From 2.1.3xx a sandboxed command otherwise goes through the permission flow, and
            # a person is asked (headless: refused) where ledger's hook did not ask
            # (ledger._clients.versions.CLAUDE_FEATURES); older versions defaulted it to true.
            "autoAllowBashIfSandboxed": True,
            "filesystem": {"denyWrite": writes, "denyRead": [key, secret, *sockets]},
        },
        "permissions": {"deny": [*edits, f"Read({key}/**)", f"Read({secret})"]},
    }


def _merge(
    target: dict[str, Any], fragment: Mapping[str, Any], path: str, changes: list[Change]
) -> list[Change]:
    """Merge ``fragment`` into ``target``: lists gain missing items, scalars are set."""
    for key, value in fragment.items():
        where = f"{path}.{key}" if path else key
        current = target.get(key)
        if isinstance(value, Mapping):
            if current is None:
                current = target[key] = {}
            if not isinstance(current, dict):
                raise ConfigError(f"settings: {where} must be an object")
            _merge(current, value, where, changes)
        elif isinstance(value, list):
            if current is None:
                current = target[key] = []
            if not isinstance(current, list):
                raise ConfigError(f"settings: {where} must be a list")
            new = [item for item in value if item not in current]
            current.extend(new)
            if new:
                changes.append(Change("added", where, ", ".join(map(str, new))))
        elif current != value:
            target[key] = value
            changes.append(
                Change("added" if current is None else "updated", where, json.dumps(value))
            )
    return changes


def _unmerge(
    target: dict[str, Any], fragment: Mapping[str, Any], path: str, changes: list[Change]
) -> list[Change]:
    """Take out of ``target`` what :func:`_merge` put there; drop containers left empty."""
    for key, value in fragment.items():
        where = f"{path}.{key}" if path else key
        current = target.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            _unmerge(current, value, where, changes)
            if not current:
                del target[key]
        elif isinstance(value, list) and isinstance(current, list):
            kept = [item for item in current if item not in value]
            if len(kept) != len(current):
                changes.append(Change("removed", where, "ledger's entries"))
            if kept:
                target[key] = kept
            else:
                del target[key]
        elif current == value and not isinstance(value, (list, Mapping)):
            del target[key]
            changes.append(Change("removed", where, json.dumps(value)))
    return changes


# --- Codex: a TOML block of our own ------------------------------------------------------------


def _toml_key(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is a JSON string for these paths


def _codex_path(path: Path, home: Path) -> str:
    """A path in Codex's permission syntax: ``~/rel`` under home, else absolute."""
    return f"~/{path.relative_to(home).as_posix()}" if home in path.parents else path.as_posix()


def codex_block(
    root: Path,
    *,
    home: Path,
    environ: Mapping[str, str] | None = None,
    ledger_cmd: str | None = None,
) -> tuple[str, str]:
    """(top-level line, tables) of the Codex permission profile ``--hardened`` writes.

    The top-level key must precede every table of the file, and the tables follow it; the
    installer puts the line first and the tables last so the user's own keys keep their place.
    Key names follow the Codex permissions docs (profiles, ``extends``, the
    ``":workspace_roots"`` table, ``read``/``deny`` access).
    """
    outside, secrets = trust_state_paths(environ)
    rules = [(ORCHESTRATION_DIR, "read")]
    for path in protected_paths(root):
        relative = path.relative_to(root).as_posix()
        if relative not in (ORCHESTRATION_DIR, ".codex") and not relative.startswith(".codex/"):
            rules.append((relative, "read"))
    rules.append((".codex", "read"))
    runs = runs_outside_paths(
        root, home=home, ledger_cmd=ledger_cmd or default_ledger_command(), environ=environ
    )
    rules += [(p.relative_to(root).as_posix(), "read") for p in runs if p.is_relative_to(root)]
    outside = [*outside, *(p for p in runs if not p.is_relative_to(root) and p not in outside)]
    lines = [
        f"[permissions.{_CODEX_PROFILE}]",
        'description = "workspace-write, with ledger\'s files read-only and its key unreadable"',
        'extends = ":workspace"',
        "",
        f"[permissions.{_CODEX_PROFILE}.filesystem]",
        *(f'{_toml_key(_codex_path(p, home))} = "read"' for p in outside),
        *(f'{_toml_key(_codex_path(p, home))} = "deny"' for p in secrets),
        "",
        f'[permissions.{_CODEX_PROFILE}.filesystem.":workspace_roots"]',
        '"." = "write"',
        *(f"{_toml_key(p)} = {_toml_key(a)}" for p, a in rules),
    ]
    top = f'default_permissions = "{_CODEX_PROFILE}"  {_CODEX_BEGIN}'
    return top, "\n".join([_CODEX_BEGIN, *lines, _CODEX_END])


def _strip_codex(text: str) -> str:
    """``text`` without ledger's block and top-level line."""
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == _CODEX_BEGIN:
            inside = True
        elif inside:
            inside = line.rstrip("\n") != _CODEX_END
        elif not line.rstrip("\n").endswith(_CODEX_BEGIN):
            out.append(line)
    return "".join(out).strip("\n") + ("\n" if "".join(out).strip() else "")


def _harden_codex(
    root: Path, home: Path, environ: Mapping[str, str] | None, ledger_cmd: str
) -> list[Change]:
    path = root / ".codex" / "config.toml"
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None
    user_text = _strip_codex(existing)
    try:
        user = tomllib.loads(user_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it first") from None
    clash: list[str] = [k for k in ("default_permissions", "sandbox_mode") if k in user]
    if _CODEX_PROFILE in user.get("permissions", {}):
        clash.append(f"permissions.{_CODEX_PROFILE}")
    if clash:
        return [
            Change(
                "skipped",
                str(path),
                f"it already sets {', '.join(clash)}; remove "
                "that to let ledger select its permission profile",
            )
        ]
    top, tables = codex_block(root, home=home, environ=environ, ledger_cmd=ledger_cmd)
    # _strip_codex ends non-empty text with a newline
    text = f"{top}\n{user_text}\n{tables}\n" if user_text else f"{top}\n\n{tables}\n"
    tomllib.loads(text)  # what we write parses, or we raise before writing
    if text == existing:
        return [Change("unchanged", str(path), "permission profile already installed")]
    save_text(path, text)
    changes = [
        Change(
            "updated" if _CODEX_BEGIN in existing else "added",
            str(path),
            f"permission profile {_CODEX_PROFILE!r} (default_permissions)",
        )
    ]
    user_config = home / ".codex" / "config.toml"
    try:
        sets_mode = "sandbox_mode" in tomllib.loads(user_config.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        sets_mode = False
    if sets_mode:
        changes.append(
            Change(
                "note",
                str(user_config),
                "sets sandbox_mode, so Codex ignores "
                "permission profiles: remove it for --hardened to take effect",
            )
        )
    return changes


def _unharden_codex(root: Path) -> list[Change]:
    path = root / ".codex" / "config.toml"
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None
    if _CODEX_BEGIN not in existing:
        return []
    rest = _strip_codex(existing)
    try:
        if rest.strip():
            path.write_text(rest, encoding="utf-8")
        else:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None
    return [Change("removed", str(path), f"permission profile {_CODEX_PROFILE!r}")]


# --- Cursor: nothing to write, something to check -------------------------------------------


def _cursor_grants(root: Path, home: Path, environ: Mapping[str, str] | None) -> list[Change]:
    """Where a ``sandbox.json`` (user's or workspace's) lets Cursor's sandboxed commands write
    ledger's trust state: the sandbox is off, or ``additionalReadwritePaths`` reaches it.

    Key names from Cursor's sandbox.json reference (``type``, ``additionalReadwritePaths``);
    by default sandboxed commands write only the workspace and the temp folders.
    """
    outside = trust_state_paths(environ)[0]
    found: list[Change] = []
    for path in (home / ".cursor" / "sandbox.json", root / ".cursor" / "sandbox.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            found.append(Change("note", str(path), "unreadable: cannot tell what it grants"))
            continue
        if not isinstance(data, dict):
            continue
        if data.get("type") == "insecure_none":
            found.append(
                Change(
                    "note", str(path), 'type "insecure_none": sandboxed commands run unsandboxed'
                )
            )
        grants = data.get("additionalReadwritePaths")
        for grant in grants if isinstance(grants, list) else []:
            if not isinstance(grant, str):
                continue
            tilde = grant == "~" or grant.startswith("~/")
            where = Path(os.path.normpath(home / grant[2:] if tilde else root / grant))
            hit = [f for f in outside if where == f or where in f.parents or f in where.parents]
            if hit:
                found.append(
                    Change(
                        "note",
                        str(path),
                        f"additionalReadwritePaths {grant!r} lets sandboxed commands write "
                        f"{', '.join(map(str, hit))} (checkpoints, trust pins): remove it",
                    )
                )
    return found


# --- entry points ------------------------------------------------------------------------------

_GEMINI_SANDBOX: Final = {"tools": {"sandbox": True}}


def limits(spec: ClientSpec) -> str:
    """What ``--hardened`` cannot protect for ``spec``, in one line."""
    if spec.name == "claude":
        return (
            "Bash and its children are sandboxed; file tools rely on the hooks and the deny "
            "rules; Claude's own writes outside the sandbox are not covered"
        )
    if spec.name == "codex":
        return (
            "per the Codex permissions docs (not run here); ignored when a config layer "
            "sets sandbox_mode or --sandbox is passed"
        )
    if spec.name == "gemini":
        return (
            "the container mounts the workspace read-write: .orchestration/ stays writable "
            "by the agent's shell (only a checkpoint catches that), and so do .git/config and "
            ".git/hooks (ledger's own git commands ignore what they name; your git does not); "
            "the key, the trust pins and the checkpoints outside the workspace are not mounted"
        )
    if spec.name == "cursor":
        return (
            "Cursor's sandbox.json has no setting that denies a path inside the workspace: "
            ".orchestration/, .cursor/hooks.json, .git/config and .git/hooks stay writable by "
            "sandboxed commands; "
            "rely on the hooks and on checkpoints (the trust state outside the workspace is "
            "not writable unless a sandbox.json grants it)"
        )
    return f"{spec.title} has no OS sandbox: only the hooks and checkpoints protect ledger"


def harden(
    spec: ClientSpec,
    *,
    root: Path,
    user: bool,
    home: Path,
    environ: Mapping[str, str] | None = None,
    ledger_cmd: str | None = None,
) -> list[Change]:
    """Configure ``spec``'s sandbox for the workspace ``root``; returns what changed.

    ``ledger_cmd`` is the hook command installed (default this installation's): its runtime is
    protected too. Call :func:`check_hardenable` first: it refuses what no setting can protect.
    """
    cmd = ledger_cmd or default_ledger_command()
    if spec.sandbox_file is None:
        checked = _cursor_grants(root, home, environ) if spec.name == "cursor" else []
        return [*checked, Change("note", "--hardened", limits(spec))]
    if user:
        return [
            Change(
                "skipped",
                "--hardened",
                "it protects one workspace: run `ledger "
                f"install {spec.name} --hardened` in the project",
            )
        ]
    changes: list[Change] = []
    if spec.name in ("claude", "codex"):  # their sandboxes name the trust state folders
        changes += _ensure_trust_state_dirs(environ) + _ensure_git_hooks_dir(root, home, environ)
    hooks = hooks_path_inside(root)
    if hooks is not None:
        changes.append(
            Change(
                "note",
                "core.hooksPath",
                f"git runs the hooks in {hooks}, inside the workspace, where the agent's shell "
                "may change them (and the scripts they call): review changes there before you "
                "commit, or move the hooks out of the workspace",
            )
        )
    if spec.name == "codex":
        changes += _harden_codex(root, home, environ, cmd)
    else:
        shared = root / _CLAUDE_SETTINGS
        if spec.name == "claude" and not shared.exists():
            # The sandbox can bind only an existing file read-only: create the shared one.
            try:
                shared.parent.mkdir(parents=True, exist_ok=True)
                shared.write_text("{}\n", encoding="utf-8")
            except OSError as exc:
                raise StorageError(f"cannot write {shared}: {exc.strerror}") from None
            changes.append(Change("added", str(shared), "{} (so the sandbox can protect it)"))
        fragment = (
            claude_settings(root, home=home, environ=environ, ledger_cmd=cmd)
            if spec.name == "claude"
            else _GEMINI_SANDBOX
        )
        path = root / spec.sandbox_file
        found: list[Change] = []
        _rewrite(path, spec, lambda data: _merge(data, fragment, "", found), root)
        changes += [c._replace(target=f"{path}: {c.target}") for c in found] or [
            Change("unchanged", str(path), "sandbox settings already installed")
        ]
    return [*changes, Change("note", "--hardened", limits(spec))]


def unharden(
    spec: ClientSpec,
    *,
    root: Path,
    user: bool,
    home: Path,
    environ: Mapping[str, str] | None = None,
) -> list[Change]:
    """Remove what :func:`harden` added for ``spec`` (project scope only)."""
    if user or spec.sandbox_file is None:
        return []
    if spec.name == "codex":
        return _unharden_codex(root)
    path = root / spec.sandbox_file
    if not path.exists():
        return []
    # The runtime protected is the one of the hook command installed there.
    installed = next(iter(_installed_commands(spec, path).values()), "")
    cmd = ledger_command_of(installed)
    fragment = (
        claude_settings(root, home=home, environ=environ, ledger_cmd=cmd)
        if spec.name == "claude"
        else _GEMINI_SANDBOX
    )
    found: list[Change] = []
    _rewrite(path, spec, lambda data: _unmerge(data, fragment, "", found), root)
    shared = root / _CLAUDE_SETTINGS
    if spec.name == "claude" and found and shared.exists():
        try:
            if not load_settings(shared):  # the {} that harden() created
                shared.unlink()
                found.append(Change("removed", str(shared), "empty settings"))
        except (ConfigError, OSError):
            pass  # not ours to judge: leave it
    # The trust state folders stay, even empty: they are per user, and another workspace's
    # hardened sandbox may bind them (a sandbox can protect only a path that exists).
    return [c._replace(target=f"{path}: {c.target}") for c in found]


def trust_instructions(spec: ClientSpec, *, root: Path, user: bool) -> list[str]:
    """What a person must do before ``spec`` runs the installed hooks (empty: nothing)."""
    if spec.name == "codex":
        lines = (
            []
            if user
            else [
                "Codex loads .codex/ only in a trusted project: accept Codex's trust prompt here "
                "(or `codex --trust`), which adds [projects." + json.dumps(str(root)) + "] "
                'trust_level = "trusted" to ~/.codex/config.toml'
            ]
        )
        return [
            *lines,
            "Codex runs a non-managed hook only after a person trusts its exact definition "
            "(keyed by its hash), and skips untrusted hooks silently, so until then the "
            "agent runs ungoverned: start `codex` here, open `/hooks` and trust each ledger "
            "hook (again after any install that changes a command). Managed hooks "
            "(requirements.toml, deployed by an admin) need no per-hook trust",
            "check with `ledger doctor`",
        ]
    if spec.name == "gemini":
        return [
            "Gemini CLI applies project settings (these hooks too) only in a trusted "
            "folder: trust this folder when Gemini asks, or with /permissions (it is "
            "recorded in ~/.gemini/trustedFolders.json); headless `gemini -p` refuses an "
            "untrusted folder unless given --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true"
        ]
    if spec.name == "cursor" and not user:
        return ["Cursor runs project hooks only in a trusted workspace: trust it when asked"]
    if spec.name == "copilot" and not user:
        # Policy hooks alone "are available regardless of folder trust state" (github/docs
        # content/copilot/reference/hooks-reference.md): repository hooks need it.
        return [
            "Copilot CLI loads repository hooks (.github/hooks/) only in a folder you trust: "
            "trust this folder when `copilot` asks on its first start here"
        ]
    return []


def _codex_trust(root: Path, home: Path, hooks_file: Path) -> tuple[bool | None, str]:
    config = home / ".codex" / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, tomllib.TOMLDecodeError):
        return None, f"cannot read {config}"
    projects = data.get("projects", {})
    levels = {Path(p): v.get("trust_level") for p, v in projects.items() if isinstance(v, dict)}
    chain = [root, *root.parents]
    level = next((levels[p] for p in chain if p in levels), None)
    if hooks_file.is_relative_to(root) and level != "trusted":
        return False, (
            "Codex does not trust this project, so it ignores .codex/ and ledger's "
            "hooks: start `codex` here and trust the project, then run /hooks"
        )
    state = data.get("hooks", {}).get("state", {}) if isinstance(data.get("hooks"), dict) else {}
    trusted = [
        k
        for k, v in state.items()
        if str(hooks_file) in k and isinstance(v, dict) and v.get("trusted_hash")
    ]
    wanted = len(CLIENTS["codex"].hooks)
    if len(trusted) < wanted:
        return False, (
            f"Codex has trust entries for {len(trusted)} of {wanted} ledger hooks in "
            f"{hooks_file}; untrusted hooks are skipped silently: run /hooks in "
            "codex and trust them"
        )
    return True, ""


def _gemini_trust(root: Path, home: Path) -> tuple[bool | None, str]:
    path = home / ".gemini" / "trustedFolders.json"
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "no ~/.gemini/trustedFolders.json: Gemini will ask whether to trust it"
    except (OSError, ValueError):
        return None, f"cannot read {path}"
    if not isinstance(rules, dict):
        return None, f"{path}: not an object"
    chain = [root, *root.parents]
    verdict: bool | None = None
    for folder, rule in rules.items():
        where = Path(os.path.normpath(folder))
        if rule == "DO_NOT_TRUST" and where == root:
            return False, (
                f"{path} marks this folder DO_NOT_TRUST: Gemini ignores its hooks; "
                "trust it with /permissions"
            )
        if (rule == "TRUST_FOLDER" and where in chain) or (
            rule == "TRUST_PARENT" and where.parent in chain
        ):
            verdict = True
    if verdict is None:
        return False, (
            "Gemini does not trust this folder, so it ignores .gemini/settings.json "
            "and ledger's hooks: trust it with /permissions"
        )
    return True, ""


def trust_state(
    spec: ClientSpec, *, root: Path, home: Path, hooks_file: Path
) -> tuple[bool | None, str]:
    """(trusted, why not) for ``spec`` in ``root``; ``None`` when there is no gate to check."""
    if spec.name == "codex":
        return _codex_trust(root, home, hooks_file)
    if spec.name == "gemini" and hooks_file.is_relative_to(root):
        return _gemini_trust(root, home)
    return None, ""
