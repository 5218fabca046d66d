"""Workspace wiring for one hook invocation: event in, signed records and a decision out.

``handle_event`` is what ``ledger hook <client>`` runs: find the workspace, fold the state,
load intents and configured hooks (from JSON caches, so PyYAML and pathspec stay unloaded on the
common path), run the engine, append every record of the invocation with one lock and one
fsync, and return the neutral :class:`~ledger._clients.HookDecision`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ledger._clients import (
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookEvent,
    HookResponse,
    fail_closed_response,
    parse_payload,
    render_response,
)
from ledger._clients.registry import actor_name
from ledger._errors import ConfigError, InputError, LedgerError
from ledger._evidence.ledger import MAX_RECORD_BYTES, Entry, Ledger
from ledger._git import read_head
from ledger._governance.analysis.paths import ScopeSpec
from ledger._governance.engine import HookEngine, Invocation, MergedDecision, invocation_id_for
from ledger._governance.intents import (
    INTENTS_FILE,
    IntentsFile,
    did_you_mean,
    load_intents_cached,
    missing_intents_message,
)
from ledger._governance.policies import Governance, GovernanceConfig, edit_payload
from ledger._projections import GOVERNANCE_STATE, ProjectionCache
from ledger._workspace import ORCHESTRATION_DIR, find_root

__all__ = ["GovernedWorkspace", "handle_event", "locate_root", "run_hook"]

_INPUT_STRING_LIMIT: Final = 2048
_EDIT_STRING_LIMIT: Final = 1024 * 1024


def locate_root(event: HookEvent | None, explicit: str | None = None,
                environ: Mapping[str, str] | None = None) -> Path:
    """The workspace of a hook call: ``--root``/``$LEDGER_ROOT``, else the nearest
    ``.orchestration/`` above the payload's ``cwd``, else above ``$CLAUDE_PROJECT_DIR`` (and the
    other clients' project variables), else above the current directory."""
    env = os.environ if environ is None else environ
    if explicit or env.get("LEDGER_ROOT"):
        return find_root(explicit, environ=env)
    starts = [event.cwd if event else None, env.get("CLAUDE_PROJECT_DIR"),
              env.get("CURSOR_PROJECT_DIR"), env.get("GEMINI_PROJECT_DIR")]
    for start in starts:
        if start:
            try:
                return find_root(start=Path(start), environ={})
            except LedgerError:
                continue
    return find_root(environ={})


def _clip(value: Any, limit: int) -> Any:  # noqa: ANN401 -- any JSON value
    if isinstance(value, str) and len(value) > limit:
        digest = hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()
        return f"{value[:limit]}…[+{len(value) - limit} chars, sha256 {digest}]"
    if isinstance(value, dict):
        return {str(k): _clip(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v, limit) for v in value]
    if isinstance(value, float):  # records hold no floats (client payloads may)
        return str(value)
    return value


def _cached_json_config(path: Path, cache_dir: Path) -> dict[str, Any] | None:
    """Read ``hooks.yaml``/``hooks.json``; YAML is parsed once and cached as JSON."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    if path.suffix == ".json":
        try:
            loaded = json.loads(data)
        except ValueError as exc:
            raise ConfigError(f"{path}: invalid JSON ({exc})") from None
    else:
        cache = cache_dir / f"{path.name}.{digest[:16]}.json"
        try:
            return dict(json.loads(cache.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            pass
        import yaml  # noqa: PLC0415 -- only when the YAML changed

        try:
            loaded = yaml.safe_load(data.decode("utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path}{where}: invalid YAML") from None
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(loaded), encoding="utf-8")
        except (OSError, TypeError):
            pass
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return loaded


_TOP_LEVEL: Final = ("policies", "hooks")


def _policy_config(config: dict[str, Any] | None, path: Path) -> GovernanceConfig:
    where = f"{ORCHESTRATION_DIR}/{path.name}"
    settings = GovernanceConfig._fields
    for key in config or {}:
        if key not in _TOP_LEVEL:
            hint = (" (put it under policies:)" if key in settings
                    else did_you_mean(str(key), _TOP_LEVEL))
            raise ConfigError(f"{where}: unknown top-level setting {key!r}{hint}; the top level "
                              "takes policies: and hooks:")
    policies = (config or {}).get("policies") or {}
    if not isinstance(policies, dict):
        raise ConfigError(f"{where}: policies must be a mapping of settings "
                          f"({', '.join(settings)})")
    for key, value in policies.items():
        if key not in settings:
            raise ConfigError(f"{where}: unknown setting {key!r}{did_you_mean(str(key), settings)}"
                              f"; the settings are {', '.join(settings)}")
        if key == "destructive":
            if value not in ("ask", "deny", "allow"):
                raise ConfigError(f"{where}: policies.destructive must be ask, deny or allow, "
                                  f"not {value!r}")
        elif not isinstance(value, bool):
            raise ConfigError(f"{where}: policies.{key} must be true or false, not {value!r}")
    return GovernanceConfig(**policies)


def _register_external(engine: HookEngine, config: dict[str, Any] | None, root: Path,
                       path: Path) -> None:
    """Claude-settings-shaped ``hooks:``: {Event: [{matcher, hooks: [{type, ...}]}]}."""
    events = (config or {}).get("hooks") or {}
    if not isinstance(events, dict):
        raise ConfigError(f"{path}: hooks must be a mapping of event names")
    if not events:
        return
    from ledger._governance.executors import CommandHook, HttpHook, PromptHook  # noqa: PLC0415

    for event, groups in events.items():
        if not isinstance(groups, list):
            raise ConfigError(f"{path}: hooks.{event} must be a list")
        for g, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                raise ConfigError(f"{path}: hooks.{event}[{g}].hooks must be a list")
            for h, handler in enumerate(handlers):
                if not isinstance(handler, dict):
                    raise ConfigError(f"{path}: hooks.{event}[{g}].hooks[{h}] must be a mapping")
                kind = handler.get("type", "command")
                name = str(handler.get("name") or f"{event}.{g}.{h}.{kind}")
                timeout = float(handler.get("timeout", 60))
                mode = "async" if handler.get("async") else "sync"
                if kind == "command":
                    fn: Any = CommandHook(name, handler.get("args") or handler.get("command", ""),
                                          timeout=timeout, mode=mode, cwd=str(root))
                    mode = "sync"  # CommandHook detaches itself in async mode
                elif kind == "http":
                    fn = HttpHook(name, str(handler.get("url", "")), timeout=timeout,
                                  headers=handler.get("headers"))
                elif kind == "prompt":
                    fn = PromptHook(name, str(handler.get("prompt", "")))
                else:
                    raise ConfigError(f"{path}: hook type {kind!r} is not supported")
                engine.register_hook(str(event), name, fn, matcher=group.get("matcher"),
                                     once=bool(handler.get("once")), mode=mode)


class GovernedWorkspace:
    """One workspace's ledger, state, intents and engine, built for one hook call."""

    def __init__(self, root: Path, *, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.orchestration = root / ORCHESTRATION_DIR
        self.cache_dir = self.orchestration / ".cache"
        self.ledger = Ledger.open(root, environ=environ)
        self.projections = ProjectionCache(self.ledger.file.path, self.cache_dir,
                                           self.ledger.ledger_id, environ=environ)
        self.state = self.projections.state(GOVERNANCE_STATE)
        self._governance: Governance | None = None
        self._pending: list[Entry] = []
        self._head: str | None = read_head(root)

    def load_intents(self) -> tuple[IntentsFile | None, str | None]:
        """The intents file (or why it cannot be used)."""
        path = self.orchestration / INTENTS_FILE
        if not path.exists():
            return IntentsFile((), "", missing_intents_message(self.orchestration)), None
        try:
            return load_intents_cached(path, self.cache_dir), None
        except ConfigError as exc:
            return None, str(exc)

    def _scope_compiler(self, globs: tuple[str, ...]) -> ScopeSpec:
        # pathspec costs ~30 ms to import; keep compiled scope regexes in the cache.
        key = hashlib.sha256(json.dumps(globs).encode()).hexdigest()[:24]
        cache = self.cache_dir / f"scope.{key}.json"
        try:
            return ScopeSpec.from_cache(json.loads(cache.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, InputError, LedgerError):
            pass
        spec = ScopeSpec.compile(globs)
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
            tmp.write_text(json.dumps(spec.to_cache()), encoding="utf-8")
            tmp.replace(cache)
        except OSError:
            pass
        return spec

    def build(self) -> tuple[HookEngine, Governance]:
        """The engine with built-in policies and configured external hooks."""
        config_path = self.orchestration / "hooks.yaml"
        if not config_path.exists() and (self.orchestration / "hooks.json").exists():
            config_path = self.orchestration / "hooks.json"
        config = _cached_json_config(config_path, self.cache_dir)
        policy_config = _policy_config(config, config_path)
        intents, intents_error = self.load_intents()
        governance = Governance(root=self.real_root, state=self.state, intents=intents,
                                intents_error=intents_error, cache_dir=self.cache_dir,
                                scope_compiler=self._scope_compiler, config=policy_config)
        engine = HookEngine(record=self._record, fired_once=self.state.fired_once(),
                            fail_closed=policy_config.fail_closed)
        governance.register(engine)
        self._governance = governance
        _register_external(engine, config, self.root, config_path)
        return engine, governance

    def _actor(self, inv: Invocation) -> dict[str, str | None]:
        model = inv.model
        if model is None and inv.session_id is not None:
            model = self.state.sessions.get(inv.session_id, {}).get("model")
        return {"agent": inv.agent_id, "client": actor_name(inv.client),
                "model": model, "session": inv.session_id}

    def _record(self, kind: str, body: dict[str, Any], inv: Invocation) -> None:
        full: dict[str, Any] = {
            "invocation": inv.id, "event": inv.event, "tool": inv.tool_name,
            "tool_use_id": inv.tool_use_id, "git_head": self._head, "cwd": inv.cwd,
            **body,
        }
        context = inv.context or {}
        if context.get("client_event"):
            full["client_event"] = context["client_event"]
        if kind == "hook.pre":
            full["tool_input"] = _clip(inv.tool_input, _INPUT_STRING_LIMIT)
        elif kind == "hook.post":
            full["outcome"] = inv.outcome
            full["duration_ms"] = inv.duration_ms
            full["tool_error"] = inv.error
            full["edit"] = edit_payload(inv)  # clipped with the whole body below
            governance = self._governance
            full["observed"] = dict(governance.observed) if governance else {}
            full["attribution"] = governance.attribution if governance else None
        else:
            # The client's own fields (SessionEnd's reason is "event_reason": "reason" is ours).
            for key in ("prompt", "source", "event_reason", "agent_type"):
                value = context.get(key)
                if isinstance(value, str):
                    full[key] = _clip(value, 4096)
        # One pass over the whole body: edit strings to 1 MiB, and no floats anywhere.
        full = _clip(full, _EDIT_STRING_LIMIT)
        if len(json.dumps(full)) > MAX_RECORD_BYTES - 4096:
            full["edit"] = {"omitted": "edit too large to record",
                            "sha256": hashlib.sha256(json.dumps(full.get("edit")).encode())
                            .hexdigest()}
        self._pending.append(Entry(kind, full, self._actor(inv)))

    def flush(self, extra: list[tuple[str, dict[str, Any]]], inv: Invocation) -> None:
        """Append the hook record and any extra records with one lock and one fsync."""
        actor = self._actor(inv)
        entries = list(self._pending) + [Entry(kind, body, actor) for kind, body in extra]
        self._pending.clear()
        if entries:
            self.ledger.append_many(entries)


def _invocation(event: HookEvent) -> Invocation:
    outcome = None
    if event.phase == "post":
        outcome = "failure" if event.event == "PostToolUseFailure" or event.error else "success"
    context = {"client_event": event.client_event, "prompt": event.prompt,
               "agent_type": event.agent_type, "source": event.raw.get("source"),
               "event_reason": event.raw.get("reason")}
    return Invocation(
        id=invocation_id_for(event.client, event.session_id, event.tool_use_id),
        event=event.event, tool_name=event.tool_name, tool_input=dict(event.tool_input),
        tool_use_id=event.tool_use_id, session_id=event.session_id, client=event.client,
        cwd=event.cwd, model=event.model, agent_id=event.agent_id, outcome=outcome,
        tool_response=event.tool_response, error=event.error, duration_ms=event.duration_ms,
        raw=event.raw, context=context,
    )


def _decision(event: HookEvent, merged: MergedDecision) -> HookDecision:
    blocking = merged.decision != "allow"
    error = merged.error if blocking else None  # informational errors stay in the record
    if event.phase == "pre":
        # "allow" only when a hook said so: answering allow makes clients skip their own
        # permission prompt (hook-protocols §1.7), so "no objection" is no opinion.
        permission = merged.decision if merged.explicit else None
        return HookDecision(permission=permission,
                            reason=merged.reason,
                            additional_context=merged.additional_context,
                            updated_input=merged.updated_input, error=error,
                            block=merged.decision == "deny")
    return HookDecision(reason=merged.reason, additional_context=merged.additional_context,
                        block=merged.decision == "deny", error=error)


# Events where a hook's block is honoured (hook-protocols §1.2); everything else is observed.
_BLOCKABLE: Final = frozenset({"UserPromptSubmit", "Stop", "SubagentStop", "PreCompact",
                               "PermissionRequest"})


def handle_event(event: HookEvent, *, root: str | None = None,
                 environ: Mapping[str, str] | None = None) -> HookDecision:
    """Govern and record one client hook event.

    Raises:
        LedgerError: the workspace, ledger or configuration is unusable (the caller fails
            closed on pre events).
    """
    workspace = GovernedWorkspace(locate_root(event, root, environ), environ=environ)
    engine, governance = workspace.build()
    inv = _invocation(event)
    if event.phase == "pre":
        merged = engine.run_pre(inv)
    elif event.phase == "post":
        merged = engine.run_post(inv)
    else:
        merged = engine.run_event(inv, can_block=event.event in _BLOCKABLE)
    workspace.flush(governance.records, inv)
    return _decision(event, merged)


def run_hook(client: str, raw: bytes, *, expected_event: str | None = None,
             root: str | None = None, environ: Mapping[str, str] | None = None) -> HookResponse:
    """One whole hook call, as ``ledger hook <client>`` runs it: parse, govern, record, answer.

    Never raises: any failure becomes the client's fail-closed answer (deny for tool-gating
    events, a non-blocking answer otherwise) and is recorded as ``hook.error`` when the ledger
    is writable.

    Args:
        client: the client adapter's name (``claude``, ``codex``, ...).
        raw: the payload bytes as read from stdin (at most ``MAX_PAYLOAD_BYTES + 1``).
        expected_event: the event the hook is registered for (``--event``); used to fail closed
            on a payload that cannot be parsed, and to refuse one that names another event.
        root: the workspace (``--root``); default: found from the payload's ``cwd``.
    """
    event = None
    try:
        event = parse_payload(client, raw, expected_event=expected_event)
        decision = handle_event(event, root=root, environ=environ)
        return render_response(client, event, decision)
    except Exception as exc:  # noqa: BLE001 -- every failure gets the client's fail-closed answer
        message = str(exc) if isinstance(exc, LedgerError) else f"{type(exc).__name__}: {exc}"
        if "`ledger " not in message and "did you mean" not in message:
            message += "; run `ledger doctor` to see what is wrong and how to fix it"
        _record_failure(client, message, raw, event, root=root, environ=environ)
        return fail_closed_response(client, event, message, raw=raw,
                                    expected_event=expected_event)


def _record_failure(client: str, message: str, raw: bytes, event: HookEvent | None, *,
                    root: str | None, environ: Mapping[str, str] | None) -> None:
    """Best effort: put the failure itself in the ledger (never a partial line)."""
    try:
        ledger = Ledger.open(locate_root(event, root, environ), environ=environ)
        truncated = len(raw) > MAX_PAYLOAD_BYTES  # stdin is read only up to the limit + 1
        ledger.append("hook.error", {
            "client": client, "message": message[:2000],
            "payload_bytes": MAX_PAYLOAD_BYTES if truncated else len(raw),
            "payload_sha256": None if truncated else hashlib.sha256(raw).hexdigest(),
            "payload_truncated": truncated}, actor={"client": client})
    except Exception:  # noqa: BLE001, S110 -- recording the failure must not mask the answer
        pass
