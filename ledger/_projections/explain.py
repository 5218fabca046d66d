"""``ledger blame``: the line model reconciled with the file on disk and with git.

Each line of the working-tree file gets one status (decision 0008):

* ``agent``: a governed tool call wrote it; the record, session, intent and model are known;
* ``git``: no record explains it, but git does: the line is unchanged since a commit (``git
  blame --contents`` of the file as it is on disk). This says nothing about *who*: a commit may
  hold anything, including an ungoverned agent's work;
* ``unknown``: neither explains it; ``reason`` says why.

**A gap is acceptable, a misattribution is not.** A line is ``agent`` only when the model says
so *and* the disk line is that very line: on the fast path the file's SHA-256 equals the
model's; otherwise the disk is diffed against the model's line hashes and only lines the diff
keeps unchanged keep their attribution.

Speed (decision 0008: a warm single-line blame within ``git blame -L N,N``): the file's model comes
from its verified cache slice (:mod:`ledger._projections.slices`), not the whole line model; a
file whose SHA-256 is the model's needs no diff and hashes only the lines asked for; and what
only the slow paths need (the ledger's keys, the full cache, pygit2, subprocess) is imported
there.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ledger._errors import InputError, NotInitializedError
from ledger._evidence.disclosure import Revealer
from ledger._governance.attribution import line_hash, split_lines
from ledger._projections.blame import BASE, BLAME, BlameState, FileView
from ledger._projections.slices import read_slice
from ledger._startup.namedtuple import NamedTuple
from ledger._workspace import Workspace, find_root

if TYPE_CHECKING:
    from ledger._evidence.ledger import Ledger
    from ledger._projections.foreign import FetchedTeammates, ForeignModel

__all__ = [
    "STATUSES",
    "BlameLine",
    "BlameReport",
    "ask_teammates",
    "blame_file",
    "blame_state",
    "current_lines",
    "explain_lines",
    "file_view",
    "git_authors",
    "unverified_line",
]

STATUSES: Final = ("agent", "git", "unknown")
_NOT_COMMITTED: Final = "0" * 40
_GIT_FACTS: Final = ("commit", "author", "author_time", "orig_line", "orig_file")
AGENT_FIELDS: Final = (
    "seq",
    "record_hash",
    "invocation_id",
    "tool_use_id",
    "tool",
    "intent_id",
    "session_id",
    "client",
    "model",
    "ts",
)


class BlameLine(NamedTuple):
    """One line of the file and what explains it."""

    line: int
    text: str
    status: str
    content_hash: str
    facts: dict[str, Any]
    """agent: the ``AGENT_FIELDS``; git: commit, author, author_time, orig_line; unknown:
    reason. Plus ``denied`` when agents tried to write this line and were refused."""


class BlameReport(NamedTuple):
    """``ledger blame`` of one file."""

    file: str
    lines: list[BlameLine]
    fast_path: bool
    at: int | None
    ledger_id: str | None = None
    """This clone's ledger: an agent line whose ``ledger_id`` differs is a teammate's."""

    def summary(self) -> dict[str, Any]:
        """Counts and percentages per status, and of the ``unknown`` lines ``unverified``."""
        counts = Counter(line.status for line in self.lines)
        counts["unverified"] = sum(1 for line in self.lines if line.facts.get("unverified"))
        total = len(self.lines)
        return {
            "total": total,
            **{
                s: {
                    "lines": counts.get(s, 0),
                    "percent": round(100 * counts.get(s, 0) / total, 2) if total else 0.0,
                }
                for s in (*STATUSES, "unverified")
            },
        }

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (schemas/blame.v1.schema.json)."""
        return {
            "file": self.file,
            "at": self.at,
            "summary": self.summary(),
            "lines": [
                {"line": x.line, "status": x.status, "content_hash": x.content_hash, **x.facts}
                for x in self.lines
            ],
        }


def blame_state(
    ledger: Ledger, *, at: int | None = None, environ: Mapping[str, str] | None = None
) -> BlameState:
    """The line model over the whole ledger (through the verified cache), or as of ``at``."""
    from ledger._evidence.read import read_records  # noqa: PLC0415 -- the slow path's
    from ledger._projections.cache import ProjectionCache  # noqa: PLC0415

    if at is None:
        env = ledger.environ if environ is None else environ
        cache = ProjectionCache(
            ledger.file.path, ledger.workspace.cache_dir, ledger.ledger_id, environ=env
        )
        return cache.state(BLAME)
    state = BLAME.initial()
    for stored in read_records(ledger.file.path):
        if int(stored.data.get("seq", -1)) > at:
            break
        BLAME.apply(state, stored.data)
    return state


def _resolve(root: Path, path: str, cwd: Path) -> tuple[str, Path]:
    real_root = Path(os.path.realpath(root))
    absolute = Path(os.path.realpath(cwd / path))  # an absolute path stays itself
    try:
        relative = absolute.relative_to(real_root).as_posix()
    except ValueError:
        raise InputError(f"{path} is outside the workspace {real_root}") from None
    if relative == "." or relative.split("/")[0] == ".orchestration":
        raise InputError(f"{path} is not a file of the workspace")
    return relative, absolute


def _git_blame(
    root: Path,
    relative: str,
    content: bytes,
    wanted: list[tuple[int, int]],
    environ: Mapping[str, str] | None,
    *,
    rev: str | None = None,
) -> tuple[dict[int, dict[str, Any]], str | None]:
    """git's answer for the line runs ``wanted`` of the file as on disk (or, with ``rev``, as
    committed in ``rev``, which ``content`` then is): final line -> commit facts (uncommitted
    lines are left out), or ``(empty, why git cannot say)``."""
    import subprocess  # noqa: PLC0415 -- only lines no record explains need git

    from ledger._git import git_command, git_environment, run_bounded  # noqa: PLC0415

    env = git_environment(environ)  # the caller's (a decider blames for another process)
    runs = [arg for first, last in wanted for arg in ("-L", f"{first},{last}")]
    source = ["--contents", "-"] if rev is None else [rev]
    command = git_command(
        root,
        "blame",
        "--no-textconv",
        "--line-porcelain",
        *runs,
        *source,
        "--",
        relative,
        env=env,
    )
    try:
        done = run_bounded(command, data=content if rev is None else None, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}, "git is not available"
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace")
        if "not a git repository" in error:
            return {}, "not in a git repository"
        if "no such path" in error or "no such ref" in error or "bad revision" in error:
            return {}, "not committed to git"
        return {}, "git blame failed: " + (error.strip().splitlines() or ["?"])[-1]
    found: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    for raw in done.stdout.split(b"\n"):
        if raw.startswith(b"\t"):
            if current.get("commit") != _NOT_COMMITTED:
                found[current["final"]] = current
            current = {}
            continue
        text = raw.decode("utf-8", "replace")
        key, _, value = text.partition(" ")
        if len(key) == 40 and not current:
            parts = value.split()
            current = {"commit": key, "orig_line": int(parts[0]), "final": int(parts[1])}
        elif key == "author":
            current["author"] = value
        elif key == "author-mail":
            current["author_mail"] = value
        elif key == "author-time":
            current["author_time"] = int(value)
        elif key == "filename":
            current["orig_file"] = value
    return found, None


def _is_model(model: dict[str, Any], content: bytes, count: int, wanted: dict[int, str]) -> bool:
    """The fast path: the file on disk has the SHA-256 and line count the model expects, and
    the lines asked for have the model's hashes (checked, not assumed: they are reported)."""
    hashes: list[str | None] = model["hashes"]
    return (
        model.get("sha") is not None
        and len(hashes) == count
        and all(hashes[i] in (None, h) for i, h in wanted.items())
        and hashlib.sha256(content).hexdigest() == model["sha"]
    )


def _match(model: dict[str, Any], disk_hashes: list[str]) -> tuple[list[int | None], bool]:
    """Disk line index -> model line index (or ``None``): identity when the file is what the
    model expects, else the lines a diff of hashes keeps unchanged."""
    from ledger._governance.attribution import diff_hunks  # noqa: PLC0415 -- the slow path's

    hashes: list[str | None] = model["hashes"]
    if len(hashes) == len(disk_hashes) and all(
        h is None or h == d for h, d in zip(hashes, disk_hashes, strict=True)
    ):
        return list(range(len(disk_hashes))), True
    # A line the model has no hash for can never match (a unique token).
    tokens = [h if h is not None else f"?{i}" for i, h in enumerate(hashes)]
    mapping: list[int | None] = []
    old_at = new_at = 0
    for hunk in [*diff_hunks(tokens, disk_hashes), None]:
        new_end = (hunk.new_start - (1 if hunk.new_lines else 0)) if hunk else len(disk_hashes)
        while new_at < new_end:
            mapping.append(old_at)
            old_at, new_at = old_at + 1, new_at + 1
        if hunk is not None:
            mapping.extend([None] * hunk.new_lines)
            new_at += hunk.new_lines
            old_at += hunk.old_lines
    return mapping, False


def blame_file(
    path: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lines: tuple[int, int] | None = None,
    at: int | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> BlameReport:
    """Blame ``path`` (relative to ``cwd``, or absolute) line by line.

    Args:
        lines: 1-based inclusive range to report (default: the whole file).
        at: report the model as of record ``at`` (no disk, no git: what the records said then).
        cwd: the directory a relative ``path`` or ``root`` is relative to, and where the
            workspace is searched from (default: this process's; the resident decider blames
            for a caller in another directory).

    Raises:
        InputError: the path is outside the workspace, a directory, or missing; the range is
            outside the file.
        LedgerError: the workspace or ledger cannot be opened.
    """
    here = Path(cwd).absolute() if cwd is not None else Path.cwd()
    workspace = Workspace(find_root(root, start=here, environ=environ))
    own = workspace.ledger_path.exists()  # a clone that only reads teammates' evidence has none
    if not own and at is not None:
        raise NotInitializedError(f"no ledger in {workspace.orchestration}; run `ledger init`")
    root_path = workspace.root
    relative, absolute = _resolve(root_path, path, here)
    if at is not None:
        state = blame_state(_open(root_path, environ), at=at, environ=environ)
        return _report_at(relative, state.view(relative), lines, at, workspace.ledger_path)
    content = _read(absolute, path)
    texts = split_lines(content.decode("utf-8", "replace"))
    first, last = _range(lines, len(texts), path)
    own_id = _own_ledger_id(workspace.ledger_path)
    rows, fast = explain_lines(
        workspace,
        relative,
        content,
        range(first, last + 1),
        texts=texts,
        own_id=own_id,
        environ=environ,
    )
    return BlameReport(relative, rows, fast, None, own_id)


def explain_lines(
    workspace: Workspace,
    relative: str,
    content: bytes,
    numbers: Sequence[int],
    *,
    texts: list[str] | None = None,
    rev: str | None = None,
    view: FileView | None = None,
    own_id: str | None = None,
    teammates: FetchedTeammates | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[BlameLine], bool]:
    """The blame of lines ``numbers`` (1-based, ascending, within the file) of ``content``, the
    file ``relative`` as on disk, or as committed in ``rev``: the one attribution rule of
    ``ledger blame``, for callers that explain many files (``ledger review``) and bring the
    file's model (``view``), this clone's ledger id and the teammates' models themselves.
    Returns the rows and whether the file is exactly what the model expects (fast path)."""
    if texts is None:
        texts = split_lines(content.decode("utf-8", "replace"))
    if view is None:
        # A clone that only reads teammates' evidence has no ledger of its own: no model.
        exists = workspace.ledger_path.exists()
        view = file_view(workspace, relative, environ) if exists else FileView(None, [], [], -1)
    if own_id is None:
        own_id = _own_ledger_id(workspace.ledger_path)
    model = view.model
    wanted = {n - 1: line_hash(texts[n - 1]) for n in numbers}
    if model is not None and _is_model(model, content, len(texts), wanted):
        mapping: list[int | None] | range = range(len(texts))
        fast = True
    elif model is not None:
        mapping, fast = _match(model, [line_hash(t) for t in texts])
    else:
        mapping, fast = [None] * len(texts), False
    rows: list[BlameLine] = []
    needs_git: list[int] = []
    denied = _denied_index(view.denied)
    for number in numbers:
        index = number - 1
        model_index = mapping[index]
        ref = model["refs"][model_index] if model is not None and model_index is not None else BASE
        facts: dict[str, Any] = {}
        attribution = view.ref(ref) if ref != BASE else None
        if attribution is not None and attribution["status"] == "agent":
            facts, status = _agent_facts(attribution, own_id), "agent"
        else:
            status = "unknown"
            facts["reason"] = _why(model, model_index, attribution, view.seq)
            needs_git.append(number)
        if wanted[index] in denied:
            facts["denied"] = denied[wanted[index]]
        rows.append(BlameLine(number, texts[index], status, wanted[index], facts))
    if needs_git:
        # `ledger blame` asks git once over the span; a review asks only for its runs.
        runs = _runs(needs_git) if rev is not None else [(min(needs_git), max(needs_git))]
        _ask_git(workspace.root, relative, content, rows, runs=runs, rev=rev, environ=environ)
        ask_teammates(
            workspace, relative, texts, rows, own_id=own_id, teammates=teammates, environ=environ
        )
    _reveal_commands(rows, Revealer.beside(workspace.ledger_path))
    return rows, fast


def git_authors(
    root: Path,
    relative: str,
    numbers: list[int],
    *,
    rev: str,
    environ: Mapping[str, str] | None = None,
) -> dict[int, str]:
    """The author of the commit git names for each of the lines ``numbers`` of ``relative`` as
    committed in ``rev`` (lines git cannot explain are left out)."""
    found, _ = _git_blame(root, relative, b"", _runs(numbers), environ, rev=rev)
    return {line: str(facts.get("author")) for line, facts in found.items()}


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Ascending line numbers as inclusive runs: ``[1, 2, 3, 7]`` -> ``[(1, 3), (7, 7)]``."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _reveal_commands(rows: list[BlameLine], revealer: Revealer) -> None:
    """A shell call's command as this clone's disclosures show it (a v3 record commits it:
    ``[withheld]`` for a teammate's line or a forgotten one)."""
    for row in rows:
        command = row.facts.get("command")
        if isinstance(command, dict):
            seq = row.facts.get("seq")
            row.facts["command"] = revealer.field(
                command, "attribution.command", seq if isinstance(seq, int) else None
            )


def _read(absolute: Path, path: str) -> bytes:
    """The file's bytes, or the one-line reason there are none (a usage error)."""
    if absolute.is_dir():
        raise InputError(f"{path} is a directory; blame a file")
    try:
        return absolute.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path} does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def _own_ledger_id(path: Path) -> str | None:
    """This clone's ledger id, from its genesis record (one line read)."""
    import json  # noqa: PLC0415

    try:
        with path.open("rb") as handle:
            genesis = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    ledger_id = genesis.get("ledger") if isinstance(genesis, dict) else None
    return ledger_id if isinstance(ledger_id, str) else None


def ask_teammates(
    workspace: Workspace,
    relative: str,
    texts: list[str],
    rows: list[BlameLine],
    *,
    own_id: str | None,
    teammates: FetchedTeammates | None = None,
    environ: Mapping[str, str] | None,
) -> None:
    """Blame in any clone (decision 0018): a committed line no local record explains is a
    teammate's agent's when a verified fetched ledger's model of the file (under this path, or
    the path git says the line was committed under) keeps it unchanged in a diff against the
    file on disk, exactly as local blame aligns the disk with its own model. Content is the key,
    never a commit id, so this survives rebase, squash merge, cherry-pick, amend and
    force-push. Two ledgers claiming one line is a gap, never a guess (in place).

    A committed line that a fetched ledger which does *not* verify here claims, by the same
    rule, is never agent and not silently git either: it is ``unknown`` and ``unverified``,
    naming the claim and the command that fetches that ledger again (:func:`unverified_line`),
    since the evidence offered for it is broken, which a reader must see."""
    committed = [row for row in rows if row.status == "git"]
    if not committed:
        return
    if teammates is None:
        from ledger._projections.foreign import FetchedTeammates  # noqa: PLC0415 -- teammates only

        teammates = FetchedTeammates(workspace.root, workspace.cache_dir, own_id, environ)
    paths = [relative]
    for row in committed:
        origin = row.facts.get("orig_file")
        if isinstance(origin, str) and origin not in paths:
            paths.append(origin)
    disk: list[str] = []  # the lines' hashes, once a ledger has a model to align them with
    position = {row.line: i for i, row in enumerate(rows)}
    for line, facts in _claims(teammates(paths), committed, texts, disk).items():
        row = rows[position[line]]
        rows[position[line]] = row._replace(status="agent", facts={**facts, **_git_kept(row)})
    failing = teammates.failing()
    if not failing:
        return
    from ledger._projections.foreign import unverified_fix  # noqa: PLC0415 -- a broken ref only

    remotes = {ledger_id: remote for ledger_id, remote, _ in failing}
    still = [row for row in rows if row.status == "git"]
    for line, facts in _claims(teammates.unverified(paths), still, texts, disk).items():
        ledger_id = str(facts["ledger_id"])
        reason = (
            f"evidence not verified: the ledger {ledger_id} fetched from {remotes[ledger_id]} "
            f"does not verify here; fix: {unverified_fix(ledger_id, remotes[ledger_id])}"
        )
        rows[position[line]] = unverified_line(rows[position[line]], facts, reason)


def _claims(
    models: list[ForeignModel], committed: list[BlameLine], texts: list[str], disk: list[str]
) -> dict[int, dict[str, Any]]:
    """Line -> the agent facts of the one teammate's record that wrote it, among the rows
    ``committed`` (a line two ledgers, or two calls, claim is left out: a gap, never a guess).
    ``disk``: the lines' hashes, filled in from ``texts`` at the first model."""
    claims: dict[int, dict[tuple[str, Any], dict[str, Any]]] = {}
    if committed and not disk and any(m.views for m in models):
        disk.extend(line_hash(text) for text in texts)
    for foreign in models:
        for file in foreign.views.values():
            # Newest version first; the newest version that holds this very line (the diff
            # keeps it unchanged) decides whether it is an agent's: an older one is asked only
            # about lines every newer one changed.
            open_rows = list(committed)
            for model in file.models():
                if not open_rows:
                    break
                mapping, _ = _match(model, disk)
                still = []
                for row in open_rows:
                    index = mapping[row.line - 1]
                    if index is None or model["hashes"][index] != disk[row.line - 1]:
                        # Changed, or a line whose text the records do not name (an old
                        # record without line hashes): never a teammate's by position alone.
                        still.append(row)
                        continue
                    attribution = file.view.ref(model["refs"][index])
                    if attribution is not None and attribution["status"] == "agent":
                        key = (foreign.ledger_id, attribution["record_hash"])
                        claims.setdefault(row.line, {})[key] = _agent_facts(
                            attribution, foreign.ledger_id
                        )
                open_rows = still
    return {line: next(iter(found.values())) for line, found in claims.items() if len(found) == 1}


def _git_kept(row: BlameLine) -> dict[str, Any]:
    """What a committed line keeps of git's answer (and of refused writes) when a ledger's
    claim is added to it."""
    return {k: row.facts[k] for k in (*_GIT_FACTS, "denied") if k in row.facts}


def unverified_line(row: BlameLine, claim: dict[str, Any], reason: str) -> BlameLine:
    """``row`` as an ``unknown``, ``unverified`` line: ``claim`` (the agent facts a ledger that
    does not verify would give it) is named, never trusted; ``reason`` says what to run."""
    facts = {
        **{k: claim.get(k) for k in ("ledger_id", *AGENT_FIELDS)},
        **_git_kept(row),
        "reason": reason,
        "unverified": True,
    }
    return row._replace(status="unknown", facts=facts)


def _agent_facts(attribution: dict[str, Any], ledger_id: str | None) -> dict[str, Any]:
    """An agent line's facts (``ledger_id``: whose ledger; ``None`` under ``--at``, where it
    is this clone's); a shell call's lines name its command too."""
    facts = {k: attribution.get(k) for k in AGENT_FIELDS}
    if ledger_id is not None:
        facts["ledger_id"] = ledger_id
    if attribution.get("command") is not None:
        facts["command"] = attribution["command"]
    return facts


def _open(root: Path, environ: Mapping[str, str] | None) -> Ledger:
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415 -- the slow path's

    return Ledger.open(root, environ=environ)


def file_view(
    workspace: Workspace, relative: str, environ: Mapping[str, str] | None = None
) -> FileView:
    """The file's model as of the whole ledger: its cache slice when that is current and
    verified, else through the full cache (which brings the slices up to date)."""
    found = read_slice(
        workspace.ledger_path,
        workspace.cache_dir,
        name=BLAME.name,
        version=BLAME.version,
        key=relative,
        environ=environ,
        unchanged_by=BLAME.leaves_slice_unchanged,
    )
    if found is not None:
        return FileView.from_slice(found.slice, found.seq)
    return blame_state(_open(workspace.root, environ), environ=environ).view(relative)


def _ask_git(
    root: Path,
    relative: str,
    content: bytes,
    rows: list[BlameLine],
    *,
    runs: list[tuple[int, int]],
    rev: str | None,
    environ: Mapping[str, str] | None,
) -> None:
    """Turn the ``unknown`` rows that git explains into ``git`` rows (in place)."""
    found, why = _git_blame(root, relative, content, runs, environ, rev=rev)
    for position, row in enumerate(list(rows)):
        if row.status != "unknown":
            continue
        commit = found.get(row.line)
        if commit is not None:
            row.facts.pop("reason", None)
            row.facts.update(
                commit=commit["commit"],
                author=commit.get("author"),
                author_time=commit.get("author_time"),
                orig_line=commit["orig_line"],
                orig_file=commit.get("orig_file"),
            )
            rows[position] = row._replace(status="git")
        else:
            row.facts["reason"] += f"; {why or 'not committed to git'}"


def _range(lines: tuple[int, int] | None, count: int, path: str) -> tuple[int, int]:
    if lines is None:
        return 1, count
    first, last = lines
    if last < first:
        raise InputError(f"{first}-{last} is a reversed range: blame {path}:{last}-{first}")
    if first < 1 or last > count:
        raise InputError(f"{path} has {count} lines; {first}-{last} is outside it")
    return first, last


def _why(
    model: dict[str, Any] | None,
    model_index: int | None,
    attribution: dict[str, Any] | None,
    seq: int,
) -> str:
    if model is None:
        return "no recorded tool call wrote this file"
    if attribution is not None and attribution.get("reason"):
        return str(attribution["reason"])
    if model_index is None:
        return f"changed on disk after the ledger's records (up to seq {seq}) describe it"
    return "no recorded tool call wrote this line (it predates the ledger's records of the file)"


def _denied_index(attempts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    index: dict[str, list[dict[str, Any]]] = {}
    for attempt in attempts:
        summary = {
            k: attempt.get(k)
            for k in ("seq", "record_hash", "session_id", "intent_id", "tool", "code")
        }
        for digest in attempt.get("lines", []):
            entries = index.setdefault(digest, [])
            if summary not in entries:
                entries.append(summary)
    return index


def _report_at(
    relative: str, view: FileView, lines: tuple[int, int] | None, at: int, ledger_path: Path
) -> BlameReport:
    model = view.model
    if model is None:
        raise InputError(f"the ledger had no line model of {relative} at seq {at}")
    first, last = _range(lines, len(model["hashes"]), relative)
    rows = []
    for number in range(first, last + 1):
        ref = model["refs"][number - 1]
        attribution = view.ref(ref)
        digest = model["hashes"][number - 1] or ""
        if attribution is not None and attribution["status"] == "agent":
            rows.append(BlameLine(number, "", "agent", digest, _agent_facts(attribution, None)))
        else:
            rows.append(
                BlameLine(
                    number,
                    "",
                    "unknown",
                    digest,
                    {"reason": _why(model, number - 1, attribution, at)},
                )
            )
    _reveal_commands(rows, Revealer.beside(ledger_path))
    return BlameReport(relative, rows, False, at)


def current_lines(
    root: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """Every line of every live file as the records describe it (no disk, no git): rows of
    ``path, line, content_hash, status`` (``agent`` or ``unknown``) and the agent fields.
    For the query layer's ``lines`` view; ``ledger blame`` reconciles one file with the disk."""
    from ledger._evidence.ledger import Ledger  # noqa: PLC0415 -- not blame's start-up path
    from ledger._governance.files import sha256_file  # noqa: PLC0415

    ledger = Ledger.open(root, environ=environ)
    state = blame_state(ledger, environ=environ)
    for path in sorted(state.files):
        model = state.files[path]
        # The model is exact only while the file holds the content its last record left; a file
        # changed on disk since then is unknown here (``ledger blame`` reconciles it with git).
        on_disk = sha256_file(str(ledger.workspace.root / path))
        changed = on_disk is not None and model.get("sha") not in (None, on_disk)
        for index, (digest, ref) in enumerate(zip(model["hashes"], model["refs"], strict=True)):
            attribution = state.ref(ref)
            agent = not changed and attribution is not None and attribution["status"] == "agent"
            row: dict[str, Any] = {
                "path": path,
                "line": index + 1,
                "content_hash": digest,
                "status": "agent" if agent else "unknown",
            }
            if not agent:
                row["reason"] = (
                    f"changed on disk since the last record; run `ledger blame {path}`"
                    if changed
                    else "no recorded agent call wrote it"
                )
            row.update({k: (attribution or {}).get(k) if agent else None for k in AGENT_FIELDS})
            yield row
