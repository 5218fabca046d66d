"""``ledger intent ...``: list, select, clear, expand, expansions, withdraw.

Typer-free: ``intent list`` is dispatched here by ``cli._entry`` (an interactive command must
answer fast); the Typer app in ``cli._app`` wraps the others. Every change is a signed record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any

from cli._exit import OK, UsageError, guarded
from cli._log import CommandParser, Output
from ledger import ConfigError, InputError

if TYPE_CHECKING:
    from ledger import CommandCall


def _workspace(root: str | None) -> Any:  # noqa: ANN401 -- GovernedWorkspace, lazily imported
    from ledger import GovernedWorkspace, find_root  # noqa: PLC0415

    return GovernedWorkspace(find_root(root))


def _intents(workspace: Any) -> Any:  # noqa: ANN401 -- IntentsFile
    intents, error = workspace.load_intents()
    if intents is None:
        raise ConfigError(str(error))
    if intents.missing:
        raise ConfigError(intents.missing)
    return intents


def _intent(workspace: Any, intent_id: str) -> Any:  # noqa: ANN401 -- Intent
    intents = _intents(workspace)
    intent = intents.get(intent_id)
    if intent is None:
        known = ", ".join(i.id for i in intents.intents) or "none"
        raise InputError(f"unknown intent {intent_id} (known: {known})")
    return intent


def _emit(value: object, stream: IO[str] | None = None) -> None:
    print(json.dumps(value, indent=2, sort_keys=True), file=stream)


def _need_session(workspace: Any, session: str | None, command: str) -> str:  # noqa: ANN401
    """Intent selection is per agent session: refuse to guess which one."""
    if session:
        return session
    known = [sid for sid in workspace.state.sessions if sid][-5:]
    seen = f"; sessions in this ledger: {', '.join(known)}" if known else ""
    raise UsageError(
        f"`ledger intent {command}` needs --session ID: the agent session to bind "
        f"(an agent runs it in its own shell, where the session is known){seen}\n"
        f"hint: ledger intent {command} --help"
    )


# --- list -----------------------------------------------------------------------------------


def run_list(root: str | None, as_json: bool, output: Output | None = None) -> int:
    """The intents, their status, scope (with approved expansions) and the sessions on each.

    Reads only the cached intents and the cached state projection (an interactive command:
    neither the hook engine nor any key material is loaded)."""
    from cli._log import ledger_path, line_at, this_process  # noqa: PLC0415
    from ledger import (  # noqa: PLC0415
        GOVERNANCE_STATE,
        INTENTS_FILE,
        ProjectionCache,
        load_intents_cached,
        missing_intents_message,
    )

    output = output or this_process()
    stream, environ = output.stream, output.environ
    path = ledger_path(root, output)
    orchestration = path.parent
    cache = orchestration / ".cache"
    if not (orchestration / INTENTS_FILE).exists():
        raise ConfigError(missing_intents_message(orchestration))
    intents = load_intents_cached(orchestration / INTENTS_FILE, cache, environ=environ)
    genesis = line_at(path, 0)
    ledger_id = str(genesis.data.get("ledger")) if genesis else ""
    state = ProjectionCache(path, cache, ledger_id, environ=environ).state(GOVERNANCE_STATE)
    sessions: dict[str, list[str]] = {}
    for sid, info in state.sessions.items():
        if info.get("intent"):
            sessions.setdefault(info["intent"], []).append(sid or "(default)")
    rows: list[dict[str, Any]] = [
        {
            "id": i.id,
            "name": i.name,
            "owned_scope": list(i.owned_scope),
            "expansions": list(state.grants.get(i.id, [])),
            "sessions": sessions.get(i.id, []),
            "status": i.status,
        }
        for i in intents.intents
    ]
    if as_json:
        _emit(rows, stream)
    elif not rows:
        print(
            f"no intents yet in {orchestration / INTENTS_FILE}: add one "
            "under active_intents: (id, name, status: IN_PROGRESS, owned_scope)",
            file=stream,
        )
    else:
        for row in rows:
            print(f"{row['id']:<10} {row['status'].upper():<12} {row['name']}", file=stream)
            print(f"{'':<10} scope: {', '.join(row['owned_scope'])}", file=stream)
            if row["expansions"]:
                print(f"{'':<10} expanded: {', '.join(row['expansions'])}", file=stream)
            if row["sessions"]:
                print(f"{'':<10} sessions: {', '.join(row['sessions'])}", file=stream)
    return OK


def _list(args: list[str], output: Output, *, for_caller: bool = False) -> int:
    parser = CommandParser(
        prog="ledger intent list",
        description="List intents, their status and scope, and the sessions working under each.",
    )
    parser.for_caller = for_caller
    parser.add_argument(
        "--root",
        default=None,  # find_root reads $LEDGER_ROOT (the caller's)
        help="Workspace root (default: nearest parent holding .orchestration/; env LEDGER_ROOT).",
    )
    parser.add_argument(
        "--json", dest="as_json", action="store_true", help="Print machine-readable JSON."
    )
    ns = parser.parse_args(args)
    return run_list(ns.root, ns.as_json, output)


def list_main(args: list[str]) -> int:
    """``ledger intent list`` without Typer."""
    from cli._log import this_process  # noqa: PLC0415

    return guarded(lambda: _list(args, this_process()))


def served_list(call: CommandCall) -> tuple[int, str, str]:
    """``ledger intent list`` for a caller of the resident decider (``cli/_serve.py``)."""
    from cli._log import answer_for  # noqa: PLC0415

    return answer_for(call, lambda args, output: _list(args, output, for_caller=True))


# --- select, clear --------------------------------------------------------------------------


def run_select(intent_id: str, session: str | None, root: str | None, as_json: bool) -> int:
    """Bind an IN_PROGRESS intent to a session (recorded); print its ``<intent_context>``."""
    from ledger import intent_refusal, render_intent_context  # noqa: PLC0415

    workspace = _workspace(root)
    intent = _intent(workspace, intent_id)
    refusal = intent_refusal(intent)
    if refusal is not None:
        raise InputError(f"cannot select intent {intent.id}: it {refusal}")
    bound = _need_session(workspace, session, "select")
    recorded = workspace.state.intent_of(bound) != intent.id
    if recorded:
        workspace.record_person_command(
            "intent.selected",
            {"intent_id": intent.id, "session": bound, "via": "cli"},
            session=bound,
        )
    context = render_intent_context(
        intent, list(reversed(workspace.state.recent.get(intent.id, [])))
    )
    if as_json:
        _emit({"context": context, "intent_id": intent.id, "recorded": recorded, "session": bound})
    else:
        print(context)
    return OK


def run_clear(session: str | None, root: str | None, as_json: bool) -> int:
    """Drop a session's intent (recorded)."""
    workspace = _workspace(root)
    bound = _need_session(workspace, session, "clear")
    previous = workspace.state.intent_of(bound)
    workspace.record_person_command(
        "intent.cleared", {"session": bound, "via": "cli"}, session=bound
    )
    if as_json:
        _emit({"previous": previous, "session": bound})
    else:
        print(f"session {bound}: intent cleared" + (f" (was {previous})" if previous else ""))
    return OK


# --- expand, expansions, withdraw -----------------------------------------------------------


def run_expand(
    intent_id: str,
    globs: list[str],
    reason: str,
    session: str | None,
    root: str | None,
    as_json: bool,
) -> int:
    """A person grants extra scope to an intent (recorded); unsafe globs are refused."""
    from ledger import agent_marker, ancestor_chain, expansion_problem  # noqa: PLC0415

    for glob in globs:
        problem = expansion_problem(glob)
        if problem is not None:
            raise InputError(f"cannot expand {intent_id}: {problem}")
    workspace = _workspace(root)
    intent = _intent(workspace, intent_id)
    granted = workspace.state.grants.get(intent.id, [])
    new = [g for g in dict.fromkeys(globs) if g not in granted and g not in intent.owned_scope]
    inside_agent = agent_marker(os.environ, ancestor_chain()) if new else None
    if inside_agent is not None:
        # Run from an agent's shell, the hook answered `ask`, the client asked the person, and
        # the hook records that approval (ledger/_governance/state.py). A terminal is no proof
        # of a person (an agent can wrap any command in a pty), so the process tree decides.
        print(
            f"not recorded here: {inside_agent}; the grant is the one the hook records after "
            f"a person approved it ({intent.id}: {', '.join(new)})"
        )
        return OK
    if new:
        workspace.record_person_command(
            "intent.scope_expanded",
            {
                "approval": "person",
                "approved_via": "cli",
                "globs": new,
                "intent_id": intent.id,
                "reason": reason or None,
                "session": session,
                "tool_use_id": None,
            },
            session=session,
        )
    scope = [*intent.owned_scope, *granted, *new]
    if as_json:
        _emit({"added": new, "intent_id": intent.id, "scope": scope})
    else:
        print(f"{intent.id} scope: {', '.join(scope)}" + ("" if new else " (nothing new to grant)"))
    return OK


def expansion_history(
    records: Iterable[Mapping[str, Any]], intent_id: str | None = None
) -> list[dict[str, Any]]:
    """Each glob an expansion granted, with the record that granted it and, if withdrawn, the
    record that withdrew it (a fold over the ledger's records, in order)."""
    grants: list[dict[str, Any]] = []
    for record in records:
        kind = record.get("kind")
        if kind not in ("intent.scope_expanded", "intent.scope_withdrawn"):
            continue
        body = record.get("body") or {}
        target = str(body.get("intent_id"))
        if intent_id is not None and target != intent_id:
            continue
        for glob in body.get("globs") or []:
            if kind == "intent.scope_expanded":
                grants.append(
                    {
                        "intent_id": target,
                        "glob": glob,
                        "seq": record.get("seq"),
                        "ts": record.get("ts"),
                        "via": body.get("approved_via"),
                        "reason": body.get("reason"),
                        "withdrawn_seq": None,
                    }
                )
                continue
            for grant in grants:
                if (grant["intent_id"], grant["glob"], grant["withdrawn_seq"]) == (
                    target,
                    glob,
                    None,
                ):
                    grant["withdrawn_seq"] = record.get("seq")
    return grants


def run_expansions(
    intent_id: str | None, root: str | None, include_withdrawn: bool, as_json: bool
) -> int:
    """The scope expansions in force (``--all``: and the withdrawn ones)."""
    from ledger import Ledger  # noqa: PLC0415

    history = expansion_history((r.data for r in Ledger.open(root).records()), intent_id)
    rows = [g for g in history if include_withdrawn or g["withdrawn_seq"] is None]
    if as_json:
        _emit(rows)
        return OK
    if not rows:
        print(
            "no scope expansions"
            + (f" for {intent_id}" if intent_id else "")
            + "; a person grants one with `ledger intent expand ID GLOB`"
        )
    for row in rows:
        state = (
            f"withdrawn at seq {row['withdrawn_seq']}"
            if row["withdrawn_seq"] is not None
            else "in force"
        )
        why = f" ({row['reason']})" if row["reason"] else ""
        print(
            f"{row['intent_id']:<10} {row['glob']:<24} seq {row['seq']} via {row['via']}, "
            f"{state}{why}"
        )
    return OK


def run_withdraw(
    intent_id: str, globs: list[str], reason: str, root: str | None, as_json: bool
) -> int:
    """Withdraw globs an expansion granted (recorded; the intent's own scope stays)."""
    workspace = _workspace(root)
    intent = _intent(workspace, intent_id)
    granted = workspace.state.grants.get(intent.id, [])
    unknown = [g for g in globs if g not in granted]
    if unknown:
        listed = ", ".join(granted) or "none"
        own = (
            " (it is in owned_scope: edit active_intents.yaml)"
            if unknown[0] in (intent.owned_scope)
            else ""
        )
        raise InputError(
            f"{unknown[0]!r} is not an expansion of {intent.id}{own}; its expansions: {listed}"
        )
    workspace.record_person_command(
        "intent.scope_withdrawn",
        {
            "globs": list(dict.fromkeys(globs)),
            "intent_id": intent.id,
            "reason": reason or None,
            "session": None,
            "via": "cli",
        },
        session=None,
    )
    left = [g for g in granted if g not in globs]
    if as_json:
        _emit({"intent_id": intent.id, "scope": [*intent.owned_scope, *left], "withdrawn": globs})
    else:
        print(f"{intent.id} scope: {', '.join([*intent.owned_scope, *left])}")
    return OK
