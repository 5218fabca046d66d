"""Observation and attribution after a tool call: what the session saw, and per changed file the
exact diff and who wrote each line (:mod:`ledger._governance.attribution`).
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from ledger._governance.engine import HookOutcome, Invocation
from ledger._governance.files import (
    _stat,
)
from ledger._governance.policy_base import (
    _COMMAND_KEPT,
    FILE_WRITE_TOOLS,
    PATCH_TOOLS,
    READ_TOOLS,
    Analysis,
    _certain_ranges,
    _lines_of,
    _patch_moves,
    _simulate,
    _whole_write_text,
    edit_payload,
)
from ledger._governance.snapshot import (
    SNAPSHOT_FILES,
    SNAPSHOT_SECONDS,
    Before,
    keep_blob,
    load_before,
    read_blob,
    recorded_version,
    recorded_with_content,
    remember_recorded,
    stat_snapshot,
)
from ledger._governance.vocabulary import SHELL_TOOLS

if TYPE_CHECKING:
    from ledger._governance.policies import Governance


class Observer:
    """The post-call policy: records what a call let the session see and which lines it wrote."""

    def __init__(self, gov: Governance) -> None:
        self.gov = gov
        self.versions = RecordedVersions(gov)
        # relative path -> (stat tuple taken before the post hook read it, SHA-256 it read):
        # whether the disk held the recorded version, for remember_recorded.
        self._read_at: dict[str, tuple[tuple[int, int, int] | None, str | None]] = {}

    def observe(self, inv: Invocation) -> HookOutcome | None:
        """Record what the session saw and changed: hashes, added lines, approvals."""
        data: dict[str, Any] = {}
        intent_id = self.gov.state.intent_of(inv.session_id)
        if intent_id:
            data["intent_id"] = intent_id
        if inv.outcome not in (None, "success") or inv.event == "PostToolUseFailure":
            return HookOutcome(data=data)
        tool = inv.tool_name
        analysis = self.gov.analyze(inv)
        if tool in READ_TOOLS:
            for path in [inv.tool_input.get("file_path")]:
                relative, absolute = (
                    self.gov._resolve(path, inv) if isinstance(path, str) else (None, None)
                )
                if relative is not None and absolute is not None:
                    digest = self.gov.files.read_and_keep(absolute)[1]
                    if digest is not None:
                        self.gov.observed[relative] = digest
        elif tool in FILE_WRITE_TOOLS or tool in PATCH_TOOLS:
            self._attribute_edit(inv, analysis)
            self._remember_recorded()
        elif tool in SHELL_TOOLS and analysis.command is not None:
            self._attribute_shell(inv)
            self._remember_recorded()
        request = analysis.intent_command
        if request is not None and request.action == "expand" and request.intent_id:
            granted = self.gov.state.grants.get(request.intent_id, [])
            new = [g for g in request.globs if g not in granted]
            if new:
                # The command ran, so the human approved the ask: record the approval.
                self.gov.records.append(
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
        found = load_before(self.gov.cache_dir, inv.id) if self.gov.cache_dir is not None else None
        return found or Before({}, None)

    def _read_recorded(self, relative: str, absolute: str) -> tuple[str | None, str | None]:
        """``_read_and_keep`` with the stat tuple taken just before, for the pointer."""
        stat = _stat(absolute)
        content, digest = self.gov.files.read_and_keep(absolute)
        self._read_at[relative] = (stat, digest)
        return content, digest

    def _remember_recorded(self) -> None:
        """Point each file this call's record describes at the version it leaves (the next
        call's drift and a shell command's old side start from it)."""
        if self.gov.cache_dir is None or not self.gov.attribution:
            return
        for change in self.gov.attribution.get("files", []):
            path, digest = change["path"], change.get("sha256")
            if change.get("previous_path"):
                remember_recorded(self.gov.cache_dir, change["previous_path"], None, None)
            if change.get("change") == "deleted" or digest is None:
                remember_recorded(self.gov.cache_dir, path, None, None)
                continue
            stat, read = self._read_at.get(path, (None, None))
            on_disk = _stat(os.path.join(self.gov.root, path))  # noqa: PTH118
            if stat is not None and (read != digest or on_disk != stat):
                stat = None  # the disk is not (or no longer) the recorded version
            remember_recorded(self.gov.cache_dir, path, digest, stat)

    def _attribute_edit(self, inv: Invocation, analysis: Analysis) -> None:
        """The exact diff of each file a file tool wrote (old side: the client's
        ``originalFile``, else the pre hook's copy, else reversed from the edit)."""
        from ledger._governance.attribution import (  # noqa: PLC0415
            file_change,
            reconstruct_old,
            whole_write_change,
        )

        edit = edit_payload(inv) or {}
        if isinstance(inv.tool_input.get("diff"), str):
            edit = {**edit, "diff": inv.tool_input["diff"]}  # Cline SEARCH/REPLACE blocks
        response = inv.tool_response if isinstance(inv.tool_response, dict) else {}
        mutation = self.gov.state.mutations.get(inv.tool_use_id or "")
        before = self._before(inv)
        patch = inv.tool_input.get("patch") or inv.tool_input.get("command")
        moves = (
            _patch_moves(patch) if inv.tool_name in PATCH_TOOLS and isinstance(patch, str) else {}
        )
        moved_from = set(moves.values())
        files: list[dict[str, Any]] = []
        for path in analysis.paths:
            relative, absolute = self.gov._resolve(path, inv)
            allowed = before.targets.get(path)
            if allowed is not None and absolute != allowed:
                # A symlink on the way changed between PreToolUse and the write (TOCTOU): the
                # write went somewhere no policy looked at.
                self.gov.tampered.append(
                    f"{path} was allowed at {allowed} but the write reached {absolute or '?'} "
                    "(a symlink changed during the call)"
                )
            if relative is None or absolute is None or path in moved_from:
                continue
            content, digest = self._read_recorded(relative, absolute)
            if digest is not None:
                self.gov.observed[relative] = digest
            previous = moves.get(path)
            previous_rel = self.gov._resolve(previous, inv)[0] if previous else None
            known, old, old_digest = self.versions._old_side(previous_rel or relative, before)
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
            whole = _whole_write_text(edit, digest) if content is None and not moves else None
            if whole is not None and digest is not None:
                # Over the blob limit the file's text is not kept, but a whole-file write's
                # text is in the payload: its lines are attributed without a diff.
                files.append(
                    whole_write_change(
                        relative,
                        whole,
                        digest,
                        old_known=known,
                        old=old,
                        old_sha256=old_digest,
                        mutation_class=mutation,
                    )
                )
                continue
            credited, credited_digest = content, digest
            reported = _simulate(old, inv.tool_input) if known and not moves else None
            if (
                reported is not None
                and content is not None
                and _lines_of(reported) != _lines_of(content)
            ):
                # The disk is not what the client says the tool wrote (a line slipped in
                # between the write and this hook, a formatter on save): the call is credited
                # with what it wrote, and the rest is nobody's here (decision 0011).
                credited = reported
                credited_digest = hashlib.sha256(reported.encode("utf-8")).hexdigest()
                if self.gov.cache_dir is not None:  # the next call's drift starts from it
                    keep_blob(self.gov.cache_dir, reported.encode("utf-8"))
            recorded, recorded_sha = self.versions._recorded(
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
        self.gov.attribution = {"files": sorted(files, key=lambda f: f["path"]), "source": source}

    def _attribute_shell(self, inv: Invocation) -> None:
        """What a shell command changed: the stat snapshots before and after it, diffed."""
        before = self._before(inv)
        if before.snapshot is None:
            return
        from ledger._governance.attribution import file_change  # noqa: PLC0415

        after = stat_snapshot(self.gov.root)
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
            absolute = os.path.join(self.gov.root, relative)  # noqa: PTH118
            content, digest = self.gov.files.read_and_keep(absolute)
            self._read_at[relative] = (new_files[relative], digest)
            source = by_inode.get(new_files[relative])
            if source is not None:
                renamed_from.add(source)
                recorded, recorded_sha = self.versions._recorded(source, digest)
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
            pending.append(
                (relative, content, digest, *self.versions._shell_old_side(relative, before))
            )
        gone = [p for p in removed if p not in renamed_from]
        sources = self.versions._shell_sources(before, gone, {p[0] for p in pending})
        for relative, content, digest, own_known, own, own_digest, own_why in pending:
            found = self.versions._copy_source(
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
            recorded, recorded_sha = self.versions._recorded(
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
            borrowed = self.versions._borrowed(change, content, others)
            if borrowed:
                change["borrowed"] = borrowed
            files.append(change)
        files.extend(
            file_change(p, old=None, old_known=True, old_sha256=None, new=None, new_sha256=None)
            for p in gone
        )
        if files:
            self.gov.attribution = {
                "files": sorted(files, key=lambda f: f["path"]),
                "source": "snapshot",
            }
            command = inv.tool_input.get("command")
            if isinstance(command, str):
                self.gov.attribution["command"] = command[:_COMMAND_KEPT]


class RecordedVersions:
    """The old side of a changed file: the pre hook's copy, the version its last record left,
    or the file a shell command copied or moved it from."""

    def __init__(self, gov: Governance) -> None:
        self.gov = gov

    def _old_side(self, relative: str, before: Before) -> tuple[bool, str | None, str | None]:
        """(known, text, sha256) of a file before the call, from the pre hook's copy."""
        if relative not in before.hashes:
            return False, None, None
        digest = before.hashes[relative]
        if digest is None:
            return True, None, None
        text = read_blob(self.gov.cache_dir, digest) if self.gov.cache_dir is not None else None
        return (True, text, digest) if text is not None else (False, None, None)

    def _recorded(self, relative: str, old_sha256: str | None) -> tuple[str | None, str | None]:
        """(text, SHA-256) of the version of ``relative`` the last record left, when the
        call's old side (``old_sha256``) is another: the drift to record (decision 0009)."""
        if self.gov.cache_dir is None or old_sha256 is None:
            return None, None
        found = recorded_version(self.gov.cache_dir, relative)
        if found is None or found.sha256 == old_sha256:
            return None, None
        text = read_blob(self.gov.cache_dir, found.sha256)
        return (text, found.sha256) if text is not None else (None, None)

    def _unchanged_since_recorded(
        self, relative: str, stat: tuple[int, int, int] | None
    ) -> tuple[bool, str | None, str | None]:
        """(known, text, SHA-256) of a file a shell command changed whose old bytes the pre hook
        did not keep: the recorded version, when the stat tuple before the command is the one
        the disk had when that version was recorded (as git's index trusts an unchanged stat)."""
        if self.gov.cache_dir is None or stat is None:
            return False, None, None
        found = recorded_version(self.gov.cache_dir, relative)
        if found is None or found.stat != stat:
            return False, None, None
        text = read_blob(self.gov.cache_dir, found.sha256)
        return (True, text, found.sha256) if text is not None else (False, None, None)

    def _recorded_sha(self, relative: str) -> str | None:
        found = (
            recorded_version(self.gov.cache_dir, relative)
            if self.gov.cache_dir is not None
            else None
        )
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
            text = read_blob(self.gov.cache_dir, digest) if self.gov.cache_dir is not None else None
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
        least half of them (git's rename threshold): decision 0009."""
        from ledger._governance.attribution import split_lines  # noqa: PLC0415

        if content is None or digest is None:
            return None
        if content == own:
            # Rewritten with the same bytes (`cp b a` where a already was b): a copy only of a
            # source with this very content, whose model then says who wrote each line.
            same = [(p, t, d) for p, (t, d) in sources.items() if d == digest and p != relative]
            return same[0] if same else None
        if self.gov.cache_dir is not None:
            found = recorded_with_content(self.gov.cache_dir, digest)
            if found is not None and found != relative and found not in sources:
                text = read_blob(self.gov.cache_dir, digest)
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
