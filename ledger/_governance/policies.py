"""Built-in governance policies, registered as ordinary hooks (each can be switched off).

Pre-tool policies, in order (the first deny wins and skips the rest):

1. ``orchestration-guard``: no agent tool may write a protected path: ``.orchestration/``, the
   private-key directory (not even read it), or a client's hook and settings files
   (:mod:`ledger._governance.analysis.protected`); nor run ledger's writing commands from its
   shell, however ``ledger`` is spelled. A shell command that names a protected path and writes,
   runs opaque code or cannot be analysed is refused; so is one over the analysis size cap.
   Always on.
2. ``intent-command``: recognises ``ledger intent select|clear|expand`` in a shell command, binds
   the intent to the session and returns the ``<intent_context>`` block; ``expand`` asks a human.
3. ``intent-required``: a mutating tool needs an active intent (``INTENT_REQUIRED``).
4. ``scope``: every written path must match the intent's ``owned_scope`` plus approved
   expansions, after normalization (absolute, ``..``, symlinks); a path outside the workspace is
   always a violation (``SCOPE_VIOLATION``).
5. ``stale-file``: optimistic locking. A write is refused when the file changed on disk since
   this session last saw it (its Read, or its own last write), or when the client's
   ``observed_content_hash`` does not match (``STALE_FILE``), with a diff preview.
6. ``destructive``: shell commands classified DESTRUCTIVE go to a human (``ask``), with the
   intent, affected files, mutation class and a diff preview of at most 20 lines.
7. ``unanalysable``: a shell command the classifier cannot read (function definitions, ``trap``,
   ``eval`` of a run-time value, arithmetic with expansions, an unrecognised program...) goes to
   a human (``ask``): what is not recognised never passes silently. Always on.

7. ``before``: never blocks; keeps each target's bytes (and, for shell commands, a bounded
   stat snapshot of the working tree) so the post record can hold the exact diff
   (:mod:`ledger._governance.snapshot`).

The post-tool ``observe`` policy records what the session saw and changed: content hashes, and
per changed file git's zero-context hunks with a hash per written line
(:mod:`ledger._governance.attribution`), so the next decisions, and ``ledger blame``, can be
rebuilt from the ledger.

Mutating tools: Write, Edit, MultiEdit, NotebookEdit, Delete (Cursor), ApplyPatch, and
DESTRUCTIVE shell commands. Other tools (Read, Grep, MCP tools ...) are not file writes as far
as the hook can see.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ledger._errors import InputError
from ledger._governance.analysis.ledger_mcp import intent_command_of, ledger_tool
from ledger._governance.analysis.paths import (
    NormalizedPath,
    ScopeSpec,
    check_write_scope,
    normalize_path,
)
from ledger._governance.analysis.protected import (
    KEY_AREA,
    READ_DENIED,
    ProtectedAreas,
    expand_glob,
    has_glob,
)
from ledger._governance.engine import HookEngine, HookOutcome, Invocation
from ledger._governance.intents import (
    WORKABLE_STATUSES,
    Intent,
    IntentsFile,
    expansion_problem,
    intent_refusal,
    render_intent_context,
)
from ledger._governance.snapshot import (
    BLOB_LIMIT,
    SNAPSHOT_FILES,
    SNAPSHOT_SECONDS,
    Before,
    keep_blob,
    load_before,
    read_blob,
    recorded_version,
    recorded_with_content,
    remember_recorded,
    save_before,
    stat_snapshot,
)
from ledger._governance.state import WorkspaceState
from ledger._governance.vocabulary import SHELL_TOOLS, Permission, hook_error

if TYPE_CHECKING:
    from ledger._governance.analysis.shell import CommandClass, IntentCommand

__all__ = ["FILE_WRITE_TOOLS", "SHELL_TOOLS", "Governance", "GovernanceConfig", "edit_payload"]

FILE_WRITE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
DELETE_TOOLS: Final = frozenset({"Delete"})  # Cursor's documented Delete tool
PATCH_TOOLS: Final = frozenset({"ApplyPatch"})
READ_TOOLS: Final = frozenset({"Read"})
_PREVIEW_LINES: Final = 20
_SOURCES_KEPT: Final = 8
"""Files a shell command reads whose content the pre hook keeps (copy sources)."""
_COMMAND_KEPT: Final = 1000
"""Characters of a shell command kept in its record's attribution (blame names it)."""
_BLOB_LIMIT: Final = BLOB_LIMIT
# ledger subcommands an agent may run in its shell: they read, never write, the ledger. The
# intent commands it may run are recognised exactly (parse_intent_command) and governed.
_READ_ONLY_LEDGER: Final = frozenset(
    {"verify", "log", "blame", "query", "show", "--help", "-h", "--version", "intent list"}
)
# Names that, anywhere in a word, point at a protected path.
_PROTECTED_SUBSTRINGS: Final = (
    ".orchestration",
    "ledger/keys",
    "ledger_home",
    "agent_trace",
    ".claude/settings",
    ".cursor/hooks",
    ".gemini/settings",
    ".codex/",
    ".clinerules/hooks",
    ".github/hooks",
    ".copilot/hooks",
    ".gemini/config",
    ".windsurf/hooks",
    ".codeium/windsurf",
    ".mcp.json",
    "/mcp.json",
    "mcp-config.json",
    "mcp_settings.json",
    ".config/ledger",
)
# ... and in code handed to an interpreter (a word with spaces or parentheses), once quotes,
# `+` and spaces are squeezed out: ".orch" "estration" is the ledger directory in Python.
_CODE_FRAGMENTS: Final = (
    ".orch",
    "estration",
    ".claude",
    ".codex",
    ".cursor",
    ".gemini",
    ".clinerules",
    "ledger/keys",
    ".config/ledger",
    "ledger_home",
    "agent_trace",
)
_CODE_MARKERS: Final = frozenset("( ;\n")
_SQUEEZE: Final = str.maketrans("", "", "\"'`+ \t\n,")


class GovernanceConfig(NamedTuple):
    """Switches for the built-in policies (``policies:`` in ``.orchestration/hooks.yaml``)."""

    intent_required: bool = True
    scope: bool = True
    stale_file: bool = True
    destructive: str = "ask"  # ask | deny | allow
    fail_closed: bool = True


class Analysis(NamedTuple):
    """What one tool call would touch, computed once per invocation."""

    paths: tuple[str, ...]
    mutating: bool
    command: CommandClass | None
    intent_command: IntentCommand | None


def _error(code: str, message: str, inv: Invocation, **meta: Any) -> dict[str, Any]:  # noqa: ANN401
    return hook_error(code, message, meta={"invocation_id": inv.id, "tool": inv.tool_name, **meta})


def _deny(code: str, message: str, inv: Invocation, **meta: Any) -> HookOutcome:  # noqa: ANN401
    return HookOutcome(
        decision="deny", reason=f"{code}: {message}", error=_error(code, message, inv, **meta)
    )


def _patch_paths(patch: str) -> list[str]:
    # Codex apply_patch bodies: "*** Add File: p", "*** Update File: p", "*** Delete File: p",
    # "*** Move to: p" (the Codex CLI patch format). Codex trims each line before matching the
    # header, so " *** Delete File: x" deletes x: trim too (issue 8).
    markers = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
    paths: list[str] = []
    for raw in patch.splitlines():
        line = raw.strip()
        paths.extend(line[len(m) :].strip() for m in markers if line.startswith(m))
    return paths


def _open_regular(path: str) -> int | None:
    """A read descriptor on ``path`` if it is a regular file, else None.

    A FIFO or device is never opened: opening a FIFO for reading blocks until a writer comes,
    which would hang the hook (issue 8). ``O_NONBLOCK`` covers a swap between the stat and the
    open, and the descriptor is checked again.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # noqa: PTH116 -- no pathlib on the hook path
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        return None
    return fd


def _special_file(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory."""
    try:
        mode = os.stat(path).st_mode  # noqa: PTH116 -- no pathlib on the hook path
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def sha256_file(path: str) -> str | None:
    """Hex SHA-256 of a file's bytes, or None when it is missing, unreadable or not a regular
    file (FIFOs and devices are never opened)."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _read_regular(path: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a regular file (None: missing, unreadable or not regular)."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


class _FileContent(NamedTuple):
    head: bytes | None
    """The file's bytes when it holds at most ``_HEAD_LIMIT`` (None: bigger, or unreadable)."""
    sha256: str | None
    """Hex SHA-256 of the whole file (None: missing, unreadable, or not a regular file)."""


_HEAD_LIMIT: Final = 4 * (_BLOB_LIMIT + 1)  # what the mutation classifier may decode


def _read_content(path: str) -> _FileContent:
    """One read of a regular file: its bytes (when small enough to classify) and its hash.
    A bigger file is hashed by streaming the rest of the same descriptor; FIFOs and devices
    are never opened."""
    fd = _open_regular(path)
    if fd is None:
        return _FileContent(None, None)
    try:
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(_HEAD_LIMIT + 1)
            digest = hashlib.sha256(head)
            if len(head) <= _HEAD_LIMIT:
                return _FileContent(head, digest.hexdigest())
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
            return _FileContent(None, digest.hexdigest())
    except OSError:
        return _FileContent(None, None)


def edit_payload(inv: Invocation) -> dict[str, Any] | None:
    """The edit itself, as the client described it: enough to rebuild line attribution."""
    tool, data = inv.tool_name, inv.tool_input
    response = inv.tool_response if isinstance(inv.tool_response, dict) else {}
    if tool not in FILE_WRITE_TOOLS and tool not in PATCH_TOOLS:
        return None
    edit: dict[str, Any] = {}
    for key in (
        "content",
        "old_string",
        "new_string",
        "replace_all",
        "edits",
        "patch",
        "new_source",
        "cell_id",
        "edit_mode",
    ):
        if key in data:
            edit[key] = data[key]
    if isinstance(response.get("structuredPatch"), list):
        edit["structured_patch"] = response["structuredPatch"]
    if isinstance(response.get("type"), str):
        edit["write_type"] = response["type"]
    if "originalFile" in response and response["originalFile"] is None:
        edit["created"] = True
    return edit


def _simulate(old: str | None, tool_input: dict[str, Any]) -> str | None:
    """The file content after a Write/Edit/MultiEdit, computed before the tool runs."""
    if isinstance(tool_input.get("content"), str):
        return str(tool_input["content"])
    edits = tool_input.get("edits")
    steps = edits if isinstance(edits, list) else [tool_input]
    text = old
    for step in steps:
        if not isinstance(step, dict) or text is None:
            return None
        before, after = step.get("old_string"), step.get("new_string")
        if not isinstance(before, str) or not isinstance(after, str) or before not in text:
            return None
        count = step.get("expected_replacements")  # Gemini CLI's replace
        times = count if isinstance(count, int) and count > 1 else 1
        text = text.replace(before, after, -1 if step.get("replace_all") else times)
    return text


def _lines_of(text: str) -> list[str]:
    """Lines without their endings (a client may write CRLF where the edit said LF)."""
    return text.replace("\r\n", "\n").rstrip("\n").split("\n")


def _added_ranges(edit: dict[str, Any], content: str | None) -> list[list[int]]:
    """1-based inclusive line ranges the edit added, in the file after the write."""
    patch = edit.get("structured_patch")
    if patch:
        ranges: list[list[int]] = []
        for hunk in patch:
            line = int(hunk.get("newStart", 1))
            for text in hunk.get("lines", []):
                if text.startswith("+"):
                    if ranges and ranges[-1][1] == line - 1:
                        ranges[-1][1] = line
                    else:
                        ranges.append([line, line])
                    line += 1
                elif text.startswith(" "):
                    line += 1
        return ranges
    if content is None:
        return []
    if "content" in edit and "old_string" not in edit:
        count = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return [[1, count]] if count else []
    news = (
        [edit["new_string"]]
        if isinstance(edit.get("new_string"), str)
        else [e.get("new_string") for e in edit.get("edits", []) if isinstance(e, dict)]
    )
    out = []
    for new in news:
        if not isinstance(new, str) or not new:
            continue
        start = content.find(new)
        if start < 0:
            continue
        first = content.count("\n", 0, start) + 1
        out.append([first, first + new.rstrip("\n").count("\n")])
    return out


def _certain_ranges(edit: dict[str, Any], content: str | None) -> list[tuple[int, int]]:
    """The written ranges, only where they are certain: a structured patch, a whole-file
    write, or new strings that each occur exactly once (a second occurrence would make the
    range a guess, and a guess can misattribute)."""
    if content is None:
        return []
    if not edit.get("structured_patch") and not ("content" in edit and "old_string" not in edit):
        news = (
            [edit.get("new_string")]
            if "new_string" in edit
            else [e.get("new_string") for e in edit.get("edits") or [] if isinstance(e, dict)]
        )
        if (
            edit.get("replace_all")
            or not news
            or any(not isinstance(n, str) or content.count(n) != 1 for n in news)
        ):
            return []
    return [(a, b) for a, b in _added_ranges(edit, content)]


def _patch_moves(patch: str) -> dict[str, str]:
    """``destination -> source`` of each ``*** Move to:`` in an apply_patch body."""
    moves: dict[str, str] = {}
    current: str | None = None
    for line in patch.splitlines():
        if line.startswith("*** Update File: "):
            current = line[len("*** Update File: ") :].strip()
        elif line.startswith("*** Move to: ") and current is not None:
            moves[line[len("*** Move to: ") :].strip()] = current
        elif line.startswith("*** "):
            current = None
    return moves


class Governance:
    """The built-in policies for one workspace and one hook invocation's worth of state.

    Args:
        root: workspace root (real path).
        state: the folded workspace state (sessions, intents, grants, seen files).
        intents: the parsed intents file, or ``None`` if it failed to load.
        intents_error: why it failed (mutating calls are then denied: fail closed).
        cache_dir: ``.orchestration/.cache`` (content blobs for diff previews, scope regexes).
        scope_compiler: turns globs into a :class:`ScopeSpec` (cached by the workspace wiring).
        config: policy switches.
        environ: where ``$LEDGER_HOME`` and ``$HOME`` are read (the private-key directory is
            protected); default the process environment.
    """

    def __init__(
        self,
        *,
        root: str,
        state: WorkspaceState,
        intents: IntentsFile | None,
        intents_error: str | None = None,
        cache_dir: Path | None = None,
        scope_compiler: Callable[[tuple[str, ...]], ScopeSpec] | None = None,
        config: GovernanceConfig | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.environ = environ
        # What `~` means in the agent's paths: the caller's $HOME (None: this process's).
        self._home = None if environ is None else environ.get("HOME")
        self._areas: ProtectedAreas | None = None
        self.state = state
        self.intents = intents
        self.intents_error = intents_error
        self.cache_dir = cache_dir
        self.config = config or GovernanceConfig()
        self._compile = scope_compiler or ScopeSpec.compile
        self._analyses: dict[str, Analysis] = {}
        # One hook call normalizes each path once and reads each file once, whichever policies
        # ask (issue 6): both are memoized for the life of this object (one invocation).
        self._normalized: dict[tuple[str, str | None], NormalizedPath] = {}
        self._contents: dict[str, _FileContent] = {}
        #: Extra records to append with the hook record: (kind, body).
        self.records: list[tuple[str, dict[str, Any]]] = []
        # The post record's typed fields (format v2): what the call let the session see, and
        # which lines it wrote. Set by ``observe``; the hook service puts them in the body.
        self.observed: dict[str, str] = {}
        self.attribution: dict[str, Any] | None = None
        # relative path -> (stat tuple taken before the post hook read it, SHA-256 it read):
        # whether the disk held the recorded version, for remember_recorded.
        self._read_at: dict[str, tuple[tuple[int, int, int] | None, str | None]] = {}
        #: What this call found changed under it (a write that landed elsewhere than the path
        #: PreToolUse allowed): the hook service records it as ``governance.tamper``.
        self.tampered: list[str] = []

    # --- registration ------------------------------------------------------------------------

    def register(self, engine: HookEngine) -> None:
        """Register the enabled policies on ``engine``, in their documented order."""
        engine.register_pre_hook("tripwire", self.tripwire)
        engine.register_pre_hook("orchestration-guard", self.orchestration_guard)
        engine.register_pre_hook("intent-command", self.intent_command)
        if self.config.intent_required:
            engine.register_pre_hook("intent-required", self.intent_required)
        if self.config.scope:
            engine.register_pre_hook("scope", self.scope)
        if self.config.stale_file:
            engine.register_pre_hook("stale-file", self.stale_file)
        engine.register_pre_hook("mutation-class", self.mutation_class)
        if self.config.destructive != "allow":
            engine.register_pre_hook("destructive", self.destructive)
        engine.register_pre_hook("unanalysable", self.unanalysable)
        if self.cache_dir is not None:
            engine.register_pre_hook("before", self.before)
        engine.register_post_hook("observe", self.observe)
        engine.register_hook("PermissionDenied", "hitl", self.permission_denied)
        for event in ("SessionStart", "UserPromptSubmit"):
            engine.register_hook(event, "intent-context", self.intent_context)

    # --- helpers -----------------------------------------------------------------------------

    def analyze(self, inv: Invocation) -> Analysis:
        """Paths, shell classification and intent command of ``inv`` (memoized)."""
        found = self._analyses.get(inv.id)
        if found is not None:
            return found
        tool, data = inv.tool_name, inv.tool_input
        paths: list[str] = []
        command = intent_command = None
        mutating = False
        if tool in FILE_WRITE_TOOLS or tool in DELETE_TOOLS:
            # Check the path that is written: NotebookEdit writes notebook_path, whatever else
            # the payload carries (issue 8).
            keys = (
                ("notebook_path", "file_path", "path")
                if tool == "NotebookEdit"
                else ("file_path", "path", "target_file")
            )
            # Every other path-like field is checked too: the policy never guesses which one a
            # client will honour (a Cline write_to_file with both path and file_path).
            found_paths = [data[k] for k in keys if isinstance(data.get(k), str) and data[k]]
            paths = list(dict.fromkeys(found_paths))
            mutating = True
        elif tool in PATCH_TOOLS:
            patch = data.get("patch") or data.get("command") or ""
            paths = _patch_paths(patch) if isinstance(patch, str) else []
            mutating = True
        elif tool in SHELL_TOOLS and isinstance(data.get("command"), str):
            # The shell analyzer is large; only shell calls pay for importing it.
            from ledger._governance.analysis.shell import classify_command, parse_intent_command  # noqa: PLC0415

            text = data["command"]
            intent_command = parse_intent_command(text)
            if intent_command is None:
                command = classify_command(text, inv.cwd)
                paths = list(command.targets)
                # Creating, appending and overwriting are writes too: they need an intent and
                # must stay in its scope, like the Write tool's (issue 15).
                mutating = command.destructive or bool(command.targets)
        elif (ours := ledger_tool(tool)) is not None:
            # ledger's own select_active_intent / request_scope_expansion (`ledger mcp`): the
            # session's intent command, as if typed in its shell.
            intent_command = intent_command_of(ours, data)
        elif tool is not None and tool not in READ_TOOLS:
            command, paths, mutating = self._analyze_other_tool(inv)
        found = Analysis(tuple(paths), mutating, command, intent_command)
        self._analyses[inv.id] = found
        return found

    def _analyze_other_tool(self, inv: Invocation) -> tuple[CommandClass | None, list[str], bool]:
        """(command, paths, mutating) of a tool no policy knows (MCP tools...): the paths and
        commands its input carries (:mod:`ledger._governance.analysis.tool_input`). A command
        is classified like a shell call's; a path is a write unless the tool's name says it
        only reads, and then only a private path (the key, the cache secret) is kept, to be
        denied; an input too large to read is a write that cannot be checked."""
        from ledger._governance.analysis.tool_input import tool_reach  # noqa: PLC0415

        reach = tool_reach(inv.tool_name or "", inv.tool_input)
        command, paths, mutating = None, [], reach.too_large
        if reach.commands:
            from ledger._governance.analysis.shell import classify_command  # noqa: PLC0415

            command = classify_command(reach.shell_text, inv.cwd)
            paths = list(command.targets)
            mutating = mutating or command.destructive or bool(command.targets)
        if reach.read_only:
            areas = self.protected()
            for path in reach.paths:
                try:
                    private = areas.area_of(self._normalize(path, inv).absolute) in READ_DENIED
                except InputError:
                    private = True  # an unusable path: the guard denies it
                if private:
                    paths.append(path)
        elif reach.paths:
            paths += [p for p in reach.paths if p not in paths]
            mutating = True
        return command, paths, mutating

    def _intent(self, inv: Invocation) -> Intent | None:
        intent_id = self.state.intent_of(inv.session_id)
        if intent_id is None or self.intents is None:
            return None
        return self.intents.get(intent_id)

    def _scope_globs(self, intent: Intent) -> tuple[str, ...]:
        return tuple(intent.owned_scope) + tuple(self.state.grants.get(intent.id, ()))

    def _normalize(self, path: str, inv: Invocation) -> NormalizedPath:
        """``path`` resolved as the kernel will (memoized per call).

        Raises:
            InputError: the path is empty or holds a NUL byte.
        """
        key = (path, inv.cwd)
        found = self._normalized.get(key)
        if found is None:
            found = self._normalized[key] = normalize_path(
                path, root=self.root, cwd=inv.cwd, home=self._home
            )
        return found

    def _resolve(self, path: str, inv: Invocation) -> tuple[str | None, str | None]:
        """(workspace-relative path or None when outside, real absolute path or None when
        the path is unusable), from one normalization."""
        try:
            norm = self._normalize(path, inv)
        except InputError:
            return None, None
        return norm.relative, norm.absolute

    def _content(self, absolute: str) -> _FileContent:
        """The file's first bytes and its SHA-256, read once per call (memoized)."""
        found = self._contents.get(absolute)
        if found is None:
            found = self._contents[absolute] = _read_content(absolute)
        return found

    def _available(self) -> str:
        if self.intents is not None and self.intents.missing:
            return self.intents.missing
        if self.intents is None or not self.intents.intents:
            return "no intents are defined in .orchestration/active_intents.yaml"
        live = [i for i in self.intents.intents if i.status in WORKABLE_STATUSES]
        if not live:
            return (
                "no intent is IN_PROGRESS in .orchestration/active_intents.yaml; a person "
                "sets one's status to IN_PROGRESS"
            )
        listing = ", ".join(f"{i.id} ({i.name})" for i in live)
        return (
            f"available: {listing}; select one with `ledger intent select <ID>` or the "
            "select_active_intent tool of `ledger mcp`"
        )

    # --- pre policies ------------------------------------------------------------------------

    def protected(self) -> ProtectedAreas:
        """The protected areas of this workspace (built on first use)."""
        if self._areas is None:
            self._areas = ProtectedAreas.for_workspace(self.root, self.environ)
        return self._areas

    def tripwire(self, inv: Invocation) -> HookOutcome | None:
        """Deny every tool call while a tampering the tripwire found is unresolved
        (issue 15 part 4; ledger/_hooks/tripwire.py): what governs the agent changed around the
        hooks, so nothing it decides can be trusted until a person looks."""
        pending = self.state.tamper
        if pending is None:
            return None
        problems = "; ".join(str(p) for p in pending.get("problems", [])[:3]) or "see the ledger"
        return _deny(
            "TAMPER",
            f"ledger's protected files or records changed outside the hooks (seq "
            f"{pending.get('seq')}: {problems}); a person must run `ledger tamper accept` or "
            "`ledger tamper revert` in their own terminal (`ledger doctor` shows what changed)",
            inv,
            risk="DESTRUCTIVE",
        )

    def orchestration_guard(self, inv: Invocation) -> HookOutcome | None:
        """Deny any agent write to a protected path, and any read of the private keys."""
        analysis = self.analyze(inv)
        areas = self.protected()
        if inv.tool_name in READ_TOOLS:
            path = inv.tool_input.get("file_path") or inv.tool_input.get("path")
            if isinstance(path, str) and path:
                _relative, absolute = self._resolve(path, inv)
                area = None if absolute is None else areas.area_of(absolute)
                if area in READ_DENIED:
                    return self._protected_deny(path, area, inv)
            return None
        command = analysis.command
        base = self._base(inv)
        paths = list(analysis.paths)
        if command is not None:
            # A glob names whatever it matches when the command runs: expand it against the
            # real tree (`.orch*` is .orchestration).
            for path in analysis.paths:
                if has_glob(path):
                    found = expand_glob(path, base)
                    if found is None:
                        return _deny(
                            "ORCHESTRATION_PROTECTED",
                            f"{path} matches too many files to check",
                            inv,
                            path=path,
                            risk="DESTRUCTIVE",
                        )
                    paths.extend(found)
        for path in paths:
            try:
                norm = self._normalize(path, inv)
            except InputError as exc:
                return _deny("SCOPE_VIOLATION", f"unusable path: {exc}", inv, path=path)
            area = areas.area_of(norm.absolute) or areas.alias_of(norm.absolute)
            if area is None and norm.relative == "." and analysis.mutating:
                area = ".orchestration/"
            if area is not None:
                return self._protected_deny(path, area, inv)
            if command is None and analysis.mutating and _special_file(norm.absolute):
                return _deny(
                    "SCOPE_VIOLATION",
                    f"{path} is not a regular file (a FIFO, socket "
                    "or device); file tools may only write regular files",
                    inv,
                    path=path,
                )
        if command is None:
            return None  # not a shell call, or a recognised `ledger intent ...` command
        return self._guard_command(command, base, inv)

    def _guard_command(
        self, command: CommandClass, base: str, inv: Invocation
    ) -> HookOutcome | None:
        areas = self.protected()
        if command.too_large:
            return _deny(
                "ORCHESTRATION_PROTECTED",
                f"{command.reasons[0]}: too large to "
                "analyse, so it is refused; split it, or write long content with a "
                "file tool",
                inv,
                risk="DESTRUCTIVE",
            )
        for sub in command.ledger_commands:
            if sub not in _READ_ONLY_LEDGER:
                # Otherwise `ledger intent expand ... && true` or `ledger append` would let an
                # agent grant itself scope or write records without a human.
                shown = f"ledger {sub}".strip()
                return _deny(
                    "ORCHESTRATION_PROTECTED",
                    f"agents may not run `{shown}`; only `ledger intent select|clear|"
                    "expand` as the whole command, and read-only ledger commands",
                    inv,
                    risk="DESTRUCTIVE",
                )
        if command.refused:
            return _deny(
                "ORCHESTRATION_PROTECTED",
                f"{command.refused[0]}: agents may not configure or run programs through git's "
                "configuration",
                inv,
                risk="DESTRUCTIVE",
            )
        for word in command.words:
            area = areas.named_in(word, base)
            if area in READ_DENIED:
                return self._protected_deny(word, area, inv)
        found = self._private_read(command, base, inv)
        if found is not None:
            return self._protected_deny(*found, inv)
        for word in command.reach_words:
            area = areas.named_in(word, base)
            if area is None:
                folded = word.casefold()
                area = next(
                    (f"{name!r} in the text" for name in _PROTECTED_SUBSTRINGS if name in folded),
                    None,
                )
            if area is None and _CODE_MARKERS.intersection(word):
                squeezed = word.casefold().translate(_SQUEEZE)
                area = next(
                    (f"{name!r} in code" for name in _CODE_FRAGMENTS if name in squeezed), None
                )
            if area is not None:
                return _deny(
                    "ORCHESTRATION_PROTECTED",
                    f"command may write a protected path ({area}) in ways that cannot be checked",
                    inv,
                    risk="DESTRUCTIVE",
                    word=word[:200],
                )
        return None

    def _private_read(
        self, command: CommandClass, base: str, inv: Invocation
    ) -> tuple[str, str] | None:
        """The first (path, area) among the command's reads that is private trust state,
        however it is reached: after a ``cd``, through a glob, through a symlink in scope, or
        (when a signing key is in the environment) by printing the environment."""
        from ledger._evidence.keys import SIGNING_KEY_ENV  # noqa: PLC0415 -- shell calls only

        areas = self.protected()
        environ = os.environ if self.environ is None else self.environ
        if command.reads_environment and environ.get(SIGNING_KEY_ENV):
            return "the environment", f"{KEY_AREA} (${SIGNING_KEY_ENV} is set)"
        for path in command.reads_anywhere:
            area = areas.private_from_anywhere(path)
            if area is not None:
                return path, area
        for path in command.reads:
            area = areas.named_in(path, base)
            if area in READ_DENIED:
                return path, area
            if "\x00" in path:
                continue
            if has_glob(path):
                home = self._home or os.path.expanduser("~")  # noqa: PTH111
                pattern = home + path[1:] if path.startswith("~/") else path
                for real in _real_matches(expand_glob(pattern, base, limit=4096) or ()):
                    area = areas.area_of(real)
                    if area in READ_DENIED:
                        return path, area
                continue
            _relative, absolute = self._resolve(path, inv)
            area = None if absolute is None else areas.area_of(absolute)
            if area in READ_DENIED:
                return path, area
        return None

    def _protected_deny(self, path: str, area: str, inv: Invocation) -> HookOutcome:
        what = (
            f"private ({area}): agents may not read or write it"
            if area in READ_DENIED
            else f"protected ({area}): agents may not modify it"
        )
        return _deny(
            "ORCHESTRATION_PROTECTED", f"{path} is {what}", inv, path=path, risk="DESTRUCTIVE"
        )

    def _base(self, inv: Invocation) -> str:
        """The real directory a shell command starts in."""
        if inv.cwd and "\x00" not in inv.cwd:
            return os.path.realpath(os.path.join(self.root, os.path.expanduser(inv.cwd)))  # noqa: PTH111, PTH118
        return self.root

    def intent_command(self, inv: Invocation) -> HookOutcome | None:
        """Handle ``ledger intent select|clear|expand`` typed by the agent."""
        request = self.analyze(inv).intent_command
        if request is None:
            return None
        session = inv.session_id
        if self.intents is None:
            return _deny(
                "HOOK_ERROR",
                f"intents file unusable: {self.intents_error}; fix "
                ".orchestration/active_intents.yaml (`ledger doctor` checks it)",
                inv,
            )
        if request.action == "clear":
            self.records.append(("intent.cleared", {"session": session, "via": "hook"}))
            self.state.session(session)["intent"] = None
            return HookOutcome(
                decision="allow", reason="intent cleared", data={"intent_command": "clear"}
            )
        intent = self.intents.get(str(request.intent_id))
        refusal = "is unknown" if intent is None else intent_refusal(intent)
        if intent is None or refusal is not None:
            named = (
                f"intent {request.intent_id} {refusal}"
                if request.intent_id is not None
                else "the call names no intent (intent_id)"
            )
            return _deny(
                "INTENT_REQUIRED",
                f"{named}; {self._available()}",
                inv,
                intent_id=request.intent_id,
            )
        if request.action == "select":
            if self.state.intent_of(session) != intent.id:
                self.records.append(
                    (
                        "intent.selected",
                        {
                            "intent_id": intent.id,
                            "intents_sha256": self.intents.source_sha256,
                            "session": session,
                            "via": request.via,
                        },
                    )
                )
                self.state.session(session)["intent"] = intent.id
            recent = list(reversed(self.state.recent.get(intent.id, [])))
            return HookOutcome(
                decision="allow",
                reason=f"intent {intent.id} selected",
                additional_context=render_intent_context(intent, recent),
                data={"intent_command": "select", "intent_id": intent.id},
            )
        globs = list(request.globs)
        problems = [p for p in map(expansion_problem, globs) if p is not None]
        if problems:
            return _deny(
                "SCOPE_VIOLATION",
                f"cannot expand {intent.id}: {problems[0]}",
                inv,
                intent_id=intent.id,
                globs=globs,
            )
        reason = (
            f"SCOPE_EXPANSION_REQUESTED: the agent asks to add {', '.join(globs)} to "
            f"{intent.id} ({intent.name})" + (f": {request.reason}" if request.reason else "")
        )
        return HookOutcome(
            decision="ask",
            reason=reason,
            error=_error(
                "SCOPE_EXPANSION_REQUESTED", reason, inv, intent_id=intent.id, globs=globs
            ),
            data={"intent_command": "expand", "intent_id": intent.id, "requested_globs": globs},
        )

    def intent_required(self, inv: Invocation) -> HookOutcome | None:
        """Mutating tools need an active intent."""
        analysis = self.analyze(inv)
        if not analysis.mutating:
            return None
        if self.intents is None:
            return _deny(
                "HOOK_ERROR",
                f"intents file unusable: {self.intents_error}; fix "
                ".orchestration/active_intents.yaml (`ledger doctor` checks it)",
                inv,
            )
        intent = self._intent(inv)
        selected = self.state.intent_of(inv.session_id)
        refusal = None if intent is None else intent_refusal(intent)
        if intent is None or refusal is not None:
            why = (
                "no intent is selected for this session"
                if selected is None
                else f"intent {selected} {refusal or 'is no longer defined'}"
            )
            return _deny(
                "INTENT_REQUIRED",
                f"{inv.tool_name} changes files but {why}; {self._available()}",
                inv,
                paths=list(analysis.paths),
            )
        return HookOutcome(data={"intent_id": intent.id})

    def scope(self, inv: Invocation) -> HookOutcome | None:
        """Every written path must be inside the workspace and the intent's scope."""
        analysis = self.analyze(inv)
        intent = self._intent(inv)
        if not analysis.mutating or intent is None:
            return None
        if not analysis.paths:
            if analysis.command is not None:
                return None  # shell targets unknown: the destructive policy asks a human
            return _deny(
                "SCOPE_VIOLATION",
                f"cannot tell which files {inv.tool_name} writes, so its scope cannot be checked",
                inv,
                intent_id=intent.id,
            )
        spec = self._compile(self._scope_globs(intent))
        try:
            check = check_write_scope(
                analysis.paths,
                root=self.root,
                cwd=inv.cwd,
                scope=spec,
                normalize=lambda path: self._normalize(path, inv),
            )
        except InputError as exc:
            return _deny("SCOPE_VIOLATION", str(exc), inv, intent_id=intent.id)
        for verdict in check.denied:
            where = (
                "outside the workspace"
                if verdict.verdict == "outside_workspace"
                else f"outside the scope of {intent.id} ({', '.join(intent.owned_scope)})"
            )
            return _deny(
                "SCOPE_VIOLATION",
                f"{verdict.path} is {where}; ask for more with "
                f"`ledger intent expand {intent.id} <glob>`",
                inv,
                intent_id=intent.id,
                path=verdict.relative or verdict.absolute,
                affected_files=[v.relative or v.absolute for v in check.verdicts],
            )
        return HookOutcome(data={"paths": [v.relative for v in check.verdicts]})

    def stale_file(self, inv: Invocation) -> HookOutcome | None:
        """Refuse writes over a file that changed since this session saw it."""
        if inv.tool_name not in FILE_WRITE_TOOLS:
            return None
        session = self.state.sessions.get(inv.session_id or "", {})
        seen: dict[str, str] = session.get("seen", {})
        observed = inv.tool_input.get("observed_content_hash")
        for path in self.analyze(inv).paths:
            relative, absolute = self._resolve(path, inv)
            if absolute is None:
                continue
            current = self._content(absolute).sha256
            # The session's own memory wins over a hash the agent supplies (issue 8); a hard
            # link shares its content with names the session may have seen instead.
            remembered = seen.get(relative or "") or self._seen_alias(absolute, seen)
            expected = remembered or (observed if isinstance(observed, str) else None)
            if expected is None or current is None or current == expected.removeprefix("sha256:"):
                continue
            message = (
                f"{relative} changed on disk since this session last read it (another "
                "session or a person edited it); Read it again before writing"
            )
            preview = self._diff_preview(expected, absolute)
            return HookOutcome(
                decision="deny",
                reason=f"STALE_FILE: {message}\n{preview}",
                error=_error(
                    "STALE_FILE",
                    message,
                    inv,
                    path=relative,
                    expected_sha256=expected,
                    current_sha256=current,
                ),
            )
        return None

    def _seen_alias(self, absolute: str, seen: dict[str, str]) -> str | None:
        """What the session saw of another name of the same file (hard links only)."""
        try:
            info = os.lstat(absolute)
        except (OSError, ValueError):
            return None
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
            return None
        for relative, digest in seen.items():
            try:
                other = os.lstat(os.path.join(self.root, relative))  # noqa: PTH118
            except (OSError, ValueError):
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return digest
        return None

    def mutation_class(self, inv: Invocation) -> HookOutcome | None:
        """Classify a file edit as AST_REFACTOR or INTENT_EVOLUTION (recorded, never blocks)."""
        if inv.tool_name not in FILE_WRITE_TOOLS:
            return None
        paths = self.analyze(inv).paths
        if len(paths) != 1:
            return None
        _, absolute = self._resolve(paths[0], inv)
        if absolute is None:
            return None
        old: str | None = None
        if os.path.lexists(absolute):
            data = self._content(absolute).head
            if data is None:
                return None  # unreadable, or a FIFO/device: never opened
            try:
                old = data.decode("utf-8")
            except UnicodeDecodeError:
                return None
        new = _simulate(old, inv.tool_input)
        if new is None or (old is not None and len(old) > _BLOB_LIMIT):
            return None
        from ledger._governance.analysis.mutation import classify_mutation  # noqa: PLC0415 -- file edits only

        found = classify_mutation(absolute, old, new)
        return HookOutcome(
            data={"mutation_class": found.kind, "changed_symbols": list(found.changed_symbols)[:50]}
        )

    def destructive(self, inv: Invocation) -> HookOutcome | None:
        """DESTRUCTIVE shell commands go to a human (``ask``), or are denied if so configured."""
        analysis = self.analyze(inv)
        command = analysis.command
        if command is None:
            return None
        overwritten = [p for p in command.overwrites if self._holds_content(p, inv)]
        if not command.destructive and not overwritten:
            return HookOutcome(data={"risk": "SAFE"})
        reasons = command.reasons or tuple(
            f"{why} ({', '.join(overwritten)} exists)" for why in command.overwrite_reasons
        )
        intent = self._intent(inv)
        files = [self._resolve(p, inv)[0] or p for p in analysis.paths]
        preview = self._removal_preview(analysis.paths, inv)
        unknown = (
            " (some targets cannot be determined statically)" if (command.unknown_targets) else ""
        )
        reason = (
            f"DESTRUCTIVE: {'; '.join(reasons)}{unknown}. Intent: "
            f"{intent.id + ' ' + intent.name if intent else 'none'}. Files: "
            f"{', '.join(files) or 'unknown'}. Mutation class: INTENT_EVOLUTION."
            + (f"\n{preview}" if preview else "")
        )
        decision: Permission = "deny" if self.config.destructive == "deny" else "ask"
        return HookOutcome(
            decision=decision,
            reason=reason,
            error=_error(
                "DESTRUCTIVE_COMMAND",
                reason.splitlines()[0],
                inv,
                intent_id=intent.id if intent else None,
                risk="DESTRUCTIVE",
                mutation_class="INTENT_EVOLUTION",
                affected_files=files,
            ),
            data={
                "risk": "DESTRUCTIVE",
                "mutation_class": "INTENT_EVOLUTION",
                "affected_files": files,
            },
        )

    def _holds_content(self, path: str, inv: Invocation) -> bool:
        """Whether writing ``path`` whole would destroy something: it exists and is not an
        empty regular file (a glob or an unusable path counts as yes)."""
        if has_glob(path):
            return True
        _relative, absolute = self._resolve(path, inv)
        if absolute is None:
            return True
        try:
            info = os.lstat(absolute)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return not (stat.S_ISREG(info.st_mode) and info.st_size == 0)

    def unanalysable(self, inv: Invocation) -> HookOutcome | None:
        """A shell command the classifier cannot read goes to a human: never a silent pass."""
        command = self.analyze(inv).command
        if command is None or not command.unanalysable:
            return None
        intent = self._intent(inv)
        reason = (
            f"UNANALYSABLE: this command cannot be checked statically "
            f"({'; '.join(command.unanalysable)}). Intent: "
            f"{intent.id + ' ' + intent.name if intent else 'none'}."
        )
        return HookOutcome(
            decision="ask",
            reason=reason,
            error=_error(
                "DESTRUCTIVE_COMMAND",
                reason,
                inv,
                intent_id=intent.id if intent else None,
                risk="UNANALYSABLE",
                unanalysable=list(command.unanalysable),
            ),
            data={"risk": "UNANALYSABLE", "unanalysable": list(command.unanalysable)},
        )

    def before(self, inv: Invocation) -> HookOutcome | None:
        """Keep what the files were before the call, for the post record's exact diff
        (:mod:`ledger._governance.snapshot`). Never blocks; records nothing itself."""
        if self.cache_dir is None:  # registered only with a cache
            return None
        tool = inv.tool_name
        analysis = self.analyze(inv)
        hashes: dict[str, str | None] = {}
        targets: dict[str, str] = {}
        snapshot = None
        if tool in SHELL_TOOLS:
            if analysis.command is None:
                return None  # a recognised `ledger intent ...` command writes no file
            snapshot = stat_snapshot(self.root)
        elif tool not in FILE_WRITE_TOOLS and tool not in PATCH_TOOLS:
            return None
        for path in analysis.paths:
            relative, absolute = self._resolve(path, inv)
            if relative is None or absolute is None:
                continue
            if tool not in SHELL_TOOLS:
                targets[path] = absolute
            if not os.path.lexists(absolute):
                hashes[relative] = None
                continue
            data = self._content(absolute).head  # the call's one read (never a FIFO)
            if data is not None and len(data) <= _BLOB_LIMIT:
                hashes[relative] = keep_blob(self.cache_dir, data, path=relative)
        if snapshot is not None and analysis.command is not None:
            # The workspace files the command reads may be what it copies into a file it
            # writes (cp, cat >): their content before it, so copied lines keep their
            # attribution, and a person's lines copied by the command stay nobody's.
            kept = 0
            for path in analysis.command.reads:
                relative, absolute = self._resolve(path, inv)
                if relative is None or relative in hashes or relative not in snapshot.files:
                    continue
                data = _read_regular(absolute, _BLOB_LIMIT + 1) if absolute else None
                if data is not None and len(data) <= _BLOB_LIMIT:
                    hashes[relative] = keep_blob(self.cache_dir, data, path=relative)
                kept += 1
                if kept >= _SOURCES_KEPT:
                    break
        save_before(self.cache_dir, inv.id, Before(hashes, snapshot, targets))
        return None

    # --- post policies -----------------------------------------------------------------------

    def observe(self, inv: Invocation) -> HookOutcome | None:
        """Record what the session saw and changed: hashes, added lines, approvals."""
        data: dict[str, Any] = {}
        intent_id = self.state.intent_of(inv.session_id)
        if intent_id:
            data["intent_id"] = intent_id
        if inv.outcome not in (None, "success") or inv.event == "PostToolUseFailure":
            return HookOutcome(data=data)
        tool = inv.tool_name
        analysis = self.analyze(inv)
        if tool in READ_TOOLS:
            for path in [inv.tool_input.get("file_path")]:
                relative, absolute = (
                    self._resolve(path, inv) if isinstance(path, str) else (None, None)
                )
                if relative is not None and absolute is not None:
                    digest = self._read_and_keep(absolute)[1]
                    if digest is not None:
                        self.observed[relative] = digest
        elif tool in FILE_WRITE_TOOLS or tool in PATCH_TOOLS:
            self._attribute_edit(inv, analysis)
            self._remember_recorded()
        elif tool in SHELL_TOOLS and analysis.command is not None:
            self._attribute_shell(inv)
            self._remember_recorded()
        request = analysis.intent_command
        if request is not None and request.action == "expand" and request.intent_id:
            granted = self.state.grants.get(request.intent_id, [])
            new = [g for g in request.globs if g not in granted]
            if new:
                # The command ran, so the human approved the ask: record the approval.
                self.records.append(
                    (
                        "intent.scope_expanded",
                        {
                            "approved_via": f"{inv.client or 'client'} ask",
                            "globs": new,
                            "intent_id": request.intent_id,
                            "reason": request.reason,
                            "session": inv.session_id,
                            "tool_use_id": inv.tool_use_id,
                        },
                    )
                )
        return HookOutcome(data=data)

    def _before(self, inv: Invocation) -> Before:
        found = load_before(self.cache_dir, inv.id) if self.cache_dir is not None else None
        return found or Before({}, None)

    def _old_side(self, relative: str, before: Before) -> tuple[bool, str | None, str | None]:
        """(known, text, sha256) of a file before the call, from the pre hook's copy."""
        if relative not in before.hashes:
            return False, None, None
        digest = before.hashes[relative]
        if digest is None:
            return True, None, None
        text = read_blob(self.cache_dir, digest) if self.cache_dir is not None else None
        return (True, text, digest) if text is not None else (False, None, None)

    def _recorded(self, relative: str, old_sha256: str | None) -> tuple[str | None, str | None]:
        """(text, SHA-256) of the version of ``relative`` the last record left, when the
        call's old side (``old_sha256``) is another: the drift to record (issue 16 part 1)."""
        if self.cache_dir is None or old_sha256 is None:
            return None, None
        found = recorded_version(self.cache_dir, relative)
        if found is None or found.sha256 == old_sha256:
            return None, None
        text = read_blob(self.cache_dir, found.sha256)
        return (text, found.sha256) if text is not None else (None, None)

    def _unchanged_since_recorded(
        self, relative: str, stat: tuple[int, int, int] | None
    ) -> tuple[bool, str | None, str | None]:
        """(known, text, SHA-256) of a file a shell command changed whose old bytes the pre hook
        did not keep: the recorded version, when the stat tuple before the command is the one
        the disk had when that version was recorded (as git's index trusts an unchanged stat)."""
        if self.cache_dir is None or stat is None:
            return False, None, None
        found = recorded_version(self.cache_dir, relative)
        if found is None or found.stat != stat:
            return False, None, None
        text = read_blob(self.cache_dir, found.sha256)
        return (True, text, found.sha256) if text is not None else (False, None, None)

    def _read_recorded(self, relative: str, absolute: str) -> tuple[str | None, str | None]:
        """``_read_and_keep`` with the stat tuple taken just before, for the pointer."""
        stat = _stat(absolute)
        content, digest = self._read_and_keep(absolute)
        self._read_at[relative] = (stat, digest)
        return content, digest

    def _remember_recorded(self) -> None:
        """Point each file this call's record describes at the version it leaves (the next
        call's drift and a shell command's old side start from it)."""
        if self.cache_dir is None or not self.attribution:
            return
        for change in self.attribution.get("files", []):
            path, digest = change["path"], change.get("sha256")
            if change.get("previous_path"):
                remember_recorded(self.cache_dir, change["previous_path"], None, None)
            if change.get("change") == "deleted" or digest is None:
                remember_recorded(self.cache_dir, path, None, None)
                continue
            stat, read = self._read_at.get(path, (None, None))
            on_disk = _stat(os.path.join(self.root, path))  # noqa: PTH118
            if stat is not None and (read != digest or on_disk != stat):
                stat = None  # the disk is not (or no longer) the recorded version
            remember_recorded(self.cache_dir, path, digest, stat)

    def _attribute_edit(self, inv: Invocation, analysis: Analysis) -> None:
        """The exact diff of each file a file tool wrote (old side: the client's
        ``originalFile``, else the pre hook's copy, else reversed from the edit)."""
        from ledger._governance.attribution import file_change, reconstruct_old  # noqa: PLC0415

        edit = edit_payload(inv) or {}
        if isinstance(inv.tool_input.get("diff"), str):
            edit = {**edit, "diff": inv.tool_input["diff"]}  # Cline SEARCH/REPLACE blocks
        response = inv.tool_response if isinstance(inv.tool_response, dict) else {}
        mutation = self.state.mutations.get(inv.tool_use_id or "")
        before = self._before(inv)
        patch = inv.tool_input.get("patch") or inv.tool_input.get("command")
        moves = (
            _patch_moves(patch) if inv.tool_name in PATCH_TOOLS and isinstance(patch, str) else {}
        )
        moved_from = set(moves.values())
        files: list[dict[str, Any]] = []
        for path in analysis.paths:
            relative, absolute = self._resolve(path, inv)
            allowed = before.targets.get(path)
            if allowed is not None and absolute != allowed:
                # A symlink on the way changed between PreToolUse and the write (TOCTOU): the
                # write went somewhere no policy looked at.
                self.tampered.append(
                    f"{path} was allowed at {allowed} but the write reached {absolute or '?'} "
                    "(a symlink changed during the call)"
                )
            if relative is None or absolute is None or path in moved_from:
                continue
            content, digest = self._read_recorded(relative, absolute)
            if digest is not None:
                self.observed[relative] = digest
            previous = moves.get(path)
            previous_rel = self._resolve(previous, inv)[0] if previous else None
            known, old, old_digest = self._old_side(previous_rel or relative, before)
            original = response.get("originalFile", ...)
            if not known and isinstance(original, str) and inv.tool_name != "ApplyPatch":
                known, old = True, original
                old_digest = hashlib.sha256(original.encode("utf-8")).hexdigest()
            elif not known and original is None:
                known = True  # Claude: the file did not exist before this Write
            if not known and content is not None:
                old = reconstruct_old(content, edit)
                if old is not None:
                    known = True
                    old_digest = hashlib.sha256(old.encode("utf-8")).hexdigest()
            credited, credited_digest = content, digest
            reported = _simulate(old, inv.tool_input) if known and not moves else None
            if (
                reported is not None
                and content is not None
                and _lines_of(reported) != _lines_of(content)
            ):
                # The disk is not what the client says the tool wrote (a line slipped in
                # between the write and this hook, a formatter on save): the call is credited
                # with what it wrote, and the rest is nobody's here (issue 15 part 4).
                credited = reported
                credited_digest = hashlib.sha256(reported.encode("utf-8")).hexdigest()
                if self.cache_dir is not None:  # the next call's drift starts from it
                    keep_blob(self.cache_dir, reported.encode("utf-8"))
            recorded, recorded_sha = self._recorded(
                previous_rel or relative, old_digest if known else None
            )
            files.append(
                file_change(
                    relative,
                    old=old,
                    old_known=known,
                    old_sha256=old_digest,
                    new=credited,
                    new_sha256=credited_digest,
                    previous_path=previous_rel,
                    mutation_class=mutation,
                    written=_certain_ranges(edit, content),
                    recorded=recorded,
                    recorded_sha256=recorded_sha,
                )
            )
        source = (
            "structured_patch"
            if edit.get("structured_patch")
            else "patch"
            if inv.tool_name in PATCH_TOOLS
            else "content"
            if "content" in edit and "old_string" not in edit
            else "edit"
        )
        self.attribution = {"files": sorted(files, key=lambda f: f["path"]), "source": source}

    def _attribute_shell(self, inv: Invocation) -> None:
        """What a shell command changed: the stat snapshots before and after it, diffed."""
        before = self._before(inv)
        if before.snapshot is None:
            return
        from ledger._governance.attribution import file_change  # noqa: PLC0415

        after = stat_snapshot(self.root)
        old_files, new_files = before.snapshot.files, after.files
        complete = before.snapshot.complete and after.complete
        changed = [p for p, st in new_files.items() if old_files.get(p) != st]
        removed = [p for p in old_files if p not in new_files] if complete else []
        # A rename keeps the inode, size and mtime (mv, git mv): the content came along.
        by_inode = {st: p for p, st in old_files.items() if p in removed}
        files: list[dict[str, Any]] = []
        renamed_from: set[str] = set()
        pending: list[
            tuple[str, str | None, str | None, bool, str | None, str | None, str | None]
        ] = []
        for relative in sorted(changed):
            absolute = os.path.join(self.root, relative)  # noqa: PTH118
            content, digest = self._read_and_keep(absolute)
            self._read_at[relative] = (new_files[relative], digest)
            source = by_inode.get(new_files[relative])
            if source is not None:
                renamed_from.add(source)
                recorded, recorded_sha = self._recorded(source, digest)
                files.append(
                    file_change(
                        relative,
                        old=content,
                        old_known=content is not None,
                        old_sha256=digest,
                        new=content,
                        new_sha256=digest,
                        previous_path=source,
                        recorded=recorded,
                        recorded_sha256=recorded_sha,
                    )
                )
                continue
            pending.append((relative, content, digest, *self._shell_old_side(relative, before)))
        gone = [p for p in removed if p not in renamed_from]
        sources = self._shell_sources(before, gone, {p[0] for p in pending})
        for relative, content, digest, own_known, own, own_digest, own_why in pending:
            found = self._copy_source(
                relative, content, digest, own if own_known else None, sources
            )
            known, old, old_digest, why = own_known, own, own_digest, own_why
            moved = copied = None
            if found is not None:
                path, old, old_digest = found
                known, why = True, None
                if path in gone:
                    moved = path
                    gone.remove(path)
                else:
                    copied = path
            recorded, recorded_sha = self._recorded(
                moved or copied or relative, old_digest if known else None
            )
            change = file_change(
                relative,
                old=old,
                old_known=known,
                old_sha256=old_digest,
                new=content,
                new_sha256=digest,
                unknown_reason=why,
                previous_path=moved,
                copied_from=copied,
                recorded=recorded,
                recorded_sha256=recorded_sha,
            )
            others = {p: v for p, v in sources.items() if p not in (relative, moved, copied)}
            borrowed = self._borrowed(change, content, others)
            if borrowed:
                change["borrowed"] = borrowed
            files.append(change)
        files.extend(
            file_change(p, old=None, old_known=True, old_sha256=None, new=None, new_sha256=None)
            for p in gone
        )
        if files:
            self.attribution = {
                "files": sorted(files, key=lambda f: f["path"]),
                "source": "snapshot",
            }
            command = inv.tool_input.get("command")
            if isinstance(command, str):
                self.attribution["command"] = command[:_COMMAND_KEPT]

    def _borrowed(
        self, change: dict[str, Any], content: str | None, others: dict[str, tuple[str, str]]
    ) -> list[dict[str, Any]]:
        """The lines a shell command's change wrote whose text is a line of another file it
        read (copied from there, so not the command's own), each with the line it came from
        when that is certain: the text occurs once in all those files, and that file was the
        version its last record left (so its line model describes it)."""
        if not others or content is None or not change.get("exact") or not change.get("hunks"):
            return []
        from ledger._governance.attribution import split_lines, unchanged_lines  # noqa: PLC0415

        where: dict[str, tuple[str, str, int] | None] = {}
        for path, (text, digest) in others.items():
            source = split_lines(text)
            # The source's lines -> its recorded version's (the line model's), where the
            # version on disk is that one or differs from it only elsewhere (a person's edit).
            recorded: str | None = self._recorded_sha(path)
            index: dict[int, int] = {}
            if recorded == digest:
                index = {i: i for i in range(len(source))}
            else:
                recorded_text, recorded = self._recorded(path, digest)
                if recorded_text is not None:
                    index = unchanged_lines(split_lines(recorded_text), source)
            for i, line in enumerate(source):
                seen = line in where
                at = index.get(i)
                where[line] = (
                    None if seen or at is None or recorded is None else (path, recorded, at + 1)
                )
        lines = split_lines(content)
        out = []
        for hunk in change["hunks"]:
            start = int(hunk["new_start"])
            for number in range(start, start + int(hunk["new_lines"])):
                if 1 <= number <= len(lines) and lines[number - 1] in where:
                    found = where[lines[number - 1]]
                    out.append(
                        {
                            "line": number,
                            "path": found[0] if found else None,
                            "sha256": found[1] if found else None,
                            "source_line": found[2] if found else None,
                        }
                    )
        return out

    def _recorded_sha(self, relative: str) -> str | None:
        found = recorded_version(self.cache_dir, relative) if self.cache_dir is not None else None
        return found.sha256 if found is not None else None

    def _shell_old_side(
        self, relative: str, before: Before
    ) -> tuple[bool, str | None, str | None, str | None]:
        """(known, text, SHA-256, why unknown) of a file before a shell command changed it."""
        snapshot = before.snapshot
        if snapshot is not None and relative in snapshot.files:
            known, old, old_digest = self._old_side(relative, before)
            if not known:
                known, old, old_digest = self._unchanged_since_recorded(
                    relative, snapshot.files[relative]
                )
            return known, old, old_digest, None
        if snapshot is not None and snapshot.complete:
            return True, None, None, None  # new: did not exist before
        # The walk before the command stopped early: the file may have existed.
        return (
            False,
            None,
            None,
            (
                "snapshot budget exceeded: the working tree walk before the command stopped at "
                f"its limit ({SNAPSHOT_SECONDS * 1000:.0f} ms / {SNAPSHOT_FILES:,} files)"
            ),
        )

    def _shell_sources(
        self, before: Before, gone: list[str], changed: set[str]
    ) -> dict[str, tuple[str, str]]:
        """Path -> (text, SHA-256) before a shell command, of the files its changed files may
        have been copied or moved from: those the pre hook kept (its targets and the regular
        files it reads), and those it removed whose recorded version was still on disk."""
        out: dict[str, tuple[str, str]] = {}
        for path, digest in before.hashes.items():
            if digest is None or path in changed:
                continue
            text = read_blob(self.cache_dir, digest) if self.cache_dir is not None else None
            if text is not None:
                out[path] = (text, digest)
        for path in gone:
            if path in out or before.snapshot is None:
                continue
            known, text, digest = self._unchanged_since_recorded(
                path, before.snapshot.files.get(path)
            )
            if known and text is not None and digest is not None:
                out[path] = (text, digest)
        return out

    def _copy_source(
        self,
        relative: str,
        content: str | None,
        digest: str | None,
        own: str | None,
        sources: dict[str, tuple[str, str]],
    ) -> tuple[str, str, str] | None:
        """(path, text, SHA-256) of the file a shell command copied or moved into
        ``relative``, when its content is a recorded version of another file (``cp``), or
        shares more lines with one of ``sources`` than with its own old side (``own``), at
        least half of them (git's rename threshold): issue 16 part 1."""
        from ledger._governance.attribution import split_lines  # noqa: PLC0415

        if content is None or digest is None:
            return None
        if content == own:
            # Rewritten with the same bytes (`cp b a` where a already was b): a copy only of a
            # source with this very content, whose model then says who wrote each line.
            same = [(p, t, d) for p, (t, d) in sources.items() if d == digest and p != relative]
            return same[0] if same else None
        if self.cache_dir is not None:
            found = recorded_with_content(self.cache_dir, digest)
            if found is not None and found != relative and found not in sources:
                text = read_blob(self.cache_dir, digest)
                if text is not None:
                    return found, text, digest
        new_lines = split_lines(content)
        wanted = set(new_lines)
        own_lines = split_lines(own) if own is not None else []
        best = sum(1 for line in own_lines if line in wanted)
        found_source = None
        for path, (text, source_digest) in sources.items():
            if path == relative:
                continue
            lines = split_lines(text)
            shared = sum(1 for line in lines if line in wanted)
            if shared > best and 2 * shared >= max(len(lines), len(new_lines)):
                best, found_source = shared, (path, text, source_digest)
        return found_source

    def intent_context(self, inv: Invocation) -> HookOutcome | None:
        """Tell the agent the open intents and how to select one: at session start, and at each
        prompt while the session has no open intent (issue 18). Clients that take no context on
        these events drop it (each adapter knows which do)."""
        intent = self._intent(inv)
        if inv.event != "SessionStart" and intent is not None and intent_refusal(intent) is None:
            return None  # working under an open intent: nothing to repeat at every prompt
        if self.intents is None or not self.intents.intents:
            return None
        live = [i for i in self.intents.intents if i.status in WORKABLE_STATUSES]
        if not live:
            return None
        listing = "\n".join(
            _escape_text(f"- {i.id} ({i.name}): {', '.join(i.owned_scope) or 'no scope'}")
            for i in live
        )
        now = (
            f"This session works under {intent.id}."
            if intent is not None and intent_refusal(intent) is None
            else "No intent is selected for this session yet."
        )
        text = (
            "<ledger>\nledger governs this workspace: every file write needs an intent, and "
            f"stays inside its scope. {now} Open intents:\n{listing}\nSelect one before "
            "writing with the select_active_intent tool (MCP server `ledger`), or run "
            "`ledger intent select <ID>` in the shell.\n</ledger>"
        )
        return HookOutcome(additional_context=text)

    def permission_denied(self, inv: Invocation) -> HookOutcome | None:
        """A human rejected a call we sent to ``ask``: record ``HITL_REJECT``."""
        asked = self.state.decisions.get(inv.tool_use_id or "") == "ask"
        if not asked:
            return None
        message = f"a human rejected {inv.tool_name}"
        return HookOutcome(error=_error("HITL_REJECT", message, inv), data={"hitl": "rejected"})

    # --- previews ----------------------------------------------------------------------------

    def _blob_path(self, digest: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / "blobs" / digest

    def _read_and_keep(self, absolute: str) -> tuple[str | None, str | None]:
        """(text, sha256) of a file, reading it once; the bytes are kept as a preview blob.

        Files over the blob limit are hashed by streaming and give no text.
        """
        data = _read_regular(absolute, _BLOB_LIMIT + 1)
        if data is None:
            return None, None
        if len(data) > _BLOB_LIMIT:
            return None, sha256_file(absolute)
        if self.cache_dir is None:
            return data.decode("utf-8", "replace"), hashlib.sha256(data).hexdigest()
        digest = keep_blob(self.cache_dir, data, path=absolute)  # previews, the next old side
        return data.decode("utf-8", "replace"), digest

    def _diff_preview(self, expected: str, absolute: str) -> str:
        blob = self._blob_path(expected.removeprefix("sha256:"))
        try:
            before = blob.read_text(encoding="utf-8", errors="replace") if blob else None
            after = Path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            before = after = None
        if before is None or after is None:
            return "(no cached copy of the version this session saw; no preview)"
        import difflib  # noqa: PLC0415 -- only refusals pay for difflib

        lines = list(
            difflib.unified_diff(
                before.splitlines(),
                after.splitlines(),
                "seen by this session",
                "on disk now",
                lineterm="",
                n=1,
            )
        )
        return "\n".join(lines[:_PREVIEW_LINES])

    def _removal_preview(self, paths: tuple[str, ...], inv: Invocation) -> str:
        lines: list[str] = []
        for path in paths:
            relative, absolute = self._resolve(path, inv)
            if relative is None or absolute is None:
                continue
            if os.path.isfile(absolute):  # noqa: PTH113
                lines.append(f"--- {relative}")
                try:
                    with open(absolute, encoding="utf-8", errors="replace") as handle:
                        for _, text in zip(range(_PREVIEW_LINES), handle, strict=False):
                            lines.append(f"-{text.rstrip()}")
                except OSError:
                    continue
            elif os.path.isdir(absolute):  # noqa: PTH112
                lines.append(f"--- {relative}/ (directory: {_count_files(absolute)} files)")
            if len(lines) >= _PREVIEW_LINES:
                break
        return "\n".join(lines[:_PREVIEW_LINES])


def _escape_text(text: str) -> str:
    """Intent names and globs come from a file: keep them from closing the ``<ledger>`` tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _stat(path: str) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` as :func:`ledger._governance.snapshot.stat_snapshot` keeps."""
    try:
        st = os.stat(path, follow_symlinks=False)  # noqa: PTH116
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _real_matches(matches: Iterable[str]) -> Iterator[str]:
    """The real paths of a glob's matches, resolving each directory once and each file only
    when it is a link (a glob over a big tree stays cheap, and a link still cannot hide)."""
    parents: dict[str, str] = {}
    for match in matches:
        head, name = os.path.split(match)
        if os.path.islink(match):  # noqa: PTH114
            yield os.path.realpath(match)
            continue
        real = parents.get(head)
        if real is None:
            real = parents[head] = os.path.realpath(head)
        yield os.path.join(real, name)  # noqa: PTH118


def _count_files(directory: str) -> int:
    total = 0
    for _, _, files in os.walk(directory):
        total += len(files)
        if total > 10_000:
            break
    return total
