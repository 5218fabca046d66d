"""``ledger.claude_sdk_hooks``: the Claude Agent SDK's hook callbacks answer and record what
``ledger hook claude`` answers and records, and their failure blocks.

The SDK is driven through its own client (``ClaudeSDKClient``) and control protocol, with a
transport that plays Claude Code's side of it in memory (:class:`FakeCli`): the initialize
request the SDK sends (the matchers' ``onFailure``), the ``hook_callback`` requests Claude Code
sends for each hook input, and the control responses the SDK writes back. No network, no CLI.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

import anyio  # noqa: E402 -- the SDK's own dependency, present whenever it is
from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    Transport,
)
from claude_agent_sdk.types import HookEvent  # noqa: E402

from ledger import Ledger, claude_sdk_hooks  # noqa: E402
from ledger._clients.registry import CLIENTS  # noqa: E402
from ledger._governance.vocabulary import MAX_PAYLOAD_BYTES  # noqa: E402
from ledger._hooks.claude_sdk import answer_of, sdk_events  # noqa: E402

from .test_decider import ROOT_TOKEN, Rig, _comparable, _fixture_calls, _normalize  # noqa: E402

pytestmark = pytest.mark.slow


def same_records(
    direct: Rig, served: Rig, piped: Callable[[Rig], list[bytes]] = lambda _: []
) -> None:
    """The two rigs' records are the same decisions. One difference is by design: the tripwire
    seals the installation that decides, which in-process is the SDK program's interpreter and
    site folders, not the ``ledger`` launcher a command hook runs; so the count of sealed files
    at arming may differ, and nothing else. A failure record's digest of the payload is checked
    against the bytes Claude Code would have piped to the command hook in that rig (its root is
    in them, so the rigs' digests differ)."""

    def masked(rig: Rig) -> list[Any]:
        records = _comparable(rig.records(), rig.root)
        for kind, _actor, body in records:
            if kind == "governance.tripwire_armed":
                assert body.pop("files") > 0
            if kind == "hook.error" and body.get("payload_sha256") is not None:
                digests = {hashlib.sha256(raw).hexdigest() for raw in piped(rig)}
                assert body.pop("payload_sha256") in digests
        return records

    assert masked(direct) == masked(served)


class FakeCli(Transport):
    """Claude Code's end of the SDK's control protocol, in memory."""

    def __init__(self, *, honours_on_failure: bool = True) -> None:
        self.honours = honours_on_failure
        self.initialize: dict[str, Any] | None = None
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](100)
        self._answers: dict[str, anyio.Event] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count()

    async def connect(self) -> None:
        return None

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message.get("type") == "control_request":
            request = message["request"]
            if request["subtype"] == "initialize":
                self.initialize = request
                response = {"commands": [], "hooks_applied": True}
                if self.honours:
                    response["hook_on_failure_supported"] = True
                await self._send.send(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": message["request_id"],
                            "response": response,
                        },
                    }
                )
        elif message.get("type") == "control_response":
            answer = message["response"]
            self.answers[answer["request_id"]] = answer
            self._answers[answer["request_id"]].set()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        async for message in self._receive:
            yield message

    async def close(self) -> None:
        self._send.close()

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    def callback_id(self, event: str) -> str:
        assert self.initialize is not None
        [matcher] = self.initialize["hooks"][event]
        [callback] = matcher["hookCallbackIds"]
        return str(callback)

    async def hook(self, event: str, hook_input: Any) -> dict[str, Any]:
        """Send one hook input as Claude Code does; the SDK's control response."""
        request_id = f"cli_{next(self._ids)}"
        self._answers[request_id] = anyio.Event()
        tool_use_id = hook_input.get("tool_use_id") if isinstance(hook_input, dict) else None
        await self._send.send(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {
                    "subtype": "hook_callback",
                    "callback_id": self.callback_id(event),
                    "input": hook_input,
                    "tool_use_id": tool_use_id,
                },
            }
        )
        with anyio.fail_after(60):
            await self._answers[request_id].wait()
        return self.answers[request_id]


def through_the_sdk(
    rig: Rig, calls: list[tuple[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the initialize request, each call's control response) with ledger's hooks in a
    ClaudeSDKClient running in this process, whose home is the rig's (``~`` in protected paths
    is the process's own, as in a real SDK program)."""
    monkeypatch.setenv("HOME", rig.env["HOME"])
    cli = FakeCli()
    answers: list[dict[str, Any]] = []

    async def session() -> None:
        options = ClaudeAgentOptions(hooks=claude_sdk_hooks(cwd=str(rig.root), environ=rig.env))
        async with ClaudeSDKClient(options, transport=cli):
            for event, hook_input in calls:
                answers.append(await cli.hook(event, hook_input))

    anyio.run(session)
    return cli.initialize, answers


def test_the_matchers_are_the_sdks_own_and_block_on_failure() -> None:
    hooks = claude_sdk_hooks()
    installed = [entry.event for entry in CLIENTS["claude"].hooks]
    assert list(hooks) == [e for e in installed if e in set(sdk_events(HookEvent))]
    # What SDK 0.2.189 names of ledger's Claude events; SessionStart, SessionEnd and
    # PermissionDenied are not in its HookEvent.
    assert {"PreToolUse", "PostToolUse", "UserPromptSubmit"} <= set(hooks)
    for matchers in hooks.values():
        [matcher] = matchers
        assert isinstance(matcher, claude_agent_sdk.HookMatcher)
        assert matcher.on_failure == "block"
        assert matcher.matcher is None  # every tool


def test_every_claude_payload_fixture_gets_the_command_hooks_answer_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = Rig(tmp_path / "direct", decider="off")
    served = Rig(tmp_path / "viasdk", decider="off")  # as long as "direct"
    calls = [(event, text) for client, event, text in _fixture_calls() if client == "claude"]
    calls = [(e, t) for e, t in calls if e in sdk_events(HookEvent)]
    assert len(calls) > 50
    expected = []
    for event, text in calls:
        done = direct.hook("claude", event, text.replace(ROOT_TOKEN, str(direct.root)).encode())
        assert done.returncode == 0, done.stderr
        expected.append(json.loads(_normalize(done.stdout.decode() or "{}", direct.root)))
    sdk_calls = [(e, json.loads(t.replace(ROOT_TOKEN, str(served.root)))) for e, t in calls]
    initialize, answers = through_the_sdk(served, sdk_calls, monkeypatch)
    assert initialize is not None
    for event in sdk_events(HookEvent):
        [matcher] = initialize["hooks"][event]
        assert matcher["onFailure"] == "block"  # what the CLI is told
    for (event, text), answer, wanted in zip(calls, answers, expected, strict=True):
        assert answer["subtype"] == "success", (event, answer)
        got = json.loads(_normalize(json.dumps(answer["response"]), served.root))
        assert got == wanted, (event, text[:300])
    same_records(direct, served)
    for rig in (direct, served):
        assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok


#: Hook inputs no client should send: each is answered as the command hook answers it.
DAMAGES: list[dict[str, Any]] = [
    {"hook_event_name": 5},  # a field of the wrong type
    {"tool_input": "{not json"},  # an object field that is a string
    {"session_id": ["a"], "tool_name": {"x": 1}},
    {"tool_input": {"file_path": "<root>/src/app.py", "content": "x" * (MAX_PAYLOAD_BYTES + 10)}},
    {"hook_event_name": "PostToolUse"},  # another event than the one registered
    {"cwd": "/nonexistent/elsewhere"},  # no workspace there
]


def test_bad_input_through_the_sdk_gets_the_command_paths_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = Rig(tmp_path / "direct", decider="off")
    served = Rig(tmp_path / "viasdk", decider="off")  # as long as "direct"
    base = {
        "session_id": "s-bad",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "<root>",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "<root>/src/app.py", "content": "x = 2\n"},
        "tool_use_id": "toolu_bad",
    }

    def rooted(damage: dict[str, Any], root: Path) -> dict[str, Any]:
        text = json.dumps({**base, **damage}).replace("<root>", str(root))
        return dict(json.loads(text))

    def piped(damage: dict[str, Any], rig: Rig) -> bytes:
        """What Claude Code pipes to a command hook: compact JSON (JSON.stringify), which is
        what the SDK's callback re-encodes the input to."""
        compact = json.dumps(rooted(damage, rig.root), ensure_ascii=False, separators=(",", ":"))
        return compact.encode()

    wanted = []
    for damage in DAMAGES:
        done = direct.hook("claude", "PreToolUse", piped(damage, direct))
        wanted.append(json.loads(_normalize(done.stdout.decode() or "{}", direct.root)))
    calls = [("PreToolUse", rooted(damage, served.root)) for damage in DAMAGES]
    _, answers = through_the_sdk(served, calls, monkeypatch)
    for damage, answer, expected in zip(DAMAGES, answers, wanted, strict=True):
        assert answer["subtype"] == "success", (damage, answer)
        assert json.loads(_normalize(json.dumps(answer["response"]), served.root)) == expected
        assert answer["response"]["hookSpecificOutput"]["permissionDecision"] == "deny"
    same_records(direct, served, lambda rig: [piped(damage, rig) for damage in DAMAGES])


def test_a_cli_that_ignores_on_failure_is_refused_at_connect(tmp_path: Path) -> None:
    """Claude Code older than on_failure would fail open at each call: the SDK refuses to start
    the session with ledger's matchers instead."""

    async def session() -> None:
        options = ClaudeAgentOptions(hooks=claude_sdk_hooks())
        async with ClaudeSDKClient(options, transport=FakeCli(honours_on_failure=False)):
            pass

    with pytest.raises(CLIConnectionError, match="on_failure"):
        anyio.run(session)


def test_a_failed_decision_is_an_error_answer_which_blocks() -> None:
    from ledger._errors import InputError  # noqa: PLC0415
    from ledger._governance.vocabulary import HookResponse  # noqa: PLC0415

    with pytest.raises(InputError, match="refused"):
        answer_of(HookResponse(2, "", "ledger: refused\n"))
    assert answer_of(HookResponse(0, "")) == {}  # no opinion is {}, never None (a failure)
    assert answer_of(HookResponse(0, '{"continue": false}')) == {"continue": False}


def test_without_the_sdk_the_answer_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ledger._errors import InputError  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)  # import fails as if absent
    with pytest.raises(InputError) as raised:
        claude_sdk_hooks()
    assert str(raised.value).splitlines() == [str(raised.value)]
    assert "pip install 'agent-ledger[sdk]'" in str(raised.value)
