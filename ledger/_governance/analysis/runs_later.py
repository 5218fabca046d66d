"""Everything whose change runs code later, outside the watch of the call that changed it: one
list, read by the three places that must agree on it.

* agent tools may not write it (:mod:`ledger._governance.analysis.protected`);
* ``ledger install --hardened`` makes it read-only in the client's sandbox
  (:mod:`ledger._clients.hardening`);
* the tripwire watches it and halts the workspace when it changed outside the hooks
  (:mod:`ledger._hooks.tripwire`).

What is in it:

* every file a registered client reads hooks, settings or MCP servers from: the generated
  :data:`~ledger._governance.analysis.client_files.CLIENT_FILES`, derived from the client
  registry (``ledger/_clients/registry.py``), relative to the workspace and the home folder;
* git's configuration: the repository's ``config``, ``config.worktree`` and ``hooks``, every
  submodule's (``.git/modules/<name>/``, nested) and linked worktree's
  (``.git/worktrees/<name>/config.worktree``), the user's (``~/.gitconfig``,
  ``$XDG_CONFIG_HOME/git/``) and the system's (``/etc/gitconfig``): a ``core.fsmonitor``,
  filter or hook planted there runs when the person runs git, in any repository;
* the login shell's files (``~/.bashrc``, ``~/.profile``, ``~/.zshenv`` ...): they run in every
  terminal the person opens;
* the hook's own installation: its executable and interpreter, ledger's code, the
  interpreter's start-up files (``sitecustomize``, ``usercustomize``, every ``.pth`` in a site
  folder) and the core modules every hook call imports: a file dropped there runs in the next
  hook call, outside any sandbox, and can read the per-user secret.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from ledger._git import repository_dirs
from ledger._governance.analysis.client_files import CLIENT_FILES
from ledger._governance.analysis.hook_modules import HOOK_MODULES

__all__ = [
    "CLIENT_FILES",
    "GIT_AREA",
    "HOOK_MODULES",
    "INSTALL_AREA",
    "LOGIN_SHELL_FILES",
    "SHELL_AREA",
    "folder_entries",
    "git_files",
    "hook_bytecode_files",
    "hook_install_dirs",
    "hook_install_files",
    "login_shell_files",
    "relative_areas",
]

GIT_AREA: Final = "git's configuration (what it runs)"
SHELL_AREA: Final = "a login shell's start-up file"
INSTALL_AREA: Final = "the hook's Python installation"

#: Start-up files of the shells a person's terminal runs (bash(1) INVOCATION, zsh(1) STARTUP
#: FILES, fish's config folder), relative to the home folder.
LOGIN_SHELL_FILES: Final = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
    ".config/fish/config.fish",
)

#: git's files that make it run something, relative to the workspace (the repository) and the
#: home folder alike (``*`` one name): ``(path, everything below it)``.
_GIT_RELATIVE: Final = (
    (".git/config", False),
    (".git/config.worktree", False),
    (".git/hooks", True),
    (".git/modules", True),  # submodules' git dirs: config, hooks, nested modules
    (".git/worktrees/*/config", False),
    (".git/worktrees/*/config.worktree", False),
    (".gitconfig", False),
    (".config/git", True),
)

#: The standard library's files every hook call runs (relative to its folder).
_CORE_FILES: Final = (
    "site.py",
    "os.py",
    "stat.py",
    "hashlib.py",
    "hmac.py",
    "socket.py",
    "json/__init__.py",
    "json/decoder.py",
    "encodings/__init__.py",
)


#: The one "racy" rule of every stat-keyed reuse (git's "racy clean" problem): ``ctime`` is
#: stamped by a coarse clock (a few ms), so a file or folder changed this recently when it was
#: read may change again within the same tick and keep the same stat. What was read then is
#: not vouched for by that stat: a listing is not kept (:func:`folder_entries`), a ``.pyc``
#: verdict is not kept (ledger/_hooks/bytecode.py), a sealed file is read again at the next
#: call (ledger/_hooks/tripwire.py). Code the agent left running can wait for the read
#: (inotify) and rewrite at once.
RACY_NS: Final = 100_000_000


def racy_since() -> int:
    """The ``ctime`` (ns) from which a stat is too recent to vouch for what was read: see
    :data:`RACY_NS`."""
    return time.time_ns() - RACY_NS


_LISTINGS_LIMIT: Final = 512
_LISTINGS: dict[str, tuple[tuple[int, int, int, int], tuple[tuple[str, bool], ...]]] = {}


def folder_entries(folder: str) -> tuple[tuple[str, bool], ...]:
    """``(name, is a folder, not followed)`` of each entry of ``folder``, sorted by name; empty
    when it cannot be listed. A warm process asks for the same folders on every hook call:
    the listing is kept while the folder's stat (``ctime``, ``mtime``, inode, device) is the
    same, which every entry added, removed or renamed in it moves, so it is what a new
    ``scandir`` would return; one stat instead of a listing."""
    try:
        info = os.stat(folder)  # noqa: PTH116
    except OSError:
        return ()
    stamp = (info.st_ctime_ns, info.st_mtime_ns, info.st_ino, info.st_dev)
    kept = _LISTINGS.get(folder)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    racy = racy_since()
    try:
        entries = tuple(
            sorted((e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir(folder))
        )
    except OSError:
        return ()
    if info.st_ctime_ns < racy:
        if len(_LISTINGS) >= _LISTINGS_LIMIT:
            _LISTINGS.clear()
        _LISTINGS[folder] = (stamp, entries)
    return entries


def relative_areas() -> tuple[tuple[tuple[str, ...], str, bool], ...]:
    """``(components, area name, everything below it)`` of the list's paths that are named
    relative to the workspace and the home folder: the clients' files, git's, the shells'."""
    rows = [(tuple(path.split("/")), name, below) for path, name, below, *_ in CLIENT_FILES]
    rows += [(tuple(path.split("/")), GIT_AREA, below) for path, below in _GIT_RELATIVE]
    rows += [(tuple(path.split("/")), SHELL_AREA, False) for path in LOGIN_SHELL_FILES]
    return tuple(rows)


@functools.lru_cache(maxsize=16)
def login_shell_files(home: Path) -> tuple[Path, ...]:
    return tuple(home / name for name in LOGIN_SHELL_FILES)


def git_files(
    root: Path, home: Path, environ: Mapping[str, str] | None = None
) -> Iterator[tuple[Path, bool]]:
    """``(path, is the hooks folder)`` for every git file whose change runs code: the
    repository's (and its common dir's) config, config.worktree and hooks, every submodule's
    and linked worktree's, the user's and the system's config. Existing or not: the caller
    stats them (a file that appears is a change)."""
    env = os.environ if environ is None else environ
    for folder in repository_dirs(root):
        yield from _git_dir_files(folder, depth=0)
        for name, is_dir in folder_entries(str(folder / "worktrees")):
            if is_dir:
                yield folder / "worktrees" / name / "config", False
                yield folder / "worktrees" / name / "config.worktree", False
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    for path in (home / ".gitconfig", xdg / "git" / "config", Path("/etc/gitconfig")):
        yield path, False
    for variable in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if env.get(variable):
            yield Path(env[variable]), False


def _git_dir_files(folder: Path, *, depth: int) -> Iterator[tuple[Path, bool]]:
    yield folder / "config", False
    yield folder / "config.worktree", False
    yield folder / "hooks", True
    if depth >= 4:  # submodules of submodules, bounded
        return
    yield from _submodules(folder / "modules", depth=depth)


def _submodules(modules: Path, *, depth: int) -> Iterator[tuple[Path, bool]]:
    """Each submodule's git dir below ``modules`` (``a/b`` names nest as folders)."""
    for name, is_dir in folder_entries(str(modules))[:256]:
        if not is_dir:
            continue
        path = modules / name
        if (path / "HEAD").exists():
            yield from _git_dir_files(path, depth=depth + 1)
        else:
            yield from _submodules(path, depth=depth + 1)


def hook_install_dirs() -> list[str]:
    """The folders the hook's interpreter loads code from (real paths): its prefixes, every
    folder on its path (the standard library, site-packages, ledger's own source), the user
    site folder. A file written there runs in the next hook call."""
    folders = tuple(p for p in sys.path if p and os.path.isdir(p))  # noqa: PTH112
    return list(_install_dirs(folders))


@functools.lru_cache(maxsize=4)
def _install_dirs(folders: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`hook_install_dirs` for the folders on the path that exist now, resolved once per
    such set, as :func:`_install_layout` is (a warm process asks on every call; a folder that
    appears on the path later is another set)."""
    import site  # noqa: PLC0415 -- already imported by the interpreter's start-up

    found = [sys.prefix, sys.exec_prefix, str(Path(__file__).resolve().parents[3])]
    found += folders
    user_site = getattr(site, "USER_SITE", None)
    if isinstance(user_site, str):
        found.append(user_site)
    return tuple(dict.fromkeys(os.path.realpath(p) for p in found))


def hook_install_files(root: Path | None = None) -> list[str]:
    """The files of the hook's installation the tripwire watches (existing or not: one that
    appears is a change): the executable and interpreter; ``sitecustomize``/``usercustomize``
    in each folder on the path and the user site folder, and every ``.pth`` of the site
    folders; ledger's own code (its folders too, so a module added is a change) and the core
    modules every hook imports, unless they lie in the workspace ``root`` (an editable install
    of the project being worked on: its code is the agent's work, governed by scope;
    ``--hardened`` refuses that set-up)."""
    fixed = _install_layout(tuple(sys.path), None if root is None else os.path.realpath(root))
    found = list(fixed[0])
    for folder in fixed[1]:  # listed on every call: a .pth dropped there is the attack
        names = [name for name, _ in folder_entries(folder) if name.endswith(".pth")]
        found += [os.path.join(folder, name) for name in names[:512]]  # noqa: PTH118
    return found


@functools.lru_cache(maxsize=4)
def _install_layout(
    path: tuple[str, ...], root: str | None
) -> tuple[list[str], list[str], tuple[str, ...]]:
    """(the fixed part of :func:`hook_install_files`, the site folders to list for ``.pth``,
    the ``.pyc`` of ledger's and the command line's modules), once per interpreter path and
    workspace: walking ledger's code on every hook call would cost more than the rest of the
    tripwire. Each ``.pyc`` is named from its source's path, there or not (one that appears is
    judged), whatever this process imported: the next process to import a module runs its
    ``.pyc`` whenever the header matches the source."""
    import site  # noqa: PLC0415
    from importlib.util import cache_from_source  # noqa: PLC0415 -- loaded at every start-up

    found: list[str] = []
    script = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if script and Path(script).name == "ledger" and Path(script).is_file():
        found.append(os.path.realpath(script))
    found.append(os.path.realpath(sys.executable))
    # A venv's pyvenv.cfg names the interpreter and standard library it runs (``home``) and
    # whether the system's site-packages join it; the interpreter looks for one beside its
    # executable and one folder up (PEP 405): one planted there changes what the hook imports.
    here = os.path.dirname(os.path.abspath(sys.executable))  # noqa: PTH100, PTH120
    found += [os.path.join(d, "pyvenv.cfg") for d in (here, os.path.dirname(here))]  # noqa: PTH118, PTH120
    folders = [p for p in path if p and os.path.isdir(p)]  # noqa: PTH112
    user_site = getattr(site, "USER_SITE", None)
    if isinstance(user_site, str):
        folders.append(user_site)
    package = Path(__file__).resolve().parents[2]  # ledger/
    folders.append(str(package.parent))
    sites: list[str] = []
    for folder in dict.fromkeys(os.path.realpath(f) for f in folders):
        found.append(os.path.join(folder, "sitecustomize.py"))  # noqa: PTH118
        found.append(os.path.join(folder, "usercustomize.py"))  # noqa: PTH118
        if folder.endswith("-packages") or folder == str(package.parent):
            sites.append(folder)  # site.addsitedir reads .pth files only there
    inside = root + os.sep if root is not None else None
    stdlib = os.path.dirname(os.path.realpath(os.__file__))  # noqa: PTH120
    code = [os.path.join(stdlib, name) for name in _CORE_FILES]  # noqa: PTH118
    # ledger's code and the command line's, all of it: a hook imports part of it, and the
    # resident hook servers (`ledger serve`, `ledger mcp`) the rest; one that starts from a
    # changed file answers every later call with it.
    own: list[str] = []
    for top in (package, package.parent / "cli"):
        for directory, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            sources = [os.path.join(directory, n) for n in sorted(files) if n.endswith(".py")]  # noqa: PTH118
            code += [directory, *sources]
            own += sources

    def outside(p: str) -> bool:
        return inside is None or not p.startswith(inside)

    found += filter(outside, code)
    return found, sites, tuple(cache_from_source(p) for p in own if outside(p))


#: Byte-code files watched at most (a process that imported more is not a hook).
_BYTECODE_LIMIT: Final = 4096
_BYTECODE: dict[tuple[int, str | None], list[str]] = {}


def hook_bytecode_files(root: Path | None = None) -> list[str]:
    """The cached byte-code (``__pycache__/*.pyc``) the tripwire watches, outside the
    workspace ``root``: of every module of ledger and of the command line, imported here or
    not (the resident hook servers run modules no one-shot hook imports), and of every other
    module of the hook path this process imported from source: the standard library's, the
    site-packages' (yaml, cryptography ...). The next interpreter that imports such a module
    runs its ``.pyc`` instead of its source whenever the header matches the source, so a
    ``.pyc`` planted there runs in the next hook process as surely as a changed ``.py``.

    The hook path is :data:`~ledger._governance.analysis.hook_modules.HOOK_MODULES`, what a
    one-shot hook process imports (generated from every payload fixture answered through the
    installed command), so a resident process (the decider under the CLI, ``ledger mcp`` under
    the MCP SDK) watches the same set as a one-shot hook, not the ~550 more modules it loaded
    itself: stat-ing and sealing those on every call was most of its per-call cost, and a
    one-shot hook never watched them. The ``.py`` and ``.pyc`` of the whole installation stay
    refused to agent tools and read-only under ``--hardened`` (layers 1 and 2).

    Listed again only when a module was imported since: one attribute read per module, and
    nothing read from disk. A cache this user cannot write (a system Python's standard
    library, run by anyone but root) is left out: nothing this user runs can plant there."""
    inside = None if root is None else os.path.realpath(root) + os.sep
    key = (len(sys.modules), inside)
    found = _BYTECODE.get(key)
    if found is None:
        found = list(_install_layout(tuple(sys.path), None if inside is None else inside[:-1])[2])
        real: dict[str, str] = {}  # a folder's real path, once per folder (~20 for ~150 .pyc)
        for name, module in list(sys.modules.items()):
            if name not in HOOK_MODULES or name.partition(".")[0] in ("ledger", "cli"):
                continue  # not the hook path's, or ledger's own (all of it, above)
            cached = getattr(module, "__cached__", None)
            source = getattr(module, "__file__", None)
            if not (isinstance(cached, str) and isinstance(source, str)):
                continue
            folder, file = os.path.split(cached)
            if inside is not None:
                if folder not in real:
                    real[folder] = os.path.realpath(folder)
                if os.path.join(real[folder], file).startswith(inside):  # noqa: PTH118
                    continue
            if source.endswith(".py") and _writable(folder):
                found.append(cached)
        found = sorted(set(found))[:_BYTECODE_LIMIT]
        _BYTECODE.clear()
        _BYTECODE[key] = found
    return found


@functools.lru_cache(maxsize=1024)
def _writable(folder: str) -> bool:
    """Whether this user can create or replace a file in ``folder`` (or, when it does not exist
    yet, create it in its parent, as Python does for ``__pycache__``)."""
    while folder and not os.path.isdir(folder):  # noqa: PTH112
        parent = os.path.dirname(folder)  # noqa: PTH120
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK)
