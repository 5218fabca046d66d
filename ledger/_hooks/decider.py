"""The resident decider (decision 0014): one process per user and installation that answers hook
calls with everything already imported, so a governed tool call costs a socket round trip instead of
two Python start-ups.

It answers exactly as the in-process path does, because it *is* that path: each request runs
:func:`ledger._hooks.service.run_hook` with the caller's payload, arguments, environment and
working directory. Nothing a decision depends on is cached here beyond what the in-process path
caches on disk (the MAC-sealed, digest-checked caches): a config edited a millisecond ago is read
as it is, and the same locks order appends with the CLI, the embedded API and other deciders.
What stays warm is the interpreter and its imports (~50 ms of a one-shot hook).

The thin client (``cli/_decider.py``, stdlib only, imported before anything of ledger) sends the
request and prints the answer; it decides in-process, exactly as before, whenever the decider is
absent, slow, of another version, refuses, or answers anything malformed. No path answers "no
opinion" because the decider is down.

Wire format (version 1), one request per connection::

    request  = b"LEDGER-DECIDE 1\\n" + b"%08d" % len(header) + header
               + b"%010d" % len(payload) + payload   # the caller then waits, socket open
    header   = b"\\0".join(b"key=value")  # op version install client event root cwd env:NAME
               # op=command: command arg:0 arg:1 ... tty columns (a command the CLI serves)
    response = b"LEDGER-DECIDE 1 <ok|refuse|decline> <exit code> <len stdout> <len stderr>\\n"
               + out + err   # refuse: retiring (another version); decline: not this call

Before anything else the caller sends ``LEDGER-DECIDE 1 hello <nonce> <ledger home>`` and the
decider answers ``LEDGER-DECIDE 1 proof <pid> <HMAC-SHA256(per-user secret, prefix + nonce +
pid)>``: a process of the same user that bound a socket where the decider's goes (an agent's
shell could) cannot read the secret, so the caller never sends it its payload or environment;
on Linux the caller also checks that the pid and uid are those of the socket's peer
(``SO_PEERCRED``), so a go-between relaying the real decider's proof is refused too.

The proof line ends with a challenge of the decider's own, and the caller proves itself in
turn before anything is decided: ``LEDGER-DECIDE 1 caller <pid> <HMAC-SHA256(the decider's
per-user secret, caller prefix + challenge + pid)>``. The decider runs outside any sandbox, so
a caller it answered without proof could have it sign forged hook records or run git with a
``PATH`` of its choosing there (a sandboxed shell that reached the socket, when the socket's
folder was not the one ``--hardened`` hid). The secret is the one of the decider's own ledger
home, never one the caller names (a caller could name a folder holding a secret of its own);
``--hardened`` makes it unreadable to the agent's shell, which therefore cannot prove itself,
while the client's hook command runs outside the sandbox and reads it. On Linux the decider
also checks that the pid the caller proves for is the socket's peer, of this user. A caller
that does not prove itself gets ``decline`` and decides in its own process; ``status`` and
``stop`` need the same proof, and nothing a caller sends can end the decider.

The socket lives in ``$XDG_RUNTIME_DIR/ledger/``, else the ledger home's ``run/`` (mode 0700
folders, a 0600 socket); its name carries a hash of the installation, so two installations of
ledger each have their own decider. A lock file beside it makes exactly one decider serve: a
second one racing to start exits quietly.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import hmac
import os
import socket
import socketserver
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from ledger._errors import InputError, StorageError
from ledger._hooks.service import CallAbandonedError, run_hook, warm_resident
from ledger._hooks.tripwire import seal_sync_after_answer, sync_seals
from ledger._projections.cache import saves_after_answer, write_saved
from ledger._startup.namedtuple import NamedTuple
from ledger._version import __version__
from ledger._workspace import cache_secret, decider_dirs, ledger_home

__all__ = [
    "DECIDER_OFF_ENV",
    "CommandCall",
    "DeciderStatus",
    "ServedCommand",
    "code_fingerprint",
    "decider_socket",
    "decider_status",
    "install_dir",
    "serve_decider",
    "stop_decider",
]

MAGIC: Final = b"LEDGER-DECIDE 1"
#: Domain separation of the decider's proof (HMAC input prefix), never used for another MAC.
PROOF_PREFIX: Final = b"ledger-decider-proof-v1\0"
#: Domain separation of the caller's proof.
CALLER_PREFIX: Final = b"ledger-decider-caller-v1\0"
#: ``LEDGER_DECIDER=off`` keeps every hook call in its own process (no decider is started).
DECIDER_OFF_ENV: Final = "LEDGER_DECIDER"
#: Requests larger than this are refused: 8 MiB of payload plus room for the environment (the
#: caller decides a larger payload itself, cli/_decider.DECIDER_PAYLOAD_BYTES).
MAX_REQUEST: Final = 8 * 1024 * 1024 + 1 + 1024 * 1024
#: Seconds a connection may take to send its request.
READ_TIMEOUT: Final = 5.0
#: A decider with nothing to do for this long exits (the next hook call starts one again).
DEFAULT_IDLE_SECONDS: Final = 1800.0
#: Hook calls decided at once; the rest wait their turn. Python runs one at a time anyway (the
#: GIL) and appends to one ledger one at a time (its lock): more only adds memory.
CONCURRENT_CALLS: Final = 2
#: What code on the hook path may read from the process's own environment rather than the
#: caller's (``~`` in scope globs, protected paths and matchers: ``os.path.expanduser``). A
#: caller whose value differs is declined, so a decision never depends on whose hook started
#: the decider.
PROCESS_ENVIRONMENT: Final = ("HOME",)
#: How often the decider checks that its own code on disk is the code it runs.
_CODE_CHECK_SECONDS: Final = 1.0
_SOCKET_PATH_MAX: Final = 100  # sun_path is 108 bytes on Linux, 104 on macOS


def install_dir() -> str:
    """The directory holding this installation's ``ledger`` and ``cli`` packages."""
    return str(Path(__file__).resolve().parents[2])


def _fnv1a(text: str) -> str:
    """A short stable hash (FNV-1a, 32 bit): the thin client computes the same without hashlib."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def decider_socket(environ: Mapping[str, str] | None = None, install: str | None = None) -> Path:
    """Where this installation's decider listens for this user. ``cli/_decider.py`` computes
    the same path (tests/hooks/test_decider.py holds them equal)."""
    name = f"decider-{_fnv1a(install or install_dir())}.sock"
    *usual, fallback = decider_dirs(environ)  # fallback: a 0700 folder of ours under /tmp
    for folder in usual:
        if len(os.fsencode(folder / name)) <= _SOCKET_PATH_MAX:
            return folder / name
    return fallback / name


def code_fingerprint(install: str | None = None) -> tuple[tuple[str, int, int], ...]:
    """``(path, mtime_ns, size)`` of every module of this installation: a decider whose code on
    disk changed (an upgrade, an edit of a checkout) is not the code a new process would run."""
    base = Path(install or install_dir())
    found: list[tuple[str, int, int]] = []
    for package in ("ledger", "cli"):
        for folder, _dirs, files in os.walk(base / package):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)  # noqa: PTH118
                    with contextlib.suppress(OSError):
                        info = os.stat(path)  # noqa: PTH116
                        found.append((path, info.st_mtime_ns, info.st_size))
    return tuple(sorted(found))


# --- the wire format --------------------------------------------------------------------------


class Request(NamedTuple):
    op: str
    fields: dict[str, str]
    env: dict[str, str]
    payload: bytes


def parse_request(data: bytes) -> Request:
    """Decode one request (raises InputError on anything malformed)."""
    if not data.startswith(MAGIC + b"\n") or len(data) < len(MAGIC) + 9:
        raise InputError("not a decider request")
    start = len(MAGIC) + 1
    try:
        size = int(data[start : start + 8])
    except ValueError:
        raise InputError("bad header length") from None
    header = data[start + 8 : start + 8 + size]
    if len(header) != size:
        raise InputError("truncated header")
    fields: dict[str, str] = {}
    env: dict[str, str] = {}
    for item in header.split(b"\0") if header else []:
        key, eq, value = item.partition(b"=")
        if not eq:
            raise InputError("bad header field")
        name, text = (
            key.decode("utf-8", "surrogateescape"),
            value.decode("utf-8", "surrogateescape"),
        )
        if name.startswith("env:"):
            env[name[4:]] = text
        else:
            fields[name] = text
    rest = data[start + 8 + size :]
    try:
        payload_size = int(rest[:10])
    except ValueError:
        raise InputError("bad payload length") from None
    payload = rest[10:]
    if len(payload) != payload_size:
        raise InputError("truncated payload")
    return Request(fields.get("op", "hook"), fields, env, payload)


def encode_response(status: str, exit_code: int, stdout: str, stderr: str) -> bytes:
    out, err = stdout.encode("utf-8"), stderr.encode("utf-8")
    return MAGIC + f" {status} {exit_code} {len(out)} {len(err)}\n".encode() + out + err


class CommandCall(NamedTuple):
    """A command line a caller asked the decider to run (``op=command``): its arguments, and
    the caller's working directory, environment and whether its stdout is a terminal."""

    args: list[str]
    cwd: str
    environ: dict[str, str]
    tty: bool
    #: the width of the caller's terminal as its stdout reports it (0: unknown, or no terminal)
    columns: int = 0


#: Runs one served command for a caller; returns ``(exit code, stdout, stderr)``. The CLI
#: registers its read-only commands (``ledger blame``) when it starts the decider, so the
#: library never imports the CLI.
ServedCommand = Callable[[CommandCall], tuple[int, str, str]]


def command_call(request: Request) -> CommandCall:
    """The command line of an ``op=command`` request (arguments as ``arg:0``, ``arg:1``...)."""
    fields = request.fields
    args: list[str] = []
    while f"arg:{len(args)}" in fields:
        args.append(fields[f"arg:{len(args)}"])
    columns = fields.get("columns", "")
    return CommandCall(
        args,
        fields.get("cwd") or "/",
        request.env,
        fields.get("tty") == "1",
        int(columns) if columns.isascii() and columns.isdigit() else 0,
    )


# --- the server -------------------------------------------------------------------------------


class DeciderStatus(NamedTuple):
    """What ``ledger serve --status`` shows."""

    running: bool
    socket: str
    pid: int | None = None
    version: str | None = None
    started: float | None = None
    requests: int = 0
    workspaces: int = 0
    rss_kb: int | None = None


class _State:
    def __init__(self, install: str, idle: float, environ: Mapping[str, str] | None) -> None:
        self.install = install
        self.environ = environ
        self.idle = idle
        self.started = time.time()
        self.last = time.monotonic()
        self.requests = 0
        self.roots: set[str] = set()
        self.code = code_fingerprint(install)
        self.code_checked = time.monotonic()
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def secret(self) -> bytes | None:
        """The per-user secret of the decider's own ledger home, read at each call (the first
        hook call may make it after the decider started)."""
        return cache_secret(self.environ)

    def stale(self) -> bool:
        """Whether the code on disk is no longer the code running (checked once a second)."""
        now = time.monotonic()
        with self.lock:
            if now - self.code_checked < _CODE_CHECK_SECONDS:
                return False
            self.code_checked = now
        return code_fingerprint(self.install) != self.code


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        with contextlib.suppress(Exception):  # nothing a caller sends may end the decider
            self._handle()

    def _handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(READ_TIMEOUT)
        challenge = os.urandom(16)
        try:
            sock.sendall(prove(_read_line(sock), challenge))
            why = _unproven_caller(
                _read_line(sock), self.server.state.secret(), challenge, _peer(sock)
            )
            if why is not None:
                sock.sendall(encode_response("decline", 0, f"the caller {why}\n", ""))
                return
            request = parse_request(_read_request(sock))
        except (OSError, InputError, ValueError, UnicodeError):
            return  # a client that sent garbage or vanished gets nothing: it decides itself
        state = self.server.state
        with state.lock:
            state.last = time.monotonic()
            state.requests += request.op == "hook"
        with seal_sync_after_answer() as seals, saves_after_answer() as caches:
            try:
                answer = self.server.answer(request, lambda: _hung_up(sock))
            except CallAbandonedError:
                return  # the caller decided in its own process; nothing was recorded here
        with contextlib.suppress(OSError):
            sock.sendall(answer)
            sock.shutdown(socket.SHUT_WR)  # the caller reads to the end: this is the end
        write_saved(caches)  # the projection caches: they only save the next call time
        sync_seals(seals)  # the records were fsync-ed before the answer; the seal follows


def _hung_up(sock: socket.socket) -> bool:
    """Whether the caller closed its end (it gave up waiting and decides itself)."""
    timeout = sock.gettimeout()
    sock.setblocking(False)  # a socket with a timeout would wait for data to peek at
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False  # still connected, nothing to read: it is waiting for the answer
    except OSError:
        return True
    finally:
        sock.settimeout(timeout)


def _read_line(sock: socket.socket, limit: int = 8192) -> bytes:
    """One line, and not a byte more: the caller sends its request right behind its proof
    line, so what follows the newline is only looked at (``MSG_PEEK``), never taken (a read a
    byte at a time cost ~200 system calls per hook call)."""
    data = b""
    while not data.endswith(b"\n"):
        if len(data) > limit:
            raise InputError("bad hello")
        waiting = sock.recv(limit + 1 - len(data), socket.MSG_PEEK)
        cut = waiting.find(b"\n")
        chunk = sock.recv(cut + 1 if cut >= 0 else len(waiting)) if waiting else b""
        if not chunk:
            raise InputError("bad hello")
        data += chunk
    return data


def proof(secret: bytes, nonce: bytes, pid: int) -> str:
    """What the decider answers a hello with: HMAC-SHA256 under the caller's per-user secret
    of the caller's nonce and the decider's own pid, with its own domain-separation prefix. A
    process that cannot read the secret (an agent that bound a socket of its own where the
    decider's goes) cannot produce it, so the caller never sends it a payload or its
    environment; and the caller checks the pid against the socket's peer (``SO_PEERCRED``), so
    a go-between relaying the real decider's proof is not the pid the proof names."""
    return hmac.new(secret, PROOF_PREFIX + nonce + b"%d" % pid, hashlib.sha256).hexdigest()


def hello(nonce: bytes, home: Path) -> bytes:
    """The caller's first line: its nonce and its ledger home (where the secret is)."""
    return MAGIC + b" hello " + nonce.hex().encode() + b" " + os.fsencode(home) + b"\n"


def caller_proof(secret: bytes, challenge: bytes, pid: int) -> bytes:
    """The caller's line proving it holds the decider's per-user secret: HMAC-SHA256 of the
    decider's challenge and the caller's pid (``cli/_decider.py`` computes the same)."""
    mac = hmac.new(secret, CALLER_PREFIX + challenge + b"%d" % pid, hashlib.sha256).hexdigest()
    return MAGIC + b" caller %d " % pid + mac.encode() + b"\n"


def _peer(sock: socket.socket) -> tuple[int, int] | None:
    """``(pid, uid)`` of the socket's peer (Linux ``SO_PEERCRED``), else None."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, option, 12)
    except OSError:
        return None
    return int.from_bytes(creds[0:4], sys.byteorder), int.from_bytes(creds[4:8], sys.byteorder)


def _unproven_caller(
    line: bytes, secret: bytes | None, challenge: bytes, peer: tuple[int, int] | None
) -> str | None:
    """Why the caller's line does not prove it holds the secret, or None when it does."""
    parts = line.rstrip(b"\n").split(b" ")
    if len(parts) != 5 or b" ".join(parts[:3]) != MAGIC + b" caller" or not parts[3].isdigit():
        return "it sent no proof"
    pid = int(parts[3])
    if secret is None or not hmac.compare_digest(line, caller_proof(secret, challenge, pid)):
        return "its proof does not verify"
    if peer is not None and peer != (pid, os.getuid()):
        return "its proof is not for the socket's peer"
    return None


def prove(greeting: bytes, challenge: bytes = b"") -> bytes:
    """The answer to ``LEDGER-DECIDE 1 hello <nonce hex> <ledger home>``, ending with the
    decider's ``challenge`` for the caller's own proof."""
    parts = greeting.rstrip(b"\n").split(b" ", 4)
    if len(parts) != 5 or b" ".join(parts[:2]) != MAGIC or parts[2] != b"hello":
        raise InputError("bad hello")
    try:
        nonce = bytes.fromhex(parts[3].decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise InputError("bad nonce") from None
    home = parts[4].decode("utf-8", "surrogateescape")
    secret = cache_secret({"LEDGER_HOME": home}) if len(nonce) >= 16 else None
    if secret is None:
        raise InputError("no secret to prove with")
    pid = os.getpid()
    line = MAGIC + b" proof %d " % pid + proof(secret, nonce, pid).encode()
    return line + (b" " + challenge.hex().encode() if challenge else b"") + b"\n"


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = sock.recv(min(size, 1 << 16))
        if not chunk:
            raise InputError("truncated request")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_request(sock: socket.socket) -> bytes:
    """One request, framed by its lengths: the caller keeps its end open while it waits, so a
    closed end means it gave up (:func:`_hung_up`)."""
    head = _read_exactly(sock, len(MAGIC) + 1 + 8)
    if not head.startswith(MAGIC + b"\n"):
        raise InputError("not a decider request")
    try:
        header_size = int(head[-8:])
    except ValueError:
        raise InputError("bad header length") from None
    if not 0 <= header_size <= MAX_REQUEST:
        raise InputError("request too large")
    header = _read_exactly(sock, header_size)
    size_field = _read_exactly(sock, 10)
    try:
        payload_size = int(size_field)
    except ValueError:
        raise InputError("bad payload length") from None
    if not 0 <= payload_size <= MAX_REQUEST - header_size:
        raise InputError("request too large")
    return head + header + size_field + _read_exactly(sock, payload_size)


def _read_all(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            raise InputError("request too large")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, path: Path, state: _State, commands: Mapping[str, ServedCommand]) -> None:
        self.state = state
        self.commands = commands
        self.slots = threading.BoundedSemaphore(CONCURRENT_CALLS)
        # Commands take turns on a slot of their own: a cold blame (a second or more on a long
        # ledger) must never hold a hook call past its answer budget.
        self.command_slot = threading.Lock()
        super().__init__(str(path), _Handler)

    def answer(self, request: Request, abandoned: Callable[[], bool]) -> bytes:
        state = self.state
        if request.op == "status":
            return encode_response("ok", 0, _status_line(state), "")
        if request.op == "stop":
            state.stopping.set()
            threading.Thread(target=self.shutdown, daemon=True).start()
            return encode_response("ok", 0, "stopping\n", "")
        if (
            request.fields.get("version") != __version__
            or request.fields.get("install") != state.install
        ):
            # Another version or installation: it decides itself, and a new decider of its own
            # version replaces this one (the next call starts it).
            self._retire()
            return encode_response("refuse", 0, "another version\n", "")
        if state.stale():
            self._retire()
            return encode_response("refuse", 0, "the decider's code changed on disk\n", "")
        if any(request.env.get(name) != os.environ.get(name) for name in PROCESS_ENVIRONMENT):
            # Decided where that environment is the process's own: the caller, this time.
            return encode_response("decline", 0, "another home\n", "")

        fields = request.fields
        if request.op == "command":
            return self._command(fields.get("command", ""), command_call(request))
        with self.slots:
            response = run_hook(
                fields.get("client", ""),
                request.payload,
                expected_event=fields.get("event") or None,
                root=fields.get("root") or None,
                environ=request.env,
                cwd=fields.get("cwd") or None,
                abandoned=abandoned,
            )
        with state.lock:
            if len(state.roots) < 10_000:
                state.roots.add(fields.get("root") or fields.get("cwd") or "")
        return encode_response("ok", response.exit_code, response.stdout, response.stderr)

    def _command(self, name: str, call: CommandCall) -> bytes:
        served = self.commands.get(name)
        if served is None:
            return encode_response("refuse", 0, f"{name!r} is not served here\n", "")
        try:
            with self.command_slot:
                code, stdout, stderr = served(call)
        except Exception:  # noqa: BLE001 -- the caller runs the command itself and says why
            return encode_response("refuse", 0, f"{name!r} failed in the decider\n", "")
        return encode_response("ok", code, stdout, stderr)

    def _retire(self) -> None:
        if not self.state.stopping.is_set():
            self.state.stopping.set()
            threading.Thread(target=self.shutdown, daemon=True).start()


def _status_line(state: _State) -> str:
    rss = _rss_kb()
    return (
        f"pid={os.getpid()}\0version={__version__}\0started={state.started:.3f}\0"
        f"requests={state.requests}\0workspaces={len(state.roots)}\0rss_kb={rss or 0}\n"
    )


def _rss_kb() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    try:
        import resource  # noqa: PLC0415

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak // 1024 if sys.platform == "darwin" else peak)
    except (ImportError, OSError):
        return None


def _private_folder(folder: Path) -> None:
    """Create ``folder`` 0700, or check that an existing one is ours and private."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise StorageError(
            f"{folder} is owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):o}: "
            "a decider socket there could be reached by others; fix its owner and mode "
            "(chmod 700) or set $XDG_RUNTIME_DIR"
        )


def serve_decider(
    *,
    environ: Mapping[str, str] | None = None,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
    ready: threading.Event | None = None,
    commands: Mapping[str, ServedCommand] | None = None,
) -> bool:
    """Serve hook calls, and the read-only ``commands`` given, until stopped, retired or idle.
    Returns False when another decider already serves this socket (this one exits quietly).

    Raises:
        StorageError: the socket's folder is not this user's alone.
    """
    path = decider_socket(environ)
    _private_folder(path.parent)
    lock_file = path.with_suffix(".lock")
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # exactly one serves; this one leaves quietly
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a decider that was killed
        _few_heap_arenas()
        warm_resident()
        old_umask = os.umask(0o177)
        try:
            state = _State(install_dir(), idle_seconds, environ)
            server = _Server(path, state, commands or {})
        finally:
            os.umask(old_umask)
        path.chmod(0o600)
        bound = path.stat().st_ino
        watchdog = threading.Thread(target=_watch_idle, args=(server,), daemon=True)
        watchdog.start()
        if ready is not None:
            ready.set()
        try:
            server.serve_forever(poll_interval=0.5)
        finally:
            server.server_close()
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_ino == bound:  # ours still (not a successor's)
                    path.unlink()
        return True
    finally:
        os.close(fd)  # releases the lock


def _watch_idle(server: _Server) -> None:
    state = server.state
    trimmed_at = 0
    while not state.stopping.wait(min(1.0, max(state.idle / 4, 0.05))):
        with state.lock:
            idle_for = time.monotonic() - state.last
            served = state.requests
        if idle_for >= state.idle:
            state.stopping.set()
            server.shutdown()
            return
        if idle_for >= 1.0 and served != trimmed_at:
            trimmed_at = served
            _give_back_memory()


def _few_heap_arenas() -> None:
    """glibc gives each thread its own heap arena (up to 8 per core), and a burst of
    concurrent calls leaves every arena holding pages: two are enough for two calls at once
    (mallopt M_ARENA_MAX; a no-op off glibc)."""
    libc = _glibc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.mallopt(-8, CONCURRENT_CALLS)  # -8: M_ARENA_MAX (malloc.h)


def _give_back_memory() -> None:
    """After a burst of calls, return the heap's free pages to the system: many calls decided
    at once leave the allocator holding memory the next quiet hour does not need."""
    import gc  # noqa: PLC0415

    gc.collect()
    libc = _glibc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.malloc_trim(0)


@functools.cache
def _glibc() -> Any:  # noqa: ANN401 -- a ctypes library
    """The C library on Linux (its heap tuning calls), else None: the symbols the interpreter
    itself was linked with (``dlopen(NULL)``), not a search by name (``ctypes.util.find_library``
    runs ``ldconfig -p``, a process the decider would start after every burst of calls)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # noqa: PLC0415 -- only in the decider

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


# --- talking to it (the CLI's --status and --stop; hooks use cli/_decider.py) -------------------


def _ask(op: str, environ: Mapping[str, str] | None, timeout: float = 2.0) -> bytes | None:
    path = decider_socket(environ)
    header = f"op={op}".encode()
    home = ledger_home(environ)
    secret = cache_secret(environ)
    if secret is None:
        return None
    nonce = os.urandom(16)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(
                MAGIC + b" hello " + nonce.hex().encode() + b" " + os.fsencode(home) + b"\n"
            )
            answer = _read_line(sock).rstrip(b"\n").split(b" ")
            if len(answer) != 6 or not answer[3].isdigit():
                return None
            pid = int(answer[3])
            if answer[4] != proof(secret, nonce, pid).encode():
                return None  # not ledger's decider
            sock.sendall(caller_proof(secret, bytes.fromhex(answer[5].decode()), os.getpid()))
            sock.sendall(MAGIC + b"\n" + b"%08d" % len(header) + header + b"%010d" % 0)
            return _read_all(sock)
    except (OSError, InputError, ValueError):
        return None


def decider_status(environ: Mapping[str, str] | None = None) -> DeciderStatus:
    """Whether a decider answers on this user's socket, and what it says of itself."""
    path = str(decider_socket(environ))
    reply = _ask("status", environ)
    if not reply or not reply.startswith(MAGIC + b" ok"):
        return DeciderStatus(running=False, socket=path)
    body = reply.split(b"\n", 1)[1].decode("utf-8", "replace").strip()
    info = dict(item.partition("=")[::2] for item in body.split("\0") if "=" in item)
    return DeciderStatus(
        running=True,
        socket=path,
        pid=int(info.get("pid", "0")) or None,
        version=info.get("version"),
        started=float(info.get("started", "0")) or None,
        requests=int(info.get("requests", "0")),
        workspaces=int(info.get("workspaces", "0")),
        rss_kb=int(info.get("rss_kb", "0")) or None,
    )


def stop_decider(environ: Mapping[str, str] | None = None) -> bool:
    """Ask the decider to stop; False when none answered."""
    reply = _ask("stop", environ)
    return bool(reply and reply.startswith(MAGIC + b" ok"))
