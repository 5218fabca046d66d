"""``ledger mcp`` driven through the MCP SDK's own client, as a client starts it: a subprocess
on stdio (initialize, tools/list, tools/call)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.hooks._support import LEDGER, Session, Workspace, clean_env, make_workspace

pytestmark = pytest.mark.slow

Driver = Callable[[Any], Awaitable[Any]]


def _drive(cwd: Path, env: dict[str, str], body: Driver, *args: str) -> Any:
    """Start ``ledger mcp`` in ``cwd`` and run ``body`` with a connected SDK client."""
    from mcp import Client  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters  # noqa: PLC0415

    params = StdioServerParameters(command=str(LEDGER), args=["mcp", *args], cwd=cwd, env=env)

    async def run() -> Any:
        async with Client(params) as client:
            return await body(client)

    return asyncio.run(asyncio.wait_for(run(), timeout=60))


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    return workspace


def test_initialize_then_the_four_tools_are_listed_with_their_schemas(ws: Workspace) -> None:
    async def body(client: Any) -> Any:
        return client.server_info, client.instructions, await client.list_tools()

    info, instructions, listed = _drive(ws.root, clean_env(ws.home), body)
    assert info.name == "ledger"
    assert "select_active_intent" in (instructions or "")
    tools = {t.name: t for t in listed.tools}
    assert list(tools) == [
        "select_active_intent",
        "list_intents",
        "request_scope_expansion",
        "explain_line",
    ]
    assert tools["select_active_intent"].input_schema["required"] == ["intent_id"]
    expand = tools["request_scope_expansion"].input_schema
    assert expand["properties"]["globs"]["type"] == "array"
    assert tools["explain_line"].input_schema["properties"]["line"]["type"] == "integer"


def test_the_tools_answer_from_the_workspace(ws: Workspace) -> None:
    ws.write("src/auth/a.ts", "one\n")
    agent = Session(ws, "s-srv")
    agent.select("INT-001")

    async def body(client: Any) -> dict[str, Any]:
        calls = {
            "select": ("select_active_intent", {"intent_id": "INT-001"}),
            "closed": ("select_active_intent", {"intent_id": "INT-009"}),
            "unknown": ("select_active_intent", {"intent_id": "INT-404"}),
            "list": ("list_intents", {}),
            "expand": (
                "request_scope_expansion",
                {"intent_id": "INT-001", "globs": ["docs/**"], "reason": "docs"},
            ),
            "bad_glob": ("request_scope_expansion", {"intent_id": "INT-001", "globs": ["**"]}),
            "explain": ("explain_line", {"path": "src/auth/a.ts", "line": 1}),
            "no_line": ("explain_line", {"path": "src/auth/a.ts", "line": 7}),
            "outside": ("explain_line", {"path": "/etc/hostname", "line": 1}),
        }
        return {key: await client.call_tool(name, args) for key, (name, args) in calls.items()}

    got = _drive(ws.root, clean_env(ws.home), body)
    assert not got["select"].is_error
    assert _text(got["select"]).startswith("<intent_context>")
    assert "<glob>src/auth/**</glob>" in _text(got["select"])
    assert got["closed"].is_error
    assert "cannot select intent INT-009: it is done" in _text(got["closed"])
    assert got["unknown"].is_error
    assert "unknown intent INT-404 (known: INT-001, INT-002, INT-009)" in _text(got["unknown"])
    listing = _text(got["list"])
    assert "INT-001 ACTIVE (open): JWT hardening" in listing
    assert "INT-009 DONE (closed)" in listing
    assert "sessions working under it: 1" in listing
    assert not got["expand"].is_error
    assert "docs/**" in _text(got["expand"])
    assert got["bad_glob"].is_error
    assert ".orchestration/" in _text(got["bad_glob"])
    assert not got["explain"].is_error
    assert _text(got["explain"]).startswith("src/auth/a.ts:1 ")
    assert got["no_line"].is_error
    assert got["outside"].is_error
    for result in got.values():  # every answer is one line of text, never a traceback
        if result.is_error:
            assert "Traceback" not in _text(result)
            assert len(_text(result).splitlines()) == 1


def test_explain_line_names_the_intent_and_call_that_wrote_the_line(ws: Workspace) -> None:
    from tests.hooks._support import write_response  # noqa: PLC0415

    agent = Session(ws, "s-blame")
    agent.select("INT-001")
    path = ws.path("src/auth/new.ts")
    tool_input = {"file_path": str(path), "content": "export const x = 1;\n"}
    agent.pre("Write", tool_input, tool_use_id="toolu_blamed")
    path.write_text(tool_input["content"], encoding="utf-8")
    agent.post(
        "Write",
        tool_input,
        write_response(path, tool_input["content"], None),
        tool_use_id="toolu_blamed",
    )

    async def body(client: Any) -> Any:
        return await client.call_tool("explain_line", {"path": "src/auth/new.ts", "line": 1})

    answer = _text(_drive(ws.root, clean_env(ws.home), body))
    assert "agent: written by Write call toolu_blamed under INT-001, session s-blame" in answer
    assert answer.endswith("export const x = 1;")


def test_a_server_started_outside_any_workspace_answers_each_tool_with_one_line(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()

    async def body(client: Any) -> list[Any]:
        return [
            await client.call_tool("select_active_intent", {"intent_id": "INT-001"}),
            await client.call_tool("list_intents", {}),
            await client.call_tool(
                "request_scope_expansion", {"intent_id": "INT-001", "globs": ["docs/**"]}
            ),
            await client.call_tool("explain_line", {"path": "a.py", "line": 1}),
        ]

    for result in _drive(outside, clean_env(tmp_path / "home"), body):
        assert result.is_error
        text = _text(result)
        assert "no .orchestration/ found" in text
        assert "ledger init" in text
        assert len(text.splitlines()) == 1


def test_root_option_serves_that_workspace_from_anywhere(ws: Workspace, tmp_path: Path) -> None:
    async def body(client: Any) -> Any:
        return await client.call_tool("list_intents", {})

    result = _drive(tmp_path, clean_env(ws.home), body, "--root", str(ws.root))
    assert not result.is_error
    assert "INT-002" in _text(result)
