"""The decider trusts no one for being able to connect.

It runs outside any sandbox; when the socket was not hidden (``XDG_RUNTIME_DIR`` differed
between ``ledger install --hardened`` and the client), a sandboxed script had it sign a forged
grant and run git outside the sandbox, and ``curl --unix-socket`` stopped it. A caller now
proves it holds the per-user secret of the decider's own ledger home (which ``--hardened``
hides from the agent's shell) before anything is decided, and nothing a caller sends ends it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import __version__
from ledger._hooks import decider as server

from .test_decider import Rig, select_payload, write_payload


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with Rig(tmp_path, decider="on") as made:
        made.start()
        made.hook("claude", "PreToolUse", select_payload(made.root, "s"))  # makes the secret
        yield made


def _connect(rig: Rig) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    sock.connect(str(rig.socket))
    return sock


def _request(op: str, payload: bytes = b"") -> bytes:
    header = f"op={op}\0client=claude\0event=PreToolUse\0version={__version__}".encode()
    header += f"\0install={server.install_dir()}".encode()
    return server.MAGIC + b"\n" + b"%08d" % len(header) + header + b"%010d" % len(payload) + payload


def _hello(sock: socket.socket, home: Path) -> bytes:
    """Send the hello; return the decider's challenge."""
    sock.sendall(server.hello(os.urandom(16), home))
    return bytes.fromhex(server._read_line(sock).split()[-1].decode())


def _reply(sock: socket.socket) -> bytes:
    return server._read_all(sock)


def test_a_caller_without_the_secret_gets_no_decision_and_no_record(rig: Rig) -> None:
    before = len(rig.records())
    payload = json.dumps(write_payload(rig.root, "s", "t-forged")).encode()
    with _connect(rig) as sock:
        _hello(sock, Path(rig.env["LEDGER_HOME"]))
        forged = server.caller_proof(os.urandom(32), b"\0" * 16, os.getpid())
        sock.sendall(forged)
        assert _reply(sock).startswith(server.MAGIC + b" decline")
        with contextlib.suppress(OSError):  # closed on it: the request goes nowhere
            sock.sendall(_request("hook", payload))
    assert len(rig.records()) == before


def test_a_caller_naming_a_ledger_home_of_its_own_cannot_prove_itself(
    rig: Rig, tmp_path: Path
) -> None:
    # The hello names the caller's ledger home; a caller could name one holding a secret it
    # made. The caller's proof is checked against the decider's own secret.
    mine = tmp_path / "attacker-home"
    mine.mkdir()
    (mine / "cache.secret").write_bytes(os.urandom(32))
    (mine / "cache.secret").chmod(0o600)
    before = len(rig.records())
    payload = json.dumps(write_payload(rig.root, "s", "t-own-home")).encode()
    with _connect(rig) as sock:
        challenge = _hello(sock, mine)
        proof = server.caller_proof((mine / "cache.secret").read_bytes(), challenge, os.getpid())
        sock.sendall(proof)
        assert _reply(sock).startswith(server.MAGIC + b" decline")
        with contextlib.suppress(OSError):
            sock.sendall(_request("hook", payload))
    assert len(rig.records()) == before


def test_a_caller_without_the_secret_cannot_stop_the_decider(rig: Rig) -> None:
    with _connect(rig) as sock:
        _hello(sock, Path(rig.env["LEDGER_HOME"]))
        with contextlib.suppress(OSError):
            sock.sendall(b"LEDGER-DECIDE 1 caller 1 00\n" + _request("stop"))
            _reply(sock)
    assert server.decider_status(rig.env).running


def test_a_caller_proving_for_another_pid_is_declined(rig: Rig) -> None:
    if not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("SO_PEERCRED is Linux's")
    home = Path(rig.env["LEDGER_HOME"])
    with _connect(rig) as sock:
        challenge = _hello(sock, home)
        other = server.caller_proof((home / "cache.secret").read_bytes(), challenge, 1)
        sock.sendall(other)
        assert _reply(sock).startswith(server.MAGIC + b" decline")


GARBAGE = [
    b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",  # curl --unix-socket
    b"POST /stop HTTP/1.1\r\nContent-Length: 4\r\n\r\nstop",
    b"LEDGER-DECIDE 1 hello zz /nowhere\n",
    b"LEDGER-DECIDE 1 hello " + b"00" * 16 + b" /tmp/\0nul\n",
    b"LEDGER-DECIDE 1 hello " + b"00" * 16 + b" " + b"x" * 9000 + b"\n",
    b"\xff" * 70000,
    b"",
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_on_the_socket_cannot_stop_the_decider(rig: Rig, garbage: bytes) -> None:
    with _connect(rig) as sock, contextlib.suppress(OSError):  # it may close on it, and live on
        sock.sendall(garbage)
        sock.shutdown(socket.SHUT_WR)
        _reply(sock)
    assert server.decider_status(rig.env).running
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-after"))
    assert done.returncode == 0, done.stderr
    assert server.decider_status(rig.env).requests == 1  # served by it (the first made the secret)


def test_a_proven_hook_call_is_still_served(rig: Rig) -> None:
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-served"))
    assert done.returncode == 0, done.stderr
    assert server.decider_status(rig.env).requests == 1  # the first call made the secret
