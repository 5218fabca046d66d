"""`import ledger` stays light, and the append path never loads heavy modules."""

from __future__ import annotations

import subprocess
import sys

# `mcp` (and its anyio, starlette): only `ledger mcp` pays for the MCP SDK, never a hook
# (decision 0015). `claude_agent_sdk`: only ledger.claude_sdk_hooks() imports it, in the SDK
# program that asked for it.
HEAVY = (
    "pydantic",
    "typer",
    "duckdb",
    "rich",
    "pandas",
    "yaml",
    "pathspec",
    "rfc8785",
    "mcp",
    "anyio",
    "starlette",
    "claude_agent_sdk",
)

PROBE = """
import sys
{body}
heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))
print('HEAVY:' + ','.join(heavy))
"""


def _loaded_heavy_modules(body: str) -> list[str]:
    code = PROBE.format(body=body, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    marker = out.splitlines()[-1]
    assert marker.startswith("HEAVY:"), out
    return [m for m in marker[len("HEAVY:") :].split(",") if m]


def test_import_ledger_is_light() -> None:
    assert _loaded_heavy_modules("import ledger") == []


def test_embedded_append_path_is_light(tmp_path: object) -> None:
    body = f"""
import os
from ledger import Ledger, SigningKey
env = {{"LEDGER_HOME": {str(tmp_path)!r} + "/home"}}
ledger = Ledger.init({str(tmp_path)!r} + "/ws", environ=env)
ledger = Ledger.open({str(tmp_path)!r} + "/ws", environ=env)
ledger.append("app.event", {{"n": 1}}, actor={{"client": "x"}})
"""
    assert _loaded_heavy_modules(body) == []


def test_cli_append_fast_path_is_light(tmp_path: object) -> None:
    body = f"""
import io, os
from ledger import Ledger
env = {{"LEDGER_HOME": {str(tmp_path)!r} + "/home"}}
os.environ.update(env)
Ledger.init({str(tmp_path)!r} + "/ws", environ=env)
sys.stdin = io.TextIOWrapper(io.BytesIO(b'{{"n": 1}}'))
from cli._entry import main
assert main(["append", "--root", {str(tmp_path)!r} + "/ws"]) == 0
"""
    assert _loaded_heavy_modules(body) == []


def test_the_workspace_module_loads_no_openssl() -> None:
    # hashlib loads OpenSSL (~35 ms cold, bench_cli_start): every command imports
    # ledger._workspace, and only one that seals or unseals a cache may pay for hmac/hashlib.
    probe = (
        "import sys; import ledger._workspace; "
        "print('OPENSSL:' + ','.join(sorted({'hashlib', '_hashlib', 'hmac'} & set(sys.modules))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out.splitlines()[-1] == "OPENSSL:", out


#: Every module a hook process can import, whatever the event and client.
HOOK_PATH_IMPORTS = (
    "import ledger._hooks.service, ledger._governance.analysis.shell\n"
    "import ledger._governance.analysis.mutation, ledger._governance.attribution\n"
    "import ledger._governance.analysis.tool_input, ledger._clients.cline\n"
)


def _made_while_importing_the_hook_path(counting: str) -> str:
    """What ``counting`` (code that appends to ``made``) saw while the hook path imported."""
    probe = f"import sys; made = []\n{counting}{HOOK_PATH_IMPORTS}print('MADE:' + ' | '.join(made))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    return out.splitlines()[-1].removeprefix("MADE:")


def test_the_hook_path_compiles_no_namedtuple_class() -> None:
    # typing.NamedTuple compiles source for every class (its __new__, each string annotation):
    # ~0.2-1 ms a class, paid again by every hook process. ledger._startup.namedtuple builds the
    # same classes without compiling; a module on the hook path that goes back to typing's shows
    # here.
    counting = (
        "import typing; new = typing.NamedTupleMeta.__new__\n"
        "def counted(*args, **kwargs):\n"
        "    made.append(args[1]); return new(*args, **kwargs)\n"
        "typing.NamedTupleMeta.__new__ = counted\n"
    )
    assert _made_while_importing_the_hook_path(counting) == ""


def test_importing_the_hook_path_compiles_no_regular_expression() -> None:
    # A pattern compiled at import is paid by every hook process, used or not (a prompt uses
    # almost none): ledger's module-level patterns are ledger._startup.patterns.lazy_compile.
    counting = (
        "import re; compile_ = re._compile\n"
        "def counted(pattern, flags):\n"
        "    caller = sys._getframe(2).f_globals.get('__name__', '')\n"
        "    if caller.startswith('ledger'):\n"
        "        made.append(f'{caller}: {pattern!r}')\n"
        "    return compile_(pattern, flags)\n"
        "re._compile = counted\n"
    )
    assert _made_while_importing_the_hook_path(counting) == ""
