"""``ledger review``: what in a git range agents wrote, under which intents, what governance
decided on the way, and whether the evidence is sound.

Lines come from ``ledger blame``'s one rule (:func:`ledger._projections.explain.explain_lines`)
applied to each changed file as committed at the range's head, for the lines the range adds or
changes; a teammate's lines come from the verified fetched ledgers, as in blame in any clone.
On top of blame, one rule of its own: **evidence that does not verify here never counts as
agent**. This clone's ledger is verified first; if it fails, the lines it alone explains are
``unknown`` and listed as ``unverified``, with the command that says what is wrong.

Intents, scope and governance are read from the very records that wrote the lines: the scope a
session held when its record was written is the intent's ``owned_scope`` plus the expansions
the governance fold (:func:`ledger._governance.state.apply_record`, the hook's own rule)
counted as approved by then; the governance items are that ledger's denials, asks and their
answers, scope expansions, tamper events, configuration changes and hook errors, each with
its seq and ledger id.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ledger._errors import ConfigError, InputError, LedgerError, NotInitializedError
from ledger._git import git_environment, one_config_read
from ledger._governance.attribution import line_hash, split_lines
from ledger._governance.state import WorkspaceState, apply_record
from ledger._projections.blame import FileView
from ledger._projections.explain import (
    STATUSES,
    BlameLine,
    blame_state,
    explain_lines,
    file_view,
    git_authors,
    unverified_line,
)
from ledger._projections.foreign import FetchedTeammates, unverified_fix
from ledger._review.gitrange import ChangedFile, GitRange, Repository
from ledger._workspace import Workspace, find_root, utc_now

if TYPE_CHECKING:
    from ledger._evidence.ledger import Ledger
    from ledger._evidence.verify import VerifyReport
    from ledger._governance.intents import Intent, IntentsFile

__all__ = ["GROUPINGS", "REVIEW_VERSION", "build_review"]

REVIEW_VERSION: Final = 1
Grouping = Literal["week", "intent", "model", "client", "author"]
GROUPINGS: Final[tuple[Grouping, ...]] = ("week", "intent", "model", "client", "author")
_ORCHESTRATION: Final = ".orchestration/"
_AGENT_RUN_FIELDS: Final = (
    "ledger_id",
    "seq",
    "record_hash",
    "session_id",
    "intent_id",
    "client",
    "model",
    "tool",
    "ts",
)
# A ledger line worth parsing for a review (the rest, the bulk of hook records, is skipped
# unparsed: in canonical JSON these are the very bytes of the fields, which verify checked).
_MARKERS: Final = (
    b'"kind":"intent.',
    b'"kind":"governance.',
    b'"kind":"hook.error"',
    b'"decision":"deny"',
    b'"decision":"ask"',
    b"HITL_REJECT",
)
_POST: Final = b'"kind":"hook.post"'
_FEW_FILES: Final = 16
#: git blames at once: each is a process, so they overlap even on few cores.
_WORKERS: Final = min(8, 2 * (os.cpu_count() or 1))
_TOOL_USE_ID: Final = re.compile(rb'"tool_use_id":"([^"\\]{1,200})"')


def build_review(
    spec: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    by: str | None = None,
    git_facts: bool = True,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The review of the git range ``spec`` (JSON-ready; ``schemas/review.v1.schema.json``).

    Args:
        spec: ``BASE..HEAD``, ``BASE...HEAD`` or ``BASE``; default: the merge base with the
            upstream (else the remote's default branch) up to ``HEAD``.
        by: also give the lines' shares grouped by week, intent, model, client or author.
        git_facts: name the commit and author of every git line. ``False`` (for outputs that
            never show them: the Markdown comment, SARIF) counts the lines of a file the range
            adds and no ledger describes as git without asking git blame which commit, one
            process per file less; the counts are the same.

    Raises:
        UnverifiableError: not a git repository, an unknown or unreachable revision (a shallow
            clone: the message says to fetch deeper), no upstream to default to.
        NotInitializedError: no ledger in this clone (`ledger init`).
        InputError: an unknown ``by``.
    """
    if by is not None and by not in GROUPINGS:
        raise InputError(f"--by {by!r}: use one of {', '.join(GROUPINGS)}")
    here = Path(cwd).absolute() if cwd is not None else Path.cwd()
    workspace = Workspace(find_root(root, start=here, environ=environ))
    if not workspace.ledger_path.exists():
        raise NotInitializedError(f"no ledger in {workspace.orchestration}; run `ledger init`")
    # git's executing settings are switched off once for the whole review (one config read).
    with one_config_read(workspace.root, git_environment(environ)):
        return _review(workspace, spec, by, git_facts=git_facts, environ=environ)


def _review(
    workspace: Workspace,
    spec: str | None,
    by: Grouping | None,
    *,
    git_facts: bool,
    environ: Mapping[str, str] | None,
) -> dict[str, Any]:
    """:func:`build_review` once the workspace is known."""
    repo = Repository(workspace.root, environ)
    span = repo.resolve(spec)
    prefix = repo.prefix()
    changed = repo.changed_files(span)
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415 -- once the range resolves

    ledger = Ledger.open(workspace.root, environ=environ)
    own_id = ledger.ledger_id
    local = ledger.verify(jobs=None)
    teammates = FetchedTeammates(workspace.root, workspace.cache_dir, own_id, environ)
    files, inside, rows_by_file, notes = _files(
        repo,
        workspace,
        span,
        changed,
        prefix=prefix,
        own_id=own_id,
        local_ok=local.ok,
        teammates=teammates,
        git_facts=git_facts or by in ("author", "week"),
        environ=environ,
    )
    agent_rows = [
        (path, row) for path, rows in rows_by_file.items() for row in rows if row.status == "agent"
    ]
    wanted: dict[str, set[int]] = {}
    for _, row in agent_rows:
        wanted.setdefault(str(row.facts["ledger_id"]), set()).add(int(row.facts.get("seq") or -1))
    histories = _histories(workspace, ledger, teammates, wanted, environ)
    versions = _IntentsVersions(repo, workspace)
    intents, scope_of = _intents(agent_rows, histories, inside, versions)
    notes.extend(versions.notes())
    for file, within in zip(files, inside, strict=True):
        file["runs"] = _runs(rows_by_file.get(within.path, []), scope_of, within.path)
    governance = _governance(agent_rows, histories)
    evidence = _evidence(
        repo,
        workspace,
        ledger,
        local,
        teammates=teammates,
        histories=histories,
        agent_rows=agent_rows,
        unverified=Counter(
            str(row.facts.get("ledger_id"))
            for rows in rows_by_file.values()
            for row in rows
            if row.facts.get("unverified")
        ),
    )
    totals = _count(f["lines"] for f in files)
    if not teammates.refs and not any(r.facts["ledger_id"] == own_id for _, r in agent_rows):
        notes.append(
            "no evidence fetched in this clone: every line is git or unknown; fetch it with "
            "`ledger fetch origin` (pin teammates' keys: commit their .orchestration/keys/*.json)"
        )
    review: dict[str, Any] = {
        "version": REVIEW_VERSION,
        "generated_at": utc_now(),
        "range": {
            "spec": span.label,
            "base": span.base,
            "head": span.head,
            "commits": repo.commit_count(span),
            "prefix": prefix,
        },
        "totals": totals,
        "files": files,
        "intents": intents,
        "governance": governance,
        "evidence": evidence,
        "notes": notes,
        "history": None,
    }
    if by is not None:
        if by == "author":
            _authors(workspace, span, rows_by_file, environ)
        review["history"] = {"by": by, "groups": _history(by, rows_by_file)}
    return review


# --- lines ------------------------------------------------------------------------------------


def _files(
    repo: Repository,
    workspace: Workspace,
    span: GitRange,
    changed: list[ChangedFile],
    *,
    prefix: str,
    own_id: str,
    local_ok: bool,
    teammates: FetchedTeammates,
    git_facts: bool,
    environ: Mapping[str, str] | None,
) -> tuple[list[dict[str, Any]], list[ChangedFile], dict[str, list[BlameLine]], list[str]]:
    """Each changed file's entry (paths from the repository's top), the same files with
    paths from the workspace's, each file's explained lines by workspace path, and notes."""
    notes: list[str] = []
    outside = [f for f in changed if not f.path.startswith(prefix)]
    if outside:
        notes.append(f"{len(outside)} changed file(s) outside the workspace {prefix} not reviewed")
    # Paths shown are the repository's (what a pull request, a comment and code scanning
    # name); the records, the scope and git run in the workspace, so lines are read by the
    # workspace's path (an old path outside it names nothing the workspace's records hold).
    shown = [f for f in changed if f.path.startswith(prefix)]
    inside = [
        f._replace(
            path=f.path[len(prefix) :],
            old_path=f.old_path[len(prefix) :]
            if f.old_path and f.old_path.startswith(prefix)
            else None,
        )
        for f in shown
    ]
    counted = [f for f in inside if f.blob and f.added and not f.path.startswith(_ORCHESTRATION)]
    asked = [p for f in counted for p in (f.path, f.old_path) if p]
    teammates(asked)  # one fold for all
    contents = repo.blobs(sorted({f.blob for f in counted if f.blob}))
    # Each file's model first, one after the other (a stale slice index makes the first one
    # rebuild the cache for all); then git's blames, which are processes, run side by side.
    views = _views(workspace, [f.path for f in counted], environ)

    def explain(file: ChangedFile) -> list[BlameLine]:
        content = contents.get(file.blob or "", b"")
        texts = split_lines(content.decode("utf-8", "replace"))
        numbers = [n for n in file.added if 1 <= n <= len(texts)]
        if not git_facts and _nobodys(file, views[file.path], teammates):
            # Every line of a committed file is committed: git explains each. Only its facts
            # (which commit, whose) are left unasked, for outputs that never show them.
            return [BlameLine(n, texts[n - 1], "git", line_hash(texts[n - 1]), {}) for n in numbers]
        rows, _ = explain_lines(
            workspace,
            file.path,
            content,
            numbers,
            texts=texts,
            rev=span.head,
            view=views[file.path],
            own_id=own_id,
            teammates=teammates,
            environ=environ,
        )
        return [_unverified_if_own(row, own_id) for row in rows] if not local_ok else rows

    # The files git is asked about go to the pool; the others cost less than a task there.
    quick = {f.path for f in counted if not git_facts and _nobodys(f, views[f.path], teammates)}
    slow = [f for f in counted if f.path not in quick]
    explained = {f.path: explain(f) for f in counted if f.path in quick}
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        explained.update(zip([f.path for f in slow], pool.map(explain, slow), strict=True))
    files: list[dict[str, Any]] = []
    rows_by_file: dict[str, list[BlameLine]] = {}
    for file, seen in zip(inside, shown, strict=True):
        rows = explained.get(file.path, [])
        rows_by_file[file.path] = rows
        files.append(
            {
                "path": seen.path,
                "old_path": seen.old_path,
                "change": file.change,
                "added": len(file.added),
                "removed": file.removed,
                "note": _note(file),
                "lines": _count([_tally(rows)]),
            }
        )
    return files, inside, rows_by_file, notes


def _views(
    workspace: Workspace, paths: list[str], environ: Mapping[str, str] | None
) -> dict[str, FileView]:
    """Each file's line model: its verified slice for a few files (as `ledger blame` reads
    it), the whole verified state once for many (one read instead of a slice per file)."""
    if len(paths) <= _FEW_FILES:
        return {path: file_view(workspace, path, environ) for path in paths}
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415

    state = blame_state(Ledger.open(workspace.root, environ=environ), environ=environ)
    return {path: state.view(path) for path in paths}


def _nobodys(file: ChangedFile, view: FileView, teammates: FetchedTeammates) -> bool:
    """A file the range adds (no rename or copy source) that no ledger describes: no local
    model, no refused write, no teammate's model under its path, and no fetched ledger that
    does not verify here (whose claims are not read unless needed)."""
    return (
        file.change == "added"
        and view.model is None
        and not view.denied
        and not any(file.path in views for views in teammates.views.values())
        and not teammates.failing()
    )


def _note(file: ChangedFile) -> str | None:
    if file.path.startswith(_ORCHESTRATION):
        return "ledger's own configuration: its changes are listed under governance"
    return {
        "binary": "binary file: no lines to review",
        "submodule": "submodule: its commit changed; review it in its own repository",
        "symlink": "symbolic link: no lines to review",
        "deleted": f"deleted ({file.removed} lines removed)",
        "renamed": None if file.added else "renamed, content unchanged",
        "copied": None if file.added else "copied, content unchanged",
    }.get(file.change)


def _unverified_if_own(row: BlameLine, own_id: str) -> BlameLine:
    """An agent line only this clone's ledger explains, when that ledger does not verify."""
    if row.status != "agent" or row.facts.get("ledger_id") != own_id:
        return row
    return unverified_line(
        row, row.facts, f"evidence not verified: ledger {own_id} fails `ledger verify` (run it)"
    )


def _tally(rows: Sequence[BlameLine]) -> dict[str, int]:
    counts = Counter(row.status for row in rows)
    tally = {s: counts.get(s, 0) for s in STATUSES}
    tally["unverified"] = sum(1 for row in rows if row.facts.get("unverified"))
    return tally


def _count(tallies: Any) -> dict[str, Any]:  # noqa: ANN401 -- an iterable of tallies
    """``{agent, git, unknown, unverified, total, shares}``: lines by status, and the
    percentage of each status (``unverified`` lines are among the ``unknown`` ones)."""
    sums = dict.fromkeys((*STATUSES, "unverified"), 0)
    for tally in tallies:
        for key in sums:
            sums[key] += int(tally.get(key, 0))
    total = sum(sums[s] for s in STATUSES)
    shares = {s: round(100 * sums[s] / total, 2) if total else 0.0 for s in STATUSES}
    return {**sums, "total": total, "shares": shares}


def _runs(
    rows: list[BlameLine], scope_of: dict[tuple[str, int, str], bool | None], path: str
) -> list[dict[str, Any]]:
    """Consecutive lines with one explanation, as one run each (SARIF's unit too)."""
    runs: list[dict[str, Any]] = []
    previous: tuple[Any, ...] | None = None
    for row in rows:
        facts = row.facts
        if row.status == "agent":
            key: tuple[Any, ...] = ("agent", facts.get("ledger_id"), facts.get("seq"))
            detail = {k: facts.get(k) for k in _AGENT_RUN_FIELDS}
            detail["in_scope"] = scope_of.get(
                (str(facts.get("ledger_id")), int(facts.get("seq") or -1), path)
            )
        elif row.status == "git":
            key = ("git", facts.get("commit"))
            detail = {"commit": facts.get("commit"), "author": facts.get("author")}
        else:
            key = ("unknown", facts.get("reason"), bool(facts.get("unverified")))
            detail = {"reason": facts.get("reason"), "unverified": bool(facts.get("unverified"))}
            if facts.get("unverified"):
                detail.update({k: facts.get(k) for k in _AGENT_RUN_FIELDS})
        if key == previous and runs[-1]["end"] == row.line - 1:
            runs[-1]["end"] = row.line
            runs[-1]["lines"] += 1
            continue
        previous = key
        runs.append(
            {"start": row.line, "end": row.line, "lines": 1, "status": row.status, **detail}
        )
    return runs


# --- the records behind the lines -------------------------------------------------------------


class _History:
    """What one ledger's records say about the review: the grants each intent held over time,
    and the governance records worth listing (parsed; the rest skipped)."""

    def __init__(self, ledger_id: str, verified: bool, seqs: set[int] | None = None) -> None:
        self.ledger_id = ledger_id
        self.verified = verified
        self.seqs = seqs or set()  # the records that wrote the range's agent lines
        # seq -> the SHA-256 of the intents file that record's decision used (None: not named)
        self.intents_at: dict[int, str | None] = {}
        self.records: list[dict[str, Any]] = []
        self.answered: set[str] = set()  # tool_use_ids a hook.post followed (an ask ran)
        # intent -> [(seq, globs in force from that seq on)]
        self.grants: dict[str, list[tuple[int, list[str]]]] = {}
        self.records_count = 0
        self.first_key: str | None = None

    def read(self, segment: Path) -> None:
        from ledger._evidence import lightjson  # noqa: PLC0415
        from ledger._evidence.read import parse_stored  # noqa: PLC0415
        from ledger._evidence.store import LedgerFile  # noqa: PLC0415

        lightjson.orjson()
        state = WorkspaceState()
        lines = 0
        for _, chunk in LedgerFile(segment).read_chunks(4 * 1024 * 1024):
            for line in chunk.splitlines():
                lines += 1
                if line.startswith(b"{") and self.first_key is None:
                    self.first_key = parse_stored(line).get("key")
                if _POST in line:
                    found = _TOOL_USE_ID.search(line)
                    if found:
                        self.answered.add(found.group(1).decode())
                    if self.seqs and _top_seq(line) in self.seqs:
                        self._intents_digest(parse_stored(line))
                    continue
                if not any(marker in line for marker in _MARKERS):
                    continue
                record = parse_stored(line)
                self.records.append(record)
                kind = record.get("kind")
                apply_record(state, record)
                if kind in ("intent.scope_expanded", "intent.scope_withdrawn"):
                    intent = str((record.get("body") or {}).get("intent_id"))
                    self.grants.setdefault(intent, []).append(
                        (int(record.get("seq", -1)), list(state.grants.get(intent, [])))
                    )
        self.records_count = lines

    def _intents_digest(self, record: dict[str, Any]) -> None:
        config = (record.get("body") or {}).get("config")
        digest = config.get("intents_sha256") if isinstance(config, dict) else None
        self.intents_at[int(record.get("seq", -1))] = digest if isinstance(digest, str) else None

    def grants_at(self, intent: str, seq: int) -> list[str]:
        """The approved expansions of ``intent`` in force when record ``seq`` was written."""
        held: list[str] = []
        for at, globs in self.grants.get(intent, []):
            if at >= seq:
                break
            held = globs
        return held


def _top_seq(line: bytes) -> int | None:
    """A canonical record line's own ``seq`` (its last ``"seq":``: the keys after it, ``sig``,
    ``ts`` and ``v``, hold no object)."""
    at = line.rfind(b'"seq":')
    if at < 0:
        return None
    digits = re.match(rb"\d+", line[at + 6 : at + 26])
    return int(digits.group()) if digits else None


def _histories(
    workspace: Workspace,
    ledger: Ledger,
    teammates: FetchedTeammates,
    wanted: dict[str, set[int]],
    environ: Mapping[str, str] | None,
) -> dict[str, _History]:
    """The records behind the agent lines, per ledger (``wanted``: ledger id -> the seqs of
    the records that wrote them)."""
    from ledger._evidence.remote import segment_of  # noqa: PLC0415

    out: dict[str, _History] = {}
    for ledger_id in sorted(wanted):
        history = _History(ledger_id, verified=True, seqs=wanted[ledger_id])
        if ledger_id == ledger.ledger_id:
            history.read(ledger.file.path)
        elif ledger_id in teammates.verified:
            with tempfile.TemporaryDirectory(prefix="ledger-review-") as name:
                segment = segment_of(
                    workspace.root, ledger_id, teammates.verified[ledger_id], Path(name), environ
                )
                if segment is None:
                    continue
                history.read(segment)
        out[ledger_id] = history
    return out


class _IntentsVersions:
    """The intents file each record's decision used, by its SHA-256 (``config.intents_sha256``
    in every hook record): this checkout's file when the digest is its own, else the version
    git's history holds (every ref: a teammate's fetched branches too). The ledger records
    only the digest, never the file. A digest found nowhere (a record that names none, an
    edit never committed) falls back, named, to this checkout's file."""

    _WHERE: Final = ".orchestration/active_intents.yaml"

    def __init__(self, repo: Repository, workspace: Workspace) -> None:
        from ledger._governance.intents import INTENTS_FILE  # noqa: PLC0415

        self.repo = repo
        path = workspace.orchestration / INTENTS_FILE
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        self.today_sha256 = None if data is None else hashlib.sha256(data).hexdigest()
        self.today = self._parse(data, "this checkout's .orchestration/active_intents.yaml")
        self.found: dict[str | None, tuple[IntentsFile | None, str | None]] = {}
        self._history: dict[str, tuple[bytes, str]] | None = None
        self.fallbacks: dict[str | None, set[tuple[str, int]]] = {}

    @staticmethod
    def _parse(data: bytes | None, name: str) -> IntentsFile | None:
        from ledger._governance.intents import parse_intents  # noqa: PLC0415

        if data is None:
            return None
        try:
            return parse_intents(data.decode("utf-8"), name)
        except (ConfigError, UnicodeDecodeError):
            return None  # an intents file no hook could have used as written

    def at(
        self, digest: str | None, record: tuple[str, int]
    ) -> tuple[IntentsFile | None, str | None]:
        """The intents file of ``digest`` (which ``record`` used) and where it was found;
        ``(this checkout's, None)`` when it was found nowhere (:meth:`notes` names it)."""
        if digest not in self.found:
            self.found[digest] = self._find(digest)
        intents, source = self.found[digest]
        if source is None:
            self.fallbacks.setdefault(digest, set()).add(record)
        return intents, source

    def _find(self, digest: str | None) -> tuple[IntentsFile | None, str | None]:
        if digest is not None and digest == self.today_sha256 and self.today is not None:
            return self.today, "this checkout's .orchestration/active_intents.yaml"
        if digest is not None:
            if self._history is None:
                self._history = self._git_versions()
            if digest in self._history:
                data, commit = self._history[digest]
                where = f"git {commit[:12]}:{self._WHERE}"
                intents = self._parse(data, where)
                if intents is not None:
                    return intents, where
        return self.today, None

    def _git_versions(self) -> dict[str, tuple[bytes, str]]:
        """SHA-256 -> (content, the newest commit holding it) of every version of the intents
        file in the history of every ref (one ``git log``, one ``cat-file --batch``)."""
        done = self.repo.run(
            "log",
            "--all",
            "--format=%H",
            "-m",  # a version a merge resolved holds too
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "--",
            self._WHERE,
        )
        if done.returncode != 0:
            return {}
        blobs: dict[str, str] = {}
        commit = ""
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            if re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", line):
                commit = line
            elif line.startswith(":"):
                blob = line.split()[3]
                if blob.strip("0") and blob not in blobs:
                    blobs[blob] = commit  # log runs newest first
        contents = self.repo.blobs(sorted(blobs))
        return {
            hashlib.sha256(data).hexdigest(): (data, blobs[blob]) for blob, data in contents.items()
        }

    def notes(self) -> list[str]:
        """One line per digest that was found nowhere, naming the fallback."""
        today = (self.today_sha256 or "none")[:12]
        return [
            (
                f"the intents file of {count} agent record(s) was {digest[:12]}, found neither "
                "in this checkout nor in git history: their scope is judged against this "
                f"checkout's intents file ({today})"
                if digest is not None
                else f"{count} agent record(s) name no intents file (recorded before ledger "
                f"recorded it): their scope is judged against this checkout's ({today})"
            )
            for digest, count in sorted(
                ((d, len(records)) for d, records in self.fallbacks.items()),
                key=lambda item: item[0] or "",
            )
        ]


def _intents(
    agent_rows: list[tuple[str, BlameLine]],
    histories: dict[str, _History],
    files: list[ChangedFile],
    versions: _IntentsVersions,
) -> tuple[list[dict[str, Any]], dict[tuple[str, int, str], bool | None]]:
    """Each intent of the agent lines, and whether each line's record lay inside the scope
    its session held then: the intent's ``owned_scope`` in the intents file that record's
    decision used, plus the expansions a person had approved by then (``None``: the intent
    is in neither that file nor this checkout's)."""
    from ledger._governance.analysis.paths import ScopeSpec  # noqa: PLC0415

    declared = versions.today
    old_paths = {f.path: f.old_path for f in files}
    specs: dict[tuple[str, ...], ScopeSpec] = {}
    scope_of: dict[tuple[str, int, str], bool | None] = {}
    per_intent: dict[str, dict[str, Any]] = {}
    scopes: dict[tuple[str, str | None], dict[str, Any]] = {}
    for path, row in agent_rows:
        facts = row.facts
        intent_id = facts.get("intent_id") or "(none)"
        ledger_id = str(facts.get("ledger_id"))
        seq = int(facts.get("seq") or -1)
        intent = declared.get(intent_id) if declared else None
        entry = per_intent.setdefault(
            intent_id,
            {
                "id": intent_id,
                "name": intent.name if intent else None,
                "status": intent.status if intent else None,
                "owned_scope": list(intent.owned_scope) if intent else [],
                "acceptance_criteria": list(intent.acceptance_criteria) if intent else [],
                "declared": intent is not None,
                "lines": 0,
                "in_scope": 0,
                "out_of_scope": 0,
                "expansions_used": [],
                "sessions": [],
                "scopes": [],
            },
        )
        entry["lines"] += 1
        session = facts.get("session_id")
        if session not in entry["sessions"]:
            entry["sessions"].append(session)
        history = histories.get(ledger_id)
        digest = history.intents_at.get(seq) if history else None
        key = (ledger_id, seq, path)
        if key not in scope_of:
            then, source = versions.at(digest, (ledger_id, seq))
            held = then.get(intent_id) if then else None
            if held is not None and not entry["declared"] and entry["name"] is None:
                # no longer in this checkout's file: named as the file of its time had it
                entry.update(
                    name=held.name,
                    status=held.status,
                    acceptance_criteria=list(held.acceptance_criteria),
                )
            scope_of[key] = _in_scope(
                held,
                ledger_id=ledger_id,
                seq=seq,
                path=path,
                old_path=old_paths.get(path),
                histories=histories,
                specs=specs,
                entry=entry,
            )
            if (intent_id, digest) not in scopes:
                scopes[intent_id, digest] = {
                    "intents_sha256": digest,
                    "source": source,
                    "owned_scope": list(held.owned_scope) if held else None,
                    "lines": 0,
                }
                entry["scopes"].append(scopes[intent_id, digest])
        scopes[intent_id, digest]["lines"] += 1
        verdict = scope_of[key]
        if verdict is True:
            entry["in_scope"] += 1
        elif verdict is False:
            entry["out_of_scope"] += 1
    return [per_intent[k] for k in sorted(per_intent)], scope_of


def _in_scope(
    intent: Intent | None,
    *,
    ledger_id: str,
    seq: int,
    path: str,
    old_path: str | None,
    histories: dict[str, _History],
    specs: dict[tuple[str, ...], Any],
    entry: dict[str, Any],
) -> bool | None:
    from ledger._governance.analysis.paths import ScopeSpec  # noqa: PLC0415

    if intent is None:
        return None
    history = histories.get(ledger_id)
    grants = history.grants_at(intent.id, seq) if history else []
    paths = [p for p in (path, old_path) if p]

    def matches(globs: tuple[str, ...]) -> bool:
        if not globs:
            return False
        if globs not in specs:
            specs[globs] = ScopeSpec.compile(globs)
        return any(specs[globs].matches(p) for p in paths)

    if matches(tuple(intent.owned_scope)):
        return True
    if matches(tuple(grants)):
        for glob in grants:
            if matches((glob,)) and glob not in [e["glob"] for e in entry["expansions_used"]]:
                entry["expansions_used"].append(
                    {"glob": glob, **_expansion_of(history, intent.id, glob)}
                )
        return True
    return False


def _expansion_of(history: _History | None, intent_id: str, glob: str) -> dict[str, Any]:
    """Who approved ``glob`` for ``intent_id``, when, in which record."""
    for record in reversed(history.records if history else []):
        body = record.get("body") or {}
        if (
            record.get("kind") == "intent.scope_expanded"
            and body.get("intent_id") == intent_id
            and glob in body.get("globs", [])
        ):
            return {
                "approved_by": _approver(body),
                "ts": record.get("ts"),
                "seq": record.get("seq"),
                "record_hash": record.get("hash"),
                "ledger_id": history.ledger_id if history else None,
            }
    return {}


def _approver(body: dict[str, Any]) -> str:
    via = body.get("approved_via")
    if body.get("approval") in ("person", "tty"):
        who = body.get("person") or body.get("user")
        return f"a person ({who})" if who else "a person (`ledger intent expand`)"
    return f"a person, through {via}" if via else "a person, through the client's ask"


def _governance(
    agent_rows: list[tuple[str, BlameLine]], histories: dict[str, _History]
) -> list[dict[str, Any]]:
    """From the sessions that wrote the range's agent lines: denials, asks and their answers,
    scope expansions and withdrawals; and, over the span of those sessions' records, tamper
    events and their resolution, configuration changes and hook errors."""
    sessions: dict[str, set[str]] = {}
    seqs: dict[str, list[int]] = {}
    for _, row in agent_rows:
        ledger_id = str(row.facts.get("ledger_id"))
        sessions.setdefault(ledger_id, set()).add(str(row.facts.get("session_id")))
        seqs.setdefault(ledger_id, []).append(int(row.facts.get("seq") or -1))
    items: list[dict[str, Any]] = []
    for ledger_id, history in sorted(histories.items()):
        own = sessions.get(ledger_id, set())
        mine = [r for r in history.records if _session(r) in own]
        span = [int(r.get("seq", -1)) for r in mine] + seqs.get(ledger_id, [])
        first, last = (min(span), max(span)) if span else (0, -1)
        rejected = {
            str((r.get("body") or {}).get("tool_use_id"))
            for r in history.records
            if ((r.get("body") or {}).get("error") or {}).get("code") == "HITL_REJECT"
        }
        for record in history.records:
            item = _item(
                record, sessions=own, first=first, last=last, history=history, rejected=rejected
            )
            if item is not None:
                items.append(item)
    items.sort(key=lambda i: (i["ts"] or "", i["ledger_id"], i["seq"]))
    return items


def _session(record: dict[str, Any]) -> str:
    body = record.get("body") or {}
    return str(body.get("session", (record.get("actor") or {}).get("session")))


def _item(
    record: dict[str, Any],
    *,
    sessions: set[str],
    first: int,
    last: int,
    history: _History,
    rejected: set[str],
) -> dict[str, Any] | None:
    kind = str(record.get("kind"))
    body = record.get("body") or {}
    seq = int(record.get("seq", -1))
    error = body.get("error") or {}
    base = {
        "seq": seq,
        "record_hash": record.get("hash"),
        "ledger_id": history.ledger_id,
        "ts": record.get("ts"),
        "session_id": _session(record) if _session(record) != "None" else None,
    }
    mine = _session(record) in sessions
    if kind == "hook.pre" and mine and body.get("decision") in ("deny", "ask"):
        tool_use_id = str(body.get("tool_use_id"))
        item = {
            **base,
            "type": "denial" if body["decision"] == "deny" else "ask",
            "code": error.get("code"),
            "tool": body.get("tool"),
            "intent_id": (body.get("data") or {}).get("intent_id"),
            "detail": str(error.get("message") or body.get("reason") or "")[:300],
        }
        if body["decision"] == "ask":
            item["answer"] = (
                "rejected by a person"
                if tool_use_id in rejected
                else "approved, ran"
                if tool_use_id in history.answered
                else "no answer recorded"
            )
        return item
    if kind in ("intent.scope_expanded", "intent.scope_withdrawn") and (
        mine or first <= seq <= last
    ):
        expanded = kind == "intent.scope_expanded"
        return {
            **base,
            "type": "scope_expansion" if expanded else "scope_withdrawal",
            "intent_id": body.get("intent_id"),
            "detail": ", ".join(str(g) for g in body.get("globs", [])),
            "approved_by": _approver(body) if expanded else None,
        }
    if not first <= seq <= last:
        return None
    if kind.startswith("governance.tamper"):
        return {
            **base,
            "type": kind.removeprefix("governance."),
            "detail": "; ".join(str(p) for p in body.get("problems", []))[:300]
            or str(body.get("reason") or "")[:300],
        }
    if kind == "governance.config_changed":
        return {
            **base,
            "type": "config_changed",
            "detail": ", ".join(str(c) for c in body.get("changed", [])) or "configuration",
        }
    if kind == "hook.error":
        return {
            **base,
            "type": "hook_error",
            "code": error.get("code") or body.get("code"),
            "detail": str(error.get("message") or body.get("message") or "")[:300],
        }
    return None


# --- evidence ---------------------------------------------------------------------------------


def _evidence(
    repo: Repository,
    workspace: Workspace,
    ledger: Ledger,
    local: VerifyReport,
    *,
    teammates: FetchedTeammates,
    histories: dict[str, _History],
    agent_rows: list[tuple[str, BlameLine]],
    unverified: Counter[str],
) -> list[dict[str, Any]]:
    """Each ledger: verified or not, whose key, pinned or not, the newest checkpoint, and (this
    clone's) how much of it is pushed."""
    lines = Counter(str(r.facts.get("ledger_id")) for _, r in agent_rows)
    keys_dir = workspace.orchestration / "keys"
    own_key = local.keys_used[-1] if local.keys_used else None
    pushed = repo.out("rev-parse", "--verify", "--quiet", f"refs/ledger/{ledger.ledger_id}")
    pushed_records = _segment_lines(repo, pushed) if pushed else 0
    checkpoints = [c for c in local.checkpoints if c.ok]
    newest = max(checkpoints, key=lambda c: c.size, default=None)
    entries = [
        {
            "ledger_id": ledger.ledger_id,
            "whose": "this clone",
            "verified": bool(local.ok),
            "summary": local.summary(),
            "key": own_key,
            "pinned": bool(own_key and (keys_dir / f"{own_key}.json").exists()),
            "records": local.records,
            "newest_checkpoint": None
            if newest is None
            else {"size": newest.size, "name": newest.name},
            "pushed": None if not pushed else {"commit": pushed, "records": pushed_records},
            "remote": None,
            "lines": lines.get(ledger.ledger_id, 0),
            "unverified_lines": unverified.get(ledger.ledger_id, 0),
            "fix": None
            if local.ok
            else "run `ledger verify` (then `ledger repair` for a torn tail)",
        }
    ]
    for ledger_id, remote, commit in sorted(teammates.refs):
        if any(e["ledger_id"] == ledger_id for e in entries):
            continue
        verified = ledger_id in teammates.verified
        history = histories.get(ledger_id)
        key = history.first_key if history else None
        note = _checkpoint_of(repo, commit)
        entries.append(
            {
                "ledger_id": ledger_id,
                "whose": f"a teammate's, fetched from {remote}",
                "verified": verified,
                "summary": "verified against the pinned keys"
                if verified
                else "does not verify here",
                "key": key,
                "pinned": verified,
                "records": history.records_count if history else None,
                "newest_checkpoint": note,
                "pushed": None,
                "remote": remote,
                "lines": lines.get(ledger_id, 0),
                "unverified_lines": unverified.get(ledger_id, 0),
                "fix": None if verified else unverified_fix(ledger_id, remote),
            }
        )
    return entries


def _segment_lines(repo: Repository, commit: str) -> int | None:
    done = repo.run("cat-file", "blob", f"{commit}:agent_trace.jsonl")
    return done.stdout.count(b"\n") if done.returncode == 0 else None


def _checkpoint_of(repo: Repository, commit: str) -> dict[str, Any] | None:
    from ledger._evidence.checkpoint import parse_checkpoint  # noqa: PLC0415

    done = repo.run("cat-file", "blob", f"{commit}:checkpoint.note")
    if done.returncode != 0:
        return None
    try:
        note = parse_checkpoint(done.stdout.decode("utf-8"), "checkpoint.note")
    except (LedgerError, UnicodeDecodeError):  # an unreadable note: no checkpoint to name
        return None
    return {"size": note.size, "name": f"{commit[:12]}:checkpoint.note"}


# --- history ------------------------------------------------------------------------------------


def _authors(
    workspace: Workspace,
    span: GitRange,
    rows_by_file: dict[str, list[BlameLine]],
    environ: Mapping[str, str] | None,
) -> None:
    """The commit author of the agent lines blame did not ask git about (this clone's own),
    for ``--by author`` (in place)."""
    for path, rows in rows_by_file.items():
        lacking = [row.line for row in rows if row.status == "agent" and "author" not in row.facts]
        if lacking:
            found = git_authors(workspace.root, path, lacking, rev=span.head, environ=environ)
            for row in rows:
                if row.line in found and "author" not in row.facts:
                    row.facts["author"] = found[row.line]


def _history(by: Grouping, rows_by_file: dict[str, list[BlameLine]]) -> list[dict[str, Any]]:
    """The lines' shares grouped ``by`` (a week: of the record for an agent line, of the commit
    for a git line)."""
    groups: dict[str, Counter[str]] = {}
    for rows in rows_by_file.values():
        for row in rows:
            key = _group_key(by, row)
            groups.setdefault(key, Counter())[row.status] += 1
    out = []
    for key in sorted(groups):
        counts = groups[key]
        out.append({"key": key, **_count([{s: counts.get(s, 0) for s in STATUSES}])})
    return out


def _group_key(by: Grouping, row: BlameLine) -> str:
    facts = row.facts
    agent = row.status == "agent"
    if by == "week":
        if agent and isinstance(facts.get("ts"), str):
            when = datetime.fromisoformat(str(facts["ts"]).replace("Z", "+00:00"))
        elif isinstance(facts.get("author_time"), int):
            when = datetime.fromtimestamp(int(facts["author_time"]), tz=UTC)
        else:
            return "(unknown)"
        year, week, _ = when.isocalendar()
        return f"{year}-W{week:02d}"
    if by == "author":
        return str(
            facts.get("author") or ("(not committed)" if not agent else "(agent, uncommitted)")
        )
    field = {"intent": "intent_id", "model": "model", "client": "client"}[by]
    return str(facts.get(field) or "(none)") if agent else f"({row.status})"
