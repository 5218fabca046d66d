"""The git side of a review: which range, which files it changes, which lines it adds, and the
files' bytes at the range's head.

Every git call goes through :func:`ledger._git.git_command` (nothing a planted config names
runs) and reads plumbing output: ``diff --raw -z`` for what each file became (paths, modes,
blobs, renames), ``diff -U0`` for the lines each one adds, ``cat-file --batch`` for the
blobs, all three in one process each whatever the number of files.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal, NamedTuple

from ledger._errors import UnverifiableError
from ledger._git import git_command, git_environment, run_bounded

__all__ = ["ChangedFile", "GitRange", "Repository"]

Change = Literal[
    "added", "modified", "renamed", "copied", "deleted", "binary", "submodule", "symlink"
]
_STATUS: Final = {"A": "added", "M": "modified", "R": "renamed", "C": "copied", "D": "deleted"}
_HUNK: Final = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SUBMODULE: Final = "160000"
_SYMLINK: Final = "120000"
_TIMEOUT: Final = 600.0


class GitRange(NamedTuple):
    """A resolved range: ``base..head`` as commits, and how it was named."""

    base: str
    head: str
    label: str
    """As typed (``main..HEAD``), or how the default was found."""


class ChangedFile(NamedTuple):
    """One file the range changes."""

    path: str
    """Its path at the head (at the base for a deleted file)."""
    old_path: str | None
    """Its path at the base when it was renamed or copied."""
    change: Change
    blob: str | None
    """Its blob at the head (``None``: deleted, a submodule)."""
    added: list[int]
    """The 1-based line numbers, at the head, the range adds or changes."""
    removed: int


class Repository:
    """git in one workspace, with the caller's environment."""

    def __init__(self, root: Path, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.env = git_environment(environ)
        self._shallow: bool | None = None

    def run(self, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """``git args…``; a git that cannot start is one line (exit 2)."""
        try:
            return run_bounded(
                git_command(self.root, *args, env=self.env),
                env=self.env,
                data=data,
                timeout=_TIMEOUT,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UnverifiableError(f"git could not run: {exc}") from None

    def out(self, *args: str) -> str | None:
        """The stripped output, or ``None`` when git fails."""
        done = self.run(*args)
        return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None

    @property
    def shallow(self) -> bool:
        if self._shallow is None:
            self._shallow = self.out("rev-parse", "--is-shallow-repository") == "true"
        return self._shallow

    def commit(self, name: str, spec: str) -> str:
        """The commit ``name`` names, or the one line saying why there is none."""
        if not name or name.startswith("-"):
            raise UnverifiableError(f"{spec!r} is not a range: give BASE..HEAD, e.g. main..HEAD")
        found = self.out(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"
        )
        if found:
            return found
        if self.shallow:
            raise UnverifiableError(
                f"{name} is not in this shallow clone: fetch deeper (`git fetch --unshallow`, "
                "or actions/checkout with fetch-depth: 0) and run again"
            )
        raise UnverifiableError(f"unknown revision {name!r} in the range {spec!r}")

    def merge_base(self, left: str, right: str, spec: str) -> str:
        found = self.out("merge-base", left, right)
        if found:
            return found
        if self.shallow:
            raise UnverifiableError(
                f"this shallow clone lacks the merge base of {spec}: fetch deeper "
                "(`git fetch --unshallow`, or actions/checkout with fetch-depth: 0) and run again"
            )
        raise UnverifiableError(f"{spec}: the two sides share no history (no merge base)")

    def prefix(self) -> str:
        """The workspace's folder inside the repository (``""`` at its top)."""
        return self.out("rev-parse", "--show-prefix") or ""

    def resolve(self, spec: str | None) -> GitRange:
        """``BASE..HEAD``, ``BASE...HEAD`` (from their merge base), ``BASE`` (to ``HEAD``), or
        by default the merge base with the upstream, else with the remote's default branch."""
        if self.out("rev-parse", "--git-dir") is None:
            raise UnverifiableError(f"{self.root} is not in a git repository: nothing to review")
        if spec is None:
            return self._default()
        spec = spec.strip()
        if "..." in spec:
            left, _, right = spec.partition("...")
            head = self.commit(right or "HEAD", spec)
            base = self.merge_base(self.commit(left or "HEAD", spec), head, spec)
            return GitRange(base, head, spec)
        left, dots, right = spec.partition("..")
        base = self.commit(left or "HEAD", spec)
        head = self.commit((right or "HEAD") if dots else "HEAD", spec)
        return GitRange(base, head, spec if dots else f"{spec}..HEAD")

    def _default(self) -> GitRange:
        head = self.commit("HEAD", "HEAD")
        upstream = self.out("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
        if not upstream:
            remotes = (self.out("remote") or "").split()
            for remote in sorted(remotes, key=lambda r: (r != "origin", r)):
                target = self.out("symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
                if target:
                    upstream = target.removeprefix("refs/remotes/")
                    break
        if not upstream:
            raise UnverifiableError(
                "no upstream branch and no remote default branch to review against: "
                "name a range, e.g. `ledger review main..HEAD`"
            )
        base = self.merge_base(self.commit(upstream, upstream), head, f"{upstream}...HEAD")
        return GitRange(base, head, f"{upstream}...HEAD")

    def changed_files(self, span: GitRange) -> list[ChangedFile]:
        """What the range changes, file by file, in git's order."""
        common = ("--no-ext-diff", "--no-textconv", "--no-color", "-M", "--ignore-submodules=none")
        raw = self.run("diff", "--raw", "-z", "--no-abbrev", *common, span.base, span.head)
        if raw.returncode != 0:
            raise UnverifiableError("git diff failed: " + _last_line(raw.stderr))
        patch = self.run(
            "diff", "-U0", "--src-prefix=a/", "--dst-prefix=b/", *common, span.base, span.head
        )
        if patch.returncode != 0:
            raise UnverifiableError("git diff failed: " + _last_line(patch.stderr))
        entries = _raw_entries(raw.stdout)
        sections = _sections(patch.stdout)
        if len(sections) != len(entries):
            raise UnverifiableError("git diff: the patch and the file list disagree")
        files = []
        for (status, modes, blob, paths), (lines, removed, binary) in zip(
            entries, sections, strict=True
        ):
            added = lines
            old_mode, new_mode = modes
            change: Change = _STATUS.get(status[0], "modified")  # type: ignore[assignment]
            path = paths[-1]
            old_path = paths[0] if len(paths) == 2 else None
            if _SUBMODULE in (old_mode, new_mode):
                change, added = "submodule", []
            elif _SYMLINK in (old_mode, new_mode):
                change, added = "symlink", []
            elif binary:
                change = "binary"
            gone = change == "deleted" or (change == "submodule" and new_mode == "000000")
            files.append(
                ChangedFile(path, old_path, change, None if gone else blob, added, removed)
            )
        return files

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The blobs' bytes, by id (one ``cat-file --batch``)."""
        if not shas:
            return {}
        done = self.run("cat-file", "--batch", data="".join(f"{s}\n" for s in shas).encode())
        if done.returncode != 0:
            raise UnverifiableError("git cat-file failed: " + _last_line(done.stderr))
        out: dict[str, bytes] = {}
        data, at = done.stdout, 0
        while at < len(data):
            end = data.index(b"\n", at)
            header = data[at:end].split(b" ")
            at = end + 1
            if len(header) != 3:
                continue
            size = int(header[2])
            out[header[0].decode()] = data[at : at + size]
            at += size + 1
        return out

    def commit_count(self, span: GitRange) -> int:
        """How many commits the range holds."""
        return int(self.out("rev-list", "--count", f"{span.base}..{span.head}") or 0)


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no message"


def _raw_entries(data: bytes) -> list[tuple[str, tuple[str, str], str, list[str]]]:
    """``diff --raw -z``: ``(status, (old mode, new mode), new blob, paths)`` per file."""
    fields = data.split(b"\0")
    out = []
    at = 0
    while at < len(fields) and fields[at].startswith(b":"):
        meta = fields[at][1:].decode().split(" ")
        old_mode, new_mode, _old_blob, new_blob, status = meta[:5]
        count = 2 if status[0] in "RC" else 1
        paths = [f.decode("utf-8", "surrogateescape") for f in fields[at + 1 : at + 1 + count]]
        out.append((status, (old_mode, new_mode), new_blob, paths))
        at += 1 + count
    return out


def _sections(data: bytes) -> list[tuple[list[int], int, bool]]:
    """``diff -U0``: per file, the head's added line numbers, the removed count, binary."""
    out: list[tuple[list[int], int, bool]] = []
    added: list[int] = []
    removed = 0
    binary = False
    in_hunk = False
    for line in data.split(b"\n"):
        if line.startswith(b"diff --git "):
            out.append(([], 0, False))
            added, removed, binary, in_hunk = out[-1][0], 0, False, False
            continue
        if not out:
            continue
        if line.startswith(b"@@ "):
            in_hunk = True
            found = _HUNK.match(line)
            if found is None:
                continue
            old_count = 1 if found.group(2) is None else int(found.group(2))
            start = int(found.group(3))
            count = 1 if found.group(4) is None else int(found.group(4))
            added.extend(range(start, start + count))
            removed += old_count
            out[-1] = (added, removed, binary)
        elif not in_hunk and (line.startswith(b"Binary files ") or line == b"GIT binary patch"):
            binary = True
            out[-1] = (added, removed, binary)
    return out
