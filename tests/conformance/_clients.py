"""The real agent CLIs: pinned versions, and installing them from npm into a cache outside the repo.

Each client lives in ``$LEDGER_CONFORMANCE_CACHE/<client>-<version>/`` (default
``~/.cache/ledger-conformance``), installed with npm's own client on first use and reused after.
``.ci/run`` calls ``python -m tests.conformance.install`` before pytest, so CI never depends on a
test deciding to install.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: Set to 1 (``.ci/run`` does) to turn "the client could not be installed" into a failure.
REQUIRED_ENV: Final = "LEDGER_CONFORMANCE_REQUIRED"


@dataclass(frozen=True)
class ClientSpec:
    """One agent CLI on npm."""

    name: str  # ledger's client name (``ledger install <name>``)
    package: str
    pinned: str  # the version CI runs; bump it after `run_latest.py` passes on the new one
    binary: str


CLIENTS: Final = {
    "claude": ClientSpec("claude", "@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ClientSpec("codex", "@openai/codex", "0.169.0", "codex"),
    "gemini": ClientSpec("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
    # Runs offline with a model provider of one's own (BYOK: COPILOT_PROVIDER_BASE_URL,
    # COPILOT_OFFLINE=true; `copilot help providers`), so no GitHub sign-in is needed.
    "copilot": ClientSpec("copilot", "@github/copilot", "1.0.102", "copilot"),
}


class ClientUnavailableError(Exception):
    """The client cannot be installed or run here (no npm/node, registry unreachable ...)."""


def cache_root() -> Path:
    """The one folder the suite downloads agent CLIs into, with npm's own cache
    (``$LEDGER_CONFORMANCE_CACHE``, default ``~/.cache/ledger-conformance``; never inside the
    repository): delete it to reclaim the space, at the cost of downloading them again."""
    configured = os.environ.get("LEDGER_CONFORMANCE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "ledger-conformance"


def version_of(spec: ClientSpec) -> str:
    """The version to run: ``$LEDGER_CONFORMANCE_<CLIENT>_VERSION`` or the pinned one."""
    return os.environ.get(f"LEDGER_CONFORMANCE_{spec.name.upper()}_VERSION") or spec.pinned


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise ClientUnavailableError("npm and node are not on PATH (install nodejs and npm)")
    return npm


def ensure_client(spec: ClientSpec, version: str | None = None) -> Path:
    """The path of ``spec``'s executable at ``version``, installing it first if needed.

    Raises:
        ClientUnavailableError: npm/node are missing or the install failed.
    """
    version = version or version_of(spec)
    directory = cache_root() / f"{spec.name}-{version}"
    binary = directory / "node_modules" / ".bin" / spec.binary
    if binary.exists():
        return binary
    npm = _npm()
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once
        if binary.exists():
            return binary
        result = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                # npm's own download cache too, not ~/.npm: every byte under one folder
                "--cache",
                str(cache_root() / "npm-cache"),
                "--prefix",
                str(directory),
                f"{spec.package}@{version}",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        if result.returncode != 0 or not binary.exists():
            tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
            raise ClientUnavailableError(
                f"npm install {spec.package}@{version} failed: {' / '.join(tail)}"
            )
    return binary


def latest_version(spec: ClientSpec) -> str:
    """The newest published version (``npm view <package> version``).

    Raises:
        ClientUnavailableError: npm is missing or the registry did not answer.
    """
    result = subprocess.run(
        [_npm(), "view", "--cache", str(cache_root() / "npm-cache"), spec.package, "version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    version = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode != 0 or not version:
        raise ClientUnavailableError(
            f"npm view {spec.package} version failed: {result.stderr.strip()[-300:]}"
        )
    return version
