"""What a tool the policies do not know reaches through its input: paths and shell commands.

MCP tools (``mcp__server__tool``, Cursor's ``MCP:tool``, Cline's ``use_mcp_tool``) and any tool
no adapter maps to a file or shell tool can write files or run commands as surely as ``Write``
and ``Bash``. Their input is read for:

* **paths**: the values of path-named keys at any depth (``path``, ``file_path``,
  ``filename``, ``paths``, ``directory``, ``cwd``, ``uri``…: a key whose name, lower-cased
  without ``_``/``-``, is in :data:`_PATH_KEYS` or whose last word is in
  :data:`_PATH_SUFFIXES`),
  strings or lists of strings; ``file://`` URIs anywhere (a ``url`` is a path only then: a
  browser tool's ``localhost:3000`` is not a file); for the keys that are paths only
  sometimes (``target``, ``source``, ``to``…) a value that looks like one (``/``, ``./``,
  ``~/``). A folder and a file name side by side also give their join.
* **commands**: ``command``/``cmd``/``script``… strings (a list is a command's words), with
  ``args`` appended when they sit beside a command, run in the ``cwd`` beside them.
* JSON objects carried as text (Cline's ``arguments``) are read as objects.

**Read or write.** A tool is read-only when its name says so and says nothing that writes: a
word of the name (split on ``_``, ``-``, ``.``, ``:``, spaces and camel case) is in
:data:`READ_WORDS` (``read``, ``get``, ``list``, ``search``…) and none is in
:data:`WRITE_WORDS` (``write``, ``delete``, ``run``…). Every other tool that names a path is
treated as writing it, which is what the scope and the protected paths check. A read-only
tool still may not read the private key or the cache secret (the caller keeps those paths).

An input too large or too deep to read (:data:`MAX_NODES`, :data:`MAX_DEPTH`) is
``too_large``: the caller treats the call as a write it cannot check.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any, Final

from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile

__all__ = ["READ_WORDS", "WRITE_WORDS", "ToolReach", "is_read_only", "tool_reach"]

MAX_NODES: Final = 5000
MAX_DEPTH: Final = 32
_MAX_EMBEDDED_JSON: Final = 1024 * 1024

_PATH_KEYS: Final = frozenset(
    {
        "path",
        "paths",
        "file",
        "files",
        "filename",
        "filenames",
        "uri",
        "uris",
        "cwd",
        "dir",
        "directory",
        "directories",
        "folder",
        "workdir",
        "workingdirectory",
        "root",
        "dest",
        "destination",
        "src",
    }
)
# ... or whose last word is one of these (``filePath``, ``source_dir``, ``output_file``).
_PATH_SUFFIXES: Final = frozenset(
    {"path", "paths", "file", "files", "filename", "dir", "directory", "folder", "uri"}
)
# Keys that hold a path only sometimes: their value counts when it looks like one.
_MAYBE_PATH_KEYS: Final = frozenset(
    {"target", "source", "to", "from", "output", "input", "out", "location", "name"}
)
_DIR_KEYS: Final = frozenset({"dir", "directory", "folder", "cwd", "workdir", "root"})
_NAME_KEYS: Final = frozenset({"filename", "name", "file"})
_COMMAND_KEYS: Final = frozenset(
    {"command", "cmd", "commandline", "script", "shellcommand", "bash", "sh", "shell"}
)
_ARGS_KEYS: Final = frozenset({"args", "argv", "arguments"})
_CWD_KEYS: Final = frozenset({"cwd", "workdir", "workingdirectory", "directory", "dir"})
_JSON_TEXT_KEYS: Final = frozenset(
    {"arguments", "args", "input", "params", "parameters", "payload"}
)

#: Words of a tool name that say it only reads.
READ_WORDS: Final = frozenset(
    {
        "read",
        "get",
        "list",
        "ls",
        "search",
        "find",
        "glob",
        "grep",
        "view",
        "show",
        "fetch",
        "query",
        "describe",
        "stat",
        "info",
        "inspect",
        "cat",
        "lookup",
        "browse",
        "status",
        "diff",
        "log",
        "count",
        "exists",
        "check",
        "preview",
        "tree",
        "head",
        "tail",
        # `ledger mcp`'s explain_line, and blame tools generally, read history.
        "explain",
        "blame",
    }
)
#: Words of a tool name that say it changes something (they win over :data:`READ_WORDS`).
WRITE_WORDS: Final = frozenset(
    {
        "write",
        "create",
        "edit",
        "delete",
        "remove",
        "rm",
        "move",
        "mv",
        "rename",
        "update",
        "set",
        "put",
        "post",
        "save",
        "run",
        "exec",
        "execute",
        "apply",
        "patch",
        "insert",
        "replace",
        "upload",
        "download",
        "commit",
        "push",
        "make",
        "mkdir",
        "copy",
        "cp",
        "modify",
        "append",
        "install",
        "kill",
        "format",
        "generate",
        "export",
        "import",
        "add",
        "new",
        "touch",
        "clear",
        "reset",
        "truncate",
        "drop",
        "store",
        "sync",
    }
)
_WORD: Final = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class ToolReach(NamedTuple):
    """What one tool call's input reaches.

    Attributes:
        paths: every path found, as written (``file://`` URIs decoded), without duplicates.
        commands: the shell commands found, each prefixed with a ``cd`` to the ``cwd`` beside
            it, so a shell classifier sees where it runs.
        read_only: the tool's name says it only reads (:func:`is_read_only`).
        too_large: the input was too large or too deep to read in full.
    """

    paths: tuple[str, ...]
    commands: tuple[str, ...]
    read_only: bool
    too_large: bool

    @property
    def shell_text(self) -> str:
        """The commands as one script, for one classification."""
        return "\n".join(self.commands)


def _name_words(name: str) -> set[str]:
    return {w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _WORD.findall(part)}


def is_read_only(tool: str, tool_input: Mapping[str, Any] | None = None) -> bool:
    """Whether ``tool`` (and, for a client's generic MCP tool, the MCP tool it names in
    ``tool_name``) says it only reads."""
    words = _name_words(tool)
    inner = (tool_input or {}).get("tool_name") or (tool_input or {}).get("toolName")
    if isinstance(inner, str):
        words |= _name_words(inner)
    return bool(words & READ_WORDS) and not words & WRITE_WORDS


def _last_word(key: str) -> str:
    words = _WORD.findall(key)
    return words[-1].lower() if words else ""


def _norm(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~/", "file://")) and "\n" not in text


def _from_uri(text: str) -> str | None:
    if not text.lower().startswith("file://"):
        return None
    from urllib.parse import unquote, urlsplit  # noqa: PLC0415 -- only file:// URIs need it

    parts = urlsplit(text)
    return unquote(parts.path) or None


class _Walk:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.commands: list[str] = []
        self.nodes = 0
        self.too_large = False

    def path(self, value: str) -> None:
        found = _from_uri(value) if value.lower().startswith("file://") else value
        if found and found not in self.paths:
            self.paths.append(found)

    def strings(self, value: object) -> list[str]:
        if isinstance(value, str):
            return [value] if value else []
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str) and v]
        return []

    def visit(self, node: object, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            self.too_large = True
            return
        if isinstance(node, Mapping):
            self.mapping(node, depth)
        elif isinstance(node, list):
            for item in node:
                self.visit(item, depth + 1)
        elif isinstance(node, str) and node.lower().startswith("file://"):
            self.path(node)

    def mapping(self, node: Mapping[Any, Any], depth: int) -> None:
        # Every key as sent: two keys that differ only in case or `_` are both read (a server
        # may honour either).
        items = [(_norm(str(k)), str(k), v) for k, v in node.items()]

        def first(names: frozenset[str]) -> tuple[str, str] | None:
            return next(
                ((raw, v) for key, raw, v in items if key in names and isinstance(v, str) and v),
                None,
            )

        # A folder beside a file name is where the file goes (their join stands for both); a
        # cwd beside a command is where it runs (the command is classified from there).
        folder, name = first(_DIR_KEYS), first(_NAME_KEYS)
        joined = folder is not None and name is not None and not name[1].startswith("/")
        if folder is not None and name is not None and joined:
            self.path(f"{folder[1].rstrip('/')}/{name[1]}")
        has_command = any(key in _COMMAND_KEYS for key, _, _ in items)
        commands: list[str] = []
        for key, raw, value in items:
            skip = (joined and folder is not None and raw == folder[0]) or (
                has_command and key in _CWD_KEYS
            )
            if skip:
                pass
            elif key in _COMMAND_KEYS:
                words = self.strings(value)
                if words:
                    commands.append(shlex.join(words) if isinstance(value, list) else words[0])
            elif key in _PATH_KEYS or _last_word(raw) in _PATH_SUFFIXES:
                for text in self.strings(value):
                    if "://" not in text or text.lower().startswith("file://"):
                        self.path(text)
            elif key in _MAYBE_PATH_KEYS:
                for text in self.strings(value):
                    if _looks_like_path(text):
                        self.path(text)
            if (
                key in _JSON_TEXT_KEYS
                and isinstance(value, str)
                and value.lstrip()[:1] in ("{", "[")
                and len(value) <= _MAX_EMBEDDED_JSON
            ):
                with contextlib.suppress(ValueError):  # not JSON after all: text
                    self.visit(json.loads(value), depth + 1)
            elif isinstance(value, (Mapping, list)):
                self.visit(value, depth + 1)
            elif isinstance(value, str) and value.lower().startswith("file://"):
                self.path(value)
        args = [self.strings(v) for key, _, v in items if key in _ARGS_KEYS and isinstance(v, list)]
        cwd = first(_CWD_KEYS)
        for command in commands:
            line = " ".join([command, *(shlex.quote(a) for words in args for a in words)])
            self.commands.append(f"cd {shlex.quote(cwd[1])} && {line}" if cwd else line)


def tool_reach(tool: str, tool_input: Mapping[str, Any]) -> ToolReach:
    """The paths and commands ``tool_input`` carries, and whether ``tool`` only reads.

    Example:
        >>> tool_reach("mcp__fs__write_file", {"path": "src/a.py", "content": "x"}).paths
        ('src/a.py',)
        >>> tool_reach("mcp__fs__read_text", {"uri": "file:///etc/hosts"}).read_only
        True
    """
    walk = _Walk()
    walk.visit(tool_input, 0)
    return ToolReach(
        tuple(walk.paths),
        tuple(walk.commands),
        is_read_only(tool, tool_input),
        walk.too_large,
    )
