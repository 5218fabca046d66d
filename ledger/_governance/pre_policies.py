"""The pre-call policies: the guards of protected paths and of the intent, and the checks of
each write (scope, staleness, destructive and unanalysable commands, the copy kept before).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ledger._errors import InputError
from ledger._governance.analysis.ledger_mcp import is_hook_tool
from ledger._governance.analysis.paths import (
    check_write_scope,
)
from ledger._governance.analysis.protected import (
    KEY_AREA,
    READ_DENIED,
    expand_glob,
    has_glob,
)
from ledger._governance.engine import HookOutcome, Invocation
from ledger._governance.files import (
    _count_files,
    _read_regular,
    _real_matches,
    _special_file,
)
from ledger._governance.intents import (
    WORKABLE_STATUSES,
    expansion_problem,
    intent_refusal,
    render_intent_context,
)
from ledger._governance.policy_base import (
    _BLOB_LIMIT,
    _CODE_FRAGMENTS,
    _CODE_MARKERS,
    _PREVIEW_LINES,
    _PROTECTED_SUBSTRINGS,
    _READ_ONLY_LEDGER,
    _SOURCES_KEPT,
    _SQUEEZE,
    FILE_WRITE_TOOLS,
    PATCH_TOOLS,
    READ_TOOLS,
    _deny,
    _error,
    _escape_text,
    _simulate,
)
from ledger._governance.snapshot import (
    Before,
    keep_blob,
    save_before,
    stat_snapshot,
)
from ledger._governance.vocabulary import SHELL_TOOLS, Permission, for_person

if TYPE_CHECKING:
    from ledger._governance.analysis.shell_core import CommandClass
    from ledger._governance.policies import Governance


class Guards:
    """Protected paths, the tripwire and the intent: the policies that decide whether the
    agent may touch what a call names at all, and the intent commands and context."""

    def __init__(self, gov: Governance) -> None:
        self.gov = gov

    def tripwire(self, inv: Invocation) -> HookOutcome | None:
        """Deny every tool call, and block every prompt, while a tampering the tripwire found
        is unresolved (decisions 0011 and 0021; ledger/_hooks/tripwire.py): what governs the
        agent changed around the hooks, so nothing it decides can be trusted until a person
        looks."""
        pending = self.gov.state.tamper
        if pending is None:
            return None
        problems = "; ".join(str(p) for p in pending.get("problems", [])[:3]) or "see the ledger"
        seq = pending.get("seq")  # None: found by this call, whose record comes with its answer
        when = "found now" if seq is None else f"recorded at seq {seq}"
        return _deny(
            "TAMPER",
            f"ledger's protected files or records changed outside the hooks ({when}: "
            f"{problems}); a person must run `ledger tamper accept` or "
            "`ledger tamper revert` in their own terminal (`ledger doctor` shows what changed)",
            inv,
            risk="DESTRUCTIVE",
        )

    def orchestration_guard(self, inv: Invocation) -> HookOutcome | None:
        """Deny any agent write to a protected path, and any read of the private keys."""
        if is_hook_tool(inv.tool_name):
            return _deny(
                "ORCHESTRATION_PROTECTED",
                "mcp__ledger__hook is the client's channel to ledger's hooks: no agent may "
                "call it (it would record hook calls that never happened)",
                inv,
                risk="DESTRUCTIVE",
            )
        analysis = self.gov.analyze(inv)
        areas = self.gov.protected()
        if inv.tool_name in READ_TOOLS:
            path = inv.tool_input.get("file_path") or inv.tool_input.get("path")
            if isinstance(path, str) and path:
                _relative, absolute = self.gov._resolve(path, inv)
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
                norm = self.gov._normalize(path, inv)
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
        areas = self.gov.protected()
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
                f"{command.refused[0]}: agents may not do this from the shell",
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

        areas = self.gov.protected()
        environ = os.environ if self.gov.environ is None else self.gov.environ
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
                home = self.gov._home or os.path.expanduser("~")  # noqa: PTH111
                pattern = home + path[1:] if path.startswith("~/") else path
                for real in _real_matches(expand_glob(pattern, base, limit=4096) or ()):
                    area = areas.area_of(real)
                    if area in READ_DENIED:
                        return path, area
                continue
            _relative, absolute = self.gov._resolve(path, inv)
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
            return os.path.realpath(os.path.join(self.gov.root, os.path.expanduser(inv.cwd)))  # noqa: PTH111, PTH118
        return self.gov.root

    def intent_command(self, inv: Invocation) -> HookOutcome | None:
        """Handle ``ledger intent select|clear|expand`` typed by the agent."""
        request = self.gov.analyze(inv).intent_command
        if request is None:
            return None
        session = inv.session_id
        if self.gov.intents is None:
            return _deny(
                "HOOK_ERROR",
                f"intents file unusable: {self.gov.intents_error}; fix "
                ".orchestration/active_intents.yaml (`ledger doctor` checks it)",
                inv,
            )
        if request.action == "clear":
            self.gov.records.append(("intent.cleared", {"session": session, "via": "hook"}))
            self.gov.state.session(session)["intent"] = None
            return HookOutcome(
                decision="allow", reason="intent cleared", data={"intent_command": "clear"}
            )
        intent = self.gov.intents.get(str(request.intent_id))
        refusal = "is unknown" if intent is None else intent_refusal(intent)
        if intent is None or refusal is not None:
            named = (
                f"intent {request.intent_id} {refusal}"
                if request.intent_id is not None
                else "the call names no intent (intent_id)"
            )
            return _deny(
                "INTENT_REQUIRED",
                f"{named}; {self.gov._available()}",
                inv,
                intent_id=request.intent_id,
            )
        if request.action == "select":
            if self.gov.state.intent_of(session) != intent.id:
                self.gov.records.append(
                    (
                        "intent.selected",
                        {
                            "intent_id": intent.id,
                            "intents_sha256": self.gov.intents.source_sha256,
                            "session": session,
                            "via": request.via,
                        },
                    )
                )
                self.gov.state.session(session)["intent"] = intent.id
            recent = list(reversed(self.gov.state.recent.get(intent.id, [])))
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
        shown = ", ".join(for_person(g, 200) for g in globs[:20])  # the person reads it
        reason = (
            f"SCOPE_EXPANSION_REQUESTED: the agent asks to add {shown} to "
            f"{intent.id} ({intent.name})"
            + (f": {for_person(request.reason, 500)}" if request.reason else "")
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
        analysis = self.gov.analyze(inv)
        if not analysis.mutating:
            return None
        if self.gov.intents is None:
            return _deny(
                "HOOK_ERROR",
                f"intents file unusable: {self.gov.intents_error}; fix "
                ".orchestration/active_intents.yaml (`ledger doctor` checks it)",
                inv,
            )
        intent = self.gov._intent(inv)
        selected = self.gov.state.intent_of(inv.session_id)
        refusal = None if intent is None else intent_refusal(intent)
        if intent is None or refusal is not None:
            why = (
                "no intent is selected for this session"
                if selected is None
                else f"intent {selected} {refusal or 'is no longer defined'}"
            )
            return _deny(
                "INTENT_REQUIRED",
                f"{inv.tool_name} changes files but {why}; {self.gov._available()}",
                inv,
                paths=list(analysis.paths),
            )
        return HookOutcome(data={"intent_id": intent.id})

    def intent_context(self, inv: Invocation) -> HookOutcome | None:
        """Tell the agent the open intents and how to select one: at session start, and at each
        prompt while the session has no open intent (decision 0015). Clients that take no context on
        these events drop it (each adapter knows which do)."""
        intent = self.gov._intent(inv)
        if inv.event != "SessionStart" and intent is not None and intent_refusal(intent) is None:
            return None  # working under an open intent: nothing to repeat at every prompt
        if self.gov.intents is None or not self.gov.intents.intents:
            return None
        live = [i for i in self.gov.intents.intents if i.status in WORKABLE_STATUSES]
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
        asked = self.gov.state.decisions.get(inv.tool_use_id or "") == "ask"
        if not asked:
            return None
        message = f"a human rejected {inv.tool_name}"
        return HookOutcome(error=_error("HITL_REJECT", message, inv), data={"hitl": "rejected"})


class WriteChecks:
    """The checks of each write an allowed call makes: scope, staleness, mutation class,
    destructive and unanalysable commands, and the copy of the targets kept before it."""

    def __init__(self, gov: Governance) -> None:
        self.gov = gov

    def scope(self, inv: Invocation) -> HookOutcome | None:
        """Every written path must be inside the workspace and the intent's scope."""
        analysis = self.gov.analyze(inv)
        intent = self.gov._intent(inv)
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
        spec = self.gov._compile(self.gov._scope_globs(intent))
        try:
            check = check_write_scope(
                analysis.paths,
                root=self.gov.root,
                cwd=inv.cwd,
                scope=spec,
                normalize=lambda path: self.gov._normalize(path, inv),
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
        session = self.gov.state.sessions.get(inv.session_id or "", {})
        seen: dict[str, str] = session.get("seen", {})
        observed = inv.tool_input.get("observed_content_hash")
        for path in self.gov.analyze(inv).paths:
            relative, absolute = self.gov._resolve(path, inv)
            if absolute is None:
                continue
            current = self.gov.files.content(absolute).sha256
            # The session's own memory wins over a hash the agent supplies (decision 0005); a hard
            # link shares its content with names the session may have seen instead.
            remembered = seen.get(relative or "") or self._seen_alias(absolute, seen)
            expected = remembered or (observed if isinstance(observed, str) else None)
            if expected is None or current is None or current == expected.removeprefix("sha256:"):
                continue
            message = (
                f"{relative} changed on disk since this session last read it (another "
                "session or a person edited it); Read it again before writing"
            )
            preview = self.gov.files.diff_preview(expected, absolute)
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
                other = os.lstat(os.path.join(self.gov.root, relative))  # noqa: PTH118
            except (OSError, ValueError):
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return digest
        return None

    def mutation_class(self, inv: Invocation) -> HookOutcome | None:
        """Classify a file edit as AST_REFACTOR or INTENT_EVOLUTION (recorded, never blocks)."""
        if inv.tool_name not in FILE_WRITE_TOOLS:
            return None
        paths = self.gov.analyze(inv).paths
        if len(paths) != 1:
            return None
        _, absolute = self.gov._resolve(paths[0], inv)
        if absolute is None:
            return None
        old: str | None = None
        if os.path.lexists(absolute):
            data = self.gov.files.content(absolute).head
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
        analysis = self.gov.analyze(inv)
        command = analysis.command
        if command is None:
            return None
        overwritten = [p for p in command.overwrites if self._holds_content(p, inv)]
        if not command.destructive and not overwritten:
            return HookOutcome(data={"risk": "SAFE"})
        reasons = command.reasons or tuple(
            f"{why} ({', '.join(overwritten)} exists)" for why in command.overwrite_reasons
        )
        intent = self.gov._intent(inv)
        files = [self.gov._resolve(p, inv)[0] or p for p in analysis.paths]
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
        decision: Permission = "deny" if self.gov.config.destructive == "deny" else "ask"
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
        _relative, absolute = self.gov._resolve(path, inv)
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
        command = self.gov.analyze(inv).command
        if command is None or not command.unanalysable:
            return None
        intent = self.gov._intent(inv)
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
        if self.gov.cache_dir is None:  # registered only with a cache
            return None
        tool = inv.tool_name
        analysis = self.gov.analyze(inv)
        hashes: dict[str, str | None] = {}
        targets: dict[str, str] = {}
        snapshot = None
        if tool in SHELL_TOOLS:
            if analysis.command is None:
                return None  # a recognised `ledger intent ...` command writes no file
            snapshot = stat_snapshot(self.gov.root)
        elif tool not in FILE_WRITE_TOOLS and tool not in PATCH_TOOLS:
            return None
        for path in analysis.paths:
            relative, absolute = self.gov._resolve(path, inv)
            if relative is None or absolute is None:
                continue
            if tool not in SHELL_TOOLS:
                targets[path] = absolute
            if not os.path.lexists(absolute):
                hashes[relative] = None
                continue
            data = self.gov.files.content(absolute).head  # the call's one read (never a FIFO)
            if data is not None and len(data) <= _BLOB_LIMIT:
                hashes[relative] = keep_blob(self.gov.cache_dir, data, path=relative)
        if snapshot is not None and analysis.command is not None:
            # The workspace files the command reads may be what it copies into a file it
            # writes (cp, cat >): their content before it, so copied lines keep their
            # attribution, and a person's lines copied by the command stay nobody's.
            kept = 0
            for path in analysis.command.reads:
                relative, absolute = self.gov._resolve(path, inv)
                if relative is None or relative in hashes or relative not in snapshot.files:
                    continue
                data = _read_regular(absolute, _BLOB_LIMIT + 1) if absolute else None
                if data is not None and len(data) <= _BLOB_LIMIT:
                    hashes[relative] = keep_blob(self.gov.cache_dir, data, path=relative)
                kept += 1
                if kept >= _SOURCES_KEPT:
                    break
        save_before(self.gov.cache_dir, inv.id, Before(hashes, snapshot, targets))
        return None

    def _removal_preview(self, paths: tuple[str, ...], inv: Invocation) -> str:
        lines: list[str] = []
        for path in paths:
            relative, absolute = self.gov._resolve(path, inv)
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
