"""The ledgers a query reads: a workspace's ledger, or the raw segment of an export.

A source knows its JSONL file (which DuckDB reads with explicit columns), how to stream its
records through the shared read path (for views folded in Python), and how to verify itself.
Export directories are sources too; the export layer builds those (``ledger/_export``), and
``discover_sources`` there finds both kinds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from ledger._errors import LedgerError, NotInitializedError
from ledger._evidence.ledger import Ledger

if TYPE_CHECKING:
    from ledger._evidence.record import Record
    from ledger._projections.fetched import FetchedReading

__all__ = ["LedgerSource", "Verification", "fetched_sources"]


class Verification(NamedTuple):
    """How a source's integrity was established."""

    state: Literal["verified", "failed", "unverified"]
    summary: str


class LedgerSource:
    """One ledger to query.

    Attributes:
        label: how messages name it (a workspace root or an export directory).
        jsonl: the file DuckDB reads.
        intents_path: ``active_intents.yaml`` of a workspace; None for exports.
        root: the workspace root (its files are the live files); None for exports.
        disclosures: the disclosure store (a workspace's, or an export's disclosures.jsonl);
            None: every committed field is withheld.
        environ: the environment the workspace's caches are read under (None: this
            process's).
    """

    def __init__(
        self,
        label: str,
        jsonl: Path,
        *,
        records: Callable[[], Iterator[Record]],
        verify: Callable[[], Verification],
        intents_path: Path | None = None,
        root: Path | None = None,
        disclosures: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.label = label
        self.environ = environ
        self.jsonl = jsonl
        self.intents_path = intents_path
        self.root = root
        self.disclosures = disclosures
        self._records = records
        self._verify = verify
        self._ledger_id: str | None = None

    @classmethod
    def workspace(
        cls, root: str | Path | None, *, environ: Mapping[str, str] | None = None
    ) -> LedgerSource:
        """The ledger of the workspace at ``root`` (found like git when None). ``environ``:
        where this user's ledger home is (its caches' secret, the checkpoints; default this
        process's environment)."""
        ledger = Ledger.open(root, environ=environ)

        def verify() -> Verification:
            report = ledger.verify()
            return Verification("verified" if report.ok else "failed", report.summary())

        return cls(
            str(ledger.workspace.root),
            ledger.file.path,
            records=ledger.records,
            verify=verify,
            intents_path=ledger.workspace.orchestration / "active_intents.yaml",
            root=ledger.workspace.root,
            disclosures=ledger.disclosures.path,
            environ=environ,
        )

    @classmethod
    def fetched(cls, reading: FetchedReading) -> LedgerSource:
        """A teammate's ledger ``ledger fetch`` kept, as :func:`fetched_sources` opened and
        verified it, with the disclosures fetched with it."""
        from ledger._evidence.read import read_records  # noqa: PLC0415
        from ledger._evidence.record import Record  # noqa: PLC0415

        def records() -> Iterator[Record]:
            for stored in read_records(reading.segment):
                yield Record(stored.line, stored.data)

        verified = Verification(
            "verified",
            f"{reading.name}: verified here (evidence commit {reading.commit[:12]})",
        )
        return cls(
            reading.name,
            reading.segment,
            records=records,
            verify=lambda: verified,
            disclosures=reading.disclosures.path,
        )

    @property
    def ledger_id(self) -> str:
        """The ledger id of the first record."""
        if self._ledger_id is None:
            first = next(self.records(), None)
            if first is None:
                raise NotInitializedError(f"{self.label}: the ledger holds no records")
            self._ledger_id = first.ledger_id
        return self._ledger_id

    def records(self) -> Iterator[Record]:
        """Stream the records (not verified)."""
        return self._records()

    def verify(self) -> Verification:
        """Verify the chain; a ledger that cannot be checked is ``unverified``, not an error."""
        try:
            return self._verify()
        except LedgerError as exc:
            return Verification("unverified", f"could not verify: {exc}")


@contextlib.contextmanager
def fetched_sources(
    root: str | Path | None, *, environ: Mapping[str, str] | None = None
) -> Iterator[tuple[list[LedgerSource], list[str]]]:
    """The teammates' ledgers ``ledger fetch`` kept in the repository of the workspace at
    ``root``, each verified here, as query sources for the length of the ``with``:
    ``(sources, warnings)``; one that does not verify is left out (never queried as
    evidence), and a warning names it with the command that fetches it again.

    Raises:
        WorkspaceNotFoundError: no ``.orchestration/`` was found.
    """
    from ledger._projections.fetched import open_fetched_ledgers  # noqa: PLC0415

    with open_fetched_ledgers(root, environ=environ) as (readings, warnings):
        yield [LedgerSource.fetched(r) for r in readings], warnings
