"""The Typer app: every command except the hot paths routed by ``cli._entry``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from cli import _append, _keys, _query
from cli._exit import EXIT_CODES_HELP, INTEGRITY, OK, UNVERIFIABLE, guarded
from ledger._errors import InputError, StorageError
from ledger._evidence.ledger import Ledger
from ledger._evidence.record import Record
from ledger._evidence.verify import VerifyReport

app = typer.Typer(
    name="ledger",
    help="Governed, auditable AI coding agents: a signed, hash-chained ledger of every "
    f"agent tool call.\n\n{EXIT_CODES_HELP}",
    no_args_is_help=True,
    add_completion=False,
    # Locals can hold key material; never print them (Typer's default has varied by release).
    pretty_exceptions_show_locals=False,
    pretty_exceptions_enable=False,
)
key_app = typer.Typer(help="Signing keys: list, rotate, revoke, add, pin, verifier.",
                      no_args_is_help=True)
app.add_typer(key_app, name="key")
_keys.register(key_app)

RootOption = Annotated[
    str | None,
    typer.Option("--root", envvar="LEDGER_ROOT",
                 help="Workspace root (default: nearest parent holding .orchestration/)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _run(action: Callable[[], int]) -> None:
    code = guarded(action)
    if code != OK:
        raise typer.Exit(code)


def _emit_json(value: Any) -> None:  # noqa: ANN401 -- any JSON value
    print(json.dumps(value, indent=2, sort_keys=True))


@app.command()
def init(
    root: Annotated[Path, typer.Option("--root", envvar="LEDGER_ROOT",
                                       help="Workspace root (default: current directory).")
                    ] = Path(),
    as_json: JsonOption = False,
) -> None:
    """Create .orchestration/, pin a signing key and write the genesis record."""

    def action() -> int:
        ledger = Ledger.init(root)
        first = next(ledger.records())
        info = {"ledger_id": first.ledger_id, "ledger": str(ledger.file.path),
                "key": first.key, "keyring": str(ledger.workspace.keys_dir)}
        if as_json:
            _emit_json(info)
        else:
            print(f"ledger {info['ledger_id']} at {info['ledger']}")
            print(f"signing key {info['key']} (public key pinned in {info['keyring']})")
        return OK

    _run(action)


@app.command()
def append(
    kind: Annotated[str, typer.Option(help="Record kind, e.g. app.deploy.")] = "app.event",
    root: RootOption = None,
    as_json: JsonOption = False,
    client: Annotated[str | None, typer.Option(help="Actor: client name.")] = None,
    session: Annotated[str | None, typer.Option(help="Actor: session id.")] = None,
    agent: Annotated[str | None, typer.Option(help="Actor: agent id.")] = None,
    model: Annotated[str | None, typer.Option(help="Actor: model.")] = None,
) -> None:
    """Append one record whose body is the JSON object on stdin (for scripts)."""
    options = _append.AppendOptions(kind, root, as_json, client, session, agent, model)
    _run(lambda: _append.run(options, sys.stdin.buffer))


def _format_record(record: Record) -> str:
    actor = record.data.get("actor", {})
    who = "/".join(str(actor[k]) for k in ("client", "session") if actor.get(k))
    body = json.dumps(record.data.get("body"), sort_keys=True, ensure_ascii=False)
    if len(body) > 70:
        body = body[:69] + "…"
    return f"{record.seq:>6}  {record.ts[:23]}Z  {record.kind:<18} {who[:28]:<28} {body}"


@app.command()
def log(
    count: Annotated[int, typer.Option("-n", "--count", min=1, help="How many records.")] = 20,
    kind: Annotated[str | None, typer.Option(help="Only records of this kind.")] = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the most recent records (not verified; run `ledger verify` for that)."""

    def action() -> int:
        ledger = Ledger.open(root)
        if kind is None:
            records = ledger.tail(count)
        else:
            from collections import deque  # noqa: PLC0415

            records = list(deque((r for r in ledger.records() if r.kind == kind), maxlen=count))
        if as_json:
            for record in records:
                print(record.line.decode())
        else:
            for record in records:
                print(_format_record(record))
        return OK

    _run(action)


def _progress_printer() -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if total < 8 * 1024 * 1024:
            return
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\rverifying [{'#' * filled}{'.' * (width - filled)}] "
                         f"{100 * done // max(total, 1):3d}%")
        if done >= total:
            sys.stderr.write("\r" + " " * (width + 20) + "\r")
        sys.stderr.flush()

    return show


def _verify_exit_code(report: VerifyReport) -> int:
    if report.ok:
        return OK
    if all(p.category == "unverifiable" for p in report.problems):
        return UNVERIFIABLE
    return INTEGRITY


@app.command(epilog=EXIT_CODES_HELP)
def verify(
    checkpoint: Annotated[list[Path] | None, typer.Option(
        "--checkpoint", help="A stored checkpoint to check for truncation, rollback or fork. "
        "Repeatable.")] = None,
    jobs: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")
                    ] = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Verify every record's hash, signature, key, link and seq (and checkpoints).

    Exit 0 intact, 1 integrity problem (incl. a torn tail), 2 could not check.
    """

    def action() -> int:
        ledger = Ledger.open(root)
        from ledger import read_checkpoint_file  # noqa: PLC0415

        stored = [(str(path), read_checkpoint_file(path)) for path in checkpoint or []]
        report = ledger.verify(checkpoints=stored, jobs=jobs, progress=_progress_printer())
        if as_json:
            _emit_json(report.to_json())
        else:
            print(report.summary())
            for problem in report.problems[:50]:
                where = f"line {problem.line}" if problem.line else "ledger"
                print(f"  seq {problem.seq} ({where}): {problem.code}: {problem.message}")
            if report.problem_count > 50:
                print(f"  … and {report.problem_count - 50} more (use --json)")
            for note in report.notes:
                print(f"  note: {note}")
        return _verify_exit_code(report)

    _run(action)


@app.command(name="checkpoint")
def checkpoint_cmd(
    out: Annotated[Path | None, typer.Option("--out", "-o",
                                             help="Write the checkpoint to this file.")] = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Sign a checkpoint of the current head. Keep it off this machine (git, CI artifacts)."""

    def action() -> int:
        cp = Ledger.open(root).checkpoint()
        text = cp.text()
        if out is not None:
            try:
                out.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise StorageError(f"cannot write {out}: {exc.strerror}") from None
        if as_json:
            _emit_json({"head": cp.head, "ledger_id": cp.ledger_id, "size": cp.size,
                        "text": text, "written_to": str(out) if out else None})
        elif out is None:
            sys.stdout.write(text)
        else:
            print(f"checkpoint of {cp.size} records written to {out}")
        return OK

    _run(action)


@app.command()
def repair(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Recover from a torn tail: quarantine the torn bytes, truncate, record the repair.

    Refuses (exit 1) when anything other than a torn tail is wrong.
    """

    def action() -> int:
        result = Ledger.open(root).repair()
        if as_json:
            _emit_json(result.to_json())
        elif not result.repaired:
            print("nothing to repair: the ledger ends with a complete record")
        else:
            seq = result.record.seq if result.record else "?"
            what = "torn" if result.removed_kind == "torn" else "whitespace"
            done = [f"moved {result.removed_bytes} {what} byte(s) to {result.quarantine_file}"
                    ] if result.quarantine_file else []
            if result.added_newline:
                done.append("kept the last record and added its missing newline")
            print(f"repaired: {'; '.join(done)}; recorded as seq {seq}")
        return OK

    _run(action)


@key_app.command("list")
def key_list(root: RootOption = None, as_json: JsonOption = False) -> None:
    """List pinned public keys and which one signs now."""

    def action() -> int:
        ledger = Ledger.open(root)
        entries = sorted(ledger.keyring(), key=lambda e: e.created or "")
        tail = ledger.tail(1)
        active = None
        if tail:
            last = tail[0]
            active = last.body.get("new_key") if last.kind == "key.rotated" else last.key
        rows = [{"active": e.kid == active, "created": e.created, "kid": e.kid,
                 "revoked_from_seq": e.revoked_from_seq} for e in entries]
        if as_json:
            _emit_json(rows)
        else:
            for row in rows:
                flags = " (active)" if row["active"] else ""
                if row["revoked_from_seq"] is not None:
                    flags += f" REVOKED from seq {row['revoked_from_seq']}"
                print(f"{row['kid']}  created {row['created']}{flags}")
        return OK

    _run(action)


@key_app.command("rotate")
def key_rotate(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Rotate to a new signing key; old and new key both sign the rotation record."""

    def action() -> int:
        record = Ledger.open(root).rotate_key()
        if as_json:
            _emit_json(record.data)
        else:
            print(f"rotated {record.body['old_key']} -> {record.body['new_key']} "
                  f"at seq {record.seq}")
        return OK

    _run(action)


@key_app.command("revoke")
def key_revoke(
    kid: Annotated[str, typer.Argument(help="Key id to revoke.")],
    from_seq: Annotated[int, typer.Option("--from-seq", min=0,
                                          help="First seq at which the key is invalid.")],
    reason: Annotated[str, typer.Option(help="Why (recorded).")] = "",
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a key from a seq onwards (records it signed from then on fail verify)."""

    def action() -> int:
        record = Ledger.open(root).revoke_key(kid, from_seq=from_seq, reason=reason)
        if as_json:
            _emit_json(record.data)
        else:
            print(f"revoked {kid} from seq {from_seq} (recorded at seq {record.seq})")
        return OK

    _run(action)


def _clients_help() -> str:
    from ledger import CLIENT_NAMES  # noqa: PLC0415 - the one client registry

    return f"{', '.join(CLIENT_NAMES[:-1])} or {CLIENT_NAMES[-1]}"


CLIENTS_HELP = _clients_help()
intent_app = typer.Typer(help="Intents: list them, select one for a session, expand scope.",
                         no_args_is_help=True)
app.add_typer(intent_app, name="intent")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(
    client: Annotated[str, typer.Argument(help=f"The agent client: {CLIENTS_HELP}.")],
    event: Annotated[str | None, typer.Option(
        help="The event this hook is registered for (fail closed on unparseable input).")] = None,
    root: RootOption = None,
) -> None:
    """Run as a client hook: read the client's JSON on stdin, govern, record, answer.

    Answers in the client's own protocol (exit codes included), not with ledger's exit codes.
    """
    from cli._hook import main as hook_main  # noqa: PLC0415

    args = [client, *([f"--event={event}"] if event else []), *([f"--root={root}"] if root
                                                               else [])]
    raise typer.Exit(hook_main(args))


def _print_changes(path: Path, changes: list[Any], as_json: bool) -> None:
    if as_json:
        _emit_json({"changes": [c._asdict() for c in changes], "path": str(path)})
        return
    print(path)
    for change in changes:
        print(f"  {change.action:<9} {change.target}: {change.detail}")
    if not [c for c in changes if c.action != "note"]:
        print("  nothing to do")


ScopeOption = Annotated[bool, typer.Option(
    "--user/--project", help="User-wide settings instead of this project's.")]


def _install_action(do: Callable[..., tuple[Path, list[Any]]], client: str, user: bool,
                    root: str | None, as_json: bool, **options: Any) -> None:  # noqa: ANN401
    from ledger._workspace import find_root  # noqa: PLC0415

    def action() -> int:
        base = find_root(root) if (root or not user) else Path.cwd()
        path, changes = do(client, root=base, user=user, **options)
        _print_changes(path, changes, as_json)
        return OK

    _run(action)


@app.command()
def install(
    client: Annotated[str, typer.Argument(help=f"The agent client: {CLIENTS_HELP}.")],
    user: ScopeOption = False,
    root: RootOption = None,
    as_json: JsonOption = False,
    hardened: Annotated[bool, typer.Option(
        "--hardened", help="Also configure the client's OS sandbox so shell commands cannot "
        "write ledger's files or read its key (see the README's trust model).")] = False,
) -> None:
    """Add ledger's hooks to a client's settings (idempotent; keeps your other hooks)."""
    from ledger import install as do_install  # noqa: PLC0415

    _install_action(do_install, client, user, root, as_json, hardened=hardened)


@app.command()
def uninstall(
    client: Annotated[str, typer.Argument(help=f"The agent client: {CLIENTS_HELP}.")],
    user: ScopeOption = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove ledger's hooks from a client's settings, leaving other hooks alone."""
    from ledger import uninstall as do_uninstall  # noqa: PLC0415

    _install_action(do_uninstall, client, user, root, as_json)


SessionOption = Annotated[str | None, typer.Option(
    envvar=["CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID"],
    help="Session to bind (default: the agent session this runs in, if any).")]


def _governance(root: str | None) -> Any:  # noqa: ANN401 -- GovernedWorkspace, lazily imported
    from ledger._hooks.service import GovernedWorkspace  # noqa: PLC0415
    from ledger._workspace import find_root  # noqa: PLC0415

    return GovernedWorkspace(find_root(root))


def _intent_or_fail(workspace: Any, intent_id: str) -> Any:  # noqa: ANN401
    intents, error = workspace.load_intents()
    if intents is None:
        raise InputError(str(error))
    intent = intents.get(intent_id)
    if intent is None:
        known = ", ".join(i.id for i in intents.intents) or "none"
        raise InputError(f"unknown intent {intent_id} (known: {known})")
    return intent


@intent_app.command("list")
def intent_list(root: RootOption = None, as_json: JsonOption = False) -> None:
    """List intents and the sessions working under each."""

    def action() -> int:
        workspace = _governance(root)
        intents, error = workspace.load_intents()
        if intents is None:
            raise InputError(str(error))
        sessions: dict[str, list[str]] = {}
        for sid, info in workspace.state.sessions.items():
            if info.get("intent"):
                sessions.setdefault(info["intent"], []).append(sid or "(default)")
        rows = [{"id": i.id, "name": i.name, "owned_scope": list(i.owned_scope)
                 + workspace.state.grants.get(i.id, []), "sessions": sessions.get(i.id, []),
                 "status": i.status} for i in intents.intents]
        if as_json:
            _emit_json(rows)
        else:
            for row in rows:
                print(f"{row['id']:<10} {row['status']:<12} {row['name']}")
                print(f"{'':<10} scope: {', '.join(row['owned_scope'])}")
                if row["sessions"]:
                    print(f"{'':<10} sessions: {', '.join(row['sessions'])}")
        return OK

    _run(action)


@intent_app.command("select")
def intent_select(
    intent_id: Annotated[str, typer.Argument(help="Intent id, e.g. INT-001.")],
    session: SessionOption = None,
    root: RootOption = None,
) -> None:
    """Select an intent for a session (recorded); prints the <intent_context> block."""
    from ledger._governance.intents import render_intent_context  # noqa: PLC0415

    def action() -> int:
        workspace = _governance(root)
        intent = _intent_or_fail(workspace, intent_id)
        if workspace.state.intent_of(session) != intent.id:
            workspace.ledger.append("intent.selected", {
                "intent_id": intent.id, "session": session, "via": "cli"},
                actor={"client": "ledger-cli", "session": session})
        print(render_intent_context(intent, list(reversed(
            workspace.state.recent.get(intent.id, [])))))
        return OK

    _run(action)


@intent_app.command("clear")
def intent_clear(session: SessionOption = None, root: RootOption = None) -> None:
    """Clear a session's intent (recorded)."""

    def action() -> int:
        workspace = _governance(root)
        workspace.ledger.append("intent.cleared", {"session": session, "via": "cli"},
                                actor={"client": "ledger-cli", "session": session})
        print("intent cleared")
        return OK

    _run(action)


@intent_app.command("expand")
def intent_expand(
    intent_id: Annotated[str, typer.Argument(help="Intent id.")],
    globs: Annotated[list[str], typer.Argument(help="Globs to add to the intent's scope.")],
    reason: Annotated[str, typer.Option(help="Why (recorded).")] = "",
    session: SessionOption = None,
    root: RootOption = None,
) -> None:
    """Grant extra scope to an intent. Run by a person, this is the approval (recorded);
    requested by an agent, the hook first asks a human."""

    def action() -> int:
        workspace = _governance(root)
        intent = _intent_or_fail(workspace, intent_id)
        granted = workspace.state.grants.get(intent.id, [])
        new = [g for g in globs if g not in granted and g not in intent.owned_scope]
        if new and not sys.stdin.isatty():
            # The approval proof (ledger/_governance/state.py) is a person at a terminal; run
            # from an agent's shell, the hook's `ask` was the approval and the hook records it.
            print(f"not recorded here: without a terminal, the grant is the one the hook "
                  f"records after a person approved it ({intent.id}: {', '.join(new)})")
            return OK
        if new:
            workspace.ledger.append("intent.scope_expanded", {
                "approval": "tty", "approved_via": "cli", "globs": new, "intent_id": intent.id,
                "reason": reason or None, "session": session, "tool_use_id": None},
                actor={"client": "ledger-cli", "session": session})
        print(f"{intent.id} scope: {', '.join([*intent.owned_scope, *granted, *new])}")
        return OK

    _run(action)


@app.command()
def demo(
    directory: Annotated[Path | None, typer.Option(
        "--dir", help="Workspace to create (default: a fresh temporary directory).")] = None,
    keep: Annotated[bool, typer.Option(help="Keep the temporary workspace.")] = False,
) -> None:
    """Run the main job on a throwaway workspace: a governed agent session, then verify,
    checkpoint, and what tampering, truncation and a crash look like."""
    from cli._demo import run_demo  # noqa: PLC0415

    _run(lambda: run_demo(directory, keep=keep))


_query.register(app)  # query, export, verify-export, report (cli/_query.py)


def run_app(args: list[str]) -> int:
    """Run the Typer app and return its exit code (errors already printed)."""
    try:
        result = app(args=args, prog_name="ledger", standalone_mode=False)
    except typer.TyperException as exc:  # usage errors (Typer's vendored Click)
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:  # pragma: no cover
            print(f"ledger: error: {exc.format_message()}", file=sys.stderr)
        return int(getattr(exc, "exit_code", UNVERIFIABLE))
    except typer.Abort:
        print("ledger: aborted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else OK
