"""The hook path does each piece of work once (one normalization per path, one read per file)
and loads only what it needs.

Counted, not timed (decision 0006): every policy that needs a path's resolution or a file's content
asks the per-call memo of :class:`ledger._governance.policies.Governance`; a warm hook process
imports none of the heavy modules, nor orjson.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ledger._evidence.ledger import Ledger
from ledger._governance import files, policies
from ledger._governance.analysis import paths

from ._support import Session, Workspace, claude_payload, edit_response, make_workspace

AUTH_FILE = "src/auth/middleware.ts"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {"normalize": Counter(), "open": Counter()}
    real_normalize, real_open = paths.normalize_path, files._open_regular

    def normalize(path: str, **kwargs: Any) -> paths.NormalizedPath:
        counts["normalize"][path] += 1
        return real_normalize(path, **kwargs)

    def open_regular(path: str) -> int | None:
        counts["open"][path] += 1
        return real_open(path)

    monkeypatch.setattr(policies, "normalize_path", normalize)
    monkeypatch.setattr(paths, "normalize_path", normalize)
    monkeypatch.setattr(files, "_open_regular", open_regular)
    return counts


def test_an_edit_in_scope_normalizes_its_path_once_and_reads_the_file_once(
    tmp_path: Path, counted: dict[str, Counter[str]]
) -> None:
    ws = make_workspace(tmp_path)
    target = ws.write(AUTH_FILE, "export const a = 1;\nexport const b = 2;\n")
    session = Session(ws, "counted")
    session.select()
    session.read(AUTH_FILE)
    for counter in counted.values():
        counter.clear()
    edit = {
        "file_path": str(target),
        "old_string": "export const a = 1;\n",
        "new_string": "export const a = 10;\n",
        "replace_all": False,
    }
    fired = session.pre("Edit", edit)
    assert fired.permission in (None, "allow")
    # protected-path check, scope, stale file and mutation class all needed the path and the
    # file: the memo answered all but the first.
    assert counted["normalize"] == {str(target): 1}
    assert counted["open"] == {str(target): 1}


# --- what the hook process imports ------------------------------------------------------------

#: Never on a warm hook call: the CLI and query stacks, the config parsers (their results are
#: cached), orjson (its import costs more than the few values a hook call encodes;
#: ledger/_evidence/lightjson.py gives its answers without it), and ast (read for Python files
#: only; this edit is TypeScript).
NOT_ON_THE_HOOK_PATH = {
    "typer",
    "click",
    "rich",
    "pydantic",
    "pydantic_core",
    "duckdb",
    "yaml",
    "pathspec",
    "rfc8785",
    "orjson",
    "dataclasses",
    "uuid",
    "ast",
}
PROBE = (
    "import sys; from cli._entry import main; code = main(sys.argv[1:]); "
    "print(chr(10).join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
)


def hook_process_modules(ws: Workspace, payload: dict[str, Any], event: str) -> set[str]:
    """The modules one `ledger hook claude` process had loaded when it ended."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook", "claude", "--event", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=False,
        env=ws.proc_env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answer = json.loads(done.stdout or b"{}")
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") != "deny", answer
    return set(done.stderr.decode().split())


def test_warm_hook_calls_load_neither_orjson_nor_heavy_modules(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    target = ws.write(AUTH_FILE, "export const a = 1;\n")
    session = Session(ws, "imports")
    session.select()
    session.read(AUTH_FILE)
    write_input = {"file_path": str(target), "content": "export const a = 2;\n"}
    session.pre("Write", write_input)  # in-process: the caches (compiled scope, ...) are warm
    write = claude_payload(
        "PreToolUse",
        ws,
        session.id,
        tool_name="Write",
        tool_input=write_input,
        tool_use_id=session.tool_use_id(),
    )
    edit_input = {"file_path": str(target), "old_string": "1", "new_string": "2"}
    edit = claude_payload(
        "PostToolUse",
        ws,
        session.id,
        tool_name="Edit",
        tool_input=edit_input,
        tool_response=edit_response(target, "1", "2", "export const a = 1;\n"),
        tool_use_id=session.tool_use_id(),
    )
    before = len(ws.records())
    for payload, event in ((write, "PreToolUse"), (edit, "PostToolUse")):
        modules = hook_process_modules(ws, payload, event)
        assert "ledger._hooks.service" in modules  # the hook path really ran
        loaded = {name for name in modules if name.split(".")[0] in NOT_ON_THE_HOOK_PATH}
        assert loaded == set(), (event, sorted(loaded))
        # The client settings' key tables are read only when a settings file changed.
        assert "ledger._hooks.settings_keys" not in modules, event
    assert [r.kind for r in ws.records()[before:]] == ["hook.pre", "hook.post"]
    assert Ledger.open(ws.root, environ=ws.env).verify().ok
