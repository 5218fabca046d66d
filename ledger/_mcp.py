"""``ledger mcp``: the design documents' handshake as tools the model sees (decision 0015).

A stdio MCP server built on the official MCP Python SDK (``mcp`` on PyPI). The client starts it
once per session, so the SDK's import (~0.7 s, measured by ``bench/bench_mcp.py``) is paid once
per session, never on a hook call: this module is imported only by ``ledger mcp``, and the SDK
only inside :func:`serve_mcp` (``tests/test_import_cost.py`` keeps ``mcp`` off the hook path).

Tools (:data:`MCP_TOOL_NAMES`):

* ``select_active_intent(intent_id)``: the ``<intent_context>`` block of an ``IN_PROGRESS``
  intent. **The server records nothing**: it does not know the agent's session, and records of
  ledger's own kinds are written only by the hook service and a person's commands. The client's
  PreToolUse hook of this very call (``mcp__ledger__select_active_intent``) selects the intent
  for the session and records ``intent.selected`` with ``via: "mcp"``
  (:mod:`ledger._governance.policies`), or refuses it with the reasons ``ledger intent select``
  gives.
* ``list_intents()``: every intent, its status, scope, approved expansions and sessions.
* ``request_scope_expansion(intent_id, globs, reason)``: the hook answers ``ask``, the client
  asks the person, and once the call has run the hook's PostToolUse records the grant as
  ``intent.scope_expanded`` (``approved_via: "<client> ask"``, the ``tool_use_id``), as for
  ``ledger intent expand`` typed in the agent's shell.
* ``explain_line(path, line)``: ``ledger blame`` of one line: which intent, session, tool call
  and record wrote it, or what git or nothing says.

Every call opens the workspace afresh (the hooks append between calls). A server started where
no workspace is found still starts, and answers each tool with the one-line reason.

One more tool is not listed: ``hook``, the channel of Claude Code's ``mcp_tool`` hooks
(``ledger/_clients/mcp_hook.py``). It rebuilds the hook input from its arguments and answers
what ``ledger hook claude`` answers for it (:meth:`McpTools.hook`), recording as the command
path does; the hook path is imported before the server answers, so no call pays for it. The
model never sees it in ``tools/list``, and its PreToolUse denies a call of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from ledger._errors import InputError, LedgerError
from ledger._governance.analysis.ledger_mcp import LEDGER_MCP_SERVER, LEDGER_MCP_TOOLS
from ledger._startup.patterns import lazy_compile

if TYPE_CHECKING:
    from ledger._governance.intents import Intent
    from ledger._hooks.service import GovernedWorkspace

__all__ = ["MCP_SERVER_NAME", "MCP_TOOL_NAMES", "McpTools", "serve_mcp"]

#: The server's name in every client's MCP configuration, hence ``mcp__ledger__<tool>``.
MCP_SERVER_NAME: Final = LEDGER_MCP_SERVER

#: The tools, in the order ``tools/list`` gives them (the hook's table of them is the source).
MCP_TOOL_NAMES: Final = tuple(LEDGER_MCP_TOOLS)

INSTRUCTIONS: Final = (
    "ledger governs this workspace: every file write needs an intent. Call list_intents to see "
    "the open intents, then select_active_intent(intent_id) before writing; write only inside "
    "its owned_scope. Ask a person for more scope with request_scope_expansion. explain_line "
    "says which intent and tool call wrote a line."
)


class McpTools:
    """The tools' logic, without the SDK (what :func:`serve_mcp` exposes, and what tests call).

    Each method returns the text the agent reads, or raises :class:`LedgerError` whose message
    is the one-line answer.

    Args:
        root: the workspace root (``--root``), else ``$LEDGER_ROOT``, else found upwards from
            the current directory, at each call.
        environ: where ``$LEDGER_ROOT``/``$LEDGER_HOME`` are read (default: this process's).
    """

    #: The installed ledger's version file: a server started before an upgrade refuses to
    #: answer hooks for code it no longer matches.
    version_file: Path = Path(__file__).with_name("_version.py")

    def __init__(self, root: str | None = None, environ: Mapping[str, str] | None = None) -> None:
        self._root = root
        self._environ = environ
        # A zipped or frozen install has no version file to compare with; one that had it and
        # lost it was uninstalled or moved under the running server.
        self._had_version_file = self.version_file.is_file()

    def workspace(self) -> GovernedWorkspace:
        """The governed workspace, opened afresh (raises its one-line reason when there is none)."""
        from ledger._hooks.service import GovernedWorkspace  # noqa: PLC0415
        from ledger._workspace import find_root  # noqa: PLC0415

        return GovernedWorkspace(
            find_root(self._root, environ=self._environ), environ=self._environ
        )

    @staticmethod
    def _intent(workspace: GovernedWorkspace, intent_id: str) -> Intent:
        intents, error = workspace.load_intents()
        if intents is None:
            raise InputError(f"the intents file is unusable: {error}")
        if intents.missing:
            raise InputError(intents.missing)
        intent = intents.get(intent_id)
        if intent is None:
            known = ", ".join(i.id for i in intents.intents) or "none"
            raise InputError(f"unknown intent {intent_id} (known: {known})")
        return intent

    def select_active_intent(self, intent_id: str) -> str:
        """The ``<intent_context>`` of ``intent_id``; refused as ``ledger intent select`` is."""
        from ledger._governance.intents import intent_refusal, render_intent_context  # noqa: PLC0415

        _bounded("intent_id", intent_id, _MAX_WORD)
        workspace = self.workspace()
        intent = self._intent(workspace, intent_id)
        refusal = intent_refusal(intent)
        if refusal is not None:
            raise InputError(f"cannot select intent {intent.id}: it {refusal}")
        recent = list(reversed(workspace.state.recent.get(intent.id, [])))
        return render_intent_context(intent, recent)

    def list_intents(self) -> str:
        """One paragraph per intent: id, status, name, scope, expansions, sessions."""
        from ledger._governance.intents import WORKABLE_STATUSES  # noqa: PLC0415

        workspace = self.workspace()
        intents, error = workspace.load_intents()
        if intents is None:
            raise InputError(f"the intents file is unusable: {error}")
        if intents.missing:
            raise InputError(intents.missing)
        if not intents.intents:
            return (
                "no intents are defined in .orchestration/active_intents.yaml; a person adds "
                "one (id, name, status: IN_PROGRESS, owned_scope)"
            )
        state = workspace.state
        sessions: dict[str, int] = {}
        for info in state.sessions.values():
            if info.get("intent"):
                sessions[info["intent"]] = sessions.get(info["intent"], 0) + 1
        out: list[str] = []
        for intent in intents.intents:
            status = intent.status.upper()
            open_ = "open" if intent.status in WORKABLE_STATUSES else "closed"
            out.append(f"{intent.id} {status} ({open_}): {intent.name}")
            out.append(f"  scope: {', '.join(intent.owned_scope) or 'none'}")
            granted = state.grants.get(intent.id, [])
            if granted:
                out.append(f"  expanded: {', '.join(granted)}")
            if sessions.get(intent.id):
                out.append(f"  sessions working under it: {sessions[intent.id]}")
        out.append("Select an open intent with select_active_intent(intent_id) before writing.")
        return "\n".join(out)

    def request_scope_expansion(self, intent_id: str, globs: list[str], reason: str = "") -> str:
        """What the person's approval grants (the hook asked them before this ran, and records
        the grant after it)."""
        from ledger._governance.intents import expansion_problem  # noqa: PLC0415

        _bounded("intent_id", intent_id, _MAX_WORD)
        _bounded("reason", reason, _MAX_REASON)
        if len(globs) > _MAX_GLOBS:
            raise InputError(f"{len(globs)} globs in one request; at most {_MAX_GLOBS}")
        for glob in globs:
            _bounded("a glob", glob, _MAX_PATH)
        if not globs:
            raise InputError("name at least one glob to add, e.g. 'docs/**'")
        for glob in globs:
            problem = expansion_problem(glob)
            if problem is not None:
                raise InputError(f"cannot expand {intent_id}: {problem}")
        workspace = self.workspace()
        intent = self._intent(workspace, intent_id)
        granted = workspace.state.grants.get(intent.id, [])
        new = [g for g in dict.fromkeys(globs) if g not in granted and g not in intent.owned_scope]
        if not new:
            scope = [*intent.owned_scope, *granted]
            return f"{intent.id} already covers {', '.join(globs)}; scope: {', '.join(scope)}"
        why = f" ({reason})" if reason else ""
        return (
            f"a person approved adding {', '.join(new)} to {intent.id}{why}: ledger's hook "
            "records the grant as this call completes, and writes there are allowed from the "
            "next tool call. (If no ledger hook asked a person, nothing was granted: "
            "`ledger install <client>` installs the hooks.)"
        )

    def hook(self, arguments: Mapping[str, Any]) -> str:
        """The answer of ``ledger hook claude`` to the hook input ``arguments`` carry (an
        ``mcp_tool`` hook's call): its JSON, ``{}`` where the command prints nothing.

        Raises:
            InputError: the hook path answered with an exit code alone (a block the tool can
                only deliver as a failed call, which Claude Code's ``onFailure: "block"``
                turns into the block).
        """
        from ledger._clients.mcp_hook import payload_from_arguments  # noqa: PLC0415
        from ledger._hooks.service import run_hook  # noqa: PLC0415

        self._refuse_if_upgraded()
        raw, event = payload_from_arguments(arguments)
        response = run_hook(
            "claude", raw, expected_event=event, root=self._root, environ=self._environ
        )
        if response.exit_code != 0 and not response.stdout:
            raise InputError(response.stderr.strip() or f"ledger hook exited {response.exit_code}")
        return response.stdout or "{}"

    def _refuse_if_upgraded(self) -> None:
        """Raise when the ledger installed now is another version than this server's, or none
        at all: its decisions and records would be an old version's (the client fails closed
        on the error, and the person restarts the server; ``ledger doctor`` names it)."""
        from ledger._hooks.mcp_servers import RESTART_SERVER, installed_version  # noqa: PLC0415
        from ledger._version import __version__  # noqa: PLC0415

        found = installed_version(self.version_file)
        if found is None and self._had_version_file:
            raise InputError(
                f"this `ledger mcp` server is ledger {__version__}, but no ledger is installed "
                f"where it was started any more ({self.version_file.parent.parent}): "
                + RESTART_SERVER
            )
        if found is not None and found != __version__:
            raise InputError(
                f"this `ledger mcp` server is ledger {__version__}, but ledger {found} is "
                f"installed now: {RESTART_SERVER}"
            )

    def explain_line(self, path: str, line: int) -> str:
        """Blame of one line of ``path`` (relative to the workspace root, or absolute)."""
        from ledger._projections.explain import blame_file  # noqa: PLC0415
        from ledger._workspace import find_root  # noqa: PLC0415

        _bounded("path", path, _MAX_PATH)
        if line < 1:
            raise InputError(f"line {line} is not a line number (they start at 1)")
        root = find_root(self._root, environ=self._environ)
        absolute = path if os.path.isabs(path) else os.path.join(root, path)  # noqa: PTH117, PTH118
        why = _unreadable(str(root), os.path.realpath(absolute), self._environ)
        if why is not None:
            raise InputError(f"explain_line answers nothing about {path}: {why}")
        report = blame_file(absolute, root=root, lines=(line, line), environ=self._environ)
        if not report.lines:
            raise InputError(f"{report.file} has no line {line}")
        found = report.lines[0]
        return f"{report.file}:{found.line} {_explain(found.status, found.facts)}\n{found.text}"


#: Argument sizes the tools take: a 20 MB argument is answered with one line, at once.
_MAX_WORD: Final = 200
_MAX_PATH: Final = 4096
_MAX_REASON: Final = 2000
_MAX_GLOBS: Final = 64


def _bounded(name: str, value: object, limit: int) -> None:
    if isinstance(value, str) and len(value) > limit:
        raise InputError(f"{name} is {len(value)} characters; the limit is {limit}")


def _unreadable(root: str, real: str, environ: Mapping[str, str] | None) -> str | None:
    """Why an agent may not read ``real`` (so no tool answers about it), or None: outside the
    workspace, ledger's own folder (its cache keeps copies of files), the key or the secret,
    or a file the person's own read rules keep from the agent (Claude Code's ``Read(...)``
    deny rules and sandbox ``denyRead``)."""
    from ledger._governance.analysis.protected import READ_DENIED, ProtectedAreas  # noqa: PLC0415

    inside = real.startswith(os.path.realpath(root) + os.sep)
    if not inside:
        return "it is outside the workspace"
    area = ProtectedAreas.for_workspace(root, environ).area_of(real)
    if area in READ_DENIED or (area is not None and area.startswith(".orchestration")):
        return f"agents may not read it ({area})"
    relative = os.path.relpath(real, os.path.realpath(root))
    for rule in _person_read_denials(root, environ):
        if _matches(rule, relative):
            return f"the person's read rule {rule!r} keeps it from agents"
    return None


def _person_read_denials(root: str, environ: Mapping[str, str] | None) -> list[str]:
    """The patterns of the person's read-deny rules in Claude Code's settings files."""
    import json  # noqa: PLC0415

    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")  # noqa: PTH111
    files = [
        os.path.join(root, ".claude", "settings.json"),  # noqa: PTH118
        os.path.join(root, ".claude", "settings.local.json"),  # noqa: PTH118
        os.path.join(home, ".claude", "settings.json"),  # noqa: PTH118
    ]
    found: list[str] = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                settings = json.load(handle)
        except (OSError, ValueError):
            continue
        if not isinstance(settings, dict):
            continue
        deny = (settings.get("permissions") or {}).get("deny") or []
        found += [r[5:-1] for r in deny if isinstance(r, str) and r.startswith("Read(")]
        sandbox = ((settings.get("sandbox") or {}).get("filesystem") or {}).get("denyRead")
        found += [r for r in sandbox or [] if isinstance(r, str)]
    return found


def _matches(rule: str, relative: str) -> bool:
    """Whether a Claude Code path rule (gitignore-style, relative to the project) names the
    workspace-relative path, or a folder above it."""
    import pathspec  # noqa: PLC0415 -- ledger mcp only

    pattern = rule.removeprefix("./").removeprefix("/")
    if not pattern or pattern.startswith(("~", "/")):
        return False
    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    parts = relative.split("/")
    return any(spec.match_file("/".join(parts[: i + 1])) for i in range(len(parts)))


def _explain(status: str, facts: Mapping[str, Any]) -> str:
    """One line saying what wrote a line (from its blame facts)."""
    denied = " (agents tried to write this line and were refused)" if facts.get("denied") else ""
    if status == "agent":
        parts = [
            f"{facts.get('tool') or 'a tool'} call {facts.get('tool_use_id') or '?'} under "
            f"{facts.get('intent_id') or 'no intent'}",
            f"session {facts.get('session_id') or '?'}",
            f"client {facts.get('client') or '?'}",
        ]
        if facts.get("model"):
            parts.append(f"model {facts['model']}")
        parts.append(f"record seq {facts.get('seq')} at {facts.get('ts')}")
        return "agent: written by " + ", ".join(parts) + denied
    if status == "git":
        return (
            f"git: unchanged since commit {str(facts.get('commit'))[:12]} by "
            f"{facts.get('author')} (git says nothing about which agent or person wrote it)"
            + denied
        )
    return f"unknown: {facts.get('reason') or 'no record or commit explains it'}{denied}"


def _one_line(exc: LedgerError) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def serve_mcp(root: str | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Run the MCP server on stdin/stdout until the client closes it.

    Only here is the SDK imported. The governance and hook modules the first call needs (the
    hook tool's too: the client adapter, the policies, the shell reader) are imported once,
    before the server answers, so no ``tools/call`` pays an import.
    """
    from mcp.server import MCPServer  # noqa: PLC0415
    from mcp.server.mcpserver.exceptions import ToolError  # noqa: PLC0415
    from mcp_types import CallToolResult, TextContent  # noqa: PLC0415

    from ledger import __version__  # noqa: PLC0415
    from ledger._clients import claude as _claude  # noqa: F401, PLC0415
    from ledger._clients.mcp_hook import HOOK_TOOL  # noqa: PLC0415
    from ledger._governance import intents as _intents  # noqa: F401, PLC0415
    from ledger._governance import policies as _policies  # noqa: F401, PLC0415
    from ledger._governance.analysis import shell as _shell  # noqa: F401, PLC0415
    from ledger._hooks import service as _service  # noqa: PLC0415
    from ledger._hooks.mcp_servers import announced  # noqa: PLC0415
    from ledger._hooks.tripwire import seal_sync_after_answer  # noqa: PLC0415
    from ledger._projections.cache import saves_after_answer  # noqa: PLC0415
    from ledger._workspace import find_root  # noqa: PLC0415

    _service.warm_resident()
    tools = McpTools(root, environ)
    after_answer = _AfterAnswer()

    def answer_hook(arguments: dict[str, Any]) -> tuple[str, bool, HookLeft]:
        """The hook tool's answer text, whether it is an error, and what it leaves for after
        the answer. As the resident decider answers: the records fsync-ed before the answer,
        the seal's fsync and the projection caches' writes after it (_AfterAnswer)."""
        with seal_sync_after_answer() as seals, saves_after_answer() as caches:
            try:
                text, failed = tools.hook(arguments), False
            except LedgerError as exc:
                text, failed = _one_line(exc), True
            except Exception as exc:  # noqa: BLE001 -- as the SDK answers a tool that raised
                text, failed = f"{type(exc).__name__}: {exc}".splitlines()[0][:2000], True
        return text, failed, (seals, caches)

    class LedgerServer(MCPServer[Any]):
        """The SDK's server, plus the unlisted hook tool (registered tools are all listed),
        served from ledger's own stdio lines (:class:`_HookLines`)."""

        async def call_tool(
            self,
            name: str,
            arguments: dict[str, Any],
            context: Any = None,  # noqa: ANN401 -- the SDK's request context
        ) -> Any:  # noqa: ANN401 -- the SDK's result types
            if name != HOOK_TOOL:
                return await super().call_tool(name, arguments, context)
            # A hook call _HookLines left to the SDK (an unusual message shape).
            text, failed, left = answer_hook(arguments)
            after_answer.submit(left)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=failed)

        async def run_stdio_async(self) -> None:
            """The SDK's stdio transport, on lines :class:`_HookLines` reads first: a call of
            the hook tool is answered as it is read, at ~1 ms instead of the SDK's ~10-20 ms
            (validation, dispatch, serialization), every other message goes to the SDK."""
            from mcp.server.stdio import stdio_server  # noqa: PLC0415

            # The SDK's own server under MCPServer (no public accessor in mcp 2.3). An SDK that
            # renamed it serves every call itself: slower, the same answers.
            lowlevel = getattr(self, "_lowlevel_server", None)
            if lowlevel is None or not hasattr(lowlevel, "create_initialization_options"):
                await super().run_stdio_async()
                return
            with _Wire.claimed() as wire:
                lines = _HookLines(wire, answer_hook, after_answer.submit)
                # The SDK's stdin and stdout are ledger's (duck-typed as its anyio files).
                streams = stdio_server(stdin=cast("Any", lines), stdout=cast("Any", wire))
                async with streams as (read_stream, write_stream):
                    options = lowlevel.create_initialization_options()
                    await lowlevel.run(read_stream, write_stream, options)

    server = LedgerServer(
        MCP_SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    try:  # the workspace it serves, for `ledger doctor` (each call still finds its own)
        served_root: str | None = str(find_root(root, environ=environ))
    except LedgerError:
        served_root = None

    def answer(call: Any, *args: Any) -> str:  # noqa: ANN401 -- a bound tool method and its arguments
        try:
            return str(call(*args))
        except LedgerError as exc:
            raise ToolError(_one_line(exc)) from None

    def select_active_intent(intent_id: str) -> str:
        return answer(tools.select_active_intent, intent_id)

    def list_intents() -> str:
        return answer(tools.list_intents)

    def request_scope_expansion(intent_id: str, globs: list[str], reason: str = "") -> str:
        return answer(tools.request_scope_expansion, intent_id, globs, reason)

    def explain_line(path: str, line: int) -> str:
        return answer(tools.explain_line, path, line)

    descriptions = {
        "select_active_intent": (
            "Select the intent (e.g. INT-001) this session works under, before writing any "
            "file. Returns its <intent_context>: scope, constraints, acceptance criteria. "
            "Only IN_PROGRESS intents can be selected."
        ),
        "list_intents": "List the workspace's intents, their status, scope and sessions.",
        "request_scope_expansion": (
            "Ask a person to add globs (relative to the workspace, e.g. 'docs/**') to an "
            "intent's scope, with the reason. The person approves or rejects the call."
        ),
        "explain_line": (
            "Which intent, session and tool call wrote line `line` (1-based) of `path`, as "
            "ledger's signed records say; or what git or nothing explains."
        ),
    }
    for function in (select_active_intent, list_intents, request_scope_expansion, explain_line):
        server.add_tool(
            function,
            name=function.__name__,
            description=descriptions[function.__name__],
            structured_output=False,
        )
    try:
        with announced(served_root, environ):
            server.run("stdio")
    finally:
        after_answer.close()


class _AfterAnswer:
    """What the hook tool's calls leave for after their answers (the seal's ``fsync``, the
    projection caches' writes: :func:`~ledger._hooks.tripwire.seal_sync_after_answer`), done
    in order on one thread of its own while the server sends the answer. A crash in between
    costs what it costs the resident decider: a seal the disk lost reads as a tampering on the
    next call (fail-safe), a cache not written only a few more records folded."""

    def __init__(self) -> None:
        import queue  # noqa: PLC0415
        import threading  # noqa: PLC0415

        self._queue: queue.SimpleQueue[tuple[list[Path], list[tuple[Path, bytes]]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._run, name="ledger-after-answer", daemon=True)
        self._thread.start()

    def submit(self, left: HookLeft) -> None:
        seals, caches = left
        if seals or caches:
            self._queue.put((seals, caches))

    def close(self) -> None:
        """Finish what is queued (the server is closing)."""
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        from ledger._hooks.tripwire import sync_seals  # noqa: PLC0415
        from ledger._projections.cache import write_saved  # noqa: PLC0415

        while (item := self._queue.get()) is not None:
            seals, caches = item
            write_saved(caches)
            sync_seals(seals)


#: What a hook call leaves for after its answer: the seals to ``fsync``, the caches to write.
HookLeft = tuple[list[Path], list[tuple[Path, bytes]]]
#: The keys a hook tool call may carry and still be answered by :class:`_HookLines`: anything
#: else (a batch, an unknown key, an id JSON-RPC does not allow) goes to the SDK, which
#: answers it as it always did.
_CALL_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS_KEYS: Final = frozenset({"name", "arguments", "_meta"})


def hook_call(line: str) -> tuple[int | str, dict[str, Any]] | None:
    """``(request id, arguments)`` when ``line`` is a plain JSON-RPC call of the hook tool;
    ``None`` for anything else (the SDK reads it). Decided on the same text the SDK would
    read (the line decoded as UTF-8, errors replaced); a constant JSON has no word for
    (``NaN``, ``Infinity``) is left to the SDK too."""
    import json  # noqa: PLC0415

    from ledger._clients.mcp_hook import HOOK_TOOL  # noqa: PLC0415

    if HOOK_TOOL not in line or "tools/call" not in line:
        return None
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not set(message) <= _CALL_KEYS:
        return None
    request_id, params = message.get("id"), message.get("params")
    if (
        message.get("jsonrpc") != "2.0"
        or message.get("method") != "tools/call"
        or isinstance(request_id, bool)
        or not isinstance(request_id, int | str)
        or not isinstance(params, dict)
        or not set(params) <= _PARAMS_KEYS
        or params.get("name") != HOOK_TOOL
    ):
        return None
    arguments = params.get("arguments", {})
    return (request_id, arguments) if isinstance(arguments, dict) else None


def _no_constant(name: str) -> Any:  # noqa: ANN401 -- json's parse_constant hook
    raise ValueError(name)


class ReplyShape:
    """How this server's SDK writes a hook call's reply, learned from its own first one.

    The wire form of a ``CallToolResult`` depends on the SDK's version and on the protocol
    version the client negotiated (a newer protocol adds fields), so it is not written down
    here: :class:`_HookLines` lets the session's first hook call go through the SDK, and this
    keeps that reply as a template, only when rendering the template with that reply's own
    values gives back exactly the bytes the SDK wrote (else every call stays with the SDK).
    Later replies differ from it in the id, the text and ``isError`` alone."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self._reply = reply

    @classmethod
    def learned(cls, line: str) -> ReplyShape | None:
        """The shape of the SDK's reply ``line``, or ``None`` when it is not one text's."""
        import json  # noqa: PLC0415

        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            return None
        result = reply.get("result") if isinstance(reply, dict) else None
        content = result.get("content") if isinstance(result, dict) else None
        if (
            not isinstance(content, list)
            or len(content) != 1
            or not isinstance(content[0], dict)
            or set(content[0]) != {"text", "type"}
            or content[0]["type"] != "text"
            or not isinstance(content[0]["text"], str)
            or not isinstance(result.get("isError"), bool)  # type: ignore[union-attr]
        ):
            return None
        shape = cls(reply)
        same = shape.render(reply["id"], content[0]["text"], result["isError"])  # type: ignore[index]
        return shape if same == line.encode("utf-8") else None

    @classmethod
    def minimal(cls) -> ReplyShape:
        """The spec's own ``CallToolResult`` of one text (MCP, "Tool Result"), for a hook call
        the SDK cannot read before it taught a shape: a reply in the form every protocol
        version reads is better than none, which the client would wait out and block."""
        return cls(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"content": [{"type": "text", "text": ""}], "isError": False},
            }
        )

    def render(self, request_id: int | str, text: str, failed: bool) -> bytes:
        """The reply line for one hook call (ending in a newline, as the SDK writes it)."""
        import json  # noqa: PLC0415

        result = dict(self._reply["result"])
        result["content"] = [{**self._reply["result"]["content"][0], "text": text}]
        result["isError"] = failed
        reply = {**self._reply, "id": request_id, "result": result}
        line = json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n"
        return line.encode("utf-8", "backslashreplace")  # a lone surrogate: its JSON escape


class _Wire:
    """The protocol's own stdin and stdout: private duplicates of fd 0 and 1, which then point
    at the null device and at stderr, so a stray print, or a child's output, misses the wire
    (as the SDK's own stdio transport does). Lines go out whole, one writer at a time (the SDK's
    writer and :class:`_HookLines`'s answers share it)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        import threading  # noqa: PLC0415

        self._reader = os.fdopen(read_fd, "rb", closefd=False)
        self._write_fd = write_fd
        self._lock = threading.Lock()
        #: Told each line the SDK writes, before it is sent (:class:`_HookLines` learns there).
        self.observe: Callable[[str], None] = lambda _line: None

    @classmethod
    @contextmanager
    def claimed(cls) -> Iterator[_Wire]:
        import fcntl  # noqa: PLC0415

        saved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in (0, 1)]
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
            os.dup2(2, 1)
        finally:
            os.close(null)
        try:
            yield cls(saved[0], saved[1])
        finally:
            for fd, wire in zip((0, 1), saved, strict=True):
                with suppress(OSError):
                    os.dup2(wire, fd)
                with suppress(OSError):
                    os.close(wire)

    def readline(self) -> bytes:
        return self._reader.readline()

    def send(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._write_fd, view) :]

    # The SDK's stdout writer: ``await stdout.write(json + "\n")``, then ``flush()``.
    async def write(self, text: str) -> None:
        import anyio.to_thread  # noqa: PLC0415

        self.observe(text)
        await anyio.to_thread.run_sync(self.send, text.encode("utf-8"))

    async def flush(self) -> None:
        return None


class _HookLines:
    """The SDK's stdin: the lines of the wire, less the hook tool's calls, which are answered
    here as they are read (:func:`hook_call`), once the client said ``initialized`` and the
    SDK's reply to the session's first hook call gave their shape (:class:`ReplyShape`). An
    ``mcp_tool`` hook is two calls per tool call; through the SDK each paid its validation,
    dispatch and serialization (~10-20 ms on this project's machine), here a JSON parse."""

    def __init__(
        self,
        wire: _Wire,
        answer: Callable[[dict[str, Any]], tuple[str, bool, HookLeft]],
        after: Callable[[HookLeft], None],
    ) -> None:
        self._wire = wire
        self._answer = answer
        self._after = after
        self._initialized = False
        self._shape: ReplyShape | None = None
        self._learning: set[int | str] = set()  # hook calls the SDK answers, to learn from
        wire.observe = self._observe

    def __aiter__(self) -> _HookLines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread  # noqa: PLC0415

        while True:
            raw = await anyio.to_thread.run_sync(self._wire.readline)
            if not raw:
                raise StopAsyncIteration
            line = raw.decode("utf-8", "replace")
            call = hook_call(line) if self._initialized else None
            shape = self._shape
            if call is not None and shape is None and _unpaired_surrogate(call[1]):
                # The SDK's JSON parser refuses a lone surrogate escape and drops the call
                # unanswered (mcp 2.3): answered here, in the spec's own form.
                shape = ReplyShape.minimal()
            if call is None or shape is None:
                self._initialized = self._initialized or _is_initialized(line)
                if call is not None:
                    self._learning.add(call[0])
                return line
            request_id, arguments = call
            text, failed, left = self._answer(arguments)
            reply = shape.render(request_id, text, failed)
            await anyio.to_thread.run_sync(self._wire.send, reply)
            self._after(left)

    def _observe(self, line: str) -> None:
        if not self._learning or self._shape is not None or '"id"' not in line:
            return
        import json  # noqa: PLC0415

        try:
            request_id = json.loads(line).get("id")
        except (ValueError, RecursionError, AttributeError):
            return
        if isinstance(request_id, int | str) and request_id in self._learning:
            self._learning.discard(request_id)
            self._shape = ReplyShape.learned(line)


_SURROGATE: Final = lazy_compile("[\ud800-\udfff]")


def _unpaired_surrogate(value: object) -> bool:
    """Whether a string anywhere in ``value`` (keys too) holds a lone surrogate."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_unpaired_surrogate(k) or _unpaired_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unpaired_surrogate(item) for item in value)
    return False


def _is_initialized(line: str) -> bool:
    import json  # noqa: PLC0415

    if "notifications/initialized" not in line:
        return False
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "notifications/initialized"
