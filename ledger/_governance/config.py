"""The governance configuration of a workspace, loaded once per hook call and cached.

Three sources, all under ``.orchestration/``: ``active_intents.yaml`` (the intents), ``hooks.yaml``
(or ``hooks.json``: policy switches and extra hooks in Claude Code's settings shape), and the
scope globs compiled from them. PyYAML (~10 ms) and pathspec (~30 ms) are imported only when a
source changed: every derived form is kept in ``.orchestration/.cache/`` keyed by the source's
SHA-256, so the common hook call reads small JSON files. A cache is derived data: deleting it is
always safe, and a stale one cannot be used (its key is the content it came from).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ledger._errors import ConfigError, InputError, LedgerError
from ledger._governance.analysis.paths import ScopeSpec
from ledger._governance.engine import HookEngine
from ledger._governance.intents import (
    INTENTS_FILE,
    IntentsFile,
    did_you_mean,
    load_intents_cached,
    missing_intents_message,
)
from ledger._governance.policies import GovernanceConfig
from ledger._workspace import ORCHESTRATION_DIR, atomic_write, cache_secret, seal, unseal

__all__ = [
    "WorkspaceConfig",
    "disclose_policy",
    "policy_config",
    "read_hook_config",
    "register_configured_hooks",
]

HOOK_CONFIG_FILES: Final = ("hooks.yaml", "hooks.json")


def read_hook_config(
    path: Path,
    cache_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    secret: bytes | None = None,
) -> dict[str, Any] | None:
    """Read ``hooks.yaml``/``hooks.json``; YAML is parsed once and cached as JSON.

    Args:
        environ: where ``$LEDGER_HOME`` (the cache secret's home) is read from.
        secret: the per-user cache secret, when the caller holds it already.
    """
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
        # Sealed with the per-user secret: a cache an agent wrote (say, policies switched off
        # for today's hooks.yaml) is not this user's and is ignored, never obeyed.
        try:
            payload = unseal(cache.read_bytes(), environ, secret=secret)
            cached = json.loads(payload) if payload is not None else None
            if isinstance(cached, dict) and cached.get("sha256") == digest:
                return dict(cached["config"])
        except (OSError, ValueError, TypeError, KeyError):
            pass
        import yaml  # noqa: PLC0415 -- only when the YAML changed

        try:
            loaded = yaml.safe_load(data.decode("utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path}{where}: invalid YAML") from None
        with contextlib.suppress(OSError, TypeError):  # an unwritable cache only costs time
            sealed = seal(
                json.dumps({"config": loaded, "sha256": digest}).encode("utf-8"),
                environ,
                secret=secret,
            )
            if sealed is not None:
                atomic_write(cache, sealed)
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return loaded


_TOP_LEVEL: Final = ("policies", "hooks", "retention", "disclose")


def disclose_policy(config: dict[str, Any] | None, path: Path) -> tuple[str, ...]:
    """``disclose:`` of ``hooks.yaml``: the fields whose disclosures ``ledger push`` publishes
    under ``--disclose policy`` (``[tool_input.command, reason]``; a name covers what is below
    it, ``[]`` any index: ``hooks[].reason``). Absent: the default, no prompt and no file
    content (:data:`~ledger._evidence.disclosure.DEFAULT_DISCLOSE`); empty: none.

    Raises:
        ConfigError: not a list of field names.
    """
    from ledger._evidence.disclosure import DEFAULT_DISCLOSE  # noqa: PLC0415

    if config is None or "disclose" not in config:
        return DEFAULT_DISCLOSE
    fields = config["disclose"] or []
    if not isinstance(fields, list) or not all(isinstance(f, str) and f.strip() for f in fields):
        raise ConfigError(
            f"{ORCHESTRATION_DIR}/{path.name}: disclose must list the fields ledger push may "
            "publish, e.g. [tool_input.command, reason] ([] publishes none)"
        )
    return tuple(f.strip() for f in fields)


def retention_policy(config: dict[str, Any] | None, path: Path) -> dict[str, str]:
    """``retention:`` of ``hooks.yaml``: how long disclosures are kept, per field prefix
    (``prompt: 30d``, ``tool_input: 90d``) and ``default``. Empty: kept until forgotten.

    Raises:
        ConfigError: not a mapping of field prefixes to ages (``30d``, ``12h``, ``45m``).
    """
    from ledger._evidence.disclosure import age_cutoff  # noqa: PLC0415

    rules = (config or {}).get("retention") or {}
    where = f"{ORCHESTRATION_DIR}/{path.name}"
    if not isinstance(rules, dict):
        raise ConfigError(f"{where}: retention must map field prefixes to ages, e.g. prompt: 30d")
    for key, value in rules.items():
        if not isinstance(value, str) or age_cutoff(value, 0.0) is None:
            raise ConfigError(
                f"{where}: retention.{key} must be an age such as 30d, 12h or 45m, not {value!r}"
            )
    return {str(k): str(v) for k, v in rules.items()}


def policy_config(config: dict[str, Any] | None, path: Path) -> GovernanceConfig:
    """The policy switches of ``hooks.yaml`` (``policies:``), checked key by key.

    Raises:
        ConfigError: an unknown key (with a did-you-mean), or a value of the wrong type.
    """
    where = f"{ORCHESTRATION_DIR}/{path.name}"
    settings = GovernanceConfig._fields
    for key in config or {}:
        if key not in _TOP_LEVEL:
            hint = (
                " (put it under policies:)"
                if key in settings
                else did_you_mean(str(key), _TOP_LEVEL)
            )
            raise ConfigError(
                f"{where}: unknown top-level setting {key!r}{hint}; the top level "
                "takes policies:, hooks:, retention: and disclose:"
            )
    policies = (config or {}).get("policies") or {}
    if not isinstance(policies, dict):
        raise ConfigError(
            f"{where}: policies must be a mapping of settings ({', '.join(settings)})"
        )
    for key, value in policies.items():
        if key not in settings:
            raise ConfigError(
                f"{where}: unknown setting {key!r}{did_you_mean(str(key), settings)}"
                f"; the settings are {', '.join(settings)}"
            )
        if key == "destructive":
            if value not in ("ask", "deny", "allow"):
                raise ConfigError(
                    f"{where}: policies.destructive must be ask, deny or allow, not {value!r}"
                )
        elif not isinstance(value, bool):
            raise ConfigError(f"{where}: policies.{key} must be true or false, not {value!r}")
    return GovernanceConfig(**policies)


def register_configured_hooks(
    engine: HookEngine,
    config: dict[str, Any] | None,
    root: Path,
    path: Path,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Claude-settings-shaped ``hooks:``: {Event: [{matcher, hooks: [{type, ...}]}]}.

    ``environ`` is the hook call's environment, which command hooks inherit (the resident
    decider serves many callers: each command runs with its caller's environment)."""
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
                    fn: Any = CommandHook(
                        name,
                        handler.get("args") or handler.get("command", ""),
                        timeout=timeout,
                        mode=mode,
                        cwd=str(root),
                        base_env=environ,
                    )
                    mode = "sync"  # CommandHook detaches itself in async mode
                elif kind == "http":
                    fn = HttpHook(
                        name,
                        str(handler.get("url", "")),
                        timeout=timeout,
                        headers=handler.get("headers"),
                    )
                elif kind == "prompt":
                    fn = PromptHook(name, str(handler.get("prompt", "")))
                else:
                    raise ConfigError(f"{path}: hook type {kind!r} is not supported")
                engine.register_hook(
                    str(event),
                    name,
                    fn,
                    matcher=group.get("matcher"),
                    once=bool(handler.get("once")),
                    mode=mode,
                )


class WorkspaceConfig:
    """The intents, hook configuration and compiled scopes of one workspace (cached loads).

    Args:
        orchestration: the workspace's ``.orchestration/`` directory.
        cache_dir: where derived forms are cached (``.orchestration/.cache``).
        environ: where ``$LEDGER_HOME`` is read from: its secret seals every cache here.
    """

    def __init__(
        self, orchestration: Path, cache_dir: Path, *, environ: Mapping[str, str] | None = None
    ) -> None:
        self.orchestration = orchestration
        self.cache_dir = cache_dir
        self.environ = environ
        self.secret = cache_secret(environ)  # read once for the three caches
        path = orchestration / HOOK_CONFIG_FILES[0]
        if not path.exists() and (orchestration / HOOK_CONFIG_FILES[1]).exists():
            path = orchestration / HOOK_CONFIG_FILES[1]
        self.hooks_path = path

    def intents(self) -> tuple[IntentsFile | None, str | None]:
        """The intents file (or why it cannot be used)."""
        path = self.orchestration / INTENTS_FILE
        if not path.exists():
            return IntentsFile((), "", missing_intents_message(self.orchestration)), None
        try:
            return (
                load_intents_cached(path, self.cache_dir, environ=self.environ, secret=self.secret),
                None,
            )
        except ConfigError as exc:
            return None, str(exc)

    def hooks(self) -> dict[str, Any] | None:
        """``hooks.yaml`` / ``hooks.json`` as a mapping, or ``None`` when there is none.

        Raises:
            ConfigError: unreadable, invalid YAML/JSON, or not a mapping.
        """
        return read_hook_config(
            self.hooks_path, self.cache_dir, environ=self.environ, secret=self.secret
        )

    def disclose_policy(self) -> tuple[str, ...]:
        """The fields ``hooks.yaml``'s ``disclose:`` lets ``ledger push`` and ``ledger
        export`` carry under ``--disclose policy`` (:func:`disclose_policy`).

        Raises:
            ConfigError: the file is unreadable, or ``disclose:`` is not a list of field names.
        """
        return disclose_policy(self.hooks(), self.hooks_path)

    def compile_scope(self, globs: tuple[str, ...]) -> ScopeSpec:
        """``globs`` compiled to a :class:`ScopeSpec`; pathspec loads only on a cache miss."""
        key = hashlib.sha256(json.dumps(globs).encode()).hexdigest()[:24]
        cache = self.cache_dir / f"scope.{key}.json"
        # Sealed like every derived cache: compiled regexes an agent wrote (matching everything)
        # would widen the scope, so only this user's own are read back.
        try:
            payload = unseal(cache.read_bytes(), self.environ, secret=self.secret)
            cached = json.loads(payload) if payload is not None else None
            if isinstance(cached, dict) and cached.get("globs") == list(globs):
                return ScopeSpec.from_cache(cached["spec"])
        except (OSError, ValueError, TypeError, KeyError, InputError, LedgerError):
            pass
        spec = ScopeSpec.compile(globs)
        sealed = seal(
            json.dumps({"globs": list(globs), "spec": spec.to_cache()}).encode(),
            self.environ,
            secret=self.secret,
        )
        if sealed is not None:
            with contextlib.suppress(OSError):  # an unwritable cache only costs time
                atomic_write(cache, sealed)
        return spec
