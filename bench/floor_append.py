"""The floor of a CLI append: the least a fresh Python process does to durably log one signed line.

Usage: ``python bench/floor_append.py KEY.pem FILE < body.json``

It imports ``cryptography``, loads an Ed25519 PEM private key with ``load_pem_private_key``,
reads the JSON body from stdin, opens FILE with ``O_APPEND``, takes an exclusive ``flock``,
signs one line and appends it with ``os.write`` + ``os.fsync``. No workspace discovery, no
keyring, no tail read, no hash chain, no canonical-JSON rules: ``bench_cli_append.py`` measures
``ledger append`` against this.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from cryptography.hazmat.primitives.serialization import load_pem_private_key


def main() -> int:
    key_path, out_path = sys.argv[1], sys.argv[2]
    key = load_pem_private_key(Path(key_path).read_bytes(), password=None)
    body = json.loads(sys.stdin.buffer.read())
    fd = os.open(out_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        payload = json.dumps(
            {"body": body, "kind": "app.event", "ts": time.time_ns()},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        digest = hashlib.sha256(payload).hexdigest()
        sig = base64.b64encode(key.sign(payload)).decode()  # type: ignore[call-arg,union-attr]
        line = payload[:-1] + f',"hash":"{digest}","sig":"{sig}"}}\n'.encode()
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    print(digest[:16])
    return 0


if __name__ == "__main__":
    sys.exit(main())
