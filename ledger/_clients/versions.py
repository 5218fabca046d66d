"""Which version of an agent client is installed here, and what that version needs from ledger.

Read from files first, without starting the client: the executable on ``PATH`` is followed to
its real file, and the npm package holding it (``package.json`` named as the client's package)
or the native installer's folder of versions (``…/versions/<version>``) names the version. Only
when neither does is the client asked (``<exe> --version``, bounded). ``ledger install`` and
``ledger doctor`` read it; nothing on the hook path does.

What depends on the version is data (:data:`CLAUDE_FEATURES`), one row per fact with its source,
so the installer, doctor and the documentation read the same table.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ledger._startup.namedtuple import NamedTuple
from ledger._startup.search_path import program_on_path

__all__ = [
    "CLAUDE_FEATURES",
    "CLIENT_EXECUTABLES",
    "CLIENT_PACKAGES",
    "ClientFeature",
    "InstalledClient",
    "Version",
    "feature_applies",
    "format_version",
    "installed_version",
    "parse_version",
]

Version = tuple[int, ...]

#: Executables that identify a client on this machine (the first found on ``PATH`` is read).
CLIENT_EXECUTABLES: Final[Mapping[str, tuple[str, ...]]] = {
    "claude": ("claude",),
    "cursor": ("cursor-agent", "cursor"),
    "gemini": ("gemini",),
    "codex": ("codex",),
    "cline": ("cline",),
    "copilot": ("copilot",),
    "antigravity": ("agy",),
    "windsurf": ("windsurf",),
    "vscode": ("code", "code-insiders"),
}

#: The npm package each client ships in, where it does: its ``package.json`` names the version.
CLIENT_PACKAGES: Final[Mapping[str, str]] = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "copilot": "@github/copilot",
    "cline": "cline",
}

#: How many folders above the real executable a ``package.json`` is looked for.
_PACKAGE_DEPTH: Final = 6
#: How long ``<exe> --version`` may take (a native binary answers in well under a second).
_ASK_TIMEOUT: Final = 10.0
_VERSION_TEXT: Final = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?![\d])")


class ClientFeature(NamedTuple):
    """One fact about a client's versions that changes what ledger writes.

    Attributes:
        name: what ledger calls it (the doctor line and the docs use it).
        since: the first version it holds for.
        what: what ledger does on the versions it holds for.
        source: where the fact was read.
    """

    name: str
    since: Version
    what: str
    source: str


#: Claude Code's facts. ``since`` of the sandbox's permission flow is the 2.1.3xx the finding
#: names (2.1.332's schema was read here; 2025's documentation gave the key a default of true).
#: ``--hardened`` writes the key for every version, since every version with a sandbox knows it
#: and true was the older default: a boundary read too late can then cost nobody a prompt.
CLAUDE_FEATURES: Final[Mapping[str, ClientFeature]] = {
    "sandbox-permission-flow": ClientFeature(
        "sandboxed commands go through the permission flow",
        (2, 1, 300),
        "sandbox.autoAllowBashIfSandboxed must be true (--hardened writes it), so a sandboxed "
        "command ledger's hook lets through runs without a prompt (headless, a prompt is a "
        "refusal)",
        "Claude Code 2.1.332's settings schema: autoAllowBashIfSandboxed 'Default: false, so "
        "sandboxed commands go through the same permission flow as any other command'",
    ),
    "hook-on-failure": ClientFeature(
        "hooks honour onFailure: block",
        (2, 1, 295),
        "ledger install writes mcp_tool hooks into the `ledger mcp` server with onFailure: "
        "block; older versions accept the key and ignore it (a dead server would let calls "
        "through), so they keep command hooks",
        "Claude Code's changelog (8 Oct 2026) and 2.1.332's hook schema",
    ),
}


class InstalledClient(NamedTuple):
    """What was found of one client on this machine.

    Attributes:
        client: ledger's client name.
        executable: the executable found on ``PATH`` (``None``: none).
        version: the version, or ``None`` when it could not be read.
        how: where the version was read (or why it could not be), for people.
    """

    client: str
    executable: Path | None
    version: Version | None
    how: str

    @property
    def text(self) -> str:
        """The version as people write it, or ``unknown``."""
        return format_version(self.version) if self.version is not None else "unknown"


def parse_version(text: str) -> Version | None:
    """The first ``MAJOR.MINOR.PATCH`` in ``text`` (``2.1.332 (Claude Code)`` -> (2, 1, 332))."""
    found = _VERSION_TEXT.search(text)
    return tuple(int(part) for part in found.groups()) if found else None


def format_version(version: Version) -> str:
    return ".".join(map(str, version))


def feature_applies(feature: ClientFeature, version: Version | None) -> bool:
    """Whether ``feature`` holds for ``version``; an unknown version is taken as the newest
    (a client ledger cannot read is most likely a current one)."""
    return version is None or version >= feature.since


def _from_package(real: Path, package: str) -> Version | None:
    for folder in list(real.parents)[:_PACKAGE_DEPTH]:
        manifest = folder / "package.json"
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("name") == package:
            return parse_version(str(data.get("version", "")))
    return None


def _ask(executable: Path, environ: Mapping[str, str]) -> Version | None:
    import subprocess  # noqa: PLC0415 -- only when no file names the version

    try:
        done = subprocess.run(  # noqa: S603 -- the client's own executable, found on PATH
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            timeout=_ASK_TIMEOUT,
            env=dict(environ),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def installed_version(
    client: str, environ: Mapping[str, str] | None = None, *, ask: bool = True
) -> InstalledClient:
    """The version of ``client`` on this machine (``environ``'s ``PATH``).

    Args:
        client: ledger's client name.
        environ: where ``PATH`` is read (this process's when it has none).
        ask: run ``<exe> --version`` when no file names the version.
    """
    env = os.environ if environ is None else environ
    path = env.get("PATH") or os.environ.get("PATH", os.defpath)
    for name in CLIENT_EXECUTABLES.get(client, (client,)):
        found = program_on_path(name, path)
        if found is None:
            continue
        executable = Path(found)
        real = Path(os.path.realpath(found))
        package = CLIENT_PACKAGES.get(client)
        version = _from_package(real, package) if package else None
        if version is not None:
            return InstalledClient(client, executable, version, f"{package}'s package.json")
        if real.parent.name == "versions" and parse_version(real.name):
            return InstalledClient(
                client, executable, parse_version(real.name), f"the native install {real}"
            )
        version = _ask(executable, env) if ask else None
        if version is not None:
            return InstalledClient(client, executable, version, f"`{name} --version`")
        return InstalledClient(client, executable, None, f"{found} does not say its version")
    return InstalledClient(client, None, None, f"no {client} executable on PATH")
