"""Read a repository's HEAD revision from ``.git`` directly: no ``git`` subprocess per hook."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_head"]


def _git_dir(root: Path) -> Path | None:
    for candidate in (root, *root.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (candidate / target).resolve()
            return None
    return None


def _common_dir(git_dir: Path) -> Path:
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def _resolve_ref(git_dir: Path, ref: str) -> str | None:
    for base in (git_dir, _common_dir(git_dir)):
        try:
            value = (base / ref).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        return value if not value.startswith("ref:") else _resolve_ref(git_dir, value[4:].strip())
    try:
        packed = (_common_dir(git_dir) / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


def read_head(root: str | Path) -> str | None:
    """The commit HEAD points at (40/64 hex), or ``None`` outside a repository or before the
    first commit."""
    git_dir = _git_dir(Path(root))
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        return _resolve_ref(git_dir, head[4:].strip())
    return head or None
