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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger._errors import InputError
from ledger._governance.analysis.ledger_mcp import intent_command_of, ledger_tool
from ledger._governance.analysis.paths import (
    NormalizedPath,
    ScopeSpec,
    normalize_path,
)
from ledger._governance.analysis.protected import (
    READ_DENIED,
    ProtectedAreas,
)
from ledger._governance.engine import HookEngine, HookOutcome, Invocation
from ledger._governance.files import FileReader
from ledger._governance.intents import (
    WORKABLE_STATUSES,
    Intent,
    IntentsFile,
)
from ledger._governance.observer import Observer
from ledger._governance.policy_base import (
    DELETE_TOOLS,
    FILE_WRITE_TOOLS,
    PATCH_TOOLS,
    READ_TOOLS,
    Analysis,
    GovernanceConfig,
    _patch_paths,
    edit_payload,
)
from ledger._governance.pre_policies import Guards, WriteChecks
from ledger._governance.state import WorkspaceState
from ledger._governance.vocabulary import SHELL_TOOLS

if TYPE_CHECKING:
    from ledger._governance.analysis.shell_core import CommandClass

__all__ = ["FILE_WRITE_TOOLS", "SHELL_TOOLS", "Governance", "GovernanceConfig", "edit_payload"]


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
        # One hook call normalizes each path once and reads each file once (self.files),
        # whichever policies ask: both are memoized for the life of this object (one call).
        self._normalized: dict[tuple[str, str | None], NormalizedPath] = {}
        #: Extra records to append with the hook record: (kind, body).
        self.records: list[tuple[str, dict[str, Any]]] = []
        # The post record's typed fields (format v2): what the call let the session see, and
        # which lines it wrote. Set by ``observe``; the hook service puts them in the body.
        self.observed: dict[str, str] = {}
        self.attribution: dict[str, Any] | None = None
        #: What this call found changed under it (a write that landed elsewhere than the path
        #: PreToolUse allowed): the hook service records it as ``governance.tamper``.
        self.tampered: list[str] = []
        self.files = FileReader(cache_dir)
        self._guards = Guards(self)
        self._checks = WriteChecks(self)
        self._observer = Observer(self)

    # --- registration -------------------------------------------------------------------------

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
        # A prompt too: the agent would only be told that each call it tries is denied, and a
        # client whose tool hooks no longer reach ledger (a resident transport's server
        # swapped: decision 0021) would not even deny them.
        engine.register_hook("UserPromptSubmit", "tripwire", self.tripwire)
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

    def protected(self) -> ProtectedAreas:
        """The protected areas of this workspace (built on first use)."""
        if self._areas is None:
            self._areas = ProtectedAreas.for_workspace(self.root, self.environ)
        return self._areas

    # --- the policies (each its own room: pre_policies.py, observer.py) ----------------------

    def tripwire(self, inv: Invocation) -> HookOutcome | None:
        """Deny every tool call, and block every prompt, while a tampering the tripwire found
        is unresolved"""
        return self._guards.tripwire(inv)

    def orchestration_guard(self, inv: Invocation) -> HookOutcome | None:
        """Deny any agent write to a protected path, and any read of the private keys."""
        return self._guards.orchestration_guard(inv)

    def intent_command(self, inv: Invocation) -> HookOutcome | None:
        """Handle ``ledger intent select|clear|expand`` typed by the agent."""
        return self._guards.intent_command(inv)

    def intent_required(self, inv: Invocation) -> HookOutcome | None:
        """Mutating tools need an active intent."""
        return self._guards.intent_required(inv)

    def scope(self, inv: Invocation) -> HookOutcome | None:
        """Every written path must be inside the workspace and the intent's scope."""
        return self._checks.scope(inv)

    def stale_file(self, inv: Invocation) -> HookOutcome | None:
        """Refuse writes over a file that changed since this session saw it."""
        return self._checks.stale_file(inv)

    def mutation_class(self, inv: Invocation) -> HookOutcome | None:
        """Classify a file edit as AST_REFACTOR or INTENT_EVOLUTION (recorded, never blocks)."""
        return self._checks.mutation_class(inv)

    def destructive(self, inv: Invocation) -> HookOutcome | None:
        """DESTRUCTIVE shell commands go to a human (``ask``), or are denied if so configured."""
        return self._checks.destructive(inv)

    def unanalysable(self, inv: Invocation) -> HookOutcome | None:
        """A shell command the classifier cannot read goes to a human: never a silent pass."""
        return self._checks.unanalysable(inv)

    def before(self, inv: Invocation) -> HookOutcome | None:
        """Keep what the files were before the call, for the post record's exact diff"""
        return self._checks.before(inv)

    def observe(self, inv: Invocation) -> HookOutcome | None:
        """Record what the session saw and changed: hashes, added lines, approvals."""
        return self._observer.observe(inv)

    def intent_context(self, inv: Invocation) -> HookOutcome | None:
        """Tell the agent the open intents and how to select one: at session start, and at each"""
        return self._guards.intent_context(inv)

    def permission_denied(self, inv: Invocation) -> HookOutcome | None:
        """A human rejected a call we sent to ``ask``: record ``HITL_REJECT``."""
        return self._guards.permission_denied(inv)
