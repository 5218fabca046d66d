"""Line attribution at record time: the exact, git-identical diff of one file change.

A ``hook.post`` record says, per changed file, how the file went from its old content to its
new one (``FileChange`` in ``ledger/_evidence/models.py``): zero-context hunks in git's form
(``@@ -a,b +c,d @@``) and a short hash per written line, so the blame projection can replay the
line model from the records alone (decision 0008, "Attribution at record time").

The diff is git's own: :func:`diff_hunks` first trims the common prefix and suffix (as xdiff
does); a single-region edit whose changed middle shares no line between its two sides and cannot
slide along equal lines (the common case) has one possible hunk and needs no diff program at
all. Otherwise (where Myers and the indent heuristic choose among equal lines) it runs ``git diff
--no-index -U0`` (:func:`ledger._git.git_diff_files`, no config read) when git is on PATH, so
the hunks and the choices among equal lines are the ones ``git blame`` makes. libgit2's xdiff
(pygit2) is the fallback without git: it agrees with git except on some repeated blocks
(``@overload`` stubs: findings-2026-11-24.md §0; 2 of 624 version pairs of this repository's own
history). pygit2 costs 100-300 ms to import as a package, too much for a hook, so only its
compiled extension is loaded (~25 ms), not the package's Python layer.

Text is compared LF-normalised; a missing newline at the end of the file does not make the last
line a different line.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile
from ledger._startup.search_path import program_on_path

__all__ = [
    "Hunk",
    "diff_hunks",
    "file_change",
    "line_hash",
    "reconstruct_old",
    "split_lines",
    "unchanged_lines",
    "use_git_diff",
]

_DIFF_INDENT_HEURISTIC: Final = 1 << 18
"""libgit2's ``GIT_DIFF_INDENT_HEURISTIC`` (git's ``diff.indentHeuristic``, on by default)."""
SHORT_HASH_HEX: Final = 12
"""Hex digits of a line's short hash (48 bits): identity of a line within one file's model."""


class Hunk(NamedTuple):
    """A zero-context hunk: ``old_lines`` old lines at ``old_start`` became ``new_lines`` new
    ones at ``new_start`` (git's numbering: an empty side's start is the line before)."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without terminators, LF-normalised (``"a\\nb"`` and ``"a\\nb\\n"``
    both have two lines)."""
    if not text:
        return []
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def line_hash(line: str) -> str:
    """Short hash of one line (its text without the terminator)."""
    return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:SHORT_HASH_HEX]


def _load_patch_class() -> Any:  # noqa: ANN401 -- pygit2.Patch
    """``pygit2.Patch`` from the compiled extension alone (see the module docstring)."""
    loaded = sys.modules.get("pygit2._pygit2") or sys.modules.get("pygit2")
    if loaded is not None and hasattr(loaded, "Patch"):
        return loaded.Patch
    import importlib.util  # noqa: PLC0415 -- blame's start-up imports this module, never a diff

    spec = importlib.util.find_spec("pygit2")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            for candidate in sorted(Path(folder).glob("_pygit2*.so")) + sorted(
                Path(folder).glob("_pygit2*.pyd")
            ):
                ext = importlib.util.spec_from_file_location("pygit2._pygit2", candidate)
                if ext is None or ext.loader is None:
                    continue
                try:
                    module = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                except ImportError:
                    break
                sys.modules["pygit2._pygit2"] = module
                return module.Patch
    import pygit2  # noqa: PLC0415 -- the full package, when the extension cannot load alone

    return pygit2.Patch


def diff_hunks(old: list[str], new: list[str]) -> list[Hunk]:
    """git's zero-context hunks from ``old`` to ``new`` (lines without terminators)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    if not old_mid and not new_mid:
        return []
    before = old[prefix - 1] if prefix else None
    after = old[len(old) - suffix] if suffix else None
    fixed = all(
        not side or (side[-1] != before and side[0] != after) for side in (old_mid, new_mid)
    )
    if fixed and (not old_mid or not new_mid or set(old_mid).isdisjoint(new_mid)):
        # One region with nothing in common that cannot slide along equal lines: every diff
        # algorithm gives this one hunk.
        return [
            Hunk(
                prefix + 1 if old_mid else prefix,
                len(old_mid),
                prefix + 1 if new_mid else prefix,
                len(new_mid),
            )
        ]
    old_text = "".join(f"{line}\n" for line in old)
    new_text = "".join(f"{line}\n" for line in new)
    if _git_diff_enabled():
        found = _git_hunks(old_text, new_text)
        if found is not None:
            return found
    patch = _load_patch_class().create_from(
        old_text, new_text, context_lines=0, flag=_DIFF_INDENT_HEURISTIC
    )
    return [Hunk(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in patch.hunks]


_GIT_DIFF: list[bool | None] = [None]
"""Whether :func:`diff_hunks` asks git (``None``: when git is on PATH, looked up once)."""
_HUNK_HEADER: Final = lazy_compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def use_git_diff(enabled: bool | None) -> None:
    """Make :func:`diff_hunks` use git's diff (``True``), libgit2's (``False``), or git's when
    it is on PATH (``None``, the default). For benchmarks and tests comparing the two."""
    _GIT_DIFF[0] = enabled


def _git_diff_enabled() -> bool:
    if _GIT_DIFF[0] is None:
        _GIT_DIFF[0] = program_on_path("git") is not None  # looked up once, when first needed
    return bool(_GIT_DIFF[0])


def _git_hunks(old_text: str, new_text: str) -> list[Hunk] | None:
    """git's zero-context hunks of two texts, or ``None`` when git could not say."""
    from ledger._git import git_diff_files  # noqa: PLC0415 -- only an ambiguous diff runs git

    out = git_diff_files(
        old_text.encode("utf-8", "surrogatepass"), new_text.encode("utf-8", "surrogatepass")
    )
    if out is None:
        return None
    hunks = []
    for match in _HUNK_HEADER.finditer(out):
        a, b, c, d = match.groups()
        hunks.append(Hunk(int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    if not hunks and old_text != new_text:
        return None  # git said nothing about texts that differ: not an answer
    return hunks


def unchanged_lines(old: list[str], new: list[str]) -> dict[int, int]:
    """0-based index in ``new`` -> index in ``old`` of every line git's diff keeps unchanged."""
    out: dict[int, int] = {}
    old_at = new_at = 0
    for hunk in [*diff_hunks(old, new), None]:
        new_end = (hunk.new_start - (1 if hunk.new_lines else 0)) if hunk else len(new)
        while new_at < new_end:
            out[new_at] = old_at
            old_at, new_at = old_at + 1, new_at + 1
        if hunk is not None:
            new_at += hunk.new_lines
            old_at += hunk.old_lines
    return out


def _replace_once_reversed(text: str, before: str, after: str) -> str | None:
    """``text`` with the one occurrence of ``after`` turned back into ``before``."""
    if not after or text.count(after) != 1:
        return None
    return text.replace(after, before, 1)


def _reverse_structured_patch(new: str, patch: list[Any]) -> str | None:
    """The old text from the new one and Claude's ``structuredPatch`` (context hunks)."""
    lines = split_lines(new)
    for hunk in sorted(
        (h for h in patch if isinstance(h, dict)),
        key=lambda h: int(h.get("newStart", 0)),
        reverse=True,
    ):
        body = hunk.get("lines")
        if not isinstance(body, list) or not all(isinstance(x, str) for x in body):
            return None
        new_side = [x[1:] for x in body if x[:1] in (" ", "+")]
        old_side = [x[1:] for x in body if x[:1] in (" ", "-")]
        start = int(hunk.get("newStart", 1)) - 1 if new_side else int(hunk.get("newStart", 0))
        if lines[start : start + len(new_side)] != new_side:
            return None
        lines[start : start + len(new_side)] = old_side
    return "".join(f"{line}\n" for line in lines)


_SEARCH_REPLACE: Final = lazy_compile(
    r"-{3,} SEARCH\n(.*?)\n?={3,}\n(.*?)\n?\+{3,} REPLACE", re.DOTALL
)


def reconstruct_old(new: str, edit: dict[str, Any]) -> str | None:
    """The file before an edit, from the file after it and the edit, when that is certain.

    Claude's ``structuredPatch`` is reversed exactly; ``old_string``/``new_string`` edits
    (Claude Edit, Gemini replace, Cursor ``edits``, Cline SEARCH/REPLACE) are reversed only when
    each new string occurs exactly once. Otherwise ``None``: the old side is unknown.
    """
    patch = edit.get("structured_patch")
    if isinstance(patch, list) and patch:
        return _reverse_structured_patch(new, patch)
    steps: list[tuple[str, str]] = []
    if isinstance(edit.get("old_string"), str) and isinstance(edit.get("new_string"), str):
        if edit.get("replace_all"):
            return None
        steps.append((edit["old_string"], edit["new_string"]))
    elif isinstance(edit.get("edits"), list):
        for step in edit["edits"]:
            if not isinstance(step, dict) or step.get("replace_all"):
                return None
            before, after = step.get("old_string"), step.get("new_string")
            if not isinstance(before, str) or not isinstance(after, str):
                return None
            steps.append((before, after))
    elif isinstance(edit.get("diff"), str):
        steps.extend(_SEARCH_REPLACE.findall(edit["diff"]))
    if not steps:
        return None
    text: str | None = new
    for before, after in reversed(steps):
        text = _replace_once_reversed(text, before, after) if text is not None else None
    return text


def _hunk_json(hunk: Hunk, new_lines: list[str], *, exact: bool) -> dict[str, Any]:
    written = new_lines[hunk.new_start - 1 : hunk.new_start - 1 + hunk.new_lines]
    content_hash = None
    if written:
        text = "".join(f"{line}\n" for line in written)
        content_hash = "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return {
        "content_hash": content_hash,
        "line_hashes": [line_hash(x) for x in written],
        "new_lines": hunk.new_lines,
        "new_start": hunk.new_start,
        "old_lines": hunk.old_lines if exact else None,
        "old_start": hunk.old_start if exact else None,
    }


#: A whole-file write too large to keep its text (over the blob limit) still records one short
#: hash per line up to this many lines (about 1.5 MB of the record, whose bound is 4 MiB); past
#: it, the hunk's ``line_hashes`` is empty and blame attributes the lines by the file's SHA-256
#: (a later change to the file makes them a gap, never someone else's).
WHOLE_WRITE_HASHED_LINES: Final = 100_000


def line_count(text: str) -> int:
    """``len(split_lines(text))`` without making the list."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def whole_write_change(
    relative: str,
    text: str,
    sha256: str,
    *,
    old_known: bool,
    old: str | None,
    old_sha256: str | None,
    mutation_class: str | None = None,
) -> dict[str, Any]:
    """A ``FileChange`` for a whole-file write (a ``Write``'s ``content``) whose ``text`` is the
    file on disk (``sha256``), too large to diff or keep: every line is the call's, in one hunk
    replacing the whole old side (exact when the old side is known: its line count, no diff),
    with each line's short hash while they fit :data:`WHOLE_WRITE_HASHED_LINES`. Nothing of
    the text itself is recorded."""
    count = line_count(text)
    hashes: list[str] = []
    if count <= WHOLE_WRITE_HASHED_LINES:
        hashes = [line_hash(line) for line in split_lines(text)]
    old_lines = (0 if old is None else line_count(old)) if old_known else None
    hunk = {
        "content_hash": None,
        "line_hashes": hashes,
        "new_lines": count,
        "new_start": 1,
        "old_lines": old_lines,
        "old_start": (1 if old_lines else 0) if old_known else None,
    }
    out: dict[str, Any] = {
        "change": "created" if old_known and old is None else "modified",
        "exact": old_known,
        "hunks": [hunk] if count else [],
        "lines": count,
        "mutation_class": mutation_class,
        "old_sha256": old_sha256 if old_known else None,
        "path": relative,
        "previous_path": None,
        "sha256": sha256,
    }
    if not old_known:
        out["unknown_reason"] = "the file it replaced was too large to keep"
    return out


def file_change(
    relative: str,
    *,
    old: str | None,
    old_known: bool,
    old_sha256: str | None,
    new: str | None,
    new_sha256: str | None,
    previous_path: str | None = None,
    mutation_class: str | None = None,
    written: Iterable[tuple[int, int]] = (),
    unknown_reason: str | None = None,
    recorded: str | None = None,
    recorded_sha256: str | None = None,
    copied_from: str | None = None,
) -> dict[str, Any]:
    """A ``FileChange`` (models.py) for one file.

    Args:
        old: the file before the call (``None`` with ``old_known`` = it did not exist).
        old_known: whether the old side is known; if not, only ``written`` (1-based inclusive
            ranges of the new file the client says it wrote) is recorded, with ``exact`` false.
        new: the file after the call (``None`` = deleted, or unreadable when ``new_sha256``
            is set).
        unknown_reason: why the old side is unknown, recorded when it is (blame says it).
        recorded: the last version of the file the records describe (``recorded_sha256``),
            when the old side may differ from it: the difference is recorded as ``drift``
            (the lines nobody changed keep their attribution; decision 0009).
        copied_from: the file appeared with the content of that path's recorded version
            (``old_sha256`` is that version's; ``old`` is ``new``).
    """
    if new is None and new_sha256 is None:
        change = "deleted"
    elif previous_path is not None:
        change = "renamed"
    elif copied_from is not None or (old_known and old is None):
        change = "created"
    else:
        change = "modified"
    new_lines = split_lines(new) if new is not None else []
    exact = old_known and (new is not None or new_sha256 is None)
    if exact:
        hunks = diff_hunks(split_lines(old) if old is not None else [], new_lines)
    else:
        hunks = [
            Hunk(0, 0, start, end - start + 1)
            for start, end in written
            if 1 <= start <= end <= len(new_lines)
        ]
    out = {
        "change": change,
        "exact": exact,
        "hunks": [_hunk_json(h, new_lines, exact=exact) for h in hunks],
        "lines": len(new_lines) if new is not None else None,
        "mutation_class": mutation_class,
        "old_sha256": old_sha256 if old_known else None,
        "path": relative,
        "previous_path": previous_path,
        "sha256": new_sha256,
    }
    if unknown_reason is not None and not exact:
        out["unknown_reason"] = unknown_reason
    drifted = recorded is not None and recorded_sha256 not in (None, old_sha256)
    if copied_from is not None and exact:
        # The copy starts from the source's model: its recorded version, then its drift.
        out["copied_from"] = copied_from
        out["copied_sha256"] = recorded_sha256 if drifted else old_sha256
    if (
        drifted
        and exact
        and old is not None
        and recorded is not None
        and recorded_sha256 is not None
        and recorded_sha256 != old_sha256
    ):
        old_lines = split_lines(old)
        out["drift"] = {
            "from_sha256": recorded_sha256,
            "hunks": [
                _hunk_json(h, old_lines, exact=True)
                for h in diff_hunks(split_lines(recorded), old_lines)
            ],
        }
    return out
