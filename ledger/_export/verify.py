"""``ledger verify-export DIR``: check an export with nothing but the export itself.

No access to the workspace: the manifest's signature against the keys shipped alongside (and
the signer must be a key of the chain itself, or one the auditor pins with ``--trusted-key``),
every listed file's SHA-256, size and row count, nothing unlisted, the raw segment's chain
(hashes, signatures, links, contiguous seqs from the manifest's anchor), every data row
regenerated from the segment with the query the manifest states, and every disclosure the
export carries opening a commitment of the segment (the fields none opens are counted as
withheld, or forgotten, as ``ledger verify`` counts them). SQL is never taken from the
manifest: it is rebuilt from the (signed) filters and compared with the stated query.

Every problem is reported, not just the first.
"""

from __future__ import annotations

import base64
import binascii
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from ledger._errors import LedgerError, UnverifiableError
from ledger._evidence.disclosure import (
    DisclosureReport,
    check_disclosures,
    disclosed_field,
    field_disclosed,
)
from ledger._evidence.keys import Keyring
from ledger._export.agent_trace import trace_lines
from ledger._export.data import CSV_TYPES, ExportFilters, file_query, trace_rows
from ledger._export.export import selected_lines, sha256_file
from ledger._export.layout import DISCLOSURES, MANIFEST, SEGMENT, SIGNATURE
from ledger._export.manifest import ExportManifest
from ledger._export.segment import segment_records, verify_segment
from ledger._query.engine import sandboxed_connection
from ledger._query.sources import LedgerSource, Verification
from ledger._query.views import ATTRIBUTION_RANGES_MACRO

if TYPE_CHECKING:
    import duckdb

__all__ = ["ExportCheck", "ExportProblem", "export_source", "verify_export"]

_LISTED_MISMATCHES = 5


class ExportProblem(NamedTuple):
    """One thing wrong with an export."""

    code: str
    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        """JSON-ready dict."""
        return self._asdict()


class ExportCheck:
    """The result of :func:`verify_export`; truthy when the export is intact."""

    def __init__(
        self,
        directory: Path,
        problems: list[ExportProblem],
        manifest: dict[str, Any] | None,
        disclosures: DisclosureReport | None = None,
    ) -> None:
        self.directory = directory
        self.problems = problems
        self.manifest = manifest
        #: The segment's commitments against the disclosures the export carries.
        self.disclosures = disclosures

    @property
    def ok(self) -> bool:
        """No problem."""
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok

    def summary(self) -> str:
        """One line."""
        if self.ok and self.manifest is not None:
            seg = self.manifest["segment"]
            held = self.disclosures
            fields = (
                f", {held.withheld} fields withheld ({held.forgotten} forgotten)"
                if held is not None and held.committed
                else ""
            )
            return (
                f"ok: export of ledger {self.manifest['ledger_id']}, seqs {seg['first_seq']}"
                f"..{seg['last_seq']}, {len(self.manifest['files'])} files{fields}, signed by "
                f"{self.manifest['signing_key']}"
            )
        first = self.problems[0]
        return f"FAILED: {len(self.problems)} problem(s); first: {first.code}: {first.message}"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (``verify-export --json``)."""
        return {
            "directory": str(self.directory),
            "ok": self.ok,
            "problems": [p.to_json() for p in self.problems],
            "ledger_id": self.manifest.get("ledger_id") if self.manifest else None,
            "segment": self.manifest.get("segment") if self.manifest else None,
            "signing_key": self.manifest.get("signing_key") if self.manifest else None,
            "disclosures": None
            if self.disclosures is None
            else {
                "committed": self.disclosures.committed,
                "disclosed": self.disclosures.disclosed,
                "withheld": self.disclosures.withheld,
                "forgotten": self.disclosures.forgotten,
            },
        }


def _safe_relative(path: str) -> bool:
    pure = PurePosixPath(path)
    return bool(path) and not pure.is_absolute() and ".." not in pure.parts


class _Checker:
    def __init__(
        self,
        directory: Path,
        trusted_keys: frozenset[str],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        self.dir = directory
        self.trusted = trusted_keys
        self.progress = progress
        self.problems: list[ExportProblem] = []
        self.disclosures: DisclosureReport | None = None

    def problem(self, code: str, path: str, message: str) -> None:
        self.problems.append(ExportProblem(code, path, message))

    def run(self) -> ExportCheck:
        raw = self._read(MANIFEST, "missing-manifest", "manifest.json is missing")
        if raw is None:
            return ExportCheck(self.dir, self.problems, None)
        try:
            manifest = ExportManifest.model_validate_json(raw)
        except ValueError as exc:
            first = str(exc).splitlines()
            self.problem(
                "bad-manifest",
                MANIFEST,
                f"manifest.json does not match the schema ({' '.join(first[:3])})",
            )
            return ExportCheck(self.dir, self.problems, None)
        keys = self._keys()
        self._signature(raw, manifest, keys)
        self._files(manifest)
        chain_keys = self._segment(manifest, keys)
        if chain_keys is not None and manifest.signing_key not in chain_keys:
            self.problem(
                "signing-key-not-in-chain",
                SIGNATURE,
                f"the manifest is signed by {manifest.signing_key}, which signed no "
                "record of the segment (a foreign key re-signed it?)",
            )
        self._rows(manifest)
        self._disclosures(manifest)
        return ExportCheck(self.dir, self.problems, json.loads(raw), self.disclosures)

    def _read(self, name: str, code: str, message: str) -> bytes | None:
        try:
            return (self.dir / name).read_bytes()
        except FileNotFoundError:
            self.problem(code, name, message)
        except OSError as exc:
            self.problem("unreadable", name, f"cannot read {name}: {exc.strerror}")
        return None

    def _keys(self) -> Keyring | None:
        try:
            return Keyring.load(self.dir / "keys")
        except LedgerError as exc:
            self.problem("bad-keys", "keys", str(exc))
            return None

    def _signature(self, raw: bytes, manifest: ExportManifest, keys: Keyring | None) -> None:
        encoded = self._read(
            SIGNATURE, "missing-signature", "manifest.sig is missing: the manifest is unsigned"
        )
        if encoded is None:
            return
        entry = keys.get(manifest.signing_key) if keys else None
        if entry is None:
            self.problem(
                "unknown-signing-key",
                SIGNATURE,
                f"{manifest.signing_key} is not among the keys shipped in keys/",
            )
            return
        try:
            signature = base64.b64decode(encoded.strip(), validate=True)
        except binascii.Error:
            signature = b""
        if not entry.verify(signature, raw):
            self.problem(
                "bad-signature",
                SIGNATURE,
                f"manifest.sig does not verify under {manifest.signing_key}",
            )
        if self.trusted and manifest.signing_key not in self.trusted:
            self.problem(
                "untrusted-signing-key",
                SIGNATURE,
                f"signed by {manifest.signing_key}, not by a key given with --trusted-key",
            )

    def _files(self, manifest: ExportManifest) -> None:
        listed = {MANIFEST, SIGNATURE}
        for entry in manifest.files:
            if not _safe_relative(entry.path):
                self.problem("bad-path", entry.path, "a listed path leaves the export directory")
                continue
            listed.add(entry.path)
            path = self.dir / entry.path
            if not path.is_file():
                self.problem("missing-file", entry.path, f"{entry.path} is listed but missing")
                continue
            if path.stat().st_size != entry.bytes or sha256_file(path) != entry.sha256:
                self.problem(
                    "hash-mismatch",
                    entry.path,
                    f"{entry.path} differs from the manifest (sha256 or size)",
                )
        for path in sorted(p for p in self.dir.rglob("*") if p.is_file()):
            relative = path.relative_to(self.dir).as_posix()
            if relative not in listed:
                self.problem("unlisted-file", relative, f"{relative} is not listed in the manifest")

    def _segment(self, manifest: ExportManifest, keys: Keyring | None) -> set[str] | None:
        seg = manifest.segment
        path = self.dir / SEGMENT
        if keys is None or not path.is_file():
            if not path.is_file() and SEGMENT not in {f.path for f in manifest.files}:
                self.problem("missing-file", SEGMENT, "the raw segment is missing")
            return None
        entries = {e.kid: e for e in keys}
        try:
            report = verify_segment(
                path, entries, (seg.first_seq, seg.first_prev), self.progress, self.trusted
            )
        except LedgerError as exc:
            self.problem("segment-unverifiable", SEGMENT, str(exc))
            return None
        for p in report.problems:
            self.problem(f"segment-{p.code}", SEGMENT, f"seq {p.seq}: {p.message}")
        if report.head_seq != seg.last_seq or report.head_hash != seg.last_hash:
            self.problem(
                "segment-truncated",
                SEGMENT,
                f"the segment ends at seq {report.head_seq}, the manifest says "
                f"{seg.last_seq} ({seg.last_hash[:16]}…)",
            )
        if report.records != seg.records:
            self.problem(
                "segment-count",
                SEGMENT,
                f"{report.records} records in the segment, the manifest says {seg.records}",
            )
        chain = set(report.keys_used)
        try:
            for record in segment_records(path):
                body = record.data.get("body")
                if record.data.get("kind") == "key.rotated" and isinstance(body, dict):
                    chain.add(str(body.get("new_key")))
        except LedgerError:
            pass  # an unreadable line is already a segment problem
        return chain

    def _disclosures(self, manifest: ExportManifest) -> None:
        """Each disclosure carried opens a commitment of the segment (else: exit 1, naming
        the seq and field); the commitments none opens are counted, not failed."""
        segment = self.dir / SEGMENT
        if not segment.is_file():
            return
        carried: list[bytes] = []
        names: list[str] = []
        for entry in manifest.files:
            path = self.dir / entry.path
            if entry.role == "disclosures" and _safe_relative(entry.path) and path.is_file():
                carried += path.read_bytes().splitlines()
                names.append(entry.path)
        with segment.open("rb") as handle:
            report = check_disclosures(handle, carried)
        self.disclosures = report
        where = ", ".join(names) or "disclosures"
        self._disclosed_fields(manifest, carried, where)
        first = manifest.segment.first_seq
        for index, field, message in report.bad:
            self.problem("bad-disclosure", where, f"seq {first + index} {field}: {message}")
        if report.orphans:
            self.problem(
                "orphan-disclosure",
                where,
                f"{report.orphans} disclosure(s) open no commitment of the segment",
            )

    def _disclosed_fields(self, manifest: ExportManifest, carried: list[bytes], where: str) -> None:
        """Each disclosure carried is of a field the signed manifest says the export discloses
        (``--disclose none``: none; ``policy``: ``disclosed_fields``; ``all``: any)."""
        allowed: tuple[str, ...] | None = ()
        if manifest.disclose == "all":
            allowed = None
        elif manifest.disclose == "policy":
            allowed = tuple(manifest.disclosed_fields or ())
        if allowed is None:
            return
        outside = [
            field
            for field in (disclosed_field(raw) for raw in carried)
            if field is not None and not field_disclosed(field, allowed)
        ]
        if outside:
            named = ", ".join(allowed) if allowed else "none"
            self.problem(
                "undisclosed-field",
                where,
                f"{len(outside)} disclosure(s) of a field the manifest does not disclose "
                f"(first: {outside[0]}; --disclose {manifest.disclose} names: {named})",
            )

    def _rows(self, manifest: ExportManifest) -> None:
        segment = self.dir / SEGMENT
        if not segment.is_file():
            return
        filters = ExportFilters(**manifest.filters.model_dump())
        with tempfile.TemporaryDirectory(prefix="ledger-verify-export-") as spill:
            self._compare_all(manifest, filters, segment, Path(spill))

    def _compare_all(
        self, manifest: ExportManifest, filters: ExportFilters, segment: Path, spill: Path
    ) -> None:
        fmt = manifest.export_format
        con = sandboxed_connection(spill)
        con.execute(ATTRIBUTION_RANGES_MACRO)
        try:
            total = 0
            for entry in manifest.files:
                if entry.role != "data" or not _safe_relative(entry.path):
                    continue
                partition = (
                    (entry.partition.ledger_id, entry.partition.date) if entry.partition else None
                )
                if entry.query != file_query(fmt, filters, SEGMENT, partition):
                    self.problem(
                        "query-mismatch",
                        entry.path,
                        "the stated query is not the one these filters produce",
                    )
                path = self.dir / entry.path
                if not path.is_file():
                    continue
                try:
                    found = self._compare(
                        con, fmt, filters, segment=segment, path=path, partition=partition
                    )
                except LedgerError as exc:
                    self.problem("unreadable", entry.path, str(exc))
                    continue
                total += found
                if entry.rows != found:
                    self.problem(
                        "row-count", entry.path, f"{found} rows, the manifest says {entry.rows}"
                    )
            if fmt != "agent-trace" and total != manifest.selected_records:
                self.problem(
                    "missing-rows",
                    "data",
                    f"the data files hold {total} rows; the filters select "
                    f"{manifest.selected_records} records of the segment",
                )
        finally:
            con.close()

    def _compare(
        self,
        con: duckdb.DuckDBPyConnection,
        fmt: str,
        filters: ExportFilters,
        *,
        segment: Path,
        path: Path,
        partition: tuple[str, str] | None,
    ) -> int:
        import duckdb  # noqa: PLC0415

        name = path.relative_to(self.dir).as_posix()
        if fmt in ("jsonl", "agent-trace"):
            expected = list(_expected_lines(con, fmt, filters, segment))
            actual = path.read_bytes().splitlines(keepends=True)
            bad = [i + 1 for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b]
            if bad or len(actual) != len(expected):
                self.problem(
                    "row-mismatch",
                    name,
                    f"{len(bad)} line(s) differ from the segment (first at line "
                    f"{bad[0] if bad else min(len(actual), len(expected)) + 1}); "
                    f"{len(actual)} lines, {len(expected)} expected",
                )
            return len(actual)
        quoted = _quote(str(path))
        if fmt == "parquet":
            actual_sql = f"SELECT * FROM read_parquet({quoted}, hive_partitioning = false)"
        else:
            columns = ", ".join(f"{_quote(k)}: {_quote(v)}" for k, v in CSV_TYPES.items())
            actual_sql = f"SELECT * FROM read_csv({quoted}, header = true, columns = {{{columns}}})"
        expected_sql = file_query(fmt, filters, str(segment), partition)  # type: ignore[arg-type]
        try:
            count = con.execute(f"SELECT count(*) FROM ({actual_sql})").fetchone()
            missing = con.execute(
                f"SELECT seq FROM (({expected_sql}) EXCEPT ALL ({actual_sql})) "
                f"ORDER BY seq LIMIT {_LISTED_MISMATCHES}"
            ).fetchall()
            extra = con.execute(
                f"SELECT seq FROM (({actual_sql}) EXCEPT ALL ({expected_sql})) "
                f"ORDER BY seq LIMIT {_LISTED_MISMATCHES}"
            ).fetchall()
        except duckdb.Error as exc:
            raise UnverifiableError(f"cannot read {name}: {' '.join(str(exc).split())}") from None
        if missing or extra:
            self.problem(
                "row-mismatch",
                name,
                f"rows differ from the segment: seqs {[r[0] for r in missing]} are "
                f"missing or changed, seqs {[r[0] for r in extra]} are not in the "
                "segment as exported",
            )
        return int(count[0]) if count else 0


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _expected_lines(
    con: duckdb.DuckDBPyConnection, fmt: str, filters: ExportFilters, segment: Path
) -> Iterator[bytes]:
    query = file_query(fmt, filters, str(segment))  # type: ignore[arg-type]
    if fmt == "jsonl":
        return selected_lines(con, segment, query)
    return trace_lines(trace_rows(con, query))


def verify_export(
    directory: Path,
    *,
    trusted_keys: frozenset[str] = frozenset(),
    progress: Callable[[int, int], None] | None = None,
) -> ExportCheck:
    """Check an export directory on its own (see the module docstring).

    Raises:
        UnverifiableError: ``directory`` is not a directory.
    """
    if not directory.is_dir():
        raise UnverifiableError(f"{directory} is not a directory")
    return _Checker(directory, trusted_keys, progress).run()


def export_source(directory: Path) -> LedgerSource:
    """An export directory as a query source (its segment; verified with verify_export)."""
    segment = directory / SEGMENT

    def verify() -> Verification:
        check = verify_export(directory)
        return Verification("verified" if check.ok else "failed", check.summary())

    return LedgerSource(
        str(directory),
        segment,
        records=lambda: segment_records(segment),
        verify=verify,
        disclosures=directory / DISCLOSURES,
    )
