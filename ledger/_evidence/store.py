"""The JSONL file at the edge: locking, tail reads, appends, fsync, streaming reads.

Append protocol (docs/architecture.md, design note 8):

1. ``open(O_RDWR | O_APPEND)`` and take an exclusive ``flock`` on the ledger file itself. A
   ``flock`` belongs to the open file description, so parallel hook *processes* serialise, and
   the lock dies with the process if it is killed.
2. Read the tail under the lock; refuse to append after a torn line.
3. Write the whole batch with one ``write()`` (looping only on a short write). If the write fails,
   truncate back to the old size, so no partial line is ever left by an error we saw.
4. ``fsync``. A failed fsync is fatal: raise and never retry ("fsyncgate": Linux may have
   dropped the dirty pages and a second fsync can falsely succeed).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ledger._errors import LockTimeoutError, NotInitializedError, StorageError, TornTailError
from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "LIBRARY_LOCK_DEADLINE",
    "LOCK_DEADLINE",
    "LedgerFile",
    "Tail",
    "Transaction",
    "lock_holder",
]

_TAIL_WINDOW: Final = 64 * 1024
_WHITESPACE: Final = b" \t\r\n"
READ_CHUNK: Final = 4 * 1024 * 1024

# How long anyone waits for the lock. Every append holds it for milliseconds; a process holding
# it for longer is stuck or hostile (``flock agent_trace.jsonl sleep 1e9 &``). Waiting it out
# would outlast the clients' hook timeouts (Copilot CLI's 30 s, a UserPromptSubmit's 30 s), and
# a timed-out hook lets the tool call run unrecorded: so the wait ends well before, and the call
# is denied. Below the thin client's 3 s budget too, so the decider itself answers the denial.
LOCK_DEADLINE: Final = 2.5
# A person's command or an embedding program has no client timer to beat, and under load (many
# writers, a slow disk) an honest queue can last seconds: it waits longer, and still ends with the
# holder's name rather than hanging on a stuck process. Hook calls set LOCK_DEADLINE instead.
LIBRARY_LOCK_DEADLINE = 30.0
_LOCK_POLL_FIRST: Final = 0.001
_LOCK_POLL_MAX: Final = 0.05


class Tail(NamedTuple):
    """The last complete record, as far as appending needs it."""

    seq: int
    hash: str
    ledger_id: str
    key: str
    kind: str
    body: dict[str, Any]
    size: int  # file size in bytes


def _describe_tail(torn: bytes) -> str:
    """What the bytes after the last newline are, for the refusal that names the fix."""
    if not torn.strip():
        return f"ends in {len(torn)} byte(s) of trailing whitespace after its last record"
    if torn.startswith(b"{") and torn.endswith(b"}") and b'"sig":' in torn:
        return (
            "ends in a record that lacks its final newline (`ledger repair` keeps the record "
            "and adds the newline)"
        )
    return f"ends in a torn line ({len(torn)} bytes, a crash mid-append)"


def _oserror(action: str, path: Path, exc: OSError) -> StorageError:
    return StorageError(f"cannot {action} {path}: {exc.strerror or exc}")


class Transaction:
    """Exclusive access to the ledger file; obtained from :meth:`LedgerFile.transaction`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self.size = os.fstat(fd).st_size

    def read_at(self, offset: int, length: int) -> bytes:
        """Read ``length`` bytes at ``offset`` (short only at end of file)."""
        chunks: list[bytes] = []
        while length > 0:
            chunk = os.pread(self._fd, length, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            length -= len(chunk)
        return b"".join(chunks)

    def torn_bytes(self) -> tuple[int, bytes]:
        """``(offset, bytes)`` after the last newline; empty bytes when the file ends cleanly."""
        start = self.line_start(self.size)
        return start, self.read_at(start, self.size - start)

    def line_start(self, end: int) -> int:
        """Where the line that offset ``end`` falls in starts (just after a newline, or 0)."""
        window = _TAIL_WINDOW
        while True:
            start = max(0, end - window)
            cut = self.read_at(start, end - start).rfind(b"\n")
            if cut >= 0:
                return start + cut + 1
            if start == 0:
                return 0
            window *= 2

    def content_end(self) -> int:
        """Offset just after the last byte that is not whitespace (0 if there is none)."""
        end = self.size
        window = _TAIL_WINDOW
        while end > 0:
            start = max(0, end - window)
            data = self.read_at(start, end - start)
            stripped = data.rstrip(_WHITESPACE)
            if stripped:
                return start + len(stripped)
            end = start
            window *= 2
        return 0

    def last_line(self, before: int) -> tuple[int, bytes] | None:
        """The complete line that ends (with its newline) at offset ``before``."""
        if before <= 0:
            return None
        window = _TAIL_WINDOW
        while True:
            start = max(0, before - window)
            data = self.read_at(start, before - start)
            cut = data.rfind(b"\n", 0, len(data) - 1)
            if cut >= 0:
                return start + cut + 1, data[cut + 1 : -1]
            if start == 0:
                return 0, data[:-1]
            window *= 2

    def tail(self) -> Tail:
        """The last record.

        Raises:
            NotInitializedError: the file is empty.
            TornTailError: the file ends in a partial line.
            StorageError: the last line is not a readable record.
        """
        torn_at, torn = self.torn_bytes()
        if torn:
            raise TornTailError(f"{self.path} {_describe_tail(torn)}; run `ledger repair`")
        found = self.last_line(torn_at)
        if found is None:
            raise NotInitializedError(f"{self.path} is empty; run `ledger init`")
        if found[1][-1:].isspace() or not found[1]:
            raise TornTailError(
                f"{self.path} ends in blank line(s) or whitespace after its "
                "last record; run `ledger repair`"
            )
        try:
            data = json.loads(found[1])
            return Tail(
                int(data["seq"]),
                str(data["hash"]),
                str(data["ledger"]),
                str(data["key"]),
                str(data["kind"]),
                dict(data["body"]),
                self.size,
            )
        except (ValueError, KeyError, TypeError):
            raise StorageError(
                f"the last record of {self.path} is unreadable; run `ledger verify`"
            ) from None

    def append(self, data: bytes) -> int:
        """Append ``data`` (whole lines) durably. Returns the offset it was written at.

        Raises:
            StorageError: the write or the fsync failed. After a failed write the file is
                truncated back to its previous size; after a failed fsync nothing is retried.
        """
        offset = self.size
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, offset)
            raise _oserror("append to", self.path, exc) from None
        self.size = offset + len(data)
        self.sync()
        return offset

    def sync(self) -> None:
        """fsync the file; fatal on error."""
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise StorageError(
                f"fsync of {self.path} failed ({exc.strerror}); the last append may not be "
                "durable. Stop and check the disk; do not retry."
            ) from None

    def truncate(self, offset: int) -> None:
        """Cut the file at ``offset`` and fsync."""
        try:
            os.ftruncate(self._fd, offset)
        except OSError as exc:
            raise _oserror("truncate", self.path, exc) from None
        self.size = offset
        self.sync()


class LedgerFile:
    """``agent_trace.jsonl``: locked appends and streaming reads."""

    def __init__(self, path: Path, *, deadline: float | None = None) -> None:
        self.path = path
        self.deadline = deadline  # None: LIBRARY_LOCK_DEADLINE, read when the lock is taken

    def exists(self) -> bool:
        """True when the file exists."""
        return self.path.exists()

    @contextlib.contextmanager
    def transaction(self, *, create: bool = False) -> Iterator[Transaction]:
        """Hold the exclusive lock for the duration of the ``with`` block."""
        flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT if create else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except FileNotFoundError:
            raise NotInitializedError(f"no ledger at {self.path}; run `ledger init`") from None
        except OSError as exc:
            raise _oserror("open", self.path, exc) from None
        try:
            wait = LIBRARY_LOCK_DEADLINE if self.deadline is None else self.deadline
            _lock_by(fd, self.path, time.monotonic() + wait)
            yield Transaction(self.path, fd)
        finally:
            os.close(fd)  # also releases the flock

    def read_chunks(
        self, chunk_size: int = READ_CHUNK, *, start: int = 0
    ) -> Iterator[tuple[int, bytes]]:
        """Stream the file from ``start`` as ``(offset, chunk)``; every chunk but the last ends
        in a newline. ``start`` must be a line boundary.

        The last chunk may end in a torn line; callers split it. Memory is bounded by
        ``chunk_size`` plus the longest line.
        """
        try:
            handle = self.path.open("rb", buffering=0)
        except FileNotFoundError:
            raise NotInitializedError(f"no ledger at {self.path}; run `ledger init`") from None
        except OSError as exc:
            raise _oserror("read", self.path, exc) from None
        with handle:
            handle.seek(start)
            offset = start
            carry = b""
            while True:
                try:
                    block = handle.read(chunk_size)
                except OSError as exc:
                    raise _oserror("read", self.path, exc) from None
                if not block:
                    break
                data = carry + block
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                yield offset, data[: cut + 1]
                offset += cut + 1
                carry = data[cut + 1 :]
            if carry:
                yield offset, carry

    def iter_lines(self) -> Iterator[tuple[bytes, bool]]:
        """Every line as ``(bytes_without_newline, complete)``; only the last may be incomplete."""
        for _, chunk in self.read_chunks():
            lines = chunk.split(b"\n")
            last = lines.pop()
            for line in lines:
                yield line, True
            if last:
                yield last, False


def _lock_by(fd: int, path: Path, deadline: float) -> None:
    """Take the exclusive ``flock`` on ``fd``, polling until ``deadline`` (monotonic).

    Polled rather than blocking: a blocking ``flock`` has no timeout, and ``SIGALRM`` would
    belong to whichever thread the decider runs this in. The first try costs one syscall.
    """
    pause = _LOCK_POLL_FIRST
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass
        except OSError as exc:  # pragma: no cover - flock on local files does not fail
            raise _oserror("lock", path, exc) from None
        else:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            holder = lock_holder(path)
            by = f" by {holder}" if holder else " by another process"
            raise LockTimeoutError(
                f"ledger's lock on {path} is held{by}; nothing was recorded and the call is "
                "denied: stop that process (a hook never holds the lock for more than a moment)"
            )
        time.sleep(min(pause, left))
        pause = min(pause * 2, _LOCK_POLL_MAX)


def lock_holder(path: Path) -> str | None:
    """Who holds a ``flock`` on ``path``: ``pid N (command line)`` from ``/proc/locks`` and
    ``/proc/N/cmdline`` on Linux; ``None`` where that cannot be found (another OS, another
    PID namespace, the holder gone)."""
    try:
        st = path.stat()
        with open("/proc/locks", "rb") as handle:
            table = handle.read(1 << 20).decode("ascii", "replace")
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for row in table.splitlines():
        fields = row.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; waiters are marked "->".
        if len(fields) < 6 or fields[1] == "->" or fields[1] not in ("FLOCK", "POSIX", "OFDLCK"):
            continue
        if fields[5] != wanted or not fields[4].isdigit():
            continue
        pid = int(fields[4])
        return f"pid {pid} ({_command_line(pid)})" if pid > 0 else "a process in another namespace"
    return None


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read(4096).rstrip(b"\0").split(b"\0")
    except OSError:
        return "its command line is unreadable"
    text = " ".join(a.decode("utf-8", "replace") for a in argv)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text[:200] or "no command line"


def fsync_dir(path: Path) -> None:
    """fsync a directory so a newly created entry in it survives a crash (fsync(2))."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise _oserror("open directory", path, exc) from None
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise _oserror("fsync directory", path, exc) from None
    finally:
        os.close(fd)
