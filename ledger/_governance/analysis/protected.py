"""The paths no agent tool may write: the ledger, its signing keys, and the clients' hook configs.

An agent that edits any of these can rewrite its own evidence or switch its own hooks off
(decision 0002, "Protected paths"):

* ``.orchestration/`` in the workspace: the ledger, pinned keys, intents, hook config;
* the private-key directory, ``$LEDGER_HOME/keys`` (default ``~/.config/ledger/keys``, see
  :func:`ledger._evidence.keys.key_home`); reading it is refused too, since whoever holds the key
  can sign records;
* ledger's other trust state outside the workspace: the cache secret
  (``$LEDGER_HOME/cache.secret``; read refused too, since whoever holds it can seal a cache),
  the trust pins (``$LEDGER_HOME/trusted``) and the stored checkpoints and workspace anchors
  (the state directory, :func:`ledger._evidence.anchors.state_home`): an agent that rewrites
  them can vouch for its own key or erase the evidence of a rollback;
* every client's hook and settings files, in the workspace and in the home directory:
  ``.claude/settings*.json``, ``.cursor/hooks.json``, ``.gemini/settings.json``, ``.codex/``,
  ``.clinerules/hooks/``, ``.github/hooks/`` (``~/.copilot/hooks/`` in the home directory), and
  the MCP server configurations ``ledger install`` writes (``.mcp.json``, ``.cursor/mcp.json``,
  ``.github/mcp.json``; ``~/.claude.json``, ``~/.copilot/mcp-config.json``, Cline's).

Three questions are answered here, all without opening any file for reading:

* :meth:`ProtectedAreas.area_of`: does this real absolute path lie in (or contain) a protected
  area? Names are compared case-folded: on case-insensitive filesystems ``.Orchestration`` *is*
  the ledger directory.
* :meth:`ProtectedAreas.alias_of`: is this existing file a hard link to a protected file (same
  device and inode)? Only files with a link count above one are looked at, so the common case
  costs one ``lstat``.
* :func:`named_in`: does a shell word, read as the pattern bash would expand (globs, and run-time
  expansions standing for any text), name a protected path? This is textual, so it also catches
  ``.orch*``, ``.orchestr[a]tion`` and ``${D}estration`` without touching the disk.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Final

from ledger._governance.analysis.runs_later import (
    CLIENT_FILES,
    INSTALL_AREA,
    hook_install_dirs,
    relative_areas,
)
from ledger._startup.patterns import lazy_compile

__all__ = [
    "CACHE_AREA",
    "KEY_AREA",
    "READ_DENIED",
    "ProtectedAreas",
    "expand_glob",
    "has_glob",
    "named_in",
    "watched_client_files",
]

ORCHESTRATION: Final = ".orchestration"
KEY_AREA: Final = "the ledger's signing keys"
KEY_PARENT: Final = "a directory holding the ledger's signing keys"
SECRET_AREA: Final = "the ledger's cache secret"  # noqa: S105 -- an area name, not a secret
TRUST_AREA: Final = "the ledger's trust pins"
STATE_AREA: Final = "the ledger's stored checkpoints"
#: The hook's cache: copies of the files tool calls touched (a .env the person's own read rules
#: keep from the agent included), kept for diffs and attribution.
CACHE_AREA: Final = "ledger's cache of file copies"
#: The folders of the resident decider's socket: it decides outside any sandbox, so the shell
#: may not connect to it (``curl --unix-socket``), list or replace it.
DECIDER_AREA: Final = "ledger's decider socket"
#: Areas an agent may not even read: their contents sign records or seal caches, or copy files.
READ_DENIED: Final = frozenset({KEY_AREA, SECRET_AREA, CACHE_AREA, DECIDER_AREA})

# (components as fnmatch patterns, case-folded, area name, whether anything below the match is
# covered). Relative to the workspace root and to the home directory alike: ``.orchestration/``,
# then the one list of what runs code later (ledger/_governance/analysis/runs_later.py: every
# client's hook, settings and MCP files from the client registry, git's configuration, the
# login shell's files). Folded here because names are compared folded (``Documents/Cline/Hooks``
# and VS Code's ``Code/User/mcp.json`` never matched when only the path was folded).
_CONFIG_AREAS: Final = tuple(
    (tuple(p.casefold() for p in parts), name, below)
    for parts, name, below in (
        ((ORCHESTRATION, ".cache"), CACHE_AREA, True),  # before the folder holding it
        ((ORCHESTRATION,), ".orchestration/", True),
        *relative_areas(),
    )
)
_GLOB_CHARS: Final = frozenset("*?[")
_WALK_LIMIT: Final = 2000  # files looked at when searching protected areas for a hard link
# A run-time expansion in a shell word ($X, ${X...}, $(...), `...`), as the scanner keeps it.
_EXPANSION: Final = (
    r"\$\(\(.*?\)\)|\$\{.*?\}|\$\(.*?\)|`.*?`|\$[A-Za-z_][A-Za-z0-9_]*"
    r"|\$[0-9@*#?$!-]|[<>]\(.*?\)"
)
_KEY_VARIABLES: Final = ("ledger_home", "ledger_signing_key")
#: The decider's socket named in a word however its folder is spelled: the socket's own name
#: (``decider-<install>.sock``), the runtime folder's ``ledger`` (``$XDG_RUNTIME_DIR/ledger``,
#: ``/run/user/<any uid>/ledger``, or code that joins the two names); the ``/tmp`` fallback
#: (``/tmp/ledger-$UID``) is :data:`_TMP_DECIDER`. The hook's own environment may name another
#: runtime folder than the agent's shell has (a client started elsewhere), so these are matched
#: as text, not only as this environment's paths (:func:`ledger._workspace.decider_dirs`).
_DECIDER_NAMED: Final = lazy_compile(
    r"decider-[^/\s'\"]*\.sock"
    r"|(?:\$\{?xdg_runtime_dir\}?|/run/user/.{1,64}?)/+ledger(?![\w.-])"
    r"|xdg_runtime_dir.*[\'\"/]ledger(?![\w.-])"
)
#: The ``/tmp`` fallback folder, ``/tmp/ledger-<uid>`` (any uid: matched as text), by what follows
#: ``ledger-`` up to the end of that component (brace groups whole): judged by
#: :func:`_tmp_decider_named`, since ``/tmp/ledger-2024.log`` or ``/tmp/ledger-*.log`` is not the
#: folder while ``/tmp/ledger-100*`` can be.
_TMP_DECIDER: Final = lazy_compile(
    r"(?:^|[\s'\"=:/])(?:/tmp|\$\{?tmpdir\}?)/+ledger-"
    r"((?:\{[^{}/\s'\"]*\}|[^/\s'\"),;{])*)(?=/|$|[\s'\"),;])"
)
#: A bash sequence expression (``{0..2000}``): it expands to numbers.
_NUMBER_SEQUENCE: Final = lazy_compile(r"\{-?\d+\.\.-?\d+(?:\.\.-?\d+)?\}")
#: What a glob matches besides its literal characters: bracket expressions, ``*``, ``?`` (and the
#: backslash that only quotes the next character).
_GLOB_PARTS: Final = lazy_compile(r"\[[^\]]*\]?|[*?\\]")


def _decider_named(folded: str) -> bool:
    """Whether a (case-folded) word or piece of code names the resident decider's socket or a
    folder it can be in (:data:`_DECIDER_NAMED`, :data:`_TMP_DECIDER`)."""
    return _DECIDER_NAMED.search(folded) is not None or _tmp_decider_named(folded)


def _tmp_decider_named(folded: str) -> bool:
    """``/tmp/ledger-<uid>`` in any spelling that can reach it: the digits written out, a glob
    that could match digits alone (``*``, ``100*``, ``[0-9]*``, ``{0..2000}``), and any variable
    or command substitution, whatever follows it (``$UID``, ``$(id -u)``: unquoted, a value
    also splits into several words, one of which can be the folder). A name that continues with
    anything else (``/tmp/ledger-2024.log``, ``/tmp/ledger-0-x``, ``/tmp/ledger-*.log``) is
    another file. Nothing after ``ledger-`` but a quote or the end of the text is code that
    joins the uid on (``"/tmp/ledger-" + uid``)."""
    for match in _TMP_DECIDER.finditer(folded):
        name = match.group(1)
        if not name:
            if folded[match.end() : match.end() + 1] in ("", "'", '"'):
                return True
            continue
        if "$" in name or "`" in name:
            return True
        name = _NUMBER_SEQUENCE.sub("0", name)
        if any(
            each and re.fullmatch(r"[0-9]*", _GLOB_PARTS.sub("", each)) for each in _braces(name)
        ):
            return True
    return False


def has_glob(text: str) -> bool:
    """Whether ``text`` contains a glob character bash would expand."""
    return any(c in _GLOB_CHARS for c in text)


def _casefold_parts(path: str) -> list[str]:
    return [p for p in path.casefold().split("/") if p not in ("", ".")]


class ProtectedAreas:
    """The protected areas of one workspace, for one user.

    Args:
        root: the workspace root (made real).
        key_dir: the private-key directory (``$LEDGER_HOME/keys``).
        home: the user's home directory.
        trust_state: ledger's other per-user paths, by area: ``SECRET_AREA``, ``TRUST_AREA``,
            ``STATE_AREA`` (see the module docstring).
    """

    __slots__ = ("_bases", "_install", "_private", "_protected_inodes", "home", "key_dir", "root")

    def __init__(
        self,
        root: str,
        key_dir: str,
        home: str,
        trust_state: Mapping[str, str] | None = None,
        sockets: Sequence[str] = (),
    ) -> None:
        self.root = os.path.realpath(root)
        self.key_dir = os.path.realpath(key_dir)
        self.home = os.path.realpath(home)
        self._bases = tuple({self.root, self.home})
        # (real path, its casefolded components, area, the area's name when a word names a
        # parent of it)
        private = [(self.key_dir, KEY_AREA, KEY_PARENT)]
        private += [
            (os.path.realpath(path), area, f"a directory holding {area}")
            for area, path in (trust_state or {}).items()
        ]
        private += [(os.path.realpath(p), DECIDER_AREA, DECIDER_AREA) for p in sockets]
        self._private: tuple[tuple[str, list[str], str, str], ...] = tuple(
            (path, _casefold_parts(path), area, parent) for path, area, parent in private
        )
        self._protected_inodes: frozenset[tuple[int, int]] | None = None
        # The hook's own installation, where a file written runs in the next hook call; not
        # when it lies in the workspace (an editable install of the project being worked on:
        # its code is the agent's work, governed by scope, and --hardened refuses it).
        inside = _casefold_parts(self.root)
        self._install = tuple(
            parts
            for parts in map(_casefold_parts, hook_install_dirs())
            if parts[: len(inside)] != inside and len(parts) > 1
        )

    @classmethod
    def for_workspace(cls, root: str, environ: Mapping[str, str] | None = None) -> ProtectedAreas:
        """The areas of workspace ``root``; the key directory follows ``$LEDGER_HOME``."""
        # Loaded by the hook anyway (the keys, the cache seal, the workspace layout).
        from ledger._evidence.keys import private_key_dir, trust_pins_dir  # noqa: PLC0415
        from ledger._workspace import cache_secret_path, decider_dirs, state_home  # noqa: PLC0415

        env = os.environ if environ is None else environ
        home = env.get("HOME") or os.path.expanduser("~")  # noqa: PTH111
        trust_state = {
            SECRET_AREA: str(cache_secret_path(env)),
            TRUST_AREA: str(trust_pins_dir(env)),
            STATE_AREA: str(state_home(env)),
        }
        # The usual runtime folder too, whatever this environment says: the agent's shell
        # may have another XDG_RUNTIME_DIR than the hook (a client started elsewhere).
        usual = f"/run/user/{os.getuid()}/ledger"
        sockets = list(dict.fromkeys([*map(str, decider_dirs(env)), usual]))
        return cls(root, str(private_key_dir(env)), home, trust_state, sockets)

    def area_of(self, absolute: str) -> str | None:
        """The protected area ``absolute`` lies in or contains (deleting a parent deletes it).

        ``absolute`` should be real (symlinks resolved), as :func:`normalize_path` returns it.
        """
        parts = _casefold_parts(absolute)
        for _, private, area, _ in self._private:
            if parts[: len(private)] == private or (parts and private[: len(parts)] == parts):
                return area
        for base in self._bases:
            base_parts = _casefold_parts(base)
            if parts[: len(base_parts)] != base_parts:
                continue
            rest = parts[len(base_parts) :]
            if not rest:
                if base == self.root:
                    return ORCHESTRATION + "/"  # the workspace root contains the ledger
                continue
            for patterns, name, below in _CONFIG_AREAS:
                if name == CACHE_AREA and len(rest) < len(patterns):
                    continue  # .orchestration itself: its own area, not the cache's
                if _components_hit(rest, patterns, below=below):
                    return name
        if any(parts[: len(folder)] == folder for folder in self._install):
            return INSTALL_AREA
        return None

    def alias_of(self, absolute: str) -> str | None:
        """The protected area a hard link ``absolute`` shares its inode with, if any."""
        try:
            info = os.lstat(absolute)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
            return None
        if self._protected_inodes is None:
            self._protected_inodes = frozenset(self._inodes())
        if (info.st_dev, info.st_ino) in self._protected_inodes:
            return "a hard link to a protected file"
        return None

    def _inodes(self) -> Iterator[tuple[int, int]]:
        roots = [os.path.join(self.root, ORCHESTRATION)]  # noqa: PTH118
        roots += [path for path, _, _, _ in self._private]
        for base in self._bases:
            for path, _name, _below, folder, *_ in CLIENT_FILES:
                roots.append(os.path.join(base, folder or path))  # noqa: PTH118
        seen = 0
        for top in dict.fromkeys(roots):
            try:
                info = os.lstat(top)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):  # the cache secret is one file, not a folder
                yield info.st_dev, info.st_ino
                continue
            for directory, _, files in os.walk(top):
                for name in files:
                    seen += 1
                    if seen > _WALK_LIMIT:
                        return
                    try:
                        info = os.lstat(os.path.join(directory, name))  # noqa: PTH118
                    except OSError:
                        continue
                    yield info.st_dev, info.st_ino

    def named_in(self, word: str, base: str | None = None) -> str | None:
        """The protected area a shell word could name (see :func:`named_in`)."""
        return named_in(word, self, base)

    def private_from_anywhere(self, relative: str) -> str | None:
        """The private area (:data:`READ_DENIED`) ``relative`` reaches if read from a directory
        not known statically (``cd "$X" && cat keys/k.pem``): some run of the area's path,
        continued by ``relative``, lands at or inside it. Globs match as bash would."""
        parts = [p for p in _word_pattern(relative.casefold()).split("/") if p not in ("", ".")]
        while parts and parts[0] == "..":
            parts = parts[1:]  # up from somewhere unknown is still somewhere unknown
        if not parts or ".." in parts:
            return None
        for _, private, area, _ in self._private:
            if area not in READ_DENIED:
                continue
            for start in range(len(private)):
                span = private[start : start + len(parts)]
                if start + len(parts) >= len(private) and all(
                    _pattern_hits(p, k) for p, k in zip(parts, span, strict=False)
                ):
                    return area
        return None


def _components_hit(parts: list[str], patterns: tuple[str, ...], *, below: bool) -> bool:
    """Whether path components ``parts`` (below a base) are, contain or lie in an area."""
    if len(parts) < len(patterns):
        # A parent of the area: ".claude" contains ".claude/settings.json".
        return all(_component_hit(p, q) for p, q in zip(parts, patterns, strict=False))
    head = parts[: len(patterns)]
    if not all(_component_hit(p, q) for p, q in zip(head, patterns, strict=True)):
        return False
    return below or len(parts) == len(patterns)


def _component_hit(part: str, pattern: str) -> bool:
    """``fnmatchcase(part, pattern)``; a pattern without glob characters is compared as it is
    (fnmatch compiles a regular expression for each pattern, once per process: a hook
    process's first check compiled ~30 of them for plain names such as ``.bashrc``)."""
    if "*" in pattern or "?" in pattern or "[" in pattern:
        return fnmatchcase(part, pattern)
    return part == pattern


def _word_pattern(word: str) -> str:
    """``word`` as an fnmatch pattern: each run-time expansion stands for any text."""
    return re.sub(_EXPANSION, "\x00", word)


def _pattern_hits(pattern: str, name: str) -> bool:
    """Whether one component pattern (globs, ``\\x00`` = any text) could be ``name``."""
    if "\x00" not in pattern and not has_glob(pattern):
        return pattern == name
    if not pattern.replace("\x00", "").strip("*?"):
        return False  # all wildcard ($X, *, ?*): no more a mention than any other word
    glob = pattern.replace("[^", "[!")
    if not glob.startswith((".", "\x00")) and name.startswith("."):
        return False  # a glob matches a leading dot only literally [bash(1) Pattern Matching]
    return fnmatchcase(name, glob.replace("\x00", "*"))


def named_in(word: str, areas: ProtectedAreas, base: str | None = None) -> str | None:
    """The protected area a shell word names, read as a pattern, or None.

    ``~``, ``$HOME`` and ``$LEDGER_HOME`` are replaced by their values; other run-time
    expansions match any text, globs match as bash would (a leading dot only literally), and
    names are case-folded. A component that is nothing but wildcards (``$X``, ``*``) names
    nothing by itself: such words are unknown, not mentions.

    Args:
        word: the word after quote removal (expansions kept verbatim).
        areas: the protected areas.
        base: the directory a relative word is resolved against (real, absolute).
    """
    folded = word.casefold()
    if any(v in folded for v in _KEY_VARIABLES):
        return KEY_AREA
    if _decider_named(folded):
        return DECIDER_AREA
    for text in _braces(folded):
        found = _named(text, areas, base)
        if found is not None:
            return found
    # A path inside code or a longer value (python3 -c 'open(os.path.expanduser("~/.x"))',
    # --opt=PATH, KEY:PATH): each quoted or delimited piece holding a "/" is a word too.
    if _PIECE_BREAK.search(folded):
        for piece in _PIECE_BREAK.split(folded):
            if "/" in piece and piece != folded:
                found = _named(piece, areas, base) or _loads_code(piece, areas, base)
                if found is not None:
                    return found
    return _loads_code(folded, areas, base)


# What separates a path from the code or text around it.
_PIECE_BREAK: Final = lazy_compile(r"[\s'\"`(),;:=<>|&\[\]{}]+")
# Files the hook's interpreter runs at start-up wherever they lie on its path [site(7)].
_CODE_AT_START: Final = lazy_compile(r"(^|/)(sitecustomize\.py|usercustomize\.py|[^/]*\.pth)$")


def _loads_code(text: str, areas: ProtectedAreas, base: str | None) -> str | None:
    """The hook's installation, when ``text`` names a file there its interpreter runs at
    start-up (``sitecustomize.py``, a ``.pth``): named in a word, not only written as a target."""
    if not _CODE_AT_START.search(text):
        return None
    absolute = text if text.startswith("/") else posixpath.join(base or "/", text)
    parts = _casefold_parts(posixpath.normpath(absolute))
    if any(parts[: len(folder)] == folder for folder in areas._install):
        return INSTALL_AREA
    return None


def _braces(text: str, limit: int = 64) -> list[str]:
    """Brace expansion as bash does it before globbing (``.{orchestration,x}``), bounded."""
    out: list[str] = []
    pending = [text]
    while pending and len(out) < limit:
        item = pending.pop()
        match = re.search(r"\{([^{}]*,[^{}]*)\}", item)
        if match is None:
            out.append(item)
            continue
        head, tail = item[: match.start()], item[match.end() :]
        pending.extend(head + choice + tail for choice in match.group(1).split(","))
    return out or [text]


def _named(text: str, areas: ProtectedAreas, base: str | None) -> str | None:
    home = areas.home.casefold()
    text = re.sub(r"^~(?=/|$)|\$\{?home\}?(?=/|$|\W)", home.replace("\\", "\\\\"), text)
    pattern = _word_pattern(text)
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts:
        return None
    # The key directory and ledger's other trust state: any run of components that ends like
    # one (".config/ledger/keys", "ledger/keys/x.pem"), or its absolute path (or a parent of
    # it) written out.
    if pattern.startswith("/"):
        absolute_parts = parts
    elif base is not None:
        absolute_parts = [*_casefold_parts(base), *parts]
    else:
        absolute_parts = []
    for _, private, area, parent in areas._private:
        tail = private[-2:]
        for i in range(len(parts) - 1):
            if all(_pattern_hits(p, k) for p, k in zip(parts[i : i + 2], tail, strict=True)):
                return area
        if absolute_parts and _area_by_pattern(absolute_parts, private):
            # Naming a parent (`rm -rf ~`) reaches the area when written; it is not a read of it.
            return area if len(absolute_parts) >= len(private) else parent
    # Workspace and home configuration: matched at any depth, since cd and relative paths can
    # put the word anywhere. A word that stops short of an area's file names its parent
    # directory (".claude"), which holds it.
    for i in range(len(parts)):
        rest = parts[i:]
        for patterns, name, _ in _CONFIG_AREAS:
            if name == CACHE_AREA and len(rest) < len(patterns):
                continue  # a word naming .orchestration names its own area
            width = min(len(rest), len(patterns))
            if all(
                _pattern_hits(p, q) or ("*" in q and fnmatchcase(p, q))
                for p, q in zip(rest[:width], patterns[:width], strict=True)
            ):
                return name
    return None


def _area_by_pattern(parts: list[str], key: list[str]) -> bool:
    """Whether absolute pattern components are the key directory, inside it, or a parent."""
    width = min(len(parts), len(key))
    if width < 2:
        return False
    return all(_pattern_hits(p, k) for p, k in zip(parts[:width], key[:width], strict=True))


def expand_glob(pattern: str, base: str, limit: int = 512) -> list[str] | None:
    """Expand a glob against the real tree as bash would, relative to ``base``.

    Returns the matches (absolute), ``[]`` when nothing matches (bash then keeps the word
    literally), or None when there are more than ``limit`` (the caller treats that as unknown).
    """
    import glob  # noqa: PLC0415 -- only commands with globs pay for it

    target = pattern.replace("[^", "[!")
    absolute = target if target.startswith("/") else os.path.join(base, target)  # noqa: PTH118
    found: list[str] = []
    for match in glob.iglob(absolute, include_hidden=False):  # noqa: PTH207
        found.append(match)
        if len(found) > limit:
            return None
    return found


def watched_client_files() -> tuple[tuple[str, str, bool, str], ...]:
    """Every client's settings, hook and MCP files the tripwire watches, relative to the
    workspace and to the home directory alike: ``(directory, file glob, recursive, rule)``,
    from the one table of where clients keep what runs (``client_files``), which names the
    part of a folder a client rewrites itself (Codex's sessions beside its ``*.toml``)."""
    return tuple(
        (folder, glob, recursive, rule)
        for _path, _name, _below, folder, glob, recursive, rule in CLIENT_FILES
    )
