"""``ledger doctor``: is this workspace governed and its evidence sound? One line per check.

Each :class:`Check` says OK, or what is wrong and the command that fixes it. The checks:

1. the ledger verifies (with any checkpoints given and, where the evidence layer keeps them,
   the automatic ones);
2. this machine can sign: the active key's private half is here, pinned, not revoked;
3. ``active_intents.yaml`` is valid and has an IN_PROGRESS intent;
4. ``hooks.yaml`` (or ``hooks.json``) is valid;
5. for each agent client found (its project settings directory, its hooks, or its executable on
   ``PATH``): ledger's hooks are installed, guarded, trusted, and their command's executable
   starts (the clients layer's :func:`~ledger._clients.install.hook_status` decides);
6. the last checkpoint is recent.

Pure reporting: nothing is written, except the derived caches that loading the configuration
refreshes anyway.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple

from ledger._clients.install import hook_status
from ledger._clients.registry import CLIENTS, DECISIONS, ClientSpec, enforcement
from ledger._clients.versions import CLIENT_EXECUTABLES
from ledger._errors import ConfigError, KeyNotFoundError, LedgerError, WorkspaceCopiedError
from ledger._evidence.keys import load_signing_key
from ledger._evidence.ledger import Ledger
from ledger._evidence.verify import VerifyReport
from ledger._governance.intents import (
    INTENTS_FILE,
    WORKABLE_STATUSES,
    load_intents_file,
    missing_intents_message,
)
from ledger._hooks.service import GovernedWorkspace
from ledger._setup import active_key_id
from ledger._startup.search_path import program_on_path
from ledger._workspace import ORCHESTRATION_DIR, find_root

__all__ = ["Check", "run_checks"]

Status = Literal["ok", "warn", "fail"]

#: A checkpoint is "recent" while it is at most this many records and this many days behind.
RECENT_RECORDS: Final = 1000
RECENT_DAYS: Final = 7
#: The folder that shows a client is used in a workspace, where its hooks folder does not:
#: VS Code's hooks share `.github/hooks/` with GitHub Copilot CLI.
_CLIENT_FOLDERS: Final = {"vscode": ".vscode"}


class Check(NamedTuple):
    """One line of the report.

    Attributes:
        name: what was checked, e.g. ``signing key`` or ``hooks: claude``.
        status: ``ok``; ``warn`` (works, but needs attention); ``fail`` (broken).
        message: what was found.
        fix: the command or edit that fixes it (``None`` when OK).
    """

    name: str
    status: Status
    message: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return self._asdict()


def _verify(
    ledger: Ledger, checkpoints: Sequence[tuple[str, str]]
) -> tuple[Check, VerifyReport | None]:
    try:
        report = ledger.verify(checkpoints=checkpoints)
    except LedgerError as exc:
        return Check(
            "ledger", "fail", f"could not verify: {exc}", "run `ledger verify` for details"
        ), None
    if report.ok:
        return Check("ledger", "ok", report.summary()), report
    if report.only_torn_tail:
        fix = "run `ledger repair`"
    elif any(p.code == "replaced-ledger" for p in report.problems):
        fix = (
            "if you replaced the ledger yourself, acknowledge it with `ledger tamper accept` in "
            "your own terminal (recorded in the new ledger); else investigate where it went"
        )
    else:
        fix = (
            "run `ledger verify` for every problem; the records are evidence: do not edit them, "
            "keep a copy and investigate"
        )
    return Check("ledger", "fail", report.summary(), fix), report


def _signing_key(ledger: Ledger, environ: Mapping[str, str] | None) -> Check:
    tail = ledger.tail(1)
    if not tail:
        return Check("signing key", "fail", "the ledger has no records", "run `ledger init`")
    last = tail[0]
    kid = active_key_id(last)
    try:
        key = load_signing_key(kid, environ)
    except KeyNotFoundError as exc:
        return Check(
            "signing key",
            "fail",
            str(exc),
            "run `ledger init` to make this clone's own ledger and key, or restore the key",
        )
    if key.kid != kid:
        return Check(
            "signing key",
            "fail",
            f"$LEDGER_SIGNING_KEY holds {key.kid}, but this ledger's active key is {kid}",
            "set $LEDGER_SIGNING_KEY to the active key",
        )
    entry = ledger.keyring().get(kid)
    if entry is None:
        return Check(
            "signing key",
            "fail",
            f"{kid} is not pinned in {ledger.workspace.keys_dir}",
            "restore .orchestration/keys/ from git",
        )
    refusal = entry.refuses_signing_at(last.seq + 1)
    if refusal is not None:
        return Check("signing key", "fail", refusal, "run `ledger key rotate`")
    return Check("signing key", "ok", f"{kid} is active and its private key is on this machine")


def _intents(root: Path) -> Check:
    orchestration = root / ORCHESTRATION_DIR
    path = orchestration / INTENTS_FILE
    if not path.exists():
        return Check(
            "intents",
            "fail",
            missing_intents_message(orchestration),
            f"write {ORCHESTRATION_DIR}/{INTENTS_FILE} (docs/governance.md: the intents file)",
        )
    try:
        parsed = load_intents_file(path)
    except ConfigError as exc:
        return Check("intents", "fail", str(exc), f"fix {ORCHESTRATION_DIR}/{INTENTS_FILE}")
    open_ = [i.id for i in parsed.intents if i.status in WORKABLE_STATUSES]
    summary = f"{len(parsed.intents)} intent(s), {len(open_)} IN_PROGRESS"
    if not open_:
        return Check(
            "intents",
            "warn",
            f"{summary}: agents cannot write until one is",
            f"set an intent's status to IN_PROGRESS in {ORCHESTRATION_DIR}/{INTENTS_FILE}",
        )
    return Check("intents", "ok", f"{summary} ({', '.join(open_)})")


def _hooks_config(root: Path, environ: Mapping[str, str] | None) -> Check:
    orchestration = root / ORCHESTRATION_DIR
    names = [n for n in ("hooks.yaml", "hooks.json") if (orchestration / n).exists()]
    name = names[0] if names else "hooks.yaml"
    try:
        GovernedWorkspace(root, environ=environ, home_only=False).build()
    except ConfigError as exc:
        return Check("hooks.yaml", "fail", str(exc), f"fix {ORCHESTRATION_DIR}/{name}")
    except LedgerError as exc:
        return Check("hooks.yaml", "fail", f"could not load: {exc}", "see the lines above")
    if not names:
        return Check("hooks.yaml", "ok", "none: the built-in policies with their defaults")
    return Check("hooks.yaml", "ok", f"{name} is valid")


def _client_found(spec: ClientSpec, root: Path) -> str | None:
    """Why we think ``spec``'s client is used here: its project folder, or its executable."""
    # The folder holding its hooks: `.claude`, `.clinerules`, ... and `.github/hooks`, not
    # `.github`, which most repositories have without using Copilot CLI.
    shared = Path(spec.shared_file)
    folder = _CLIENT_FOLDERS.get(
        spec.name, str(shared.parent if shared.suffix else Path(shared.parts[0]))
    )
    if not spec.user_only and (root / folder).exists():  # a per-user client has no folder here
        return f"{folder}/ exists"
    for name in CLIENT_EXECUTABLES.get(spec.name, (spec.name,)):
        if program_on_path(name):
            return f"`{name}` is on PATH"
    return None


def _client_hooks(spec: ClientSpec, root: Path, home: Path | None) -> tuple[Check, bool] | None:
    """The installed hooks of one client, as the clients layer sees them (``hook_status``),
    and whether any are installed."""
    name = f"hooks: {spec.name}"
    try:
        status = hook_status(spec.name, root, home=home)
    except LedgerError as exc:
        return Check(name, "fail", str(exc), f"fix it, then `ledger install {spec.name}`"), False
    if status.command_runs is None:  # nothing installed
        why = _client_found(spec, root)
        if why is None:
            return None  # and no sign the client is used here
        missing = Check(
            name,
            "fail" if "exists" in why else "warn",
            f"{why}, but ledger's hooks are not installed: {spec.title}'s tool calls "
            "are not governed",
            f"run `ledger install {spec.name}{' --user' if spec.user_only else ''}`",
        )
        return missing, False
    if status.problems:
        message, _, fix = status.problems[0].rpartition(": run ")
        more = f" (and {len(status.problems) - 1} more)" if len(status.problems) > 1 else ""
        broken = Check(
            name,
            "fail",
            f"{message or status.problems[0]}{more}",
            f"run {fix}" if message else None,
        )
        return broken, True
    installed = f"installed in {status.path}; the command starts" + (
        "; trusted" if status.trusted else ""
    )
    from ledger._clients.mcp_config import registered_in  # noqa: PLC0415

    if registered_in(spec, root=root, home=home or Path.home()) is None:
        # Hooks alone govern; without the server the agent has no select_active_intent tool
        # (decision 0015), only `ledger intent select` in its shell.
        scope = " --user" if spec.mcp.project_file is None else ""
        unregistered = Check(
            name,
            "warn",
            f"{installed}; but `ledger mcp` is not registered, so the agent has no "
            "select_active_intent tool",
            f"run `ledger install {spec.name}{scope}`",
        )
        return unregistered, True
    return Check(name, "ok", f"{installed}; `ledger mcp` registered"), True


def _client_version(
    spec: ClientSpec, root: Path, environ: Mapping[str, str] | None, home: Path | None
) -> list[Check]:
    """Whether the installed client's version and the settings ledger wrote agree (only for
    clients whose versions change what ledger writes: ``versions.CLAUDE_FEATURES``): the
    sandbox settings ``--hardened`` wrote, and the hook transport (mcp_tool hooks on a version
    that ignores ``onFailure`` fail open; command hooks on one that honours it cost a process
    per call)."""
    from ledger._clients.install import hook_status  # noqa: PLC0415
    from ledger._clients.settings import (  # noqa: PLC0415
        MCP_HOOK_MARK,
        _installed_commands,
        load_settings,
    )
    from ledger._clients.versions import (  # noqa: PLC0415
        CLAUDE_FEATURES,
        feature_applies,
        format_version,
        installed_version,
    )

    if spec.name != "claude" or spec.sandbox_file is None:
        return []
    name = f"client version: {spec.name}"
    try:
        sandbox = load_settings(root / spec.sandbox_file).get("sandbox")
        path = hook_status(spec.name, root, home=home).path
    except LedgerError:
        return []  # the hooks line above names the broken file
    marks = set(_installed_commands(spec, path, with_mcp=True).values())
    through_mcp = MCP_HOOK_MARK in marks
    on_failure = CLAUDE_FEATURES["hook-on-failure"]
    since = format_version(on_failure.since)
    found = installed_version(spec.name, environ)
    if found.version is None:
        if found.executable is None and not isinstance(sandbox, dict) and not through_mcp:
            return []  # not on PATH, and nothing written depends on its version
        hooks = (
            f"hooks through `ledger mcp`, which fail closed only from {since}"
            if through_mcp
            else "command hooks, which fail closed on any version"
        )
        return [
            Check(
                name,
                "warn",
                f"cannot read {spec.title}'s version ({found.how}): the settings hold the "
                f"sandbox settings the newest version needs, and {hooks}",
                f"put `{spec.name}` on PATH, then `ledger doctor` again",
            )
        ]
    shown = f"{spec.title} {found.text} ({found.how})"
    flow = CLAUDE_FEATURES["sandbox-permission-flow"]
    if (
        isinstance(sandbox, dict)
        and sandbox.get("enabled") is True
        and sandbox.get("autoAllowBashIfSandboxed") is not True
        and feature_applies(flow, found.version)
    ):
        return [
            Check(
                name,
                "warn",
                f"{shown}: {flow.name} from {format_version(flow.since)}, and "
                f"{spec.sandbox_file} does not set sandbox.autoAllowBashIfSandboxed: every "
                "shell command ledger lets through asks a person (headless: refused)",
                f"run `ledger install {spec.name} --hardened`",
            )
        ]
    fix = f"run `ledger install {spec.name}`"
    honours = found.version >= on_failure.since
    if through_mcp and not honours:
        message = (
            f"{shown} ignores onFailure (from {since}), but the hooks go through `ledger mcp`: "
            "a dead server would let tool calls through (the client was downgraded since "
            "`ledger install`)"
        )
        return [Check(name, "fail", message, fix)]
    if marks and not through_mcp and honours:
        message = (
            f"{shown} honours onFailure: block, but the hooks are commands (a process per "
            "call; the client was upgraded since `ledger install`)"
        )
        return [Check(name, "warn", message, fix)]
    hardened = "; the sandbox settings agree" if isinstance(sandbox, dict) else ""
    transport = "; hooks through `ledger mcp`" if through_mcp else ""
    return [Check(name, "ok", f"{shown}{hardened}{transport}")]


def _enforcement(spec: ClientSpec) -> list[Check]:
    """The enforcement matrix of one client, one line per decision: what the client does when
    ledger decides allow, ask or deny on a tool call (the registry's data, decision 0016)."""
    checks = []
    for decided in DECISIONS:
        given = enforcement(spec)[decided]
        message = f"{decided} -> {given.decision}: {given.how}"
        others = sorted(
            event for event, gate in spec.gate_by_event.items() if gate[decided] != given
        )
        for event in others:
            there = spec.gate_by_event[event][decided]
            message += f"; at {event}: {there.decision} ({there.how})"
        checks.append(Check(f"{spec.name} {decided}", "ok", message))
    return checks


def _stored_checkpoints(
    ledger_id: str, environ: Mapping[str, str] | None
) -> list[tuple[Path, int]]:
    """Automatic checkpoints the evidence layer keeps outside the workspace, when it does."""
    try:
        anchors: Any = importlib.import_module("ledger._evidence.anchors")
    except ImportError:
        return []
    try:
        return [
            (c.path, c.size) for c in anchors.CheckpointStore.for_ledger(ledger_id, environ).list()
        ]
    except LedgerError:
        return []


def _checkpoint(
    report: VerifyReport | None,
    given: Sequence[tuple[str, str]],
    environ: Mapping[str, str] | None,
    now: float,
    copied: bool = False,
) -> Check:
    """The newest checkpoint (in a copied workspace: the newest the copy's records reach; those
    after it are the original's)."""
    how = (
        "run `ledger checkpoint -o <file>` and keep the file off this machine (git, CI "
        "artifacts); `ledger doctor --checkpoint <file>` checks it"
    )
    if report is None or report.ledger_id is None:
        return Check("checkpoint", "warn", "not checked: the ledger could not be verified", how)
    found: list[tuple[float, int, str]] = []
    for name, text in given:
        lines = text.splitlines()
        size = int(lines[1]) if len(lines) > 1 and lines[1].isdigit() else 0
        try:
            mtime = Path(name).stat().st_mtime
        except OSError:
            mtime = now
        found.append((mtime, size, name))
    for path, size in _stored_checkpoints(report.ledger_id, environ):
        if copied and size > report.records:
            continue
        try:
            found.append((path.stat().st_mtime, size, str(path)))
        except OSError:
            continue
    if not found:
        return Check(
            "checkpoint",
            "warn",
            "no checkpoint found: a hash chain cannot prove its own tail was not cut off",
            how,
        )
    mtime, size, name = max(found, key=lambda item: (item[1], item[0]))
    behind = report.records - size
    days = (now - mtime) / 86400
    message = f"{name}: {size} records, {behind} behind, {days:.0f} day(s) old"
    if behind > RECENT_RECORDS or days > RECENT_DAYS:
        return Check("checkpoint", "warn", f"{message}: not recent", how)
    return Check("checkpoint", "ok", message)


def run_checks(
    root: str | os.PathLike[str] | None = None,
    *,
    checkpoints: Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    now: float | None = None,
) -> list[Check]:
    """Every check of ``ledger doctor``, in order. Never raises :class:`LedgerError`: a check
    that cannot run is a failed check.

    Args:
        root: the workspace root (found like git when omitted).
        checkpoints: ``(name, text)`` of checkpoint files to verify and date.
        environ: environment for key lookup.
        home: the user's home (client user-scope settings); default ``Path.home()``.
        now: the time, for checkpoint ages.
    """
    try:
        base = find_root(root, environ=environ)
        ledger = Ledger.open(base, environ=environ)
    except LedgerError as exc:
        return [Check("workspace", "fail", str(exc), "run `ledger init`")]
    checks = [_workspace(base, ledger, environ)]
    copied = checks[0].status == "fail"
    verified, report = _verify(ledger, checkpoints)
    checks.append(verified)
    try:
        checks.append(_signing_key(ledger, environ))
    except LedgerError as exc:
        checks.append(Check("signing key", "fail", str(exc), "see the ledger line above"))
    checks.append(_intents(base))
    checks.append(_hooks_config(base, environ))
    client_checks = []
    for spec in CLIENTS.values():
        found = _client_hooks(spec, base, home)
        if found is not None:
            client_checks.append(found[0])
            if found[1]:  # installed: what the client does with each decision
                client_checks += _enforcement(spec)
                client_checks += _client_version(spec, base, environ, home)
    checks += client_checks or [
        Check(
            "hooks",
            "warn",
            "no agent client found (no .claude/, .cursor/, .gemini/, .codex/, "
            ".clinerules/, nor one on PATH)",
            "run `ledger install <client>` for the agent you use",
        )
    ]
    checks.append(_disclosures(ledger, report))
    checks.append(_sharing(ledger, environ))
    checks.append(
        _checkpoint(report, checkpoints, environ, time.time() if now is None else now, copied)
    )
    checks.append(_tripwire(base, environ))
    refused = _refused_evidence(ledger)
    if refused is not None:
        checks.append(refused)
    checks.append(_decider(environ))
    checks += _mcp_servers(base, environ)
    return checks


def _workspace(base: Path, ledger: Ledger, environ: Mapping[str, str] | None) -> Check:
    """The workspace, and whether it is its ledger's home or a copy of it (``cp -a``)."""
    from ledger._evidence.anchors import copy_of  # noqa: PLC0415
    from ledger._evidence.read import genesis_ledger_id  # noqa: PLC0415

    ledger_id = genesis_ledger_id(ledger.file.path)
    home = None if ledger_id is None else copy_of(base, ledger_id, environ, bind=False)
    if home is None:
        return Check("workspace", "ok", str(base))
    return Check(
        "workspace",
        "fail",
        f"{base} is a copy of {home}, where its ledger {ledger_id} lives: nothing is "
        "recorded here and every tool call is denied",
        "run `ledger init --fork` here: a ledger and key of the copy's own, whose first record "
        f"names {ledger_id} and its head ({home} is not touched)",
    )


def _sharing(ledger: Ledger, environ: Mapping[str, str] | None) -> Check:
    """What ``ledger push`` publishes beside the chain under ``--disclose policy``."""
    from ledger._evidence.disclosure import DEFAULT_DISCLOSE, published_disclosures  # noqa: PLC0415
    from ledger._governance.config import WorkspaceConfig, disclose_policy  # noqa: PLC0415

    workspace = ledger.workspace
    try:
        config = WorkspaceConfig(workspace.orchestration, workspace.cache_dir, environ=environ)
        policy = disclose_policy(config.hooks(), config.hooks_path)
    except LedgerError as exc:
        return Check("sharing", "fail", str(exc), "see the hooks.yaml line above")
    store = ledger.disclosures
    with Path(os.devnull).open("wb") as sink:
        count = published_disclosures(store, policy, sink) if store.exists() else 0
    if policy == DEFAULT_DISCLOSE:
        named = "the default: commands, reasons and error messages; no prompt, no file content"
    else:
        named = f"hooks.yaml's disclose: [{', '.join(policy)}]"
    return Check(
        "sharing",
        "ok",
        f"`ledger push` publishes {count} disclosure(s) beside the chain ({named}); "
        "--disclose none|all overrides it",
    )


def _disclosures(ledger: Ledger, report: VerifyReport | None) -> Check:
    """What the chain commits and this clone discloses; records holding content verbatim."""
    from ledger._evidence.disclosure import verbatim_records  # noqa: PLC0415

    try:
        verbatim = verbatim_records(line for line, _ in ledger.file.iter_lines())
    except LedgerError as exc:
        return Check("content", "fail", f"could not read the ledger: {exc}")
    held = report.disclosures if report is not None else None
    store = ledger.disclosures
    parts = []
    if held is not None and held.committed:
        parts.append(
            f"{held.committed} fields committed: {held.disclosed} disclosed here, "
            f"{held.withheld} withheld ({held.forgotten} forgotten)"
        )
    if held is not None and held.committed and not store.exists():
        parts.append("the disclosure store is missing (deleted?): every field is withheld")
    if held is not None and held.orphans:
        parts.append(f"{held.orphans} disclosure(s) of commitments no record holds (ignored)")
    if verbatim:
        parts.append(
            f"{verbatim} record(s) from before format v3 hold prompts, commands or file "
            "contents verbatim"
        )
        return Check(
            "content",
            "warn",
            "; ".join(parts),
            "`ledger push` publishes them only with --publish-verbatim-content",
        )
    status: Status = "warn" if len(parts) > 1 else "ok"
    return Check("content", status, "; ".join(parts) or "no content recorded yet")


def _decider(environ: Mapping[str, str] | None) -> Check:
    """Whether the resident decider answers (it only makes hooks faster: never a failure)."""
    from ledger._hooks.decider import decider_status  # noqa: PLC0415

    env = os.environ if environ is None else environ
    if env.get("LEDGER_DECIDER") == "off":
        return Check(
            "decider", "ok", "off (LEDGER_DECIDER=off): every hook decides in its own process"
        )
    found = decider_status(environ)
    if not found.running:
        return Check(
            "decider",
            "ok",
            "not running: hooks decide in their own process; the next hook call starts one",
        )
    return Check(
        "decider",
        "ok",
        f"running (pid {found.pid}, ledger {found.version}, {found.requests} calls served)",
    )


def _mcp_servers(base: Path, environ: Mapping[str, str] | None) -> list[Check]:
    """The running ``ledger mcp`` servers of this workspace: one from another version of ledger
    than is installed where it started refuses every hook call, so the client blocks every
    gated action until a person restarts it. No line when none runs."""
    from ledger._hooks.mcp_servers import RESTART_SERVER, running_servers  # noqa: PLC0415

    real = os.path.realpath(base)
    servers = [
        s
        for s in running_servers(environ)
        if s.root is not None and os.path.realpath(s.root) == real
    ]
    if not servers:
        return []
    stale = [(s, s.installed()) for s in servers]
    stale = [(s, now) for s, now in stale if now != s.version]
    if not stale:
        shown = ", ".join(f"pid {s.pid}" for s in servers)
        version = servers[0].version
        return [Check("mcp server", "ok", f"{len(servers)} running ({shown}), ledger {version}")]
    checks = []
    for server, now in stale:
        installed = (
            f"ledger {now} is installed now"
            if now
            else f"no ledger is installed in {server.install}"
        )
        checks.append(
            Check(
                "mcp server",
                "fail",
                f"`ledger mcp` pid {server.pid} is ledger {server.version}, but {installed}: it "
                "refuses every hook call, so each gated tool call of its session is blocked",
                RESTART_SERVER,
            )
        )
    return checks


#: How far back ``ledger doctor`` looks for a refused fetch: the recent records only, so doctor
#: never reads a long ledger whole.
REFUSAL_WINDOW: Final = 1000


def _refused_evidence(ledger: Ledger) -> Check | None:
    """The newest ``governance.evidence_refused`` record among the recent ones (``ledger fetch``
    refused a teammate's rewritten, forked or badly signed evidence), or ``None``."""
    from ledger._evidence.read import tail_records  # noqa: PLC0415

    try:
        recent = tail_records(ledger.file.path, REFUSAL_WINDOW)
    except LedgerError:
        return None  # the ledger line above says why
    for stored in reversed(recent):
        if stored.data.get("kind") != "governance.evidence_refused":
            continue
        body = stored.data.get("body") or {}
        return Check(
            "evidence",
            "warn",
            f"record {stored.data.get('seq')}: `ledger fetch` refused evidence of ledger "
            f"{body.get('ledger_id')} from {body.get('remote')} at seq {body.get('seq')}",
            "ask whoever pushes that ledger what happened to it; nothing of it was kept "
            "(`ledger show SEQ` prints the record)",
        )
    return None


def _tripwire(base: Path, environ: Mapping[str, str] | None) -> Check:
    """The tripwire (ledger/_hooks/tripwire.py): a pending tampering, or what differs from the
    seal now (the next hook call would deny every tool call for it)."""
    from ledger._hooks.service import GovernedWorkspace  # noqa: PLC0415

    way_out = (
        "look at those files (`ledger tamper`), then run `ledger tamper accept` or "
        "`ledger tamper revert` in your own terminal"
    )
    try:
        workspace = GovernedWorkspace(base, environ=environ)
        pending = workspace.state.tamper
        verdict = workspace.check_tripwire(during_call=False)
    except WorkspaceCopiedError:
        return Check("tripwire", "ok", "not checked in a copy: the seal is the original's")
    except LedgerError as exc:
        return Check("tripwire", "warn", f"not checked: {exc}", "see the lines above")
    if pending is not None:
        problems = "; ".join(str(p) for p in pending.get("problems", [])[:3])
        return Check(
            "tripwire",
            "fail",
            f"tampering recorded at seq {pending.get('seq')}, every tool call is denied: "
            f"{problems}",
            way_out,
        )
    if verdict.problems:
        return Check(
            "tripwire",
            "fail",
            f"changed outside the hooks (the next tool call will be denied): "
            f"{'; '.join(verdict.problems[:3])}",
            way_out,
        )
    if not workspace.state.tripwire_armed:
        return Check("tripwire", "ok", "not armed yet: the first hook call seals the protected set")
    return Check("tripwire", "ok", f"{len(verdict.files)} protected files as sealed")
