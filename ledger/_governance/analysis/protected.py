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
import re
import stat
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Final

__all__ = [
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
#: Areas an agent may not even read: their contents sign records or seal caches.
READ_DENIED: Final = frozenset({KEY_AREA, SECRET_AREA})

# (components as fnmatch patterns, area name, whether anything below the match is covered).
# Relative to the workspace root and to the home directory alike.
_CONFIG_AREAS: Final = (
    ((ORCHESTRATION,), ".orchestration/", True),
    ((".claude", "settings*.json"), "Claude Code's settings", False),
    ((".cursor", "hooks.json"), "Cursor's hooks", False),
    ((".gemini", "settings.json"), "Gemini CLI's settings", False),
    ((".codex",), "Codex's configuration", True),
    ((".clinerules", "hooks"), "Cline's hooks", True),
    # GitHub Copilot CLI: `.github/hooks/*.json` in the repository, `~/.copilot/hooks/` per
    # user (github/docs content/copilot/reference/hooks-reference.md, "Hooks locations").
    ((".github", "hooks"), "GitHub Copilot's hooks", True),
    ((".copilot", "hooks"), "GitHub Copilot's hooks", True),
    # Antigravity CLI: one `~/.gemini/config/hooks.json` of named bundles for every project
    # (findings-2026-11-24 §1.2; ledger/_clients/antigravity.py names the sources).
    ((".gemini", "config", "hooks.json"), "Antigravity CLI's hooks", False),
    ((".gemini", "config", "mcp_config.json"), "an MCP server configuration", False),
    # Windsurf: `.windsurf/hooks.json` in the workspace, `~/.codeium/windsurf/` per user
    # (docs.windsurf.com/windsurf/cascade/hooks, "Configuration").
    ((".windsurf", "hooks.json"), "Windsurf's hooks", False),
    ((".codeium", "windsurf", "hooks.json"), "Windsurf's hooks", False),
    ((".codeium", "windsurf", "mcp_config.json"), "an MCP server configuration", False),
    # VS Code's agent hooks live in `.github/hooks/` (above); its MCP servers in
    # `.vscode/mcp.json` and the user profile's `mcp.json` (code.visualstudio.com, MCP servers).
    ((".vscode", "mcp.json"), "an MCP server configuration", False),
    ((".config", "Code", "User", "mcp.json"), "an MCP server configuration", False),
    # Where `ledger install` registers `ledger mcp` (ledger/_clients/registry.py, McpConfig):
    # a client starts the servers these files name outside any sandbox, so an agent that
    # rewrote one would run its own code at the next start (decision 0002). Gemini CLI's and
    # Codex's are the settings files above.
    ((".mcp.json",), "an MCP server configuration", False),
    ((".cursor", "mcp.json"), "an MCP server configuration", False),
    ((".github", "mcp.json"), "an MCP server configuration", False),
    ((".copilot", "mcp-config.json"), "an MCP server configuration", False),
    ((".claude.json",), "an MCP server configuration", False),
    (
        (".cline", "data", "settings", "cline_mcp_settings.json"),
        "an MCP server configuration",
        False,
    ),
)
#: Of the client areas above, what the tripwire watches instead of the whole area
#: (ledger/_hooks/tripwire.py), as (directory components, file glob, recursive) each: the
#: parts of an area the client itself rewrites as it runs would trip it on every call. Areas
#: not named here are watched as they are protected.
_WATCHED_INSTEAD: Final[dict[tuple[str, ...], tuple[tuple[tuple[str, ...], str, bool], ...]]] = {
    # Codex keeps its sessions, logs and state databases beside its configuration.
    (".codex",): (((".codex",), "*.toml", False), ((".codex",), "hooks.json", False)),
    (".github", "hooks"): (((".github", "hooks"), "*.json", False),),
    (".copilot", "hooks"): (((".copilot", "hooks"), "*.json", False),),
    # Claude Code's own state (history, counters) lives in ~/.claude.json beside its servers;
    # Cline rewrites its MCP settings as the person toggles servers.
    (".claude.json",): (),
    (".cline", "data", "settings", "cline_mcp_settings.json"): (),
}
_GLOB_CHARS: Final = frozenset("*?[")
_WALK_LIMIT: Final = 2000  # files looked at when searching protected areas for a hard link
# A run-time expansion in a shell word ($X, ${X...}, $(...), `...`), as the scanner keeps it.
_EXPANSION: Final = (
    r"\$\(\(.*?\)\)|\$\{.*?\}|\$\(.*?\)|`.*?`|\$[A-Za-z_][A-Za-z0-9_]*"
    r"|\$[0-9@*#?$!-]|[<>]\(.*?\)"
)
_KEY_VARIABLES: Final = ("ledger_home", "ledger_signing_key")


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

    __slots__ = ("_bases", "_private", "_protected_inodes", "home", "key_dir", "root")

    def __init__(
        self, root: str, key_dir: str, home: str, trust_state: Mapping[str, str] | None = None
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
        self._private: tuple[tuple[str, list[str], str, str], ...] = tuple(
            (path, _casefold_parts(path), area, parent) for path, area, parent in private
        )
        self._protected_inodes: frozenset[tuple[int, int]] | None = None

    @classmethod
    def for_workspace(cls, root: str, environ: Mapping[str, str] | None = None) -> ProtectedAreas:
        """The areas of workspace ``root``; the key directory follows ``$LEDGER_HOME``."""
        # Loaded by the hook anyway (the keys, the cache seal, the workspace layout).
        from ledger._evidence.keys import private_key_dir, trust_pins_dir  # noqa: PLC0415
        from ledger._workspace import cache_secret_path, state_home  # noqa: PLC0415

        env = os.environ if environ is None else environ
        home = env.get("HOME") or os.path.expanduser("~")  # noqa: PTH111
        trust_state = {
            SECRET_AREA: str(cache_secret_path(env)),
            TRUST_AREA: str(trust_pins_dir(env)),
            STATE_AREA: str(state_home(env)),
        }
        return cls(root, str(private_key_dir(env)), home, trust_state)

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
                if _components_hit(rest, patterns, below=below):
                    return name
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
            for directory in (
                ".claude",
                ".cursor",
                ".gemini",
                ".codex",
                ".clinerules",
                ".github/hooks",
                ".copilot/hooks",
            ):
                roots.append(os.path.join(base, directory))  # noqa: PTH118
        seen = 0
        for top in roots:
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
        return all(fnmatchcase(p, q) for p, q in zip(parts, patterns, strict=False))
    head = parts[: len(patterns)]
    if not all(fnmatchcase(p, q) for p, q in zip(head, patterns, strict=True)):
        return False
    return below or len(parts) == len(patterns)


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
    for text in _braces(folded):
        found = _named(text, areas, base)
        if found is not None:
            return found
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
            width = min(len(rest), len(patterns))
            if all(
                _pattern_hits(p, q) for p, q in zip(rest[:width], patterns[:width], strict=True)
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


def watched_client_files() -> tuple[tuple[str, str, bool], ...]:
    """Every client's settings, hook and MCP files the tripwire watches, relative to the
    workspace and to the home directory alike: ``(directory, file glob, recursive)``. Derived
    from the protected areas (one table of where clients keep what runs), with the parts a
    client rewrites itself left out (:data:`_WATCHED_INSTEAD`)."""
    found: list[tuple[str, str, bool]] = []
    for patterns, _name, below in _CONFIG_AREAS:
        if patterns == (ORCHESTRATION,):
            continue  # the tripwire names what it watches there itself
        parts = _WATCHED_INSTEAD.get(
            patterns, ((patterns, "*", True),) if below else ((patterns[:-1], patterns[-1], False),)
        )
        found.extend(("/".join(folder), glob, recursive) for folder, glob, recursive in parts)
    return tuple(found)
