"""Writing a query result: an aligned text table, or JSON / CSV / Parquet through DuckDB.

The locked connection cannot write files (that is the point of the lock), so file formats go
through Arrow record batches into a *second* in-memory DuckDB that never sees user SQL and only
writes the one output file. Files are written to a temporary name beside the target and renamed,
so a failure leaves nothing half-written.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, get_args

from ledger._errors import InputError, StorageError

if TYPE_CHECKING:
    import duckdb

__all__ = ["FORMATS", "OutputFormat", "check_output_path", "format_table", "write_result"]

OutputFormat = Literal["table", "json", "csv", "parquet"]
FORMATS: Final = get_args(OutputFormat)
_CELL_WIDTH: Final = 60
_BATCH_ROWS: Final = 65_536


def _protected_area(path: Path) -> str | None:
    """Why ``path`` is protected (it lies in the ledger, a key folder, a client's hooks…, or
    is a hard link to one of them), or ``None``. Judged like a file tool's write: the real
    path, against the workspace holding it and the user's home."""
    from ledger._governance.analysis.protected import ProtectedAreas  # noqa: PLC0415

    real = Path(os.path.realpath(path))
    root = next(
        (d for d in (real.parent, *real.parent.parents) if (d / ".orchestration").is_dir()),
        real.parent,
    )
    areas = ProtectedAreas.for_workspace(str(root))
    area = areas.area_of(str(real))
    if area is not None:
        return f"lies in {area}"
    # git runs what its config and hooks name: a result shaped as a config section is a way
    # to make the person's next git command run the agent's code.
    home = Path(os.path.expanduser("~"))  # noqa: PTH111
    if ".git" in real.parts or real in (home / ".gitconfig", home / ".config" / "git" / "config"):
        return "lies in git's configuration or hooks"
    return areas.alias_of(str(real))


def check_output_path(path: Path, *, force: bool) -> None:
    """Refuse a protected target (even with ``force``: a query result is never the ledger, a
    key or a hook file), an existing target (unless ``force``) or a directory we cannot write
    into."""
    area = _protected_area(path)
    if area is not None:
        raise InputError(f"refusing --out {path}: it {area}, which ledger query never writes")
    if path.is_dir():
        raise InputError(f"{path} is a directory; --out takes a file name")
    if path.exists() and not force:
        raise InputError(f"{path} exists; pass --force to replace it")
    parent = path.parent if str(path.parent) else Path()
    if not parent.is_dir():
        raise InputError(f"{parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StorageError(f"cannot write into {parent}: permission denied")


def _cell(value: Any) -> str:  # noqa: ANN401 -- any DuckDB value
    if isinstance(value, list):
        text = ", ".join("NULL" if v is None else str(v) for v in value)
    else:
        text = "NULL" if value is None else str(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= _CELL_WIDTH else text[: _CELL_WIDTH - 1] + "…"


def format_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterable[str]:
    """Lines of an aligned text table (every row; long cells are clipped)."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    yield "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
    yield "  ".join("-" * w for w in widths)
    for row in cells:
        yield "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
    yield f"({len(cells)} row{'s' if len(cells) != 1 else ''})"


def _copy_options(fmt: OutputFormat) -> str:
    if fmt == "json":
        return "FORMAT json, ARRAY true"
    if fmt == "csv":
        return "FORMAT csv, HEADER true"
    return "FORMAT parquet, COMPRESSION zstd"


def write_result(
    relation: duckdb.DuckDBPyRelation,
    fmt: OutputFormat,
    out: Path | None,
    *,
    force: bool = False,
    stream: IO[str] | None = None,
) -> int:
    """Write ``relation`` as ``fmt`` to ``out`` (or ``stream``, default stdout); the row count.

    Raises:
        InputError: Parquet without ``out``, an existing ``out`` without ``force``, a protected
            ``out``; the query failed while its rows were written.
        StorageError: the file could not be written.
    """
    stream = stream or sys.stdout
    if fmt == "table":
        rows = relation.fetchall()
        lines = format_table(relation.columns, rows)
        if out is None:
            for line in lines:
                stream.write(line + "\n")
        else:
            check_output_path(out, force=force)
            _atomic_write(
                out,
                lambda path: path.write_text(
                    "".join(line + "\n" for line in lines), encoding="utf-8"
                ),
            )
        return len(rows)
    if fmt == "parquet" and out is None:
        raise InputError("--format parquet writes a file: pass --out FILE")
    if out is not None:
        check_output_path(out, force=force)
    with tempfile.TemporaryDirectory(prefix="ledger-out-") as spill:
        if out is not None:
            return _atomic_write(out, lambda path: _copy(relation, fmt, path, Path(spill)))
        target = Path(spill) / f"result.{fmt}"
        count = _copy(relation, fmt, target, Path(spill))
        with target.open(encoding="utf-8") as handle:
            shutil.copyfileobj(handle, stream)
        return count


def _copy(relation: duckdb.DuckDBPyRelation, fmt: OutputFormat, path: Path, spill: Path) -> int:
    """Stream the locked relation's batches into a writer database that COPYs them out."""
    import duckdb  # noqa: PLC0415

    # duckdb 2 renamed fetch_record_batch to to_arrow_reader (the old name warns); pyproject
    # allows duckdb >= 1.3, and an older release may have only the old name.
    to_reader = getattr(relation, "to_arrow_reader", None)
    reader = (
        to_reader(_BATCH_ROWS)
        if to_reader is not None
        else relation.fetch_record_batch(_BATCH_ROWS)
    )
    # The query runs while the writer reads its batches: an error of the query (a cast that
    # fails on row 150,000, the time limit) surfaces inside the writer's COPY. Keep it, so it
    # is reported as the query's, not as a file that could not be written.
    import pyarrow as pa  # type: ignore[import-untyped]  # noqa: PLC0415 -- duckdb's reader needs it

    failed: list[Exception] = []

    def batches() -> Iterator[Any]:  # pyarrow.RecordBatch
        try:
            yield from reader
        except Exception as exc:
            failed.append(exc)
            raise

    writer = duckdb.connect(":memory:")
    try:
        writer.execute("SET temp_directory = ?", [str(spill)])
        writer.register(
            "result_batches", pa.RecordBatchReader.from_batches(reader.schema, batches())
        )
        target = "'" + str(path).replace("'", "''") + "'"
        copied = writer.execute(
            f"COPY (SELECT * FROM result_batches) TO {target} ({_copy_options(fmt)})"
        ).fetchone()
    except duckdb.Error as exc:
        if failed:  # the query's error (pyarrow wraps DuckDB's in an OSError): one line
            raise InputError(" ".join(str(failed[0]).split())) from None
        raise StorageError(f"cannot write {path}: {' '.join(str(exc).split())}") from None
    finally:
        writer.close()
    return int(copied[0]) if copied else 0


def _atomic_write(out: Path, write: Any) -> int:  # noqa: ANN401 -- a writer callback
    """Run ``write(tmp)`` for a temporary file beside ``out``, then rename it into place."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:
        raise StorageError(f"cannot write into {out.parent}: {exc.strerror or exc}") from None
    os.close(handle)
    tmp = Path(name)
    try:
        result = write(tmp)
        tmp.replace(out)
    except OSError as exc:
        raise StorageError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return int(result) if isinstance(result, int) else 0
