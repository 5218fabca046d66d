"""Attack: tools no policy knows (MCP tools, a client's generic tool) reach files and the shell
through their input. Each is checked like a file tool or a shell command: the protected paths,
the intent, the scope (:mod:`ledger._governance.analysis.tool_input`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._governance.analysis.tool_input import is_read_only, tool_reach
from tests.hooks._support import Session, Workspace, make_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True, exist_ok=True)
    return workspace


def _working(ws: Workspace, name: str = "agent") -> Session:
    session = Session(ws, name)
    assert session.select("INT-001").permission == "allow"
    return session


def _key_dir(ws: Workspace) -> Path:
    from ledger._evidence.keys import private_key_dir  # noqa: PLC0415

    return private_key_dir(ws.env)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (
            "mcp__fs__write_file",
            {"path": "{root}/.orchestration/active_intents.yaml", "content": "x"},
        ),
        ("mcp__fs__edit_file", {"filePath": ".orchestration/hooks.yaml", "edits": []}),
        ("mcp__fs__move_file", {"source": "src/a.ts", "destination": ".orchestration/x"}),
        ("mcp__fs__write", {"uri": "file://{root}/.orchestration/agent_trace.jsonl"}),
        (
            "mcp__fs__batch",
            {"ops": [{"op": "w", "target": {"paths": ["src/a", ".claude/settings.json"]}}]},
        ),
        ("mcp__fs__create", {"directory": ".orchestration", "name": "intents.yaml"}),
        ("mcp__x__do", {"items": ["file://{root}/.codex/config.toml"]}),
        (
            "use_mcp_tool",
            {
                "server_name": "fs",
                "tool_name": "write_file",
                "arguments": json.dumps({"path": ".orchestration/hooks.yaml", "content": "{}"}),
            },
        ),
        ("mcp__fs__write", {"Path": "{root}/.orchestration/x", "path": "src/auth/ok.ts"}),
        ("mcp__fs__write", {"file_path": "src/auth/ok.ts", "FILE-PATH": ".orchestration/x"}),
        ("mcp__shell__run", {"command": {"program": "x", "file_path": ".orchestration/y"}}),
        ("mcp__shell__run", {"command": "rm -rf .orchestration"}),
        (
            "mcp__shell__exec",
            {"command": "sh", "args": ["-c", "echo x > .orchestration/hooks.yaml"]},
        ),
        ("mcp__shell__exec", {"cmd": ["cp", "/tmp/x", ".orchestration/hooks.yaml"]}),
    ],
)
def test_mcp_tools_cannot_write_protected_paths(
    ws: Workspace, tool: str, tool_input: dict[str, Any]
) -> None:
    filled = json.loads(json.dumps(tool_input).replace("{root}", str(ws.root)))
    fired = _working(ws).pre(tool, filled)
    assert fired.permission == "deny", (tool, fired.decision)
    assert fired.code == "ORCHESTRATION_PROTECTED", fired.decision


def test_an_mcp_tool_that_only_reads_may_not_read_the_key(ws: Workspace) -> None:
    key = _key_dir(ws)
    session = Session(ws, "reader")  # no intent: reading needs none
    for tool, tool_input in (
        ("mcp__fs__read_text_file", {"path": str(key / "k.pem")}),
        ("mcp__fs__read_multiple_files", {"paths": ["src/a.ts", str(key)]}),
        ("mcp__fs__search_files", {"path": str(key.parent), "pattern": "*"}),
        ("mcp__fs__get_file_info", {"uri": f"file://{key}/k.pem"}),
    ):
        fired = session.pre(tool, tool_input)
        assert fired.permission == "deny", (tool, fired.decision)
        assert "private" in fired.reason


def test_an_mcp_tool_that_only_reads_may_read_the_workspace_and_the_ledger(ws: Workspace) -> None:
    session = Session(ws, "reader")
    for tool, tool_input in (
        ("mcp__fs__read_text_file", {"path": str(ws.root / "src" / "auth" / "a.ts")}),
        ("mcp__fs__list_directory", {"path": str(ws.root / ".orchestration")}),
        ("Grep", {"pattern": "x", "path": str(ws.root / ".orchestration")}),
        ("mcp__github__get_issue", {"owner": "o", "repo": "r", "issue_number": 1}),
        ("mcp__playwright__browser_navigate", {"url": "localhost:3000/login"}),
    ):
        fired = session.pre(tool, tool_input)
        assert fired.permission in (None, "allow"), (tool, fired.decision)


def test_an_mcp_write_needs_an_intent_and_stays_in_its_scope(ws: Workspace) -> None:
    inside = {"path": str(ws.root / "src" / "auth" / "new.ts"), "content": "x"}
    lost = Session(ws, "lost").pre("mcp__fs__write_file", inside)
    assert lost.permission == "deny"
    assert lost.code == "INTENT_REQUIRED"
    session = _working(ws)
    assert session.pre("mcp__fs__write_file", inside).permission in (None, "allow")
    outside = session.pre("mcp__fs__write_file", {"path": "src/billing/x.ts", "content": "x"})
    assert outside.permission == "deny"
    assert outside.code == "SCOPE_VIOLATION"
    away = session.pre("mcp__fs__write_file", {"path": "/etc/cron.d/x", "content": "x"})
    assert away.code == "SCOPE_VIOLATION"
    assert "outside the workspace" in away.reason


def test_a_command_in_an_mcp_tool_is_classified_like_a_bash_command(ws: Workspace) -> None:
    session = _working(ws)
    destructive = session.pre("mcp__shell__run", {"command": "rm -rf src/auth"})
    assert destructive.permission == "ask", destructive.decision
    assert "DESTRUCTIVE" in destructive.reason
    quiet = session.pre("mcp__shell__run", {"command": "ls src", "cwd": str(ws.root)})
    assert quiet.permission in (None, "allow"), quiet.decision
    secret = session.pre("mcp__shell__run", {"command": f"cat {_key_dir(ws)}/k.pem"})
    assert secret.permission == "deny"


def test_an_input_too_deep_to_read_is_a_write_that_cannot_be_checked(ws: Workspace) -> None:
    deep: dict[str, Any] = {"path": "src/auth/a.ts"}
    for _ in range(60):
        deep = {"x": deep}
    fired = _working(ws).pre("mcp__x__do", deep)
    assert fired.permission == "deny"
    assert fired.code == "SCOPE_VIOLATION"


@pytest.mark.parametrize(
    ("name", "read_only"),
    [
        ("mcp__fs__read_text_file", True),
        ("mcp__fs__list_directory", True),
        ("mcp__github__get_issue", True),
        ("Grep", True),
        ("LS", True),
        ("mcp__fs__write_file", False),
        ("mcp__fs__read_and_delete", False),
        ("mcp__x__getOrCreate", False),
        ("mcp__x__do", False),
        ("use_mcp_tool", False),
        ("mcp__sqlite__query", True),
        ("mcp__filesystem__directory_tree", True),
    ],
)
def test_the_read_only_rule_reads_the_words_of_the_name(name: str, read_only: bool) -> None:
    assert is_read_only(name) is read_only


def test_a_generic_mcp_tool_is_judged_by_the_tool_it_names() -> None:
    assert is_read_only("use_mcp_tool", {"tool_name": "read_file"})
    assert not is_read_only("use_mcp_tool", {"tool_name": "write_file"})


# --- hypothesis: a protected path hidden anywhere in an input is found -------------------------

_KEYS = st.sampled_from(
    ["path", "file_path", "filePath", "paths", "filename", "target_file", "uri"]
)
_LEAVES = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)
_NOISE = st.lists(_LEAVES, max_size=3) | st.dictionaries(
    st.sampled_from(["a", "b", "content", "n"]), st.lists(_LEAVES, max_size=2) | _LEAVES, max_size=3
)


def _hide(path: str, key: str, shape: list[int], noise: Any) -> Any:
    """``{key: path}`` buried under ``shape`` levels of lists and objects beside ``noise``."""
    value: Any = {key: f"file://{path}" if key == "uri" else ([path] if key == "paths" else path)}
    for level in shape:
        value = [noise, value] if level % 2 else {"noise": noise, f"k{level}": value}
    return value


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    hidden=st.tuples(_KEYS, st.lists(st.integers(0, 9), max_size=8), _NOISE),
    target=st.sampled_from(
        [".orchestration/hooks.yaml", ".orchestration", ".claude/settings.local.json", ".codex/x"]
    ),
    verb=st.sampled_from(["write", "apply", "do", "sync"]),
)
def test_a_protected_path_anywhere_in_a_writing_tools_input_is_denied(
    ws: Workspace, hidden: tuple[str, list[int], Any], target: str, verb: str
) -> None:
    key, shape, noise = hidden
    absolute = str(ws.root / target)
    tool_input = _hide(absolute, key, shape, noise)
    if not isinstance(tool_input, dict):
        tool_input = {"items": tool_input}
    assert absolute in tool_reach(f"mcp__s__{verb}", tool_input).paths
    fired = Session(ws, "h").pre(f"mcp__s__{verb}", tool_input)
    assert fired.permission == "deny", fired.decision


# --- every client's MCP payload, as the client sends it ---------------------------------------

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "payloads"


def _as_sent(client: str, fixture: str, root: Path, arguments: dict[str, Any]) -> bytes:
    """A recorded MCP payload of ``client``, aimed at ``root``, carrying ``arguments``."""
    payload = json.loads((FIXTURES / client / fixture).read_text(encoding="utf-8"))
    if client == "cline":
        payload["workspaceRoots"] = [str(root)]
        payload["taskId"] = "t-mcp"
        payload["preToolUse"]["parameters"] = {
            "server_name": "fs",
            "tool_name": "write_file",
            "arguments": json.dumps(arguments),
        }
    else:
        payload["cwd"] = str(root)
        payload["workspace_roots"] = [str(root)]
        payload["tool_input"] = (
            json.dumps(arguments) if isinstance(payload["tool_input"], str) else arguments
        )
        payload["tool_name"] = "write_file" if client == "cursor" else "mcp__fs__write_file"
        if client == "gemini":  # Gemini CLI names it mcp_fs_write_file, and says so apart
            payload["tool_name"] = "mcp_fs_write_file"
            payload["mcp_context"] = {"server_name": "fs", "tool_name": "write_file"}
    return json.dumps(payload).encode()


@pytest.mark.parametrize(
    ("client", "fixture"),
    [
        ("claude", "PreToolUse-mcp.json"),
        ("codex", "PreToolUse-mcp.json"),
        ("gemini", "BeforeTool-mcp.json"),
        ("cursor", "beforeMCPExecution-command.json"),
        ("cline", "PreToolUse-use-mcp-tool.json"),
    ],
)
def test_every_clients_mcp_write_to_the_ledger_is_denied(
    ws: Workspace, client: str, fixture: str
) -> None:
    from ledger import handle_event, parse_payload  # noqa: PLC0415

    arguments = {"path": str(ws.root / ".orchestration" / "hooks.yaml"), "content": "{}"}
    event = parse_payload(client, _as_sent(client, fixture, ws.root, arguments))
    assert event.tool_name is not None
    assert event.tool_name.startswith("mcp__"), event.tool_name
    decision = handle_event(event, environ=ws.env)
    assert decision.permission == "deny", (client, decision)
    assert (decision.error or {}).get("code") == "ORCHESTRATION_PROTECTED", decision
