"""The floor of the command clients' transport: a decider that answers every hook call at once.

It speaks the resident decider's wire protocol with its proofs (``ledger/_hooks/decider.py``:
the hello and its proof under the per-user secret, the caller's proof, the framed request),
on the socket a decider of this environment listens on, so the installed command's thin client
talks to it exactly as to the real decider; then it answers ``{}`` (exit 0) without reading
the payload, deciding or recording anything. What a governed tool call costs through it, less
the command's own two starts, is what the command transport itself costs: ``bench_decider.py``
measures it beside the real decider in the same rounds. Not a product path.

    python bench/decider_floor_server.py   # with the environment's LEDGER_HOME and
                                           # XDG_RUNTIME_DIR; prints "ready", and the number
                                           # of calls served when it is sent SIGTERM
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from types import FrameType

from ledger._hooks.decider import (
    _read_line,
    _read_request,
    decider_socket,
    encode_response,
    prove,
)
from ledger._workspace import cache_secret

_ANSWER = encode_response("ok", 0, "{}", "")


def main() -> int:
    if cache_secret() is None:  # the thin client reads it from the ledger home
        sys.stderr.write("decider_floor_server: no per-user secret\n")
        return 1
    path = decider_socket()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    served = 0

    def stop(_signum: int, _frame: FrameType | None) -> None:
        print(served, flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        old = os.umask(0o177)
        try:
            server.bind(str(path))
        finally:
            os.umask(old)
        server.listen(16)
        print("ready", flush=True)
        while True:
            connection, _ = server.accept()
            with connection:
                try:
                    connection.sendall(prove(_read_line(connection), os.urandom(16)))
                    _read_line(connection)  # the caller's proof: not checked here
                    _read_request(connection)
                    connection.sendall(_ANSWER)
                    connection.shutdown(socket.SHUT_WR)
                    served += 1
                except Exception:  # noqa: BLE001, S112 -- a caller it cannot serve decides itself
                    continue


if __name__ == "__main__":
    sys.exit(main())
