"""Workspaces governed by ledger's installed hooks, driven by a real agent CLI.

A :class:`Workspace` is a throwaway project in its own directory with its own ``HOME``: ``ledger
init``, an intents file, ``ledger install <client>`` exactly as a user runs them, and then each
installed hook command routed through ``capture_hook.py`` so that every call the client makes is
kept (what it sent, what ledger answered). Nothing is shared between workspaces, so scenarios can
run in parallel.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ledger import CLIENTS

LEDGER: Final = Path(sys.executable).parent / "ledger"
CAPTURE_HOOK: Final = Path(__file__).resolve().parent / "capture_hook.py"

INTENTS_YAML: Final = """\
intents:
  - id: INT-001
    name: JWT hardening
    status: active
    owned_scope: [{scope}]
    constraints: ["keep the public API of src/auth stable"]
    acceptance_criteria: ["auth tests pass"]
  - id: INT-002
    name: Billing cleanup
    status: planned
    owned_scope: ["src/billing/**"]
"""

#: Where ``ledger install <client>`` writes (project scope), relative to the workspace.
#: Every workspace made in this process, so the suite can collect their payloads after a test.
CREATED: list[Workspace] = []
#: Every workspace folder this process made, for :func:`stop_deciders` at the session's end.
EVERY_BASE: list[Path] = []


def stop_deciders() -> None:
    """End the resident deciders the clients' hooks started in this process's workspaces
    (found by their HOME in ``/proc``): tests leave no process running. A client's last hook
    may spawn one just as the client exits, so asking each to stop after its test races it."""
    import signal  # noqa: PLC0415

    bases = tuple(f"HOME={base}/".encode() for base in EVERY_BASE)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"serve" not in argv or not any(a.endswith(b"/ledger") for a in argv):
                continue
            environ = (proc / "environ").read_bytes().split(b"\0")
            if any(v.startswith(bases) for v in environ):
                os.kill(int(proc.name), signal.SIGTERM)
        except (OSError, ValueError):
            continue


#: Where ``ledger install`` puts a client's hook commands: its machine-local settings file where
#: it has one (Claude Code's ``settings.local.json``), else the shared one (the registry says).
SETTINGS: Final = {name: spec.local_file or spec.shared_file for name, spec in CLIENTS.items()}


@dataclass(frozen=True)
class HookCall:
    """One hook call the client made: the payload it sent and what ledger answered."""

    event: str
    payload: dict[str, Any]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> dict[str, Any]:
        """ledger's JSON answer ({} when it answered with an exit code only)."""
        try:
            value = json.loads(self.stdout)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Workspace:
    """An initialised, hook-installed workspace with a private HOME."""

    client: str
    base: Path
    #: Folders put first on ``PATH`` (the real client's, so ``ledger install`` reads its version).
    bin_dirs: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        return self.base / "workspace"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def captures(self) -> Path:
        return self.base / "hook-calls"

    @property
    def trace(self) -> Path:
        return self.root / ".orchestration" / "agent_trace.jsonl"

    def env(self, **extra: str) -> dict[str, str]:
        """A minimal environment: nothing of the developer's (keys, roots, proxies) leaks in."""
        # The venv's bin first (the agent's shell runs `ledger intent select`), then node's.
        node = shutil.which("node")
        dirs = [
            *self.bin_dirs,
            str(LEDGER.parent),
            *([str(Path(node).parent)] if node else []),
            "/usr/local/bin",
            "/usr/bin",
            "/bin",
        ]
        path = os.pathsep.join(dict.fromkeys(dirs))
        env = {
            "PATH": path,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": str(self.base / "tmp"),
            **self._runtime(),
        }
        env.update(extra)
        return env

    def _runtime(self) -> dict[str, str]:
        """``XDG_RUNTIME_DIR``: a short folder of this workspace's inside the suite's own
        (tests/conftest.py), where the decider its hooks start puts its socket. The workspace's
        own paths are too long for a socket, which would go to the per-user fallback,
        ``/tmp/ledger-<uid>``, shared by every workspace and left behind by the suite."""
        suite = os.environ.get("LEDGER_TEST_RUNTIME")
        if not suite:
            return {}
        folder = Path(suite) / hashlib.sha256(str(self.base).encode()).hexdigest()[:12]
        folder.mkdir(mode=0o700, exist_ok=True)
        return {"XDG_RUNTIME_DIR": str(folder)}

    def ledger(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the venv's ``ledger`` in the workspace, as the user would."""
        result = subprocess.run(
            [str(LEDGER), *args],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"ledger {' '.join(args)} exited {result.returncode}: "
                f"{result.stdout}{result.stderr}"
            )
        return result

    def records(self) -> list[dict[str, Any]]:
        """Every record, through ``ledger log --json``."""
        out = self.ledger("log", "--json", "-n", "1000000").stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def hook_calls(self) -> list[HookCall]:
        """Every hook call the client made, in the order they started."""
        calls = []
        for path in sorted(self.captures.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8") or "{}")
            if not data:
                continue  # claimed by a call still running
            try:
                payload = json.loads(data["stdin"])
            except ValueError:
                payload = {"_unparsed": data["stdin"]}
            calls.append(
                HookCall(data["event"], payload, data["exit_code"], data["stdout"], data["stderr"])
            )
        return calls

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str) -> Path:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def read(self, relative: str) -> str | None:
        try:
            return (self.root / relative).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None


def _handlers(node: object, key: str = "command") -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get(key), str):
            yield node
        for value in node.values():
            yield from _handlers(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from _handlers(value, key)


def make_workspace(
    base: Path,
    client: str,
    *,
    scope: str = '"src/auth/**"',
    hooks_yaml: str | None = None,
    hardened: bool = False,
    binary: Path | None = None,
) -> Workspace:
    """``ledger init`` + intents + ``ledger install <client>`` (``--hardened`` when asked), with
    every hook call captured. ``binary``: the client's executable, put on the workspace's
    ``PATH`` as a user's would be."""
    ws = Workspace(client, base, (str(binary.parent),) if binary else ())
    CREATED.append(ws)
    EVERY_BASE.append(base)
    for directory in (ws.root, ws.home, ws.captures, base / "tmp"):
        directory.mkdir(parents=True, exist_ok=True)
    ws.ledger("init")
    ws.write(".orchestration/active_intents.yaml", INTENTS_YAML.format(scope=scope))
    if hooks_yaml is not None:
        ws.write(".orchestration/hooks.yaml", hooks_yaml)
    installed = ws.ledger("install", client, *(["--hardened"] if hardened else [])).stdout
    settings = ws.root / SETTINGS[client]
    data = json.loads(settings.read_text(encoding="utf-8"))
    key = CLIENTS[client].command_key if CLIENTS[client].layout == "flat" else "command"
    ours = [h for h in _handlers(data, key) if f" hook {client} " in h[key]]
    if not ours:
        raise AssertionError(f"ledger install {client} wrote no hook commands:\n{installed}")
    prefix = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(CAPTURE_HOOK))} "
        f"{shlex.quote(str(ws.captures))} "
    )
    for handler in ours:
        handler[key] = prefix + handler[key]
    settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    ws.write("src/auth/token.ts", "export const alg = 'none';\nexport const issuer = '';\n")
    return ws
