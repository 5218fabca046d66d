"""Programs found on ``PATH`` in its absolute folders only, without ``shutil``.

An empty or relative ``PATH`` entry (``PATH=:/usr/bin``, a trailing ``:``, ``.``, ``bin``) is
the current folder, or one below it, to ``shutil.which``, to ``subprocess`` and to ``execvp``
alike. For a hook, ``ledger mcp`` or the decider the current folder is the agent's workspace,
and they run outside any sandbox: a ``git``, ``ledger`` or ``python3`` an agent's tool left
there would be run, or written into every hook command, with the person's privileges. So every
program ledger runs, or names in a command it writes, is looked up here, and the ``PATH`` it
hands a program it runs (git, and what git runs) keeps only the absolute folders.
"""

from __future__ import annotations

import os

__all__ = ["absolute_search_path", "program_on_path"]


def absolute_search_path(path: str | None) -> str:
    """``path`` (a ``PATH`` value; ``None``: this process's) without its empty and relative
    entries; the system's default folders when none is left (an empty ``PATH`` would again be
    the current folder)."""
    if path is None:
        path = os.environ.get("PATH", os.defpath)
    folders = [folder for folder in path.split(os.pathsep) if folder.startswith("/")]
    if not folders:
        folders = [folder for folder in os.defpath.split(os.pathsep) if folder.startswith("/")]
    return os.pathsep.join(folders)


def program_on_path(name: str, path: str | None = None) -> str | None:
    """The absolute path of the first executable file ``name`` in ``path``'s absolute folders
    (``None``: this process's ``PATH``), or ``None``. A ``name`` holding a ``/`` is not
    searched for: the caller names that file itself."""
    if not name or "/" in name:
        return None
    for folder in absolute_search_path(path).split(os.pathsep):
        candidate = os.path.join(folder, name)  # noqa: PTH118 -- no pathlib on the hook path
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):  # noqa: PTH113
            return candidate
    return None
