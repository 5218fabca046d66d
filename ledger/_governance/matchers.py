"""Hook matchers with Claude Code semantics.

A matcher decides whether a configured hook (or policy rule) applies to a tool call. Two
syntaxes are accepted, both taken from Claude Code:

**Tool-name matchers** (Claude Code hooks reference, "Matcher patterns", summarized in
docs/architecture.md, client protocols):

* ``None``, ``""`` or ``"*"`` match every tool.
* A pattern made only of letters, digits, ``_``, ``-``, spaces, ``,`` and ``|`` is an exact
  tool name, or a list of names split on ``|`` or ``,`` with whitespace trimmed (commas since
  v2.1.191, hyphens exact since v2.1.195). ``mcp__memory`` is therefore an exact name and
  matches no MCP tool; write ``mcp__memory__.*``.
* Anything else is a regular expression searched *unanchored* and case-sensitively, so
  ``Edit.*`` also matches ``NotebookEdit``; write ``^Edit$`` to pin it. Claude Code uses
  JavaScript ``RegExp.test``; we use :func:`re.search`, which agrees on the patterns people write
  for tool names (alternation, classes, anchors, ``.*``).

**Permission-rule matchers** with an argument filter (Claude Code permissions reference,
"Permission rule syntax"; the hook ``if`` field uses the same rules, docs/architecture.md):
``Tool(specifier)``. The tool part follows the tool-name rules above. The specifier is

* for shell tools (``Bash``, ``PowerShell``, Gemini's ``run_shell_command``...), a wildcard over
  the whole ``command`` string: ``*`` matches any run of characters including spaces, everything
  else is literal. As in Claude Code, a single trailing ``" *"`` is optional (``Bash(ls *)``
  matches ``ls`` and ``ls -la`` but not ``lsof``) and the legacy ``prefix:*`` form means
  ``prefix`` or ``prefix <anything>``;
* for file tools (``Edit``, ``Write``, ``Read``, ``MultiEdit``, ``NotebookEdit``...), a
  gitwildmatch glob over the file path (``file_path``, else ``notebook_path``, else ``path``).
  Absolute paths are made relative to the ``root`` given to :meth:`Matcher.matches`; a glob
  starting with ``//`` is an absolute-path glob, one starting with ``~/`` is relative to the
  home directory, and ``./x`` or ``/x`` is anchored at the root, as in Claude Code's Read/Edit
  rules.

A pattern of the shape ``<tool part>(<specifier>)`` is read as a permission rule when the tool
part is ``*``, or ends in a letter, digit or ``_`` and would match at least one of
:data:`SHELL_TOOLS` / :data:`FILE_TOOLS`, and the specifier does not start with ``?``;
otherwise the whole pattern is a regex. That settles the clash with regex groups: in
``mcp__github__(create|delete)`` or ``Notebook(Edit)`` the tool part names no shell or file tool
(Claude Code has no specifiers for MCP tools), ``.*(Edit)`` and ``^(Edit|Write)$`` have no
name-like tool part, and ``Bash(?:Output)`` opens a regex group, so all of them stay regexes.
``Bash(*)`` and ``Bash()`` are the same as ``Bash``.

``once`` (run a hook once per session) is engine state, not matching, and lives in the engine.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ledger._errors import PolicyError
from ledger._governance.vocabulary import SHELL_TOOLS
from ledger._startup.patterns import lazy_compile

if TYPE_CHECKING:
    from ledger._governance.analysis.paths import ScopeSpec

__all__ = [
    "FILE_TOOLS",
    "SHELL_TOOLS",
    "Matcher",
    "compile_matcher",
]

FILE_TOOLS = frozenset(
    {
        "Edit",
        "Write",
        "Read",
        "MultiEdit",  # legacy, still in first-party matchers [docs/architecture.md]
        "NotebookEdit",  # uses notebook_path [PLG]
        "Glob",
        "Grep",
        "write_file",  # Gemini CLI
        "replace",  # Gemini CLI
        "read_file",  # Gemini CLI
    }
)
"""Tool names whose argument filter applies to the file path in ``tool_input``."""

# The file-path keys, in the order they are tried [docs/architecture.md, client protocols].
_PATH_KEYS = ("file_path", "notebook_path", "path")

# Exact-name matchers: only these characters [CC §Matcher patterns].
_NAME_LIST = lazy_compile(r"[A-Za-z0-9_\- ,|]+")
# "<tool part>(<specifier>)". The tool part ends like a tool name (or is "*"), and the
# specifier does not start with "?" (a regex group such as "(?:...)"); whether the tool part
# names a shell or file tool is checked in Matcher.__init__.
_RULE = lazy_compile(r"(?P<tool>\*|[^()]*[A-Za-z0-9_])\((?P<arg>(?!\?).*)\)", re.DOTALL)
_ARG_TOOLS = tuple(sorted(SHELL_TOOLS | FILE_TOOLS))


class _NameMatcher:
    """Matches a tool name: everything, a set of exact names, or an unanchored regex."""

    __slots__ = ("_names", "_regex")

    def __init__(self, pattern: str | None) -> None:
        self._names: frozenset[str] | None = None
        self._regex: re.Pattern[str] | None = None
        if pattern is None or pattern in ("", "*"):
            return
        if _NAME_LIST.fullmatch(pattern):
            names = frozenset(part.strip() for part in re.split(r"[|,]", pattern) if part.strip())
            if not names:
                raise PolicyError(f"matcher {pattern!r} names no tool")
            self._names = names
            return
        try:
            self._regex = re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise PolicyError(f"invalid matcher regex {pattern!r}: {detail}") from exc

    def matches(self, name: str) -> bool:
        if self._names is not None:
            return name in self._names
        if self._regex is not None:
            return self._regex.search(name) is not None
        return True


def _rule_tool_matcher(tool: str) -> _NameMatcher | None:
    """Return the tool-part matcher if ``tool(...)`` is a permission rule, else None."""
    if tool.strip() == "*":
        return _NameMatcher(None)
    try:
        matcher = _NameMatcher(tool)
    except PolicyError:
        return None  # not a valid tool part: let the whole pattern be judged as a regex
    return matcher if any(matcher.matches(name) for name in _ARG_TOOLS) else None


def _command_regex(spec: str) -> re.Pattern[str]:
    """Translate a Claude Code Bash rule specifier into an anchored regex.

    Claude Code builds ``^jq( .*)?$`` for ``jq *``: ``*`` is ``.*``, the rest is literal, and a
    lone trailing ``" *"`` may be absent. ``prefix:*`` is the legacy prefix form.
    """
    if spec.endswith(":*") and spec.count("*") == 1:
        return re.compile(re.escape(spec[:-2]) + r"(?: .*)?", re.DOTALL)
    if spec.endswith(" *") and spec.count("*") == 1:
        return re.compile(re.escape(spec[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.DOTALL)


class Matcher:
    """A compiled matcher; build it with :func:`compile_matcher`.

    Attributes:
        pattern: the source pattern (``None`` for match-all).
    """

    __slots__ = ("_arg", "_command_re", "_glob", "_name", "pattern")

    def __init__(self, pattern: str | None) -> None:
        """Compile ``pattern``; see the module docstring for the syntax.

        Args:
            pattern: the matcher or permission rule.

        Raises:
            PolicyError: if the pattern is not a string, or its regex is invalid.
        """
        if pattern is not None and not isinstance(pattern, str):
            raise PolicyError(f"matcher must be a string, got {type(pattern).__name__}")
        self.pattern = pattern
        self._arg: str | None = None
        self._command_re: re.Pattern[str] | None = None
        self._glob: ScopeSpec | None = None
        rule = _RULE.fullmatch(pattern) if pattern else None
        tool_matcher = _rule_tool_matcher(rule["tool"]) if rule else None
        if rule is None or tool_matcher is None:
            self._name = _NameMatcher(pattern)
            return
        self._name = tool_matcher
        arg = rule["arg"]
        if arg not in ("", "*"):  # Bash(*) is Bash [CC permissions]; Bash() likewise
            self._arg = arg
            self._command_re = _command_regex(arg)

    def matches(
        self,
        tool_name: str,
        tool_input: Mapping[str, object] | None = None,
        *,
        root: str | None = None,
    ) -> bool:
        """Return whether a tool call matches.

        Args:
            tool_name: the tool name from the hook payload (``tool_name``).
            tool_input: the tool arguments; needed only by permission rules with a specifier.
            root: the workspace root, used to make absolute file paths relative.

        Returns:
            True when the name matches and, for a rule with a specifier, the argument matches.
            A rule with a specifier never matches a call whose argument is missing.

        Raises:
            PolicyError: if a file-path specifier is not a valid glob (compiled on first use).
        """
        if not self._name.matches(tool_name):
            return False
        if self._arg is None:
            return True
        if tool_input is None:
            return False
        if tool_name in SHELL_TOOLS:
            return self._match_command(tool_input)
        if tool_name in FILE_TOOLS:
            return self._match_path(tool_input, root)
        # Unknown (e.g. MCP) tools: use whichever argument the input carries.
        if isinstance(tool_input.get("command"), str):
            return self._match_command(tool_input)
        return self._match_path(tool_input, root)

    def _match_command(self, tool_input: Mapping[str, object]) -> bool:
        command = tool_input.get("command")
        if not isinstance(command, str) or self._command_re is None:
            return False
        return self._command_re.fullmatch(command.strip()) is not None

    def _match_path(self, tool_input: Mapping[str, object], root: str | None) -> bool:
        path = next((v for k in _PATH_KEYS if isinstance(v := tool_input.get(k), str) and v), None)
        if path is None or self._arg is None:
            return False
        glob = self._arg
        if glob.startswith("//"):
            # Absolute-path rule [CC permissions: "//path" is an absolute path].
            return self._glob_spec(glob[1:]).matches(posixpath.normpath(path))
        if glob.startswith("~/"):
            home = os.path.expanduser("~")  # noqa: PTH111 - no pathlib on the hook path
            relative = _relative(path, home)
            return relative is not None and self._glob_spec(glob[1:]).matches(relative)
        if glob.startswith("./"):
            glob = glob[1:]  # "./x" is relative to the project: anchor it like "/x"
        if posixpath.isabs(path):
            if root is None:
                return False
            relative = _relative(path, root)
            if relative is None:
                return False  # outside the workspace: a workspace glob cannot match
        else:
            relative = posixpath.normpath(path)
            if relative == ".." or relative.startswith("../"):
                return False
        return self._glob_spec(glob).matches(relative)

    def _glob_spec(self, glob: str) -> ScopeSpec:
        # Compiled lazily: a Bash call checked against an Edit(...) rule never pays for
        # importing pathspec.
        if self._glob is None:
            from ledger._governance.analysis.paths import ScopeSpec  # noqa: PLC0415

            self._glob = ScopeSpec.compile([glob])
        return self._glob

    def __repr__(self) -> str:
        """Return ``compile_matcher(<pattern>)``."""
        return f"compile_matcher({self.pattern!r})"


def _relative(path: str, base: str) -> str | None:
    """Lexically express absolute ``path`` relative to absolute ``base``; None when outside."""
    path = posixpath.normpath(path)
    base = posixpath.normpath(base)
    if path == base:
        return "."
    prefix = base if base.endswith("/") else base + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def compile_matcher(pattern: str | None) -> Matcher:
    """Compile a hook matcher or permission rule.

    Args:
        pattern: ``None``/``""``/``"*"`` for all tools, an exact name or ``|``/``,`` list, a
            regex, or a ``Tool(specifier)`` rule; see the module docstring.

    Returns:
        The :class:`Matcher`.

    Raises:
        PolicyError: if the regex is invalid or a name list names no tool (e.g. ``" | "``).

    Example:
        >>> compile_matcher("Edit|Write").matches("Write")
        True
        >>> compile_matcher("Edit.*").matches("NotebookEdit")
        True
        >>> compile_matcher("Bash(git *)").matches("Bash", {"command": "git status"})
        True
    """
    return Matcher(pattern)
