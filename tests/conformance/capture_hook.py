"""A transparent tee in front of an installed hook command: ``capture_hook.py DIR CMD...``.

The conformance suite rewrites each command that ``ledger install <client>`` wrote into the
client's settings so that it runs through this script. It saves exactly what the client sent on
stdin, runs the original command with those bytes, saves what the hook answered, and hands the
answer (stdout, stderr, exit code) back to the client unchanged. Standalone: stdlib only, since
the client runs it as a plain script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _claim(directory: Path, event: str) -> Path:
    """The next free ``NNNN-<event>.json`` (several hooks may run at once)."""
    directory.mkdir(parents=True, exist_ok=True)
    index = len(list(directory.iterdir()))
    while True:
        path = directory / f"{index:04d}-{event}.json"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            index += 1
            continue
        return path


def main(argv: list[str]) -> int:
    """Tee one hook call; the exit code is the hook's own."""
    directory, command = Path(argv[0]), argv[1:]
    event = command[command.index("--event") + 1] if "--event" in command else "unknown"
    stdin = sys.stdin.buffer.read()
    slot = _claim(directory, event)
    answer = subprocess.run(command, input=stdin, capture_output=True, check=False)
    slot.write_text(
        json.dumps(
            {
                "event": event,
                "command": command,
                "stdin": stdin.decode("utf-8", "replace"),
                "exit_code": answer.returncode,
                "stdout": answer.stdout.decode("utf-8", "replace"),
                "stderr": answer.stderr.decode("utf-8", "replace"),
            }
        ),
        encoding="utf-8",
    )
    sys.stdout.buffer.write(answer.stdout)
    sys.stderr.buffer.write(answer.stderr)
    return answer.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
