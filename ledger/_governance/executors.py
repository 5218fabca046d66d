"""External hook executors: command, HTTP and prompt, with Claude Code's output contract.

Each executor is a callable ``Invocation -> HookOutcome`` so the engine treats it like an
in-process hook. Command and HTTP hooks receive the client's payload verbatim when there is one
(so an existing Claude Code hook script runs under the engine unchanged) and a Claude-shaped
payload built from the invocation otherwise.

Output contract (docs/architecture.md, client protocols):

* exit 0: stdout, if it starts with ``{``, is JSON: ``hookSpecificOutput.permissionDecision``
  (allow/deny/ask), ``permissionDecisionReason``, ``additionalContext``, ``updatedInput``; the
  legacy top-level ``decision: approve|block`` maps to allow/deny; ``decision: block`` +
  ``reason`` blocks non-tool events.
* exit 2: a block; stderr is the reason.
* any other exit code, a timeout or unparseable JSON: a non-blocking error, recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from typing import Any, Final

from ledger._errors import PolicyError
from ledger._governance.engine import HookOutcome, Invocation
from ledger._governance.vocabulary import HOOK_ERROR_CODES, Permission, hook_error
from ledger._startup.search_path import absolute_search_path

__all__ = ["CommandHook", "HttpHook", "PromptHook", "claude_payload", "parse_hook_output"]

DEFAULT_TIMEOUT_S: Final = 60.0
_MAX_OUTPUT: Final = 1024 * 1024


def claude_payload(inv: Invocation) -> dict[str, Any]:
    """The stdin JSON a Claude Code command hook expects for ``inv``."""
    if inv.raw is not None and inv.client in ("claude", "codex"):
        return inv.raw
    payload: dict[str, Any] = {
        "session_id": inv.session_id,
        "cwd": inv.cwd,
        "hook_event_name": inv.event,
    }
    if inv.tool_name is not None:
        payload.update(
            tool_name=inv.tool_name, tool_input=inv.tool_input, tool_use_id=inv.tool_use_id
        )
    if inv.tool_response is not None:
        payload["tool_response"] = inv.tool_response
    if inv.error is not None:
        payload["error"] = inv.error
    return payload


def _error(message: str, name: str) -> HookOutcome:
    return HookOutcome(
        error=hook_error(
            HOOK_ERROR_CODES.HOOK_ERROR, message, meta={"hook": name}, error_type="hook_error"
        )
    )


_DECISIONS: Final[dict[object, Permission | None]] = {
    None: None,
    "allow": "allow",
    "deny": "deny",
    "ask": "ask",
}


def parse_hook_output(stdout: str, name: str) -> HookOutcome:
    """Read a Claude-style JSON answer (exit 0). Non-JSON stdout is context-free success."""
    text = stdout.strip()
    if not text.startswith("{"):
        return HookOutcome()
    try:
        data = json.loads(text)
    except ValueError:
        return _error(f"hook {name} printed invalid JSON", name)
    if not isinstance(data, dict):
        return _error(f"hook {name} printed a non-object", name)
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = specific.get("permissionDecision")
    reason = specific.get("permissionDecisionReason")
    legacy = data.get("decision")
    if decision is None and legacy in ("approve", "block"):
        decision = "allow" if legacy == "approve" else "deny"
        reason = data.get("reason", reason)
    if decision == "defer":
        decision = None  # defer: let the client's own permission flow decide
    if decision not in _DECISIONS:
        return _error(f"hook {name} returned permissionDecision {decision!r}", name)
    permission = _DECISIONS[decision]
    if data.get("continue") is False:
        permission, reason = "deny", data.get("stopReason") or reason
    updated = specific.get("updatedInput")
    context = specific.get("additionalContext")
    return HookOutcome(
        decision=permission,
        reason=reason if isinstance(reason, str) else None,
        additional_context=context if isinstance(context, str) else None,
        updated_input=updated if isinstance(updated, dict) else None,
    )


class CommandHook:
    """A command hook: JSON on stdin, JSON on stdout, exit 2 blocks.

    Args:
        name: hook name (for records).
        command: shell command (run with ``sh -c``, as Claude Code does) or an argv list
            (exec form, no shell).
        timeout: seconds; a timed-out hook is a non-blocking error (Claude Code fails open).
        mode: ``sync`` or ``async`` (detached; never waited for).
        cwd: working directory (the workspace root).
        env: extra environment variables.
        base_env: the environment the command inherits (default this process's: the hook
            call's own, unless a resident decider runs it for a caller).
    """

    def __init__(
        self,
        name: str,
        command: str | list[str],
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        mode: str = "sync",
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        if not command:
            raise PolicyError(f"hook {name}: empty command")
        self.name = name
        self.command = command
        self.timeout = timeout
        self.mode = mode
        self.cwd = cwd
        self.env = dict(env or {})
        self.base_env = base_env

    def _argv(self) -> tuple[list[str] | str, bool]:
        if isinstance(self.command, list):
            return self.command, False
        return self.command, True

    def __call__(self, inv: Invocation) -> HookOutcome:
        """Run the command for ``inv``."""
        payload = json.dumps(claude_payload(inv)).encode()
        argv, shell = self._argv()
        env = {**(os.environ if self.base_env is None else self.base_env), **self.env}
        if "PATH" not in self.env:  # the one inherited: never the workspace (search_path.py)
            env["PATH"] = absolute_search_path(env.get("PATH"))
        if inv.cwd and "CLAUDE_PROJECT_DIR" not in env:
            env["CLAUDE_PROJECT_DIR"] = inv.cwd
        if self.mode == "async":
            proc = subprocess.Popen(  # noqa: S603 -- hooks are commands by design
                argv,
                shell=shell,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
            if proc.stdin is not None:
                try:
                    proc.stdin.write(payload)
                    proc.stdin.close()
                except OSError:
                    pass
            return HookOutcome(data={f"async:{self.name}": proc.pid})
        try:
            # Own process group, so a timeout kills the shell *and* whatever it started.
            proc = subprocess.Popen(  # noqa: S603 -- hooks are commands by design
                argv,
                shell=shell,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return _error(f"hook {self.name} could not start: {exc.strerror}", self.name)
        try:
            out, err = proc.communicate(payload, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return _error(f"hook {self.name} timed out after {self.timeout:g}s", self.name)
        stdout_text = out[:_MAX_OUTPUT].decode("utf-8", "replace")
        stderr = err[:_MAX_OUTPUT].decode("utf-8", "replace").strip()
        if proc.returncode == 2:
            reason = stderr.splitlines()[0] if stderr else f"blocked by hook {self.name}"
            return HookOutcome(
                decision="deny",
                reason=reason,
                error=hook_error(
                    HOOK_ERROR_CODES.HOOK_BLOCKED,
                    reason,
                    meta={"hook": self.name},
                    error_type="hook_block",
                ),
            )
        if proc.returncode != 0:
            # A schema-valid JSON object on stdout decides even on another non-zero exit
            # (docs/architecture.md, client protocols); otherwise it is a non-blocking error.
            answer = parse_hook_output(stdout_text, self.name)
            if answer.error is None and answer != HookOutcome():
                return answer
            first = stderr.splitlines()[0] if stderr else ""
            return _error(
                f"hook {self.name} exited {proc.returncode}: {first}".rstrip(": "), self.name
            )
        return parse_hook_output(stdout_text, self.name)


class HttpHook:
    """An HTTP hook: POST the payload as JSON; the response body is read like command stdout.

    Non-2xx answers and connection errors are non-blocking errors.
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise PolicyError(f"hook {name}: url must be http(s)")
        self.name = name
        self.url = url
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def __call__(self, inv: Invocation) -> HookOutcome:
        """POST ``inv`` and read the answer."""
        import urllib.error  # noqa: PLC0415 -- only HTTP hooks pay for urllib
        import urllib.request  # noqa: PLC0415

        body = json.dumps(claude_payload(inv)).encode()
        request = urllib.request.Request(  # noqa: S310
            self.url,
            data=body,
            headers=self.headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                text = response.read(_MAX_OUTPUT).decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            return _error(f"hook {self.name}: HTTP {exc.code}", self.name)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            return _error(f"hook {self.name}: {type(exc).__name__}", self.name)
        return parse_hook_output(text, self.name)


Judge = Callable[[str, Invocation], "HookOutcome | Mapping[str, Any] | None"]


class PromptHook:
    """A prompt hook: hands ``prompt`` and the invocation to a pluggable judge.

    No model ships with ledger; without a judge the hook records an error and does not block.
    """

    def __init__(self, name: str, prompt: str, judge: Judge | None = None) -> None:
        self.name = name
        self.prompt = prompt
        self.judge = judge

    def __call__(self, inv: Invocation) -> HookOutcome:
        """Ask the judge."""
        if self.judge is None:
            return _error(f"hook {self.name}: no prompt judge configured", self.name)
        answer = self.judge(self.prompt, inv)
        if answer is None or isinstance(answer, HookOutcome):
            return answer or HookOutcome()
        return HookOutcome(**{k: v for k, v in answer.items() if k in HookOutcome._fields})
