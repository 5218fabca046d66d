"""Path normalization and write-scope checks for the hook fast path.

Every path an agent hands us (``tool_input.file_path``, a Bash redirection target, a ``rm``
operand) goes through :func:`normalize_path` before any policy looks at it, so that
``../``, absolute paths, ``~`` and symlinks cannot smuggle a write out of the workspace or into
``.orchestration/`` (the directory that holds the ledger itself).

Scope globs (an intent's ``owned_scope``) use git's wildmatch semantics through ``pathspec``.
Compiling them means importing ``pathspec`` (tens of milliseconds on a cold interpreter), which
a hook process cannot afford on every call. :meth:`ScopeSpec.to_cache` therefore exports the
regular expressions ``pathspec`` generated, and :meth:`ScopeSpec.from_cache` rebuilds an
equivalent matcher with nothing but :mod:`re`. Tests pin the cached form to ``pathspec`` answer
for answer.

Example:
    >>> spec = ScopeSpec.compile(["src/auth/", "docs/**/*.md"])
    >>> spec.matches("src/auth/login.py")
    True
    >>> ScopeSpec.from_cache(spec.to_cache()).matches("docs/a/b.md")
    True
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from ledger._errors import ConfigError, InputError, PolicyError
from ledger._startup.namedtuple import NamedTuple

# This module uses os.path, not pathlib (hence the PTH noqa comments): it runs inside every hook
# process, and importing pathlib costs ~3.7 ms on top of ``re`` (python -X importtime, CPython
# 3.11) for no gain here; os.path.realpath is what Path.resolve() calls anyway.

__all__ = [
    "ORCHESTRATION_DIR",
    "NormalizedPath",
    "PathVerdict",
    "ScopeCheck",
    "ScopeSpec",
    "Verdict",
    "check_write_scope",
    "normalize_path",
]

ORCHESTRATION_DIR = ".orchestration"
"""Workspace-relative directory that holds the ledger, keys and intents; agents never write it."""

# Version tag and layout of the cache produced by ScopeSpec.to_cache(). Bump the tag whenever the
# layout or the matching algorithm changes, so stale caches are refused instead of misread.
_CACHE_TAG = "ledger-scope-cache/1"

# pathspec marks "this pattern matched because a parent directory matched" with a named group
# in its regexes (``_DIR_MARK = 'ps_d'`` in pathspec/patterns/gitignore/spec.py for 1.x, and in
# pathspec/patterns/gitwildmatch.py for 0.12). GitIgnoreSpec gives such matches lower priority.
_DEFAULT_DIR_MARK = "ps_d"

_Mode = Literal["last-direct", "forward"]
_MODES = frozenset({"last-direct", "forward"})

Verdict = Literal["ok", "out_of_scope", "orchestration", "outside_workspace"]
"""Outcome of :func:`check_write_scope` for one path, most severe last."""


class NormalizedPath(NamedTuple):
    """A path resolved against the workspace.

    Attributes:
        relative: POSIX path relative to the (real) workspace root, ``"."`` for the root itself,
            or ``None`` when the path resolves outside the workspace.
        absolute: the real absolute path (symlinks in the existing prefix resolved).
        inside_workspace: whether ``absolute`` is the root or below it.
        in_orchestration: whether the path is ``.orchestration`` or anything under it.
    """

    relative: str | None
    absolute: str
    inside_workspace: bool
    in_orchestration: bool


def _check_raw_path(path: str, what: str) -> None:
    """Refuse paths no filesystem call should ever see.

    Raises:
        InputError: if ``path`` is not a string, is empty, or contains a NUL byte.
    """
    if not isinstance(path, str):
        raise InputError(f"{what} must be a string, got {type(path).__name__}")
    if not path:
        raise InputError(f"{what} is empty")
    if "\x00" in path:
        # NUL would truncate the path at the C level (os.* raise ValueError); a path that means
        # two different things to two layers is an attack, not an input.
        raise InputError(f"{what} contains a NUL byte")


def _real_root(root: str) -> str:
    """Return the real absolute path of the workspace root."""
    _check_raw_path(root, "workspace root")
    return os.path.realpath(os.path.expanduser(root))  # noqa: PTH111


def _expand_home(path: str, home: str | None) -> str:
    """``~`` and ``~/...`` with ``home`` when given (the caller's environment, not this
    process's); ``~user`` and the rest as :func:`os.path.expanduser` does."""
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return os.path.expanduser(path)  # noqa: PTH111


def normalize_path(
    path: str, *, root: str, cwd: str | None = None, home: str | None = None
) -> NormalizedPath:
    """Resolve ``path`` the way the kernel will when the agent writes it.

    Relative paths are joined to ``cwd`` (itself relative to ``root`` when relative; default
    ``root``), ``~`` is expanded, ``..`` is resolved, and symlinks are followed with
    :func:`os.path.realpath`. ``realpath`` resolves every component that exists and keeps the
    rest lexically, i.e. it resolves the longest existing prefix: a symlink inside the workspace
    that points outside yields an outside path, and a symlinked parent directory is followed
    even when the final file does not exist yet (the write would land in the link's target).
    A dangling final symlink is followed too, because writing it creates its target.

    The comparison with the workspace is case-sensitive, except the ``.orchestration`` check,
    which folds case: on case-insensitive filesystems (macOS APFS and Windows defaults)
    ``.Orchestration/x`` *is* the ledger directory, and refusing the odd directory name on
    Linux costs nothing.

    Args:
        path: the path as the agent wrote it.
        root: the workspace root (the directory that contains ``.orchestration/``).
        cwd: the directory relative paths are resolved against; default ``root``.
        home: what ``~`` stands for; default this process's ``$HOME``.

    Returns:
        The :class:`NormalizedPath`.

    Raises:
        InputError: if ``path``, ``root`` or ``cwd`` is empty or contains a NUL byte.
    """
    _check_raw_path(path, "path")
    real_root = _real_root(root)
    if cwd is None:
        base = real_root
    else:
        _check_raw_path(cwd, "cwd")
        base = os.path.join(real_root, _expand_home(cwd, home))  # noqa: PTH118
    # os.path.join discards ``base`` when ``path`` is absolute, which is what a shell does.
    absolute = os.path.realpath(os.path.join(base, _expand_home(path, home)))  # noqa: PTH118
    relative = _relative_to(absolute, real_root)
    if relative is None:
        return NormalizedPath(None, absolute, inside_workspace=False, in_orchestration=False)
    first = relative.split("/", 1)[0]
    in_orchestration = first.casefold() == ORCHESTRATION_DIR
    return NormalizedPath(relative, absolute, True, in_orchestration)


def _relative_to(absolute: str, real_root: str) -> str | None:
    """Return ``absolute`` relative to ``real_root`` in POSIX form, or None when outside.

    Both arguments are real, normalized absolute paths, so a string-prefix test on a component
    boundary is exact (``/ws-other`` is not under ``/ws``).
    """
    if absolute == real_root:
        return "."
    prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
    if not absolute.startswith(prefix):
        return None
    relative = absolute[len(prefix) :]
    if os.sep != "/":  # pragma: no cover - POSIX CI; keeps Windows output POSIX-shaped
        relative = relative.replace(os.sep, "/")
    return relative


class ScopeSpec:
    """A compiled set of gitwildmatch globs (an intent's ``owned_scope``).

    Matching follows :class:`pathspec.GitIgnoreSpec`: the last matching pattern decides, ``!``
    negates, a pattern ending in ``/`` matches everything under that directory, and a pattern
    without a slash (other than a trailing one) matches at any depth.

    Build one with :meth:`compile` (imports ``pathspec``) or :meth:`from_cache` (``re`` only).

    Attributes:
        globs: the source globs when built by :meth:`compile`; ``None`` when built from a cache.
    """

    __slots__ = ("_dir_mark", "_mode", "_rules", "globs")

    def __init__(
        self,
        rules: Sequence[tuple[re.Pattern[str], bool]],
        *,
        dir_mark: str = _DEFAULT_DIR_MARK,
        mode: _Mode = "last-direct",
        globs: tuple[str, ...] | None = None,
    ) -> None:
        """Wrap already compiled rules; prefer :meth:`compile` or :meth:`from_cache`.

        Args:
            rules: ``(regex, include)`` pairs in pattern order.
            dir_mark: name of the regex group that flags a directory-pattern match.
            mode: which of pathspec's two decision procedures to follow (see :meth:`matches`).
            globs: the source globs, kept for messages.
        """
        self._rules = tuple(rules)
        self._dir_mark = dir_mark
        self._mode: _Mode = mode
        self.globs = globs

    @classmethod
    def compile(cls, globs: Sequence[str]) -> ScopeSpec:
        """Compile gitwildmatch globs with ``pathspec``.

        Blank lines and ``#`` comments are ignored, as in a ``.gitignore`` file.

        Args:
            globs: the globs, e.g. ``["src/auth/", "tests/**/test_auth*.py"]``.

        Returns:
            The compiled :class:`ScopeSpec`.

        Raises:
            PolicyError: if a glob is not a valid git pattern (e.g. a lone ``!``).
        """
        if isinstance(globs, str):
            # A bare string is a Sequence[str] of characters; that is always a caller bug.
            raise PolicyError(f"scope globs must be a list of strings, got the string {globs!r}")
        # Deferred import: only compiling needs pathspec; the hook path uses from_cache().
        import pathspec  # noqa: PLC0415

        try:
            spec = pathspec.GitIgnoreSpec.from_lines(list(globs))
        except (ValueError, TypeError) as exc:
            raise PolicyError(f"invalid scope glob: {exc}") from exc
        rules: list[tuple[re.Pattern[str], bool]] = []
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            include = pattern.include
            if include is None or regex is None:
                continue  # comments and blank lines compile to no-op patterns
            rules.append((re.compile(regex.pattern), bool(include)))
        return cls(rules, dir_mark=_pathspec_dir_mark(), mode=_pathspec_mode(), globs=tuple(globs))

    @classmethod
    def from_cache(cls, data: Iterable[object]) -> ScopeSpec:
        """Rebuild a spec from :meth:`to_cache` output without importing ``pathspec``.

        Args:
            data: the list :meth:`to_cache` returned (typically read back from JSON).

        Returns:
            An equivalent :class:`ScopeSpec` (with ``globs`` set to ``None``).

        Raises:
            ConfigError: if ``data`` is not a cache of this version or a regex does not compile.
        """
        items = list(data)
        if not items or not isinstance(items[0], str):
            raise ConfigError("scope cache is empty or has no header")
        header = items[0].split(" ")
        if (
            len(header) != 3
            or header[0] != _CACHE_TAG
            or not header[1].isidentifier()
            or header[2] not in _MODES
        ):
            raise ConfigError(f"scope cache header {items[0]!r} is not {_CACHE_TAG!r}")
        rules: list[tuple[re.Pattern[str], bool]] = []
        for item in items[1:]:
            if not isinstance(item, str) or len(item) < 2 or item[0] not in "+-":
                raise ConfigError(f"scope cache entry {item!r} is malformed")
            try:
                rules.append((re.compile(item[1:]), item[0] == "+"))
            except re.error as exc:
                msg = f"scope cache regex {item[1:]!r} does not compile: {exc}"
                raise ConfigError(msg) from exc
        mode: _Mode = "forward" if header[2] == "forward" else "last-direct"
        return cls(rules, dir_mark=header[1], mode=mode)

    def to_cache(self) -> list[str]:
        """Export the compiled rules as JSON-friendly strings.

        Layout: a header ``"ledger-scope-cache/1 <dir-mark-group> <mode>"`` then one entry per
        rule, ``"+<regex>"`` for an including pattern and ``"-<regex>"`` for a ``!`` pattern.

        Returns:
            The cache list, suitable for :func:`json.dumps`.
        """
        out = [f"{_CACHE_TAG} {self._dir_mark} {self._mode}"]
        out.extend(("+" if include else "-") + regex.pattern for regex, include in self._rules)
        return out

    def matches(self, relative_path: str) -> bool:
        """Return whether a workspace-relative POSIX path is inside the scope.

        A directory can be tested with a trailing slash (``"src/auth/"``), which lets a
        ``src/auth/`` or ``src/auth/**`` scope cover deleting the directory itself.

        Args:
            relative_path: the path, e.g. ``"src/auth/login.py"``. A leading ``/`` or ``./``
                is dropped, as ``pathspec.util.normalize_file`` does.

        Returns:
            True when the last deciding pattern includes the path.
        """
        if relative_path.startswith("/"):
            relative_path = relative_path[1:]
        elif relative_path.startswith("./"):
            relative_path = relative_path[2:]
        # The decision procedure of pathspec's GitIgnoreSpec. A match through a parent-directory
        # pattern (dir-mark group set) has priority 1, a direct match priority 2.
        # * "last-direct" (pathspec >= 1.0, pathspec/_backends/simple/gitignore.py, reversed
        #   order): the last direct match decides; without one, the last directory match.
        # * "forward" (pathspec 0.12, GitIgnoreSpec._match_file): a later match wins unless it
        #   has lower priority, except that an including directory match always wins.
        # The two differ only for a negated file under an included directory listed after it.
        if self._mode == "last-direct":
            fallback = False
            seen_dir = False
            for regex, rule_include in reversed(self._rules):
                match = regex.search(relative_path)
                if match is None:
                    continue
                if not match.groupdict().get(self._dir_mark):
                    return rule_include
                if not seen_dir:
                    fallback, seen_dir = rule_include, True
            return fallback
        include = False
        priority = 0
        for regex, rule_include in self._rules:
            match = regex.search(relative_path)
            if match is None:
                continue
            dir_mark = match.groupdict().get(self._dir_mark)
            this_priority = 1 if dir_mark else 2
            if (rule_include and dir_mark) or this_priority >= priority:
                include = rule_include
                priority = this_priority
        return include

    def __repr__(self) -> str:
        """Return a debug representation naming the globs or the rule count."""
        if self.globs is not None:
            return f"ScopeSpec.compile({list(self.globs)!r})"
        return f"<ScopeSpec from cache, {len(self._rules)} rules>"

    def __eq__(self, other: object) -> bool:
        """Specs are equal when their compiled rules are equal."""
        if not isinstance(other, ScopeSpec):
            return NotImplemented
        return (
            self._dir_mark == other._dir_mark
            and self._mode == other._mode
            and [(r.pattern, i) for r, i in self._rules]
            == [(r.pattern, i) for r, i in other._rules]
        )

    def __hash__(self) -> int:
        """Hash consistently with :meth:`__eq__`."""
        return hash((self._dir_mark, self._mode, tuple((r.pattern, i) for r, i in self._rules)))


def _pathspec_mode() -> _Mode:
    """Tell which decision procedure the installed pathspec uses, by asking it.

    ``!a/b`` then ``a/`` is the one shape where the two procedures disagree on ``a/b``.
    """
    import pathspec  # noqa: PLC0415 - only reached from compile(), never on the hook path

    probe = pathspec.GitIgnoreSpec.from_lines(["!a/b", "a/"])
    return "forward" if probe.match_file("a/b") else "last-direct"


def _pathspec_dir_mark() -> str:
    """Return the name of pathspec's directory-mark regex group for the installed version."""
    import importlib  # noqa: PLC0415 - only reached from compile(), never on the hook path

    for module_name in ("pathspec.patterns.gitignore.spec", "pathspec.patterns.gitwildmatch"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # pragma: no cover - depends on the pathspec version installed
            continue
        mark = getattr(module, "_DIR_MARK", None)
        if isinstance(mark, str):
            return mark
    return _DEFAULT_DIR_MARK  # pragma: no cover


class PathVerdict(NamedTuple):
    """The scope verdict for one path.

    Attributes:
        path: the path as given.
        relative: the normalized workspace-relative path (None when outside).
        absolute: the real absolute path.
        verdict: ``"ok"``, ``"out_of_scope"``, ``"orchestration"`` or ``"outside_workspace"``.
    """

    path: str
    relative: str | None
    absolute: str
    verdict: Verdict


class ScopeCheck(NamedTuple):
    """Per-path verdicts of :func:`check_write_scope`, in input order.

    Attributes:
        verdicts: one :class:`PathVerdict` per input path.
    """

    verdicts: tuple[PathVerdict, ...]

    @property
    def ok(self) -> bool:
        """Whether every path is writable under the scope (vacuously true for no paths)."""
        return all(v.verdict == "ok" for v in self.verdicts)

    @property
    def denied(self) -> tuple[PathVerdict, ...]:
        """The verdicts that are not ``"ok"``."""
        return tuple(v for v in self.verdicts if v.verdict != "ok")


def check_write_scope(
    paths: Iterable[str],
    *,
    root: str,
    cwd: str | None = None,
    scope: ScopeSpec,
    normalize: Callable[[str], NormalizedPath] | None = None,
) -> ScopeCheck:
    """Decide, path by path, whether an agent may write under its intent's scope.

    Order of checks (first hit wins): outside the workspace, inside ``.orchestration/`` (or the
    workspace root itself, which contains it), not matched by ``scope``, else ok. A path that
    resolves to an existing directory (``rm -rf src``) is matched with a trailing slash, so a
    ``src/auth/`` scope covers deleting ``src/auth`` but not deleting ``src``.

    Args:
        paths: paths as the agent wrote them (absolute, relative to ``cwd``, ``~``...).
        root: the workspace root.
        cwd: the directory relative paths are resolved against; default ``root``.
        scope: the compiled owned scope.
        normalize: how to resolve a path (default :func:`normalize_path` with ``root`` and
            ``cwd``); the hook passes its per-call memo so each path is resolved once.

    Returns:
        The :class:`ScopeCheck`.

    Raises:
        InputError: if a path is empty or contains a NUL byte.
    """
    verdicts: list[PathVerdict] = []
    for path in paths:
        norm = normalize(path) if normalize else normalize_path(path, root=root, cwd=cwd)
        verdict: Verdict
        if norm.relative is None:
            verdict = "outside_workspace"
        elif norm.in_orchestration or norm.relative == ".":
            # The root itself contains .orchestration/: deleting, moving or chmod-ing it takes
            # the ledger with it.
            verdict = "orchestration"
        else:
            candidate = norm.relative
            if os.path.isdir(norm.absolute):  # noqa: PTH112
                candidate += "/"
            verdict = "ok" if scope.matches(candidate) else "out_of_scope"
        verdicts.append(PathVerdict(path, norm.relative, norm.absolute, verdict))
    return ScopeCheck(tuple(verdicts))
