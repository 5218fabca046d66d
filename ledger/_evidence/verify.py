"""Chain verification as a pure fold over per-line facts.

:class:`ChainVerifier` consumes :class:`~ledger._evidence.record.LineFacts` in file order and
accumulates problems; it never touches a file. ``_parallel`` computes the facts (the expensive
part: hashes and Ed25519 verifications) on all cores and feeds them here in order;
:func:`verify_lines` does the same in-process for small inputs and tests.

Resynchronisation: after a bad line the fold follows the records' own ``seq`` and stored ``hash``
so one deletion, duplication or swap is reported where it happened and does not cascade into a
problem on every later record (the approach of aws-cli's digest traverser, architecture.md note 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger._startup.namedtuple import NamedTuple

if TYPE_CHECKING:
    from ledger._evidence.disclosure import DisclosureReport

from ledger._evidence.record import (
    GENESIS_KIND,
    GENESIS_PREV,
    LineFacts,
    check_line,
    check_lines,
)

__all__ = [
    "ChainVerifier",
    "CheckpointResult",
    "CheckpointTarget",
    "CleanRun",
    "Problem",
    "VerifyReport",
    "summarize_lines",
    "verify_lines",
]

MAX_LISTED_PROBLEMS: Final = 1000

# Problem codes by category. "torn" is crash damage, "unverifiable" means we could not check.
_TORN: Final = frozenset({"torn-tail", "missing-newline"})
_UNVERIFIABLE: Final = frozenset({"unsupported-version"})
# What `ledger repair` fixes when it is all that is wrong at the end of the file.
_REPAIRABLE: Final = frozenset(
    {"torn-tail", "missing-newline", "blank-line", "trailing-whitespace"}
)
# ... of which these are about the last record itself, the rest come after it.
_ON_LAST_RECORD: Final = frozenset({"missing-newline", "trailing-whitespace"})


class Problem(NamedTuple):
    """One thing wrong with the ledger.

    Attributes:
        code: machine-readable kind, e.g. ``bad-hash``, ``seq-gap``, ``torn-tail``.
        seq: the sequence number the problem is about (the record's own seq where it has one,
            else the seq expected at that position).
        line: 1-based line number in the file (0 when the problem is about the whole ledger).
        message: one human-readable line.
    """

    code: str
    seq: int
    line: int
    message: str

    @property
    def category(self) -> str:
        """``integrity``, ``torn`` or ``unverifiable``."""
        if self.code in _TORN:
            return "torn"
        if self.code in _UNVERIFIABLE:
            return "unverifiable"
        return "integrity"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "category": self.category,
            "code": self.code,
            "line": self.line,
            "message": self.message,
            "seq": self.seq,
        }


class CleanRun(NamedTuple):
    """A run of consecutive lines that each checked clean, summarised by a worker.

    Clean means: parsed, canonical, right hash and signature by a pinned key, not genesis, no
    key event; and within the run the seqs are contiguous, each ``prev`` links to the previous
    hash and the ledger id is the same. Feeding a run is equivalent to feeding its lines one by
    one (:meth:`ChainVerifier.feed_run`) but ships a few fields instead of a tuple per line,
    which is what lets verification keep every core on Ed25519.
    """

    first_line: int  # index of the run's first line within its batch of lines
    size: int  # number of records (lines) in the run
    ledger: str
    first_seq: int
    first_prev: str
    last_seq: int
    last_hash: str
    key_spans: tuple[tuple[str, int, int], ...]  # (key id, first seq, last seq)
    captured: tuple[tuple[int, str], ...]  # (seq, hash) for checkpoint seqs in the run


def summarize_lines(
    lines: Sequence[bytes],
    keys: Mapping[str, Ed25519PublicKey],
    wanted: frozenset[int] = frozenset(),
) -> list[LineFacts | CleanRun]:
    """Check ``lines`` and collapse clean consecutive records into :class:`CleanRun` items."""
    out: list[LineFacts | CleanRun] = []
    # The open run, as a list for cheap in-place updates: [first_line, count, ledger,
    # first_seq, first_prev, last_seq, last_hash, spans, captured].
    run: list[Any] | None = None
    for index, facts in enumerate(check_lines(lines, keys)):
        clean = (
            not facts.problems
            and facts.key_event is None
            and facts.seq is not None
            and facts.kind != GENESIS_KIND
        )
        if (
            clean
            and run is not None
            and facts.ledger == run[2]
            and facts.seq == run[5] + 1
            and facts.prev == run[6]
        ):
            run[1] += 1
            run[5], run[6] = facts.seq, facts.hash
            spans = run[7]
            if spans[-1][0] == facts.key:
                spans[-1][2] = facts.seq
            else:
                spans.append([facts.key, facts.seq, facts.seq])
            if facts.seq in wanted:
                run[8].append((facts.seq, facts.hash))
            continue
        if run is not None:
            out.append(_close(run))
            run = None
        if clean:
            run = [
                index,
                1,
                facts.ledger,
                facts.seq,
                facts.prev,
                facts.seq,
                facts.hash,
                [[facts.key, facts.seq, facts.seq]],
                [(facts.seq, facts.hash)] if facts.seq in wanted else [],
            ]
        else:
            out.append(facts)
    if run is not None:
        out.append(_close(run))
    return out


def _close(run: list[Any]) -> CleanRun:
    return CleanRun(
        run[0],
        run[1],
        run[2],
        run[3],
        run[4],
        run[5],
        run[6],
        tuple((k, a, b) for k, a, b in run[7]),
        tuple(run[8]),
    )


class CheckpointTarget(NamedTuple):
    """A verified checkpoint to compare the ledger with."""

    name: str
    ledger_id: str
    size: int
    head: str


class CheckpointResult(NamedTuple):
    """Outcome of comparing the ledger with one checkpoint."""

    name: str
    size: int
    ok: bool
    code: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return self._asdict()


class VerifyReport:
    """The result of verifying a ledger. Truthy when the ledger is intact.

    Attributes:
        ledger_id: the ledger id of the genesis record, if one was found.
        records: number of lines that parsed as records.
        head_seq, head_hash: the last record in the chain (``None`` if empty).
        problems: the first ``MAX_LISTED_PROBLEMS`` problems, in file order.
        problem_count: how many problems there were in all.
        checkpoints: one result per checkpoint given.
        keys_used: key ids that signed records.
    """

    def __init__(
        self,
        *,
        ledger_id: str | None,
        records: int,
        head_seq: int | None,
        head_hash: str | None,
        problems: list[Problem],
        problem_count: int,
        checkpoints: list[CheckpointResult],
        keys_used: list[str],
        notes: list[str] | None = None,
        repairable: bool = False,
    ) -> None:
        self.ledger_id = ledger_id
        self.records = records
        self.head_seq = head_seq
        self.head_hash = head_hash
        self.problems = problems
        self.problem_count = problem_count
        self.checkpoints = checkpoints
        self.keys_used = keys_used
        self.notes = notes if notes is not None else []
        self.repairable = repairable
        #: Set by ``Ledger.verify`` where a disclosure store sits beside the ledger.
        self.disclosures: DisclosureReport | None = None

    def add(self, problem: Problem) -> None:
        """Add a problem found outside the chain fold (e.g. about a stored checkpoint)."""
        self.problem_count += 1
        self.repairable = False
        if len(self.problems) < MAX_LISTED_PROBLEMS:
            self.problems.append(problem)

    @property
    def ok(self) -> bool:
        """No problem of any kind."""
        return self.problem_count == 0

    def __bool__(self) -> bool:
        return self.ok

    @property
    def torn_tail(self) -> bool:
        """The file ends in a partial line (crash damage, fixable with ``ledger repair``)."""
        return any(p.code == "torn-tail" for p in self.problems)

    @property
    def only_torn_tail(self) -> bool:
        """The torn tail is the only problem: the rest of the chain is intact."""
        return self.problem_count == 1 and self.torn_tail

    @property
    def missing_final_newline(self) -> bool:
        """The last record is complete and valid but its final newline is missing."""
        return any(p.code == "missing-newline" for p in self.problems)

    @property
    def unverifiable(self) -> bool:
        """Some records could not be checked at all (e.g. an unknown future format version)."""
        return any(p.category == "unverifiable" for p in self.problems)

    def first_problem(self) -> Problem | None:
        """The earliest problem in file order."""
        return self.problems[0] if self.problems else None

    def summary(self) -> str:
        """One line for humans."""
        if self.ok:
            cps = f", {len(self.checkpoints)} checkpoint(s) consistent" if self.checkpoints else ""
            held = self.disclosures
            fields = (
                f", {held.withheld} fields withheld ({held.forgotten} forgotten)"
                if held is not None and held.committed
                else ""
            )
            return f"ok: {self.records} records{fields}, head seq {self.head_seq}{cps}"
        if self.only_torn_tail:
            return (
                f"torn tail after seq {self.head_seq} (crash mid-append, not tampering); "
                "run `ledger repair`"
            )
        if self.repairable:
            what = (
                "missing final newline after seq"
                if self.missing_final_newline
                else "blank line(s) or trailing whitespace at seq"
            )
            return f"{what} {self.head_seq} (the chain is intact); run `ledger repair`"
        first = self.problems[0]
        return (
            f"FAILED: {self.problem_count} problem(s); first at seq {first.seq}: "
            f"{first.code}: {first.message}"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (the ``ledger verify --json`` output)."""
        return {
            "checkpoints": [c.to_json() for c in self.checkpoints],
            "head_hash": self.head_hash,
            "head_seq": self.head_seq,
            "keys_used": self.keys_used,
            "ledger_id": self.ledger_id,
            "notes": self.notes,
            "ok": self.ok,
            "only_torn_tail": self.only_torn_tail,
            "problem_count": self.problem_count,
            "problems": [p.to_json() for p in self.problems],
            "records": self.records,
            "repairable": self.repairable,
            **(
                {
                    "fields": {
                        "committed": self.disclosures.committed,
                        "disclosed": self.disclosures.disclosed,
                        "withheld": self.disclosures.withheld,
                        "forgotten": self.disclosures.forgotten,
                        "orphan_disclosures": self.disclosures.orphans,
                    }
                }
                if self.disclosures is not None
                else {}
            ),
        }


class ChainVerifier:
    """The pure fold: feed facts line by line, then :meth:`finish`.

    Key validity rules (docs/trust-model.md):

    * a record must be signed by a key whose public half is known (keyring or trust file);
    * by a *trusted* key: pinned outside the workspace (``trusted``: key id → first seq), or
      introduced by a valid record signed by a trusted key -- the genesis record's key when
      nothing is pinned, ``key.rotated`` (co-signed by the new key), ``key.added``;
    * not at or after the seq the keyring (or an earlier ``key.revoked`` record) revokes it from;
    * not after a ``key.rotated`` record retired it.
    """

    def __init__(
        self,
        *,
        revoked_from: Mapping[str, int] | None = None,
        checkpoints: Sequence[CheckpointTarget] = (),
        trusted: Mapping[str, int] | None = None,
        start: tuple[int, str] | None = None,
    ) -> None:
        # ``start`` = (seq, prev): verify a segment of a chain (an export) instead of a whole
        # ledger; its first record must be that seq and link to that hash.
        self._start = start
        self._revoked: dict[str, int] = dict(revoked_from or {})
        # None: nothing is pinned outside the workspace; the genesis key becomes the root.
        self._trusted: dict[str, int] | None = None if trusted is None else dict(trusted)
        self._head_line = 0
        self._retired_after: dict[str, int] = {}
        self._checkpoints = list(checkpoints)
        self._wanted = {cp.size - 1: None for cp in self._checkpoints if cp.size > 0}
        self._captured: dict[int, str] = {}
        self._problems: list[Problem] = []
        self._problem_count = 0
        self._ledger_id: str | None = None
        self._expected = 0 if start is None else start[0]
        self._last_hash: str | None = None
        self._head: tuple[int, str] | None = None
        self._records = 0
        self._keys_used: set[str] = set()
        self._line = 0

    def _report(self, code: str, seq: int, message: str, line: int | None = None) -> None:
        self._problem_count += 1
        if len(self._problems) < MAX_LISTED_PROBLEMS:
            self._problems.append(Problem(code, seq, self._line if line is None else line, message))

    def feed(self, facts: LineFacts) -> None:
        """Fold one complete line (in file order) into the state."""
        self._line += 1
        if facts.unparsed or facts.seq is None or facts.hash is None:
            at = facts.seq if facts.seq is not None else self._expected
            for code, message in facts.problems:
                self._report(code, at, message)
            # Resync: assume the line held the expected record; skip the next link check.
            self._expected = max(self._expected, at) + 1
            self._last_hash = None
            return
        seq = facts.seq
        if self._ledger_id is None and self._records == 0:
            if self._start is not None:
                if (seq, facts.prev) != self._start:
                    self._report(
                        "bad-anchor",
                        seq,
                        f"the segment should start at seq "
                        f"{self._start[0]} linked to {self._start[1][:16]}…",
                    )
            elif facts.kind != GENESIS_KIND or seq != 0 or facts.prev != GENESIS_PREV:
                self._report("bad-genesis", seq, "the first record is not a genesis record")
            self._ledger_id = facts.ledger
            if self._trusted is None:
                self._trusted = {str(facts.key): 0}
        if facts.ledger != self._ledger_id:
            self._report(
                "foreign-ledger",
                seq,
                f"record belongs to ledger {facts.ledger}, not {self._ledger_id}",
            )
            return
        if seq < self._expected:
            if seq == self._expected - 1 and facts.hash == self._last_hash:
                self._report("duplicate", seq, f"record seq {seq} appears twice")
            else:
                self._report(
                    "out-of-order", seq, f"seq {seq} found where seq {self._expected} was expected"
                )
            return
        if seq > self._expected:
            missing = (
                f"seq {self._expected}"
                if seq == self._expected + 1
                else f"seqs {self._expected}..{seq - 1}"
            )
            self._report("seq-gap", self._expected, f"{missing} missing before seq {seq}")
        elif self._last_hash is not None and facts.prev != self._last_hash:
            self._report("broken-link", seq, "prev does not match the hash of the previous record")
        for code, message in facts.problems:
            self._report(code, seq, message)
        self._check_key(seq, facts)
        self._expected = seq + 1
        self._last_hash = facts.hash
        self._head = (seq, facts.hash)
        self._head_line = self._line
        self._records += 1
        if seq in self._wanted:
            self._captured[seq] = facts.hash

    @property
    def wanted_seqs(self) -> frozenset[int]:
        """Seqs whose hashes the checkpoints need (workers capture them inside runs)."""
        return frozenset(self._wanted)

    def feed_run(self, run: CleanRun) -> bool:
        """Fold a :class:`CleanRun`; False (and nothing folded) when it must go line by line.

        A run is folded in bulk only in the common case -- the chain is established, the run
        is from this ledger and does not go backwards -- where that is exactly equivalent to
        feeding its lines. Anything else (the first records, foreign lines, duplicates,
        reordering) goes through :meth:`feed`.
        """
        if (
            self._ledger_id is None
            or run.ledger != self._ledger_id
            or run.first_seq < self._expected
        ):
            return False
        start = self._line + 1  # line number of the run's first line
        if run.first_seq > self._expected:
            missing = (
                f"seq {self._expected}"
                if run.first_seq == self._expected + 1
                else f"seqs {self._expected}..{run.first_seq - 1}"
            )
            self._report(
                "seq-gap",
                self._expected,
                f"{missing} missing before seq {run.first_seq}",
                line=start,
            )
        elif self._last_hash is not None and run.first_prev != self._last_hash:
            self._report(
                "broken-link",
                run.first_seq,
                "prev does not match the hash of the previous record",
                line=start,
            )
        for kid, first, last in run.key_spans:
            self._keys_used.add(kid)
            trusted_from = self._trusted_from(kid)
            if trusted_from is None or trusted_from > first:
                for seq in range(first, min(last + 1, trusted_from or last + 1)):
                    self._report(
                        "untrusted-key", seq, self._untrusted(kid), line=start + seq - run.first_seq
                    )
            revoked = self._revoked.get(kid)
            retired = self._retired_after.get(kid)
            # Only a key with a revocation or a retirement needs a per-seq look.
            if (revoked is not None and last >= revoked) or (
                retired is not None and last > retired
            ):
                for seq in range(first, last + 1):
                    line = start + seq - run.first_seq
                    if revoked is not None and seq >= revoked:
                        self._report(
                            "revoked-key", seq, f"{kid} is revoked from seq {revoked}", line=line
                        )
                    if retired is not None and seq > retired:
                        self._report(
                            "retired-key", seq, f"{kid} was rotated out at seq {retired}", line=line
                        )
        self._line += run.size
        self._head_line = self._line
        self._expected = run.last_seq + 1
        self._last_hash = run.last_hash
        self._head = (run.last_seq, run.last_hash)
        self._records += run.size
        for seq, record_hash in run.captured:
            self._captured[seq] = record_hash
        return True

    def _trusted_from(self, kid: str) -> int | None:
        return None if self._trusted is None else self._trusted.get(kid)

    @staticmethod
    def _untrusted(kid: str) -> str:
        return (
            f"{kid} is not trusted: no record signed by a trusted key introduced it and it "
            "is not pinned outside the workspace (`ledger key pin` vouches for a key)"
        )

    def _check_key(self, seq: int, facts: LineFacts) -> None:
        kid = str(facts.key)
        self._keys_used.add(kid)
        trusted_from = self._trusted_from(kid)
        trusted = trusted_from is not None and trusted_from <= seq
        if (
            not trusted
            and facts.key is not None
            and not any(code == "unknown-key" for code, _ in facts.problems)
        ):
            self._report("untrusted-key", seq, self._untrusted(kid))
        revoked = self._revoked.get(kid)
        if revoked is not None and seq >= revoked:
            self._report("revoked-key", seq, f"{kid} is revoked from seq {revoked}")
        retired = self._retired_after.get(kid)
        if retired is not None and seq > retired:
            self._report("retired-key", seq, f"{kid} was rotated out at seq {retired}")
        event = facts.key_event
        if event is None:
            return
        # A key event extends trust only when its own record is sound and trusted.
        vouches = trusted and not facts.problems and self._trusted is not None
        if event[0] == "rotated":
            _, old_key, new_key, cosigned = event
            if not cosigned:
                self._report(
                    "bad-rotation", seq, f"rotation to {new_key} is not signed by a pinned new key"
                )
            else:
                self._retired_after.setdefault(str(old_key), seq)
                if vouches and self._trusted is not None:
                    self._trusted.setdefault(str(new_key), seq + 1)
        elif event[0] == "added":
            if vouches and self._trusted is not None and isinstance(event[1], str):
                self._trusted.setdefault(event[1], seq + 1)
        elif event[0] == "revoked":
            _, key, from_seq = event
            current = self._revoked.get(str(key))
            self._revoked[str(key)] = from_seq if current is None else min(current, from_seq)

    def feed_torn_tail(self, nbytes: int, facts: LineFacts | None = None) -> None:
        """The file ended with ``nbytes`` after its last newline (``facts``: those bytes checked
        as a line). A complete, sound record there lacks only its final newline: it is folded
        and reported as such -- ``ledger repair`` keeps it -- rather than as a torn tail."""
        if facts is not None and not facts.problems and facts.seq is not None:
            self.feed(facts)
            self._report(
                "missing-newline",
                facts.seq,
                "the last record is complete and valid but lacks its final newline",
            )
            return
        self._line += 1
        if facts is not None and facts.problems and facts.problems[0][0] == "blank-line":
            self._report(
                "blank-line",
                self._expected,
                f"{nbytes} byte(s) of whitespace after the last record",
            )
            return
        self._report(
            "torn-tail",
            self._expected,
            f"{nbytes} byte(s) after the last complete record (crash mid-append)",
        )

    def finish(self) -> VerifyReport:
        """Close the fold: empty-ledger and checkpoint checks, then the report."""
        if self._records == 0 and self._problem_count == 0:
            self._report("empty", 0, "the ledger holds no records", line=0)
        results = [self._compare(cp) for cp in self._checkpoints]
        for result in results:
            if not result.ok:
                self._report(str(result.code), result.size - 1, result.message, line=0)
        # Repairable: every problem is crash residue or whitespace after the last record.
        repairable = 0 < self._problem_count == len(self._problems) and all(
            p.code in _REPAIRABLE
            and (
                p.line > self._head_line
                or (p.code in _ON_LAST_RECORD and p.line == self._head_line)
            )
            for p in self._problems
        )
        return VerifyReport(
            ledger_id=self._ledger_id,
            records=self._records,
            head_seq=self._head[0] if self._head else None,
            head_hash=self._head[1] if self._head else None,
            problems=self._problems,
            problem_count=self._problem_count,
            checkpoints=results,
            keys_used=sorted(self._keys_used),
            repairable=repairable,
        )

    def _compare(self, cp: CheckpointTarget) -> CheckpointResult:
        if self._ledger_id is not None and cp.ledger_id != self._ledger_id:
            return CheckpointResult(
                cp.name,
                cp.size,
                False,
                "foreign-checkpoint",
                f"checkpoint {cp.name} is for ledger {cp.ledger_id}",
            )
        if cp.size == 0:
            return CheckpointResult(cp.name, 0, True, None, "empty checkpoint")
        head_seq = self._head[0] if self._head else -1
        if head_seq < cp.size - 1:
            return CheckpointResult(
                cp.name,
                cp.size,
                False,
                "truncated",
                f"checkpoint {cp.name} saw {cp.size} records; the ledger now ends at seq "
                f"{head_seq} (truncated or rolled back)",
            )
        seen = self._captured.get(cp.size - 1)
        if seen != cp.head:
            return CheckpointResult(
                cp.name,
                cp.size,
                False,
                "forked",
                f"record seq {cp.size - 1} differs from checkpoint {cp.name} (history rewritten "
                "or forked)",
            )
        return CheckpointResult(cp.name, cp.size, True, None, "consistent")


def verify_lines(
    lines: Iterable[bytes],
    keys: Mapping[str, Ed25519PublicKey],
    *,
    torn_tail: bytes = b"",
    revoked_from: Mapping[str, int] | None = None,
    checkpoints: Sequence[CheckpointTarget] = (),
    trusted: Mapping[str, int] | None = None,
) -> VerifyReport:
    """Verify complete lines in-process (pure: no file access).

    Args:
        lines: the ledger's complete lines, without newlines, in file order.
        keys: pinned public keys by key id.
        torn_tail: bytes after the last newline, if any.
        revoked_from: pinned revocations, key id → first revoked seq.
        checkpoints: verified checkpoints to compare against.
        trusted: keys pinned outside the workspace (key id → first seq); ``None``: trust
            the genesis key and what it introduces.
    """
    fold = ChainVerifier(revoked_from=revoked_from, checkpoints=checkpoints, trusted=trusted)
    for line in lines:
        fold.feed(check_line(line, keys))
    if torn_tail:
        fold.feed_torn_tail(len(torn_tail), check_line(torn_tail, keys))
    return fold.finish()
