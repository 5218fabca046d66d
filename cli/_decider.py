"""The thin client of the resident decider (decision 0014; server: ``ledger/_hooks/decider.py``).

``ledger hook <client>`` runs this before it imports anything of ledger: it forwards the event to
the decider over a Unix socket and prints the answer. It imports only what every interpreter has
already loaded, ``sys`` and ``posix`` (the C module ``os`` wraps: ``os`` itself is not loaded
when the hook runs without ``site``, ``cli/_thin.py``), and the C socket module (``_socket``:
``socket.py`` itself costs ~6 ms of imports). No ``from __future__`` import either: that is
one more module to find and load.

Whenever the decider cannot answer -- none is running, its socket is not this user's alone,
it is slow, it refuses (another version), or its answer is malformed -- the caller decides
in-process exactly as before. So the decider only ever makes a call faster; it never
changes an answer, and never turns one into "no opinion".

The socket path and the wire format are the server's (tests/hooks/test_decider.py holds the two
implementations equal).
"""

import posix
import sys

#: ``ledger hook`` reads at most this much of stdin (``ledger.MAX_PAYLOAD_BYTES``; a test holds
#: them equal): read here once, the same bytes go to the decider or to the in-process path.
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024
#: A larger payload is decided in this process: the decider reads requests up to its own bound
#: (``ledger._hooks.decider.MAX_REQUEST``), and relaying a huge one would spend the answer budget
#: on copying before this process decided anyway.
DECIDER_PAYLOAD_BYTES = 8 * 1024 * 1024
MAGIC = b"LEDGER-DECIDE 1"
#: Seconds to wait for an answer before deciding in-process: well under every client's hook
#: timeout (Claude Code 60 s, Codex and Gemini CLI 60 s, Cursor 30 s). A decider that has not
#: answered by then records nothing (it sees the closed socket before it appends).
ANSWER_BUDGET = 3.0
CONNECT_BUDGET = 0.25
_SOCKET_PATH_MAX = 100


def _environ() -> dict[str, str]:
    """This process's environment: ``os.environ`` when ``os`` is loaded (it holds what the
    process changed since it started), else the one the interpreter started with."""
    os_module = sys.modules.get("os")
    if os_module is not None:
        return dict(os_module.environ)
    return {
        name.decode("utf-8", "surrogateescape"): value.decode("utf-8", "surrogateescape")
        for name, value in posix.environ.items()
    }


def _join(base: str, *parts: str) -> str:
    """``os.path.join`` (POSIX): an absolute part starts over."""
    path = base
    for part in parts:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def _dirname(path: str) -> str:
    """``os.path.dirname`` (POSIX)."""
    head = path[: path.rfind("/") + 1]
    return head.rstrip("/") or head


def _realpath(path: str) -> str:
    """``os.path.realpath`` of an absolute path: one ``lstat`` per component, and ``os`` only
    when one of them is a symbolic link (an installation rarely has one)."""
    if path.startswith("/"):
        prefix = ""
        for part in path.split("/")[1:]:
            prefix += "/" + part
            try:
                if posix.lstat(prefix).st_mode & 0o170000 == 0o120000:
                    break
            except OSError:
                break
        else:
            if "/./" not in path and "/../" not in path and "//" not in path:
                return path
    import os  # noqa: PLC0415 -- a link or a relative path: the real thing

    return os.path.realpath(path)


def _install_dir() -> str:
    return _dirname(_dirname(_realpath(__file__)))


def _fnv1a(text: str) -> str:
    value = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def _fsencode(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def socket_path(environ: dict[str, str], install: str) -> str:
    """The server's ``decider_socket``, without pathlib."""
    name = f"decider-{_fnv1a(install)}.sock"
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        candidate = _join(runtime, "ledger", name)
        if len(_fsencode(candidate)) <= _SOCKET_PATH_MAX:
            return candidate
    candidate = _join(_ledger_home(environ), "run", name)
    if len(_fsencode(candidate)) <= _SOCKET_PATH_MAX:
        return candidate
    return _join("/tmp", f"ledger-{posix.getuid()}", name)  # noqa: S108


def _version(install: str) -> str:
    try:
        with open(_join(install, "ledger", "_version.py"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("__version__"):
                    return line.split("=", 1)[1].strip().strip("\"'")
    except OSError:
        pass
    return "?"


PROOF_PREFIX = b"ledger-decider-proof-v1\0"
CALLER_PREFIX = b"ledger-decider-caller-v1\0"


def _ledger_home(environ: dict[str, str]) -> str:
    """``ledger._workspace.ledger_home``, without pathlib."""
    return environ.get("LEDGER_HOME") or _join(
        environ.get("XDG_CONFIG_HOME") or _join(environ.get("HOME") or "/", ".config"), "ledger"
    )


def _sha256() -> type:
    """SHA-256 from the C ``_sha256``/``_sha2`` module: ``hmac`` and ``hashlib`` would load
    OpenSSL (~3 ms) on every hook call."""
    if sys.version_info >= (3, 12):  # a failed import is a search of the whole path
        from _sha2 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415
    else:
        from _sha256 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415
    return sha256  # type: ignore[no-any-return]


def _hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) over :func:`_sha256`."""
    sha256 = _sha256()
    block = 64
    if len(key) > block:
        key = sha256(key).digest()
    key = key.ljust(block, b"\0")
    inner = sha256(bytes(k ^ 0x36 for k in key) + message).digest()
    return str(sha256(bytes(k ^ 0x5C for k in key) + inner).hexdigest())


def _private(path: str, *, socket_file: bool) -> str | None:
    """Why ``path`` may not be trusted (not ours, readable or writable by others), or None."""
    info = posix.lstat(path)
    mode = info.st_mode & 0o7777
    if socket_file and (info.st_mode & 0o170000) != 0o140000:
        return f"{path} is not a socket"
    if info.st_uid != posix.getuid():
        return f"{path} is owned by uid {info.st_uid}"
    if mode & 0o077:
        return f"{path} has mode {mode:o}"
    return None


def answer(
    client: str, event: str | None, root: str | None, raw: bytes
) -> tuple[int, bytes, bytes] | None:
    """The decider's ``(exit code, stdout, stderr)`` for this hook call, or None: decide
    in-process (and, when none runs, start one for the next call)."""
    # auto: use the decider, starting one when none runs; on: use one if it runs; off: never.
    environ = _environ()
    mode = environ.get("LEDGER_DECIDER", "auto")
    if mode == "off" or len(raw) > DECIDER_PAYLOAD_BYTES:
        return None
    cwd = posix.getcwd()
    fields = [
        "op=hook",
        f"client={client}",
        f"event={event or ''}",
        f"root={_join(cwd, root) if root else ''}",  # the decider's cwd is not ours
    ]
    return _exchange(fields, raw, mode, environ, start=mode == "auto")


def command(name: str, args: list[str], *, tty: bool) -> tuple[int, bytes, bytes] | None:
    """A running decider's ``(exit code, stdout, stderr)`` for ``ledger <name> <args>``, or
    None: run it in this process. A command never starts a decider: an agent's shell runs
    these read-only commands too (the shell analysis lets them through as reads, and counts
    ``ledger serve`` as a writer), and a decider started with its environment (``PATH``,
    ``PYTHONPATH``) would then decide the client's hook calls. Hook calls, which the client
    runs with its own environment, and a person's ``ledger serve`` start one."""
    environ = _environ()
    mode = environ.get("LEDGER_DECIDER", "auto")
    if mode == "off":
        return None
    columns = 0
    if tty:
        terminal = sys.modules.get("os", posix)  # a command runs with os loaded (site)
        try:
            columns = int(terminal.get_terminal_size(1).columns)
        except OSError:
            columns = 0
    fields = [
        "op=command",
        f"command={name}",
        f"tty={int(tty)}",
        f"columns={columns}",
        *(f"arg:{index}={arg}" for index, arg in enumerate(args)),
    ]
    return _exchange(fields, b"", mode, environ, start=False)


def _exchange(
    fields: list[str], raw: bytes, mode: str, environ: dict[str, str], *, start: bool
) -> tuple[int, bytes, bytes] | None:
    """Authenticate the decider, send one request, return its answer (or None)."""
    install = _install_dir()
    path = socket_path(environ, install)
    try:
        why = _private(_dirname(path), socket_file=False) or _private(path, socket_file=True)
    except FileNotFoundError:
        if start:
            _start(mode, environ)
        return None
    except OSError:
        return None
    if why is not None:
        sys.stderr.write(f"ledger: not using the decider: {why}; deciding in this process\n")
        return None
    home = _ledger_home(environ)
    try:
        with open(_join(home, "cache.secret"), "rb") as handle:
            secret = handle.read(4096)
    except OSError:
        return None  # the in-process path makes the secret; the next call can use the decider
    if len(secret) < 32:
        return None
    import _socket  # noqa: PLC0415 -- C module: no socket.py, enum or selectors

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_BUDGET)
        try:
            sock.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            if start:
                _start(mode, environ)  # a socket left by a decider that died
            return None
        try:
            budget = float(environ.get("LEDGER_DECIDER_BUDGET", ANSWER_BUDGET))
        except ValueError:
            budget = ANSWER_BUDGET
        sock.settimeout(budget)
        nonce = posix.urandom(16)
        sock.sendall(MAGIC + b" hello " + nonce.hex().encode() + b" " + _fsencode(home) + b"\n")
        # While the decider proves itself: what this side needs next (the request, and the
        # hash module the proofs take, whose load is a shared library's).
        request = _request(
            [f"version={_version(install)}", f"install={install}", *fields], raw, environ
        )
        _sha256()
        proof = _proof(sock, _socket, secret, nonce, path)
        if proof is None:
            return None
        sock.sendall(_caller(proof, secret) + request)
        chunks = []
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:  # timeout, reset, a decider killed mid-answer
        return None
    finally:
        sock.close()
    return _parse(b"".join(chunks), environ, start=start)


def _proof(sock: object, module: object, secret: bytes, nonce: bytes, path: str) -> bytes | None:
    """The decider's answer to the hello, when it proves the decider (else None, said why)."""
    proof = _read_line(sock, 240)
    why = _unproven(proof, secret, nonce, _peer(sock, module))
    if why is None:
        return proof
    sys.stderr.write(
        f"ledger: the process at {path} is not ledger's decider ({why}); deciding in this process\n"
    )
    return None


def _caller(proof: bytes, secret: bytes) -> bytes:
    """This caller's proof, answering the challenge that ends the decider's: the decider
    decides only for a process that can read the per-user secret (not the agent's sandboxed
    shell under --hardened; ledger/_hooks/decider.py says why)."""
    challenge = bytes.fromhex(proof.rstrip(b"\n").split(b" ")[5].decode("ascii"))
    pid = posix.getpid()
    mac = _hmac_sha256(secret, CALLER_PREFIX + challenge + b"%d" % pid)
    return MAGIC + b" caller %d " % pid + mac.encode() + b"\n"


def _peer(sock: object, module: object) -> tuple[int, int] | None:
    """``(pid, uid)`` of the process at the other end (Linux ``SO_PEERCRED``), else None."""
    option = getattr(module, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = sock.getsockopt(module.SOL_SOCKET, option, 12)  # type: ignore[attr-defined]
    except OSError:
        return None
    return int.from_bytes(creds[0:4], sys.byteorder), int.from_bytes(creds[4:8], sys.byteorder)


def _unproven(
    answer: bytes, secret: bytes, nonce: bytes, peer: tuple[int, int] | None
) -> str | None:
    """Why the hello's answer does not prove the decider, or None when it does."""
    parts = answer.rstrip(b"\n").split(b" ")
    if len(parts) != 6 or b" ".join(parts[:3]) != MAGIC + b" proof" or not parts[3].isdigit():
        return "it gave no proof"
    if len(parts[5]) != 32 or parts[5].strip(b"0123456789abcdef"):
        return "it gave no challenge"
    pid = int(parts[3])
    if parts[4] != _hmac_sha256(secret, PROOF_PREFIX + nonce + b"%d" % pid).encode():
        return "its proof does not verify"
    if peer is not None and peer != (pid, posix.getuid()):
        return f"the socket's peer is pid {peer[0]} of uid {peer[1]}, not the prover"
    return None


def _read_line(sock: object, limit: int) -> bytes:
    # Whole reads, not a byte at a time: the decider sends nothing after its proof line until
    # it has the request, so a read cannot take more than the line.
    data = b""
    while not data.endswith(b"\n") and len(data) <= limit:
        chunk = sock.recv(limit + 1 - len(data))  # type: ignore[attr-defined]
        if not chunk:
            break
        data += chunk
    return data


def _request(fields: list[str], raw: bytes, environ: dict[str, str]) -> bytes:
    cwd = posix.getcwd()
    fields = [*fields, f"cwd={cwd}"]
    for name, value in environ.items():
        if name == "LEDGER_ROOT" and value:
            value = _join(cwd, value)  # noqa: PLW2901
        fields.append(f"env:{name}={value}")
    header = "\0".join(fields).encode("utf-8", "surrogateescape")
    # Framed by lengths, not by closing our end: the decider takes a closed end to mean that
    # this process gave up waiting (and then records nothing).
    return MAGIC + b"\n" + b"%08d" % len(header) + header + b"%010d" % len(raw) + raw


def _parse(data: bytes, environ: dict[str, str], *, start: bool) -> tuple[int, bytes, bytes] | None:
    line, newline, rest = data.partition(b"\n")
    parts = line.split(b" ")
    if not newline or len(parts) != 6 or b" ".join(parts[:2]) != MAGIC:
        return None
    try:
        code, out_len, err_len = int(parts[3]), int(parts[4]), int(parts[5])
    except ValueError:
        return None
    if parts[2] == b"refuse":
        if start:  # the old decider retires; this version's starts for the next call
            _start("auto", environ)
        return None
    if parts[2] != b"ok" or len(rest) != out_len + err_len or out_len < 0 or err_len < 0:
        return None
    return code, rest[:out_len], rest[out_len:]


def _is_file(path: str) -> bool:
    try:
        return posix.stat(path).st_mode & 0o170000 == 0o100000
    except (OSError, ValueError):
        return False


def _start(mode: str, environ: dict[str, str]) -> None:
    """Start a decider for the next call, detached from this hook's streams and session (the
    ``ledger`` script, with ``site``: ``cli/_thin.py`` puts its path in ``sys.argv[0]``)."""
    if mode != "auto":
        return
    script = sys.argv[0] if sys.argv and _is_file(sys.argv[0]) else None
    # A hook run isolated (`python -I`, as installed) starts its decider isolated too.
    isolated = ["-I"] if sys.flags.isolated else []
    argv = (
        [sys.executable, *isolated, script, "serve"]
        if script
        else [sys.executable, *isolated, "-m", "cli._entry", "serve"]
    )
    devnull = "/dev/null"
    try:  # noqa: SIM105 -- contextlib would be one more import on the hook path
        posix.posix_spawn(
            sys.executable,
            argv,
            environ,
            file_actions=[
                (posix.POSIX_SPAWN_OPEN, 0, devnull, posix.O_RDONLY, 0),
                (posix.POSIX_SPAWN_OPEN, 1, devnull, posix.O_WRONLY, 0),
                (posix.POSIX_SPAWN_OPEN, 2, devnull, posix.O_WRONLY, 0),
            ],
            setsid=True,
        )
    except (AttributeError, NotImplementedError, TypeError, OSError):
        pass  # no decider this time: every call still decides in-process
