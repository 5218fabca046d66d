"""``python -m tests.conformance.install [CLIENT ...]``: install the pinned agent CLIs from npm.

``.ci/run`` runs it before pytest, so a missing client is an install error that names npm, not a
skipped test. With no arguments it installs every client the suite drives.
"""

from __future__ import annotations

import sys

from ._clients import CLIENTS, ClientUnavailableError, ensure_client, version_of


def main(argv: list[str]) -> int:
    """Install each named client (default: all) at its pinned version; 2 when one fails."""
    names = argv or list(CLIENTS)
    unknown = [n for n in names if n not in CLIENTS]
    if unknown:
        sys.stderr.write(f"unknown client(s) {', '.join(unknown)}; expected {', '.join(CLIENTS)}\n")
        return 2
    for name in names:
        spec = CLIENTS[name]
        try:
            binary = ensure_client(spec)
        except ClientUnavailableError as exc:
            sys.stderr.write(f"cannot install {spec.package}@{version_of(spec)}: {exc}\n")
            return 2
        sys.stdout.write(f"{spec.package}@{version_of(spec)}: {binary}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
