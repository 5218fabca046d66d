"""The modules a one-shot hook process imports, probed through the real hook command.

Each payload fixture (every client's, tests/fixtures/payloads/<client>/<Event>-*.json) is
answered by ``<python> -I -S cli/_thin.py <ledger> hook <client> --event <Event>`` with no
decider, exactly as the installed command runs it, in a workspace of its own with an intent
selected; the process notes ``sys.modules`` as it exits (``posix._exit`` wrapped: the thin path
leaves through it). The union is what the tripwire watches the ``.pyc`` of in every process,
the resident ones included (ledger/_governance/analysis/hook_modules.py).

    python -m tests.hooks.hook_modules_probe --write   # regenerate hook_modules.py
    python -m tests.hooks.hook_modules_probe           # print what differs, exit 1 if any
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ledger._governance.analysis.hook_modules import HOOK_MODULES

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "payloads"
MODULE_FILE = REPO / "ledger" / "_governance" / "analysis" / "hook_modules.py"
THIN = REPO / "cli" / "_thin.py"
LEDGER_SCRIPT = Path(sys.executable).parent / "ledger"
ROOT_TOKEN = "/home/dev/app"  # noqa: S105 -- the fixtures' workspace path, not a secret
INTENTS = """active_intents:
  - id: INT-001
    name: Probe
    status: IN_PROGRESS
    owned_scope: ["**"]
"""
#: Runs the thin hook as ``python -I -S`` would run cli/_thin.py, and writes the modules
#: loaded when it exits to the file named by the first argument.
_PROBE = r"""
import posix, sys
out, thin = sys.argv[1], sys.argv[2]
real_exit = posix._exit
def noted_exit(code):
    with open(out, "w") as handle:
        handle.write("\n".join(sorted(sys.modules)))
    real_exit(code)
posix._exit = noted_exit
sys.argv = sys.argv[2:]
source = open(thin).read()
code = compile(source, thin, "exec")
namespace = {"__name__": "__main__", "__file__": thin}
try:
    exec(code, namespace)
except SystemExit as done:
    noted_exit(done.code if isinstance(done.code, int) else 1)
"""


def fixture_cases(only: Iterable[str] | None = None) -> list[tuple[str, str, Path]]:
    """``(client, event, payload file)`` for every fixture (``only``: these file names)."""
    wanted = set(only) if only is not None else None
    cases = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "real"):
        for payload in sorted(folder.glob("*.json")):
            if wanted is not None and f"{folder.name}/{payload.name}" not in wanted:
                continue
            cases.append((folder.name, payload.name.split("-", 1)[0], payload))
    return cases


def _workspace(base: Path, *, intent_required: bool) -> tuple[Path, dict[str, str]]:
    home, root = base / "home", base / "ws"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LEDGER_", "CLAUDE_", "GEMINI_", "CURSOR_", "GIT_"))
    }
    env.update(
        {
            "HOME": str(home),
            "LEDGER_HOME": str(home / ".ledger"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".state"),
            "XDG_RUNTIME_DIR": str(home / ".run"),
            "LEDGER_DECIDER": "off",
        }
    )
    subprocess.run(
        [str(LEDGER_SCRIPT), "init", "--root", str(root), "--parents"],
        env=env,
        check=True,
        capture_output=True,
    )
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    if not intent_required:  # the write paths past the intent check: scope, observation
        policies = "policies:\n  intent_required: false\n"
        (root / ".orchestration" / "hooks.yaml").write_text(policies, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], env=env, check=True, capture_output=True)
    for client in ("claude", "gemini", "codex", "cursor"):  # settings files the tripwire reads
        subprocess.run(
            [str(LEDGER_SCRIPT), "install", client, "--root", str(root)],
            env=env,
            capture_output=True,
            check=False,
        )
    subprocess.run(
        [str(LEDGER_SCRIPT), "intent", "select", "INT-001", "--root", str(root)],
        env=env,
        capture_output=True,
        check=False,
    )
    return root, env


def probe(cases: list[tuple[str, str, Path]]) -> set[str]:
    """The union of the modules the hook processes answering ``cases`` imported."""
    found: set[str] = set()
    for intent_required in (True, False):
        found |= _probe_in(cases, intent_required=intent_required)
    return {name for name in found if name != "__main__"}


def _probe_in(cases: list[tuple[str, str, Path]], *, intent_required: bool) -> set[str]:
    found: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="hook-modules-") as folder:
        base = Path(folder)
        root, env = _workspace(base, intent_required=intent_required)
        out = base / "modules.txt"
        for client, event, payload in cases:
            raw = payload.read_text(encoding="utf-8").replace(ROOT_TOKEN, str(root))
            out.unlink(missing_ok=True)
            subprocess.run(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _PROBE,
                    str(out),
                    str(THIN),
                    str(LEDGER_SCRIPT),
                    "hook",
                    client,
                    "--event",
                    event,
                ],
                input=raw.encode(),
                cwd=root,
                env=env,
                capture_output=True,
                timeout=120,
                check=False,
            )
            if not out.exists():
                raise RuntimeError(f"the hook for {payload} exited without noting its modules")
            found.update(out.read_text(encoding="utf-8").split())
    return found


def render(modules: set[str]) -> str:
    lines = "".join(f'        "{name}",\n' for name in sorted(modules))
    return (
        '"""The modules a one-shot hook process imports: GENERATED by ``python -m\n'
        "tests.hooks.hook_modules_probe --write`` from every payload fixture answered through\n"
        "the installed thin hook command (do not edit; tests/hooks/test_hook_modules.py fails\n"
        "when a hook imports a module missing here). The tripwire watches the ``.pyc`` of these\n"
        "modules in every process (ledger/_governance/analysis/runs_later.py): a resident\n"
        "process (the decider, ``ledger mcp``) imports hundreds more, whose ``.pyc`` a one-shot\n"
        'hook never loads."""\n\n'
        "from typing import Final\n\n"
        "HOOK_MODULES: Final = frozenset(\n"
        "    {\n"
        f"{lines}"
        "    }\n"
        ")\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    ns = parser.parse_args()
    modules = probe(fixture_cases())
    text = render(modules)
    if ns.write:
        MODULE_FILE.write_text(text, encoding="utf-8")
        sys.stdout.write(f"{MODULE_FILE.relative_to(REPO)}: {len(modules)} modules\n")
        return 0
    missing, extra = sorted(modules - HOOK_MODULES), sorted(HOOK_MODULES - modules)
    sys.stdout.write(json.dumps({"missing": missing, "no longer imported": extra}, indent=2) + "\n")
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
