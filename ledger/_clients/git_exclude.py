"""Files that name this machine's paths stay out of ``git add -A``.

``ledger install`` writes the absolute path of this machine's ``ledger`` (and of the workspace)
into the client's settings and MCP files. Committed, they would run a path that does not exist
on a teammate's machine, so each clone runs ``ledger install`` itself. They are listed in the
repository's ``info/exclude``: like ``.gitignore``, but never committed, so the choice stays on
this machine and touches no file of the project. A file git already tracks is not affected
(``info/exclude`` only hides untracked files); the installer then says so.
"""

from __future__ import annotations

from itertools import takewhile
from pathlib import Path
from typing import Final

#: The comment above ledger's lines, so uninstall removes exactly those.
MARKER: Final = "# ledger install: names this machine's paths (each clone runs `ledger install`)"


def _git_dirs(root: Path) -> tuple[Path, Path] | None:
    """The git directory of the work tree at ``root`` and the repository's common one (a
    linked worktree's ``.git`` file names its own folder, whose ``commondir`` leads to the
    shared one, where ``info/exclude`` is read)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git, dot_git
    try:
        text = dot_git.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir, git_dir
    return git_dir, (git_dir / common).resolve()


def _tracked(index: bytes, relative: str) -> bool:
    """Whether git's index holds ``relative``. Read from the index file, without running git
    (a git config in the workspace could make git run programs): each entry's path is preceded
    by two bytes of flags whose low 12 bits are its length, and ends with a NUL."""
    name = relative.encode()
    start = index.find(name + b"\0")
    while start >= 2:
        flags = int.from_bytes(index[start - 2 : start], "big")
        if flags & 0xFFF == min(len(name), 0xFFF):
            return True
        start = index.find(name + b"\0", start + 1)
    return False


def exclude(root: Path, relatives: list[str]) -> tuple[list[str], list[str]] | None:
    """List ``relatives`` (paths relative to ``root``, the work tree's top) in ``info/exclude``.

    Returns:
        the paths newly listed, and the paths git already tracks (for those, excluding does
        nothing); None outside a git repository or when the file cannot be read (nothing is
        written).
    """
    dirs = _git_dirs(root)
    if dirs is None:
        return None
    path = dirs[1] / "info" / "exclude"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError):
        return None
    present = set(text.splitlines())
    added = [r for r in relatives if f"/{r}" not in present]
    if added:
        lines = [] if MARKER in present else [MARKER]
        lines += [f"/{r}" for r in added]
        body = text if not text or text.endswith("\n") else text + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body + "\n".join(lines) + "\n", encoding="utf-8")
    try:
        index = (dirs[0] / "index").read_bytes()
    except OSError:
        index = b""
    return added, [r for r in relatives if _tracked(index, r)]


def forget(root: Path) -> list[str]:
    """Remove ledger's lines whose file no longer exists (``ledger uninstall`` removed it);
    returns the paths no longer listed."""
    dirs = _git_dirs(root)
    path = None if dirs is None else dirs[1] / "info" / "exclude"
    if path is None or not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    if MARKER not in lines:
        return []
    ours = list(takewhile(lambda x: x.startswith("/"), lines[lines.index(MARKER) + 1 :]))
    gone = [x for x in ours if not (root / x[1:]).exists()]
    if not gone:
        return []
    kept = [x for x in lines if x not in gone]
    if len(ours) == len(gone):
        kept.remove(MARKER)
    path.write_text("".join(f"{x}\n" for x in kept), encoding="utf-8")
    return [x[1:] for x in gone]
