"""ledger inside a Claude Agent SDK (Python) program: hook callbacks that decide in-process.

The Claude Agent SDK (``claude-agent-sdk`` on PyPI) runs Claude Code as a child process and
answers its hooks with Python callbacks over the control protocol: no process per hook call,
no socket, no port. :func:`claude_sdk_hooks` returns the SDK's own ``HookMatcher`` objects for
``ClaudeAgentOptions(hooks=...)``; each callback hands the hook input to the hook service
(:func:`ledger._hooks.service.run_hook`) exactly as ``ledger hook claude`` hands it stdin, so
it decides and records what the command hook would (the same answer, the same records:
``tests/hooks/test_claude_sdk.py`` proves it over every Claude payload fixture).

Every matcher has ``on_failure="block"`` (SDK 0.2.189 and later): a callback that raises, or
does not answer within the matcher's timeout, blocks the action instead of letting it through.
The SDK refuses to connect to a Claude Code too old to honour it (``CLIConnectionError``), so
an old CLI fails closed at the start of the session rather than open at each call. The CLI
ignores ``on_failure`` on Stop and SubagentStop (their record is all ledger adds there).

Only the events the installed SDK's ``HookEvent`` names are registered: SDK 0.2.189 has no
SessionStart, SessionEnd or PermissionDenied, so a session through the SDK has no
``session.start``/``session.end`` records and no record of the client's own permission
denials; the intent context that SessionStart adds also arrives with each UserPromptSubmit.

The SDK is an optional extra (``agent-ledger[sdk]``): only :func:`claude_sdk_hooks` imports it,
never the hook path. The hook path's modules are imported when the matchers are made, so no
tool call pays an import.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Final, cast, get_args

from ledger._clients import MAX_PAYLOAD_BYTES
from ledger._clients.registry import CLIENTS
from ledger._errors import InputError
from ledger._governance.vocabulary import HookResponse

if TYPE_CHECKING:  # the optional extra: annotations only
    from claude_agent_sdk import HookMatcher
    from claude_agent_sdk.types import (
        HookCallback,
        HookContext,
        HookEvent,
        HookInput,
        HookJSONOutput,
    )

__all__ = ["SDK_EXTRA", "claude_sdk_hooks", "sdk_events"]

#: What to install when the SDK is missing.
SDK_EXTRA: Final = "pip install 'agent-ledger[sdk]'"
#: Seconds the CLI waits for a callback (the command hook's timeout), after which it blocks.
_TIMEOUT: Final = 60.0


def sdk_events(hook_event: object) -> tuple[str, ...]:
    """The events ledger's Claude Code hooks use that the SDK's ``HookEvent`` type names, in
    the installer's order (a later SDK that names more gets them without a change here)."""
    named: set[str] = set()
    pending = [hook_event]
    while pending:  # a union of Literals, or a Literal of several names
        found = pending.pop()
        args = get_args(found)
        pending += [a for a in args if not isinstance(a, str)]
        named |= {a for a in args if isinstance(a, str)}
    return tuple(entry.event for entry in CLIENTS["claude"].hooks if entry.event in named)


def claude_sdk_hooks(
    root: str | None = None,
    *,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: float = _TIMEOUT,
) -> dict[HookEvent, list[HookMatcher]]:
    """The Claude Agent SDK hook matchers that put ledger in front of every tool call.

    Use them as they are::

        from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
        import ledger

        app = "/work/app"
        options = ClaudeAgentOptions(cwd=app, hooks=ledger.claude_sdk_hooks(cwd=app))
        async with ClaudeSDKClient(options) as client:
            ...

    Args:
        root: the workspace (as ``ledger hook --root``); default: found from the hook input's
            ``cwd``, as the command hook finds it.
        cwd: the folder Claude Code runs in (``ClaudeAgentOptions.cwd``): where the workspace
            is looked for when the hook input names none (the command hook's working folder);
            default: this process's.
        environ: the environment the decisions read (``$LEDGER_HOME``, ``$LEDGER_ROOT``, ...);
            default: this process's at each call.
        timeout: seconds the CLI waits for an answer before it blocks the action.

    Returns:
        ``{event: [HookMatcher(hooks=[callback], on_failure="block", timeout=timeout)]}`` for
        ``ClaudeAgentOptions(hooks=...)``; merge your own matchers into the lists if you have
        any (each matcher's failure blocks only its own callbacks).

    Raises:
        InputError: the SDK is not installed (the message says how to install it).
    """
    try:
        from claude_agent_sdk import HookMatcher  # noqa: PLC0415 -- the optional extra
        from claude_agent_sdk.types import HookEvent  # noqa: PLC0415
    except ImportError:
        raise InputError(
            f"the Claude Agent SDK is not installed: {SDK_EXTRA} (or pip install claude-agent-sdk)"
        ) from None
    _warm_hook_path()
    return {
        cast("HookEvent", event): [
            HookMatcher(
                matcher=None,
                hooks=[_callback(event, root, cwd, environ)],
                timeout=timeout,
                on_failure="block",
            )
        ]
        for event in sdk_events(HookEvent)
    }


def _warm_hook_path() -> None:
    """Import what the first hook call needs (the adapter, the policies, the shell reader)."""
    from ledger._clients import claude as _claude  # noqa: F401, PLC0415
    from ledger._governance import policies as _policies  # noqa: F401, PLC0415
    from ledger._governance.analysis import shell as _shell  # noqa: F401, PLC0415
    from ledger._hooks import service as _service  # noqa: F401, PLC0415


def payload_bytes(hook_input: object) -> bytes:
    """The hook input as the command hook reads it: JSON text, at most the bytes it reads."""
    text = json.dumps(hook_input, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", "replace")[: MAX_PAYLOAD_BYTES + 1]


def answer_of(response: HookResponse) -> dict[str, Any]:
    """The callback's answer for the hook service's response to the command hook.

    Raises:
        InputError: the command hook would have exited non-zero with nothing on stdout (a
            block delivered as an exit code): raising is how a callback blocks, with
            ``on_failure="block"``.
    """
    if response.exit_code != 0 and not response.stdout:
        raise InputError(response.stderr.strip() or f"ledger hook exited {response.exit_code}")
    if not response.stdout.strip():
        return {}  # no opinion: the SDK reads None as a failure
    found = json.loads(response.stdout)
    if not isinstance(found, dict):
        raise InputError(f"ledger hook answered {type(found).__name__} JSON, not an object")
    return found


def _callback(
    event: str, root: str | None, cwd: str | None, environ: Mapping[str, str] | None
) -> HookCallback:
    from ledger._hooks.service import run_hook  # noqa: PLC0415

    async def ledger_hook(
        hook_input: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        import anyio.to_thread  # noqa: PLC0415 -- the SDK's own event-loop layer

        # The decision runs in a worker thread (appending fsyncs and may wait on the ledger's
        # lock), so the program's event loop keeps running. If the SDK cancels the request
        # (the CLI gave up waiting, and blocked), the call records nothing, as the decider
        # records nothing for a caller that left.
        gone = threading.Event()
        call = partial(
            run_hook,
            "claude",
            payload_bytes(hook_input),
            expected_event=event,
            root=root,
            environ=environ,
            cwd=cwd,
            abandoned=gone.is_set,
        )
        try:
            response = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except BaseException:
            gone.set()
            raise
        return cast("HookJSONOutput", answer_of(response))

    ledger_hook.__qualname__ = f"ledger_hook[{event}]"
    return ledger_hook
