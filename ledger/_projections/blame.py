"""The line model: per live file, each line's content hash and the tool call that wrote it.

A left fold over records (decision 0008, "The line model"). Each ``hook.post`` ``attribution``
``FileChange`` is applied to its file's model:

* **exact**, with an old side equal to the model (``old_sha256`` = the model's ``sha``, or a
  created file): the zero-context hunks are replayed: lines outside them keep their
  attribution, the hunks' old lines go, their new lines take this call's attribution;
* **exact, but the old side is not the model** (the file changed outside any recorded call, or
  the ledger never saw it): the new lines still take this call's attribution; every other line
  becomes *base* (no hash, no attribution): blame asks git about it, or says ``unknown``;
* **not exact** (v1 records, a shell command whose previous content was not kept): the written
  ranges take this call's attribution; all other lines become ``unknown`` with the reason;
* ``deleted`` drops the file (its model is kept among the last few gone, for a move made
  in two calls); ``renamed`` moves its model first; ``copied_from`` starts a new file from the
  model of the version it copied (live or just gone), line by line;
* ``borrowed`` lines (a shell command wrote them with the text of a line of a file it read:
  ``cat a b > c``) are not the command's: each takes the attribution of the line it came from
  when the source's model is the version named and holds that line there, else ``unknown``;
* a ``drift`` whose ``from_sha256`` is the model's version (the file changed outside every
  recorded call, and the recorder diffed that version against the call's old side): its hunks
  are replayed first as nobody's lines (``unknown``, "changed by no recorded tool call"), so the
  model describes the old side and the call replays exactly: the lines the person left alone
  keep their agent (decision 0009).

Denied writes (``hook.pre`` deny, or an ``ask`` a human rejected) never become attribution;
their attempted lines (hashes) are kept per file so blame can say a line was tried and refused.

Memory is in proportion to the live files (a hash and an int per line) plus the attributions
still referenced: references no line uses any more are dropped when they outnumber live ones.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "BASE",
    "BLAME",
    "REF_FIELDS",
    "BlameProjection",
    "BlameState",
    "FileView",
    "attempted_line_hashes",
]

REF_FIELDS: Final = (
    "client",
    "intent_id",
    "invocation_id",
    "model",
    "reason",
    "record_hash",
    "seq",
    "session_id",
    "status",
    "tool",
    "tool_use_id",
    "ts",
    "command",
)
"""The fields of an attribution, in the order ``BlameState.refs`` keeps them (``command``: the
shell command of a Bash call's lines)."""
BASE: Final = -1
"""Reference of a line no record explains (predates the ledger, or changed outside it)."""
_DENIED_PER_FILE: Final = 20
_DENIED_LINES: Final = 500
_PENDING_ASKS: Final = 256
_FOLDED_KINDS: Final = frozenset(("hook.post", "hook.pre", "hook.event"))
_GONE: Final = 16
"""Models of deleted files kept for a copy or move recorded in a later call."""


def _short(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def attempted_line_hashes(tool_input: dict[str, Any]) -> list[str]:
    """Short hashes of the lines a (refused) write tried to put in the file."""
    texts = [
        tool_input[key]
        for key in ("content", "new_string", "new_source")
        if isinstance(tool_input.get(key), str)
    ]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        texts.extend(
            e["new_string"]
            for e in edits
            if isinstance(e, dict) and isinstance(e.get("new_string"), str)
        )
    out = [
        _short(line) for text in texts for line in text.replace("\r\n", "\n").split("\n") if line
    ]
    return out[:_DENIED_LINES]


class BlameState:
    """The folded line model.

    Attributes:
        files: path -> ``{"sha": sha256|None, "hashes": [short|None], "refs": [int]}``.
        refs: attribution table, each in :data:`REF_FIELDS` order; a line's ref indexes it
            (:data:`BASE` = none); read one with :meth:`ref`.
        denied: path -> refused attempts ``{seq, record_hash, session_id, tool, code,
            intent_id, lines: [short]}`` (the last few).
        pending: tool_use_id -> an ``ask`` attempt waiting for its outcome.
        seq: the last folded record's seq.
    """

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.files: dict[str, dict[str, Any]] = data.get("files", {})
        self.refs: list[list[Any]] = data.get("refs", [])
        self.denied: dict[str, list[dict[str, Any]]] = data.get("denied", {})
        self.pending: dict[str, dict[str, Any]] = data.get("pending", {})
        self.seq: int = data.get("seq", -1)
        self.gone: dict[str, dict[str, Any]] = data.get("gone", {})
        self._live_at_compaction: int = data.get("live", 0)
        # The unknown ref of the lines a drift says no recorded call wrote (one per record).
        self._nobody: int | None = None
        self._borrowed: int | None = None  # the unknown ref of a record's copied lines
        # Paths whose slice may differ from the loaded state's (not state: the cache's
        # bookkeeping, so it rewrites only those slices).
        self.touched: set[str] = set()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "denied": self.denied,
            "files": self.files,
            "gone": self.gone,
            "live": self._live_at_compaction,
            "pending": self.pending,
            "refs": self.refs,
            "seq": self.seq,
        }

    def ref(self, index: int) -> dict[str, Any] | None:
        """The attribution of a line's ref (``None`` for :data:`BASE`)."""
        return _resolve(self.refs, index)

    def view(self, path: str) -> FileView:
        """What blame needs of one file."""
        return FileView(self.files.get(path), self.refs, self.denied.get(path, []), self.seq)

    def file_slice(self, path: str) -> dict[str, Any] | None:
        """One file's part of the state, self-contained (its refs index its own table), or
        ``None`` when the state knows nothing of it. :meth:`FileView.from_slice` reads it."""
        model = self.files.get(path)
        denied = self.denied.get(path)
        if model is None and not denied:
            return None
        table: list[list[Any]] = []
        local: dict[int, int] = {}
        out = None
        if model is not None:
            refs = []
            for ref in model["refs"]:
                if ref >= 0:
                    mapped = local.get(ref)
                    if mapped is None:
                        mapped = local[ref] = len(table)
                        table.append(self.refs[ref])
                    ref = mapped  # noqa: PLW2901 -- the same ref, renumbered
                refs.append(ref)
            out = {"hashes": model["hashes"], "refs": refs, "sha": model["sha"]}
        return {"denied": denied or [], "model": out, "refs": table}

    # --- the fold ----------------------------------------------------------------------------

    def apply(self, record: dict[str, Any]) -> None:
        """Fold one record in."""
        self.seq = int(record.get("seq", self.seq))
        kind = record.get("kind")
        if kind not in _FOLDED_KINDS:  # most records: one lookup, nothing to do
            return
        body = record.get("body")
        if not isinstance(body, dict):
            return
        if kind == "hook.post":
            if self.pending:
                self.pending.pop(str(body.get("tool_use_id")), None)
            attribution = body.get("attribution")
            if isinstance(attribution, dict) and attribution.get("files"):
                self._apply_attribution(record, body, attribution)
        elif kind == "hook.pre" and body.get("decision") in ("deny", "ask"):
            self._attempt(record, body)
        elif kind == "hook.event" and body.get("tool_use_id"):
            error = body.get("error") or {}
            attempt = self.pending.pop(str(body["tool_use_id"]), None)
            if (
                attempt is not None
                and isinstance(error, dict)
                and error.get("code") == "HITL_REJECT"
            ):
                attempt["code"] = "HITL_REJECT"
                self._deny(attempt)

    def _attempt(self, record: dict[str, Any], body: dict[str, Any]) -> None:
        tool_input = body.get("tool_input")
        if not isinstance(tool_input, dict):
            return
        path = tool_input.get("file_path") or tool_input.get("path")
        if not isinstance(path, str):
            return
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        cwd = body.get("cwd")
        attempt = {
            "code": (error or {}).get("code"),
            "intent_id": (data or {}).get("intent_id"),
            # v3 keeps the line hashes plain beside the committed content.
            "lines": body["attempted_lines"]
            if isinstance(body.get("attempted_lines"), list)
            else attempted_line_hashes(tool_input),
            "path": path,
            "record_hash": record.get("hash"),
            "seq": record.get("seq"),
            "session_id": (record.get("actor") or {}).get("session"),
            "tool": body.get("tool"),
            "cwd": cwd,
        }
        if body.get("decision") == "deny":
            self._deny(attempt)
        elif body.get("tool_use_id"):
            self.pending[str(body["tool_use_id"])] = attempt
            while len(self.pending) > _PENDING_ASKS:
                self.pending.pop(next(iter(self.pending)))

    def _deny(self, attempt: dict[str, Any]) -> None:
        path = str(attempt.pop("path"))
        cwd = attempt.pop("cwd", None)
        relative = _relative(path, cwd, self)
        entries = self.denied.setdefault(relative, [])
        self.touched.add(relative)
        entries.append(attempt)
        del entries[:-_DENIED_PER_FILE]

    def _new_ref(
        self, record: dict[str, Any], body: dict[str, Any], *, status: str, reason: str | None
    ) -> int:
        actor = record.get("actor") or {}
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        # A list in REF_FIELDS order, not a dict: the cache holds one per live attribution,
        # and blame loads the cache on every run.
        self.refs.append(
            [
                actor.get("client"),
                (data or {}).get("intent_id"),
                body.get("invocation"),
                actor.get("model"),
                reason,
                record.get("hash"),
                record.get("seq"),
                actor.get("session"),
                status,
                body.get("tool"),
                body.get("tool_use_id"),
                record.get("ts"),
                (body.get("attribution") or {}).get("command"),
            ]
        )
        return len(self.refs) - 1

    def _apply_attribution(
        self, record: dict[str, Any], body: dict[str, Any], attribution: dict[str, Any]
    ) -> None:
        agent: int | None = None
        unknown: dict[str | None, int] = {}  # why the old side is unknown -> its ref
        conflict: int | None = None
        self._nobody = None
        self._borrowed = None
        for change in attribution["files"]:
            if not isinstance(change, dict) or not isinstance(change.get("path"), str):
                continue
            path = change["path"]
            previous = change.get("previous_path")
            self.touched.add(path)
            if change.get("change") == "deleted":
                gone = self.files.pop(path, None)
                if gone is not None:
                    self.gone.pop(path, None)
                    self.gone[path] = gone
                    while len(self.gone) > _GONE:
                        self.gone.pop(next(iter(self.gone)))
                continue
            if isinstance(previous, str):
                self.touched.add(previous)
            model = self._model_before(record, body, change, previous)
            hunks = [h for h in change.get("hunks") or [] if isinstance(h, dict)]
            if agent is None and hunks:
                agent = self._new_ref(record, body, status="agent", reason=None)
            if change.get("exact"):
                old_sha = change.get("old_sha256")
                replayable = (
                    model is None and old_sha is None and change.get("change") in ("created", None)
                ) or (model is not None and model["sha"] == old_sha and old_sha is not None)
                # The model's own lists are updated in place (the state is the fold's).
                hashes = model["hashes"] if replayable and model else []
                refs = model["refs"] if replayable and model else []
                ref = agent if agent is not None else BASE
                suspect: set[str | None] = set()
                if not replayable:
                    count = change.get("lines") or 0
                    base = _old_length(hunks, count)
                    hashes, refs = [None] * base, [BASE] * base
                    # The call's old side is not the file the records describe. A "new" line
                    # the records already had may not be this call's: a gap, not a guess.
                    suspect = set(model["hashes"]) - {None} if model else set()
                    if suspect and conflict is None:
                        conflict = self._new_ref(
                            record,
                            body,
                            status="unknown",
                            reason=(
                                f"seq {record.get('seq')} wrote it over a version of the file the "
                                "records do not describe, and the records had it before"
                            ),
                        )
                for hunk in reversed(hunks):
                    _replay(hashes, refs, hunk, ref, suspect=suspect, conflict=conflict)
                self._unborrow(record, body, change, (hashes, refs))
            else:
                why = change.get("unknown_reason")
                why = why if isinstance(why, str) else None
                if why not in unknown:
                    tool = body.get("tool") or "a tool call"
                    unknown[why] = self._new_ref(
                        record,
                        body,
                        status="unknown",
                        reason=(
                            f"rewritten by {tool} (seq {record.get('seq')}), whose previous "
                            "content was not captured" + (f" ({why})" if why else "")
                        ),
                    )
                hashes, refs = _written_only(
                    change, hunks, unknown[why], agent if agent is not None else BASE
                )
            self.files[path] = {"hashes": hashes, "refs": refs, "sha": change.get("sha256")}
        if len(self.refs) > 2 * self._live_at_compaction + 1024:
            self._compact()

    def _unborrow(
        self,
        record: dict[str, Any],
        body: dict[str, Any],
        change: dict[str, Any],
        model: tuple[list[str | None], list[int]],
    ) -> None:
        """The lines a shell command copied from another file it read are not its own: each
        takes the attribution of the line it came from when the source's model is the version
        named and holds that very line there, else it is unknown."""
        borrowed = change.get("borrowed")
        if not isinstance(borrowed, list) or not borrowed:
            return
        hashes, refs = model
        rest = []
        for entry in borrowed:
            if not isinstance(entry, dict) or not isinstance(entry.get("line"), int):
                continue
            number, path = entry["line"], entry.get("path")
            if not 1 <= number <= len(refs):
                continue
            source = (
                (self.files.get(path) or self.gone.get(path)) if isinstance(path, str) else None
            )
            at = entry.get("source_line")
            if (
                source is not None
                and source["sha"] == entry.get("sha256")
                and isinstance(at, int)
                and 1 <= at <= len(source["hashes"])
                and source["hashes"][at - 1] == hashes[number - 1]
            ):
                refs[number - 1] = source["refs"][at - 1]
            else:
                rest.append(number)
        if not rest:
            return
        if self._borrowed is None:
            self._borrowed = self._new_ref(
                record,
                body,
                status="unknown",
                reason=(
                    f"{body.get('tool') or 'a tool call'} (seq {record.get('seq')}) wrote it with "
                    "the text of a line of another file it read: copied, and whose line it was "
                    "is not known"
                ),
            )
        for number in rest:
            refs[number - 1] = self._borrowed

    def _model_before(
        self,
        record: dict[str, Any],
        body: dict[str, Any],
        change: dict[str, Any],
        previous: str | None,
    ) -> dict[str, Any] | None:
        """The model a change applies to: the file's (moved first for a rename), a copy of the
        version it was copied from, with a drift replayed when it describes that model."""
        path = change["path"]
        model = self.files.pop(previous, None) if isinstance(previous, str) else None
        if model is None:
            model = self.files.get(path)
        copied = change.get("copied_from")
        if isinstance(copied, str) and change.get("exact"):
            source = self.files.get(copied) or self.gone.get(copied)
            if source is not None and source["sha"] == change.get("copied_sha256"):
                model = {
                    "hashes": list(source["hashes"]),
                    "refs": list(source["refs"]),
                    "sha": source["sha"],
                }
        drift = change.get("drift")
        if not (
            change.get("exact")
            and model is not None
            and isinstance(drift, dict)
            and model["sha"] is not None
            and drift.get("from_sha256") == model["sha"]
            and change.get("old_sha256") not in (None, model["sha"])
        ):
            return model
        if self._nobody is None:
            self._nobody = self._new_ref(
                record,
                body,
                status="unknown",
                reason=(
                    "changed by no recorded tool call (a person, git, or a tool ledger does not "
                    f"govern) before seq {record.get('seq')}"
                ),
            )
        hunks = [h for h in change.get("hunks") or [] if isinstance(h, dict)]
        old_length = _old_length(hunks, change.get("lines") or 0)
        drifted = _drifted(model, drift, self._nobody, old_length)
        if drifted is None:
            return model
        drifted["sha"] = change.get("old_sha256")
        return drifted

    def _compact(self) -> None:
        """Drop attributions no live line references (memory follows live files)."""
        models = [*self.files.values(), *self.gone.values()]
        used = sorted({r for model in models for r in model["refs"] if r >= 0})
        remap = {old: new for new, old in enumerate(used)}
        self.refs = [self.refs[i] for i in used]
        for model in models:
            model["refs"] = [remap.get(r, BASE) if r >= 0 else r for r in model["refs"]]
        self._live_at_compaction = len(self.refs)


def _relative(path: str, cwd: Any, state: BlameState) -> str:  # noqa: ANN401
    """A pre record's raw path, workspace-relative where it plainly is (a model path ends it)."""
    if not path.startswith("/"):
        return path.removeprefix("./")
    for known in state.files:
        if path.endswith("/" + known):
            return known
    if isinstance(cwd, str) and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _resolve(table: list[list[Any]], index: int) -> dict[str, Any] | None:
    return None if index < 0 else dict(zip(REF_FIELDS, table[index], strict=True))


def _written_only(
    change: dict[str, Any], hunks: list[dict[str, Any]], unknown: int, ref: int
) -> tuple[list[str | None], list[int]]:
    """A change whose old side is unknown: its written ranges take ``ref``, every other line
    ``unknown``."""
    count = change.get("lines")
    if count is None:
        count = max(
            (int(h.get("new_start", 0)) + int(h.get("new_lines", 0)) - 1 for h in hunks),
            default=0,
        )
    hashes: list[str | None] = [None] * count
    refs = [unknown] * count
    for hunk in hunks:
        start = int(hunk.get("new_start", 1)) - 1
        written = hunk.get("line_hashes") or [None] * int(hunk.get("new_lines", 0))
        hashes[start : start + len(written)] = written
        refs[start : start + len(written)] = [ref] * len(written)
    del hashes[count:], refs[count:]
    return hashes, refs


def _drifted(
    model: dict[str, Any], drift: dict[str, Any], ref: int, old_length: int
) -> dict[str, Any] | None:
    """``model`` with a drift's hunks replayed as ``ref``'s lines, or ``None`` when the result
    is not as long as the call's old side (then the drift does not describe it)."""
    hashes, refs = list(model["hashes"]), list(model["refs"])
    for hunk in reversed([h for h in drift.get("hunks") or [] if isinstance(h, dict)]):
        _replay(hashes, refs, hunk, ref, suspect=set(), conflict=None)
    if len(hashes) != old_length:
        return None
    return {"hashes": hashes, "refs": refs, "sha": model["sha"]}


def _old_length(hunks: list[dict[str, Any]], new_count: int) -> int:
    """Line count of the old side, from the new count and the hunks."""
    return new_count - sum(int(h.get("new_lines", 0)) - int(h.get("old_lines") or 0) for h in hunks)


def _replay(
    hashes: list[str | None],
    refs: list[int],
    hunk: dict[str, Any],
    ref: int,
    *,
    suspect: set[str | None],
    conflict: int | None,
) -> None:
    old_start, old_lines = int(hunk.get("old_start") or 0), int(hunk.get("old_lines") or 0)
    at = old_start - 1 if old_lines else old_start
    written = hunk.get("line_hashes") or [None] * int(hunk.get("new_lines", 0))
    hashes[at : at + old_lines] = written
    if conflict is None or not suspect:
        refs[at : at + old_lines] = [ref] * len(written)
    else:
        refs[at : at + old_lines] = [conflict if h in suspect else ref for h in written]


class FileView(NamedTuple):
    """One file as blame sees it: its model (``{"sha", "hashes", "refs"}`` or ``None``), the
    attribution table its refs index, its refused attempts, and the seq the state is at."""

    model: dict[str, Any] | None
    refs: list[list[Any]]
    denied: list[dict[str, Any]]
    seq: int

    @classmethod
    def from_slice(cls, data: dict[str, Any] | None, seq: int) -> FileView:
        """The view of a :meth:`BlameState.file_slice` (``None``: a file never seen)."""
        if data is None:
            return cls(None, [], [], seq)
        return cls(data["model"], data["refs"], data["denied"], seq)

    def ref(self, index: int) -> dict[str, Any] | None:
        """The attribution of a line's ref (``None`` for :data:`BASE`)."""
        return _resolve(self.refs, index)


class BlameProjection:
    """The line model behind ``ledger blame`` (see the module docstring)."""

    name: Final = "blame"
    # 2: lines of a mismatched old side the records already had are gaps; 3: refs as lists;
    # 4: a change's unknown_reason is in its unknown lines' reason; 5: drift, copies, gone,
    # a shell call's command
    version: Final = 5

    def initial(self) -> BlameState:
        """No files."""
        return BlameState()

    def apply(self, state: BlameState, record: dict[str, Any]) -> BlameState:
        """Fold one record in."""
        state.apply(record)
        return state

    def dump(self, state: BlameState) -> dict[str, Any]:
        """JSON for the cache."""
        return state.to_json()

    def load(self, data: Any) -> BlameState:  # noqa: ANN401 -- what dump returned
        """Back from the cache."""
        return BlameState(data)

    # --- slices (ledger._projections.cache.SlicedProjection): one file each ------------------

    def slice_keys(self, state: BlameState) -> set[str]:
        """Every path with a model or refused attempts."""
        return set(state.files) | {path for path, entries in state.denied.items() if entries}

    def touched(self, state: BlameState) -> set[str]:
        """Paths changed since the state was made or loaded."""
        return state.touched

    def leaves_slice_unchanged(self, record: dict[str, Any], key: str) -> bool:
        """Whether folding ``record`` leaves ``key``'s slice as it was, so a slice written
        before the record still answers after it (``False`` whenever that is not certain).

        This mirrors :meth:`BlameState.apply`: other kinds, allowed and asked pre calls (an ask
        only waits in ``pending``, which no slice holds) and tool events other than a person's
        rejection change no file's slice; a post call changes the files its attribution names
        (``path``, and ``previous_path`` for a move). A refused pre call and a rejection are
        taken as changing every file: where they land is resolved against the state.
        """
        kind = record.get("kind")
        if kind not in _FOLDED_KINDS:
            return True
        body = record.get("body")
        if not isinstance(body, dict):
            return True
        if kind == "hook.pre":
            return body.get("decision") != "deny"
        if kind == "hook.event":
            error = body.get("error") or {}
            rejected = isinstance(error, dict) and error.get("code") == "HITL_REJECT"
            return not (body.get("tool_use_id") and rejected)
        attribution = body.get("attribution")
        if not (isinstance(attribution, dict) and attribution.get("files")):
            return True
        files = attribution["files"]
        if not isinstance(files, list):
            return False
        for change in files:
            if not isinstance(change, dict) or not isinstance(change.get("path"), str):
                continue  # BlameState skips it too
            if key in (change["path"], change.get("previous_path")):
                return False
        return True

    def slice(self, state: BlameState, key: str) -> bytes | None:
        """``key``'s :meth:`BlameState.file_slice` as JSON."""
        import orjson  # noqa: PLC0415 -- the cache's writer only; blame's start-up reads json

        data = state.file_slice(key)
        return None if data is None else orjson.dumps(data)


BLAME: Final = BlameProjection()
