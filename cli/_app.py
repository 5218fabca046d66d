"""The Typer app: every command except the hot paths routed by ``cli._entry``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from typer._click.core import Context as ClickContext  # typer vendors its click
from typer._click.shell_completion import CompletionItem
from typer.core import TyperCommand
from typer.core import _TyperParameter as TyperParameter

from cli import (
    _append,
    _blame,
    _forget,
    _hook,
    _intent,
    _intents,
    _keys,
    _log,
    _mcp,
    _query,
    _remote,
    _review,
    _tamper,
)
from cli._exit import EXIT_CODES_HELP, INTEGRITY, OK, UNVERIFIABLE, UsageError, reader_gone
from cli._options import JsonOption, RootOption, run_action
from ledger import Ledger, StorageError, VerifyReport, verify_against_remote

app = typer.Typer(
    name="ledger",
    help="Governed, auditable AI coding agents: a signed, hash-chained ledger of every "
    f"agent tool call.\n\n{EXIT_CODES_HELP}",
    no_args_is_help=True,
    # `ledger --install-completion` (bash, zsh, fish, PowerShell) and `--show-completion`.
    add_completion=True,
    # Locals can hold key material; never print them (Typer's default has varied by release).
    pretty_exceptions_show_locals=False,
    pretty_exceptions_enable=False,
    # Plain help: no Rich import (~40 ms), no type column (flags showed a `<bool>` metavar).
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

#: What an option's value is, in the help: a word for the thing given, never a Python type
#: (Typer's own label is the annotation: `<list[Path]>`, `<str>`, `<int>`).
_VALUE_NAMES: Final = {
    "root": "DIR",
    "out": "PATH",
    "dir": "DIR",
    "checkpoint": "FILE",
    "jobs": "N",
    "remote": "REMOTE",
    "ledgers": "GLOB",
    "since": "WHEN",
    "until": "WHEN",
    "timeout": "SECONDS",
    "idle": "SECONDS",
    "memory_limit": "SIZE",
    "retention_months": "MONTHS",
    "trusted_key": "KID",
    "from_seq": "SEQ",
    "at": "SEQ",
    "kind": "KIND",
    "client": "NAME",
    "session": "ID",
    "intent": "ID",
    "reason": "TEXT",
    "event": "EVENT",
    "format": "FORMAT",
}
_typer_display_type = TyperParameter.display_type


def _display_type(self: TyperParameter, ctx: Any) -> str:  # noqa: ANN401 -- Click's context
    if self.type_descriptor.is_choice:  # the choices themselves: deny|ask|allow
        return _typer_display_type(self, ctx)
    name = self.name or "value"
    return _VALUE_NAMES.get(name, name.upper())


TyperParameter.display_type = _display_type  # type: ignore[method-assign]

key_app = typer.Typer(
    help="Signing keys: list, rotate, revoke, add, pin, verifier.", no_args_is_help=True
)
app.add_typer(key_app, name="key")
_keys.register(key_app)
_blame.register(app)
_tamper.register(app)
_forget.register(app)
_remote.register(app)
_review.register(app)


_run = run_action


def _emit_json(value: Any) -> None:  # noqa: ANN401 -- any JSON value
    print(json.dumps(value, indent=2, sort_keys=True))


@app.command()
def init(
    root: Annotated[
        Path,
        typer.Option(
            "--root", envvar="LEDGER_ROOT", help="Workspace root (default: current directory)."
        ),
    ] = Path(),
    parents: Annotated[
        bool, typer.Option("--parents", help="Create the workspace directory if it does not exist.")
    ] = False,
    fork: Annotated[
        bool,
        typer.Option(
            "--fork",
            help="In a workspace copied with its ledger (cp -a, rsync -a, tar): give the copy "
            "a ledger and key of its own, whose first record names the copied ledger and head.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Make this clone's ledger and signing key; keep the shared files (intents, hooks.yaml,
    keys/). Idempotent."""
    from ledger import init_workspace  # noqa: PLC0415

    def action() -> int:
        report = init_workspace(root, parents=parents, fork=fork)
        ledger = report.ledger
        info = {
            "created": report.created,
            "kept": list(report.kept),
            "key": report.key,
            "keyring": str(ledger.workspace.keys_dir),
            "ledger": str(ledger.file.path),
            "ledger_id": ledger.tail(1)[0].ledger_id,
            "moved_from_elsewhere": report.moved_from_elsewhere,
            "elsewhere_key": report.elsewhere_key,
            "forked_from": report.forked_from,
            "forked_to": report.forked_to,
            "private_key": report.private_key,
            "replaced": report.replaced,
            "written": list(report.written),
        }
        if as_json:
            _emit_json(info)
            return OK
        if report.moved_from_elsewhere:
            print(
                f"the ledger here was written on another machine (its key "
                f"{report.elsewhere_key} cannot sign here): moved it, unchanged, to "
                f"{report.moved_from_elsewhere} (if git tracks it: `git rm --cached "
                ".orchestration/agent_trace.jsonl`)"
            )
        if report.forked_from:
            fork_point = report.forked_from
            print(
                f"forked from ledger {fork_point['ledger_id']} at seq {fork_point['seq']} "
                f"(it lives in {fork_point['home']}, untouched); the copy of it is kept, "
                f"unchanged, in {report.forked_to}"
            )
        state = "created" if report.created else "already initialised"
        print(f"ledger {info['ledger_id']} at {info['ledger']} ({state})")
        if report.replaced:
            print(
                f"this workspace held ledger {report.replaced}, which is gone: the new ledger "
                "stays flagged by `ledger verify`, `ledger doctor` and every hook call until "
                "you acknowledge the replacement with `ledger tamper accept` in your own "
                "terminal (recorded in the new ledger)"
            )
        where = report.private_key or "$LEDGER_SIGNING_KEY"
        print(
            f"signing key {report.key}: private key {where}; public key pinned in {info['keyring']}"
        )
        for name in report.written:
            print(f"wrote {name}")
        if report.kept:
            print(f"kept shared files: {', '.join(report.kept)}")
        if report.forked_from:
            print("next: `ledger doctor` (the intents, hooks and settings came with the copy)")
        elif report.created:
            print(
                "next: edit .orchestration/active_intents.yaml, `ledger install claude`, "
                "commit .orchestration/ (its .gitignore keeps this clone's ledger out), "
                "`ledger doctor`"
            )
        return OK

    _run(action)


@app.command()
def append(
    kind: Annotated[str, typer.Option(help=_append.OPTIONS["--kind"][1])] = "app.event",
    root: RootOption = None,
    as_json: JsonOption = False,
    client: Annotated[str | None, typer.Option(help=_append.OPTIONS["--client"][1])] = None,
    session: Annotated[str | None, typer.Option(help=_append.OPTIONS["--session"][1])] = None,
    agent: Annotated[str | None, typer.Option(help=_append.OPTIONS["--agent"][1])] = None,
    model: Annotated[str | None, typer.Option(help=_append.OPTIONS["--model"][1])] = None,
) -> None:
    """Append one record whose body is the JSON object on stdin (for scripts)."""
    options = _append.AppendOptions(kind, root, as_json, client, session, agent, model)
    _run(lambda: _append.run(options, sys.stdin.buffer))


def _passthrough(
    group: typer.Typer,
    name: str,
    summary: str,
    main: Callable[[list[str]], int],
    parser: Callable[[], _log.CommandParser] | None = None,
) -> None:
    """Register a command that parses its own arguments (a Typer-free fast path, dispatched
    first by ``cli._entry``; this entry puts it in the command list and shell completion,
    whose candidates are ``parser``'s own options, so they cannot drift from it)."""

    def command(ctx: typer.Context) -> None:
        raise typer.Exit(main(list(ctx.args)))

    class Passthrough(TyperCommand):
        def shell_complete(self, ctx: ClickContext, incomplete: str) -> list[CompletionItem]:
            previous = ctx.args[-1] if ctx.args else None
            offered = parser().completions(previous, incomplete) if parser else []
            return [CompletionItem(word) for word in offered]

    group.command(
        name,
        cls=Passthrough,
        help=summary,
        add_help_option=False,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(command)


_passthrough(
    app,
    "log",
    "Show recent records, one line each; filters; -f follows.",
    _log.log_main,
    _log.log_parser,
)
_passthrough(
    app, "show", "Print one record in full (default: the last).", _log.show_main, _log.show_parser
)
_passthrough(app, "mcp", "Serve select_active_intent and ledger's other tools over MCP.", _mcp.main)


def _progress_printer() -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if total < 8 * 1024 * 1024:
            return
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(
            f"\rverifying [{'#' * filled}{'.' * (width - filled)}] "
            f"{100 * done // max(total, 1):3d}%"
        )
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
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option(
            "--checkpoint",
            help="A stored checkpoint to check for truncation, rollback or fork. Repeatable.",
        ),
    ] = None,
    jobs: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote",
            help="Also compare with what `ledger push` published to this git remote: a "
            "rewrite or truncation after the push fails.",
        ),
    ] = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Verify every record's hash, signature, key, link and seq (and checkpoints).

    In a clone with no ledger of its own (one that only reads), the teammates' evidence
    `ledger fetch` kept (or, with --remote, what the remote holds now) is verified against the
    public keys committed in .orchestration/keys/.

    Exit 0 intact, 1 integrity problem (incl. a torn tail), 2 could not check.
    """

    def action() -> int:
        from ledger import find_root, read_checkpoint_file  # noqa: PLC0415

        if not (find_root(root) / ".orchestration" / "agent_trace.jsonl").exists():
            if checkpoint:
                raise UsageError(
                    "--checkpoint checks this clone's own ledger, and it has none "
                    "(`ledger verify` checks the fetched evidence here)"
                )
            return _verify_reading(root, remote, jobs=jobs, as_json=as_json)
        ledger = Ledger.open(root)

        stored = [(str(path), read_checkpoint_file(path)) for path in checkpoint or []]
        if remote is not None:
            if stored:
                raise UsageError("--remote and --checkpoint: give one or the other")
            report = verify_against_remote(ledger, remote, jobs=jobs, progress=_progress_printer())
        else:
            report = ledger.verify(checkpoints=stored, jobs=jobs, progress=_progress_printer())
        if as_json:
            _emit_json(report.to_json())
        else:
            print(report.summary())
            if remote is not None:  # which evidence this was checked against
                print(f"  against {remote}: refs/ledger/{ledger.ledger_id}, as pushed there")
            for problem in report.problems[:50]:
                where = f"line {problem.line}" if problem.line else "ledger"
                print(f"  seq {problem.seq} ({where}): {problem.code}: {problem.message}")
            if report.problem_count > 50:
                print(f"  … and {report.problem_count - 50} more (use --json)")
            for note in report.notes:
                print(f"  note: {note}")
        return _verify_exit_code(report)

    _run(action)


def _verify_reading(
    root: str | None, remote: str | None, *, jobs: int | None, as_json: bool
) -> int:
    """``ledger verify`` in a clone that only reads: its fetched evidence (or ``remote``'s)
    against the public keys pinned here; exit 1 for refused evidence, 2 for unpinned keys."""
    from ledger import verify_fetched_evidence  # noqa: PLC0415

    checked = verify_fetched_evidence(root, remote, jobs=jobs)
    if as_json:
        _emit_json({"own_ledger": False, "ledgers": [c._asdict() for c in checked]})
    elif not checked:
        where = f"{remote} holds no ledger evidence" if remote else "no evidence fetched"
        print(
            f"nothing to verify: this clone has no ledger of its own and {where} "
            f"(`ledger fetch{' ' + remote if remote else ''}` keeps teammates' evidence)"
        )
    for item in [] if as_json else checked:
        source = f"as {item.remote} holds it now" if remote else f"fetched from {item.remote}"
        if item.status == "verified":
            print(f"ok: ledger {item.ledger_id}, {item.records} records, {source}")
        else:
            print(f"{item.status}: {item.reason}")
    if any(item.status == "refused" for item in checked):
        return INTEGRITY
    return UNVERIFIABLE if any(item.status == "unverified" for item in checked) else OK


@app.command()
def doctor(
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option("--checkpoint", help="A checkpoint file to verify and date. Repeatable."),
    ] = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check this workspace, one line each: ledger, signing key, intents, hooks.yaml,
    installed hooks, last checkpoint. Exit 1 when something is broken."""
    from cli._doctor import run as run_doctor  # noqa: PLC0415

    _run(lambda: run_doctor(root, checkpoint or [], as_json))


@app.command()
def serve(
    status: Annotated[
        bool, typer.Option("--status", help="Say whether a decider runs, and what it served.")
    ] = False,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the running decider.")] = False,
    idle: Annotated[
        float, typer.Option("--idle", help="Exit after this many seconds without a call.")
    ] = 1800.0,
    as_json: JsonOption = False,
) -> None:
    """Run the resident decider: hook calls are answered from one warm process (the first
    hook call starts it; LEDGER_DECIDER=off keeps every call in its own process)."""
    from cli._serve import run as run_serve  # noqa: PLC0415

    _run(lambda: run_serve(status=status, stop=stop, idle=idle, as_json=as_json))


@app.command(name="checkpoint")
def checkpoint_cmd(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the checkpoint to this file.")
    ] = None,
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
            _emit_json(
                {
                    "head": cp.head,
                    "ledger_id": cp.ledger_id,
                    "size": cp.size,
                    "text": text,
                    "written_to": str(out) if out else None,
                }
            )
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
            done = (
                [f"moved {result.removed_bytes} {what} byte(s) to {result.quarantine_file}"]
                if result.quarantine_file
                else []
            )
            if result.added_newline:
                done.append("kept the last record and added its missing newline")
            print(f"repaired: {'; '.join(done)}; recorded as seq {seq}")
        return OK

    _run(action)


@key_app.command("list")
def key_list(root: RootOption = None, as_json: JsonOption = False) -> None:
    """List pinned public keys: which one signs now, which were rotated out or revoked."""
    from ledger import active_key_id  # noqa: PLC0415

    def action() -> int:
        ledger = Ledger.open(root)
        entries = sorted(ledger.keyring(), key=lambda e: e.created or "")
        tail = ledger.tail(1)
        active = active_key_id(tail[0]) if tail else None
        rows: list[dict[str, Any]] = []
        for e in entries:
            status = (
                "revoked"
                if e.revoked_from_seq is not None
                else "active"
                if e.kid == active
                else "rotated-out"
                if e.retired_after_seq is not None
                else "pinned"
            )
            rows.append(
                {
                    "active": e.kid == active,
                    "created": e.created,
                    "kid": e.kid,
                    "retired_after_seq": e.retired_after_seq,
                    "revoked_from_seq": e.revoked_from_seq,
                    "status": status,
                }
            )
        if as_json:
            _emit_json(rows)
            return OK
        for row in rows:
            flags = {
                "active": " (active: signs new records)",
                "revoked": f" REVOKED from seq {row['revoked_from_seq']}",
                "rotated-out": f" rotated out after seq {row['retired_after_seq']}",
                "pinned": " (pinned; has signed nothing here since)",
            }[row["status"]]
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
            print(
                f"rotated {record.body['old_key']} -> {record.body['new_key']} at seq {record.seq}"
            )
        return OK

    _run(action)


@key_app.command("revoke")
def key_revoke(
    kid: Annotated[str, typer.Argument(metavar="KID", help="Key id to revoke.")],
    from_seq: Annotated[
        int, typer.Option("--from-seq", min=0, help="First seq at which the key is invalid.")
    ],
    reason: Annotated[str, typer.Option(help="Why (recorded).")] = "",
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", help="Revoke even though records the key already signed become invalid."
        ),
    ] = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a key from a seq onwards (records it signed from then on fail verify). Revoking
    the active key makes a new one, which signs from then on."""
    from cli._exit import UsageError  # noqa: PLC0415

    def action() -> int:
        ledger = Ledger.open(root)
        signed = [r.seq for r in ledger.records(start=from_seq) if r.key == kid]
        if signed and not yes:
            raise UsageError(
                f"revoking {kid} from seq {from_seq} makes {len(signed)} record(s) it already "
                f"signed invalid (seq {signed[0]}..{signed[-1]}): `ledger verify` will fail on "
                "them. Re-run with --yes if the key was compromised before they were written\n"
                f"hint: to stop it signing only new records, use --from-seq "
                f"{ledger.tail(1)[0].seq + 1}"
            )
        record = ledger.revoke_key(kid, from_seq=from_seq, reason=reason)
        successor = record.body.get("successor")
        if as_json:
            _emit_json({**record.data, "invalidated_records": len(signed)})
            return OK
        print(f"revoked {kid} from seq {from_seq} (recorded at seq {record.seq})")
        if successor:
            print(
                f"it was the active key, so a new key {successor} was made; it signed the "
                "revocation and signs from now on"
            )
        if signed:
            print(
                f"{len(signed)} record(s) it signed (seq {signed[0]}..{signed[-1]}) no longer "
                "verify"
            )
        return OK

    _run(action)


def _clients_help() -> str:
    from ledger import CLIENT_NAMES  # noqa: PLC0415 - the one client registry

    return f"{', '.join(CLIENT_NAMES[:-1])} or {CLIENT_NAMES[-1]}"


def _complete_client(incomplete: str) -> list[str]:
    """Shell completion of a client argument: the registry's names."""
    from ledger import CLIENT_NAMES  # noqa: PLC0415

    return [name for name in CLIENT_NAMES if name.startswith(incomplete)]


def _known_client(name: str) -> str:
    """An unknown client name is bad usage (exit 2), like any other invalid argument."""
    from ledger import CLIENT_NAMES  # noqa: PLC0415

    if name not in CLIENT_NAMES:
        raise typer.BadParameter(f"{name!r} is not one of {', '.join(CLIENT_NAMES)}")
    return name


CLIENTS_HELP = _clients_help()
ClientArgument = Annotated[
    str,
    typer.Argument(
        metavar="CLIENT",
        callback=_known_client,
        autocompletion=_complete_client,
        help=f"The agent client: {CLIENTS_HELP}.",
    ),
]
intent_app = typer.Typer(
    help="Intents: list, select, clear, expand, expansions, withdraw.", no_args_is_help=True
)
app.add_typer(intent_app, name="intent")
_intents.register(app, intent_app)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(
    client: Annotated[
        str,
        typer.Argument(autocompletion=_complete_client, help=f"The agent client: {CLIENTS_HELP}."),
    ],
    event: Annotated[str | None, typer.Option(help=_hook.OPTIONS["--event"])] = None,
    root: RootOption = None,
) -> None:
    """Run as a client hook: read the client's JSON on stdin, govern, record, answer.

    Answers in the client's own protocol (exit codes included), not with ledger's exit codes.
    """
    args = [client, *([f"--event={event}"] if event else []), *([f"--root={root}"] if root else [])]
    raise typer.Exit(_hook.main(args))


def _print_changes(path: Path, changes: list[Any], as_json: bool) -> None:
    if as_json:
        _emit_json({"changes": [c._asdict() for c in changes], "path": str(path)})
        return
    print(path)
    for change in changes:
        print(f"  {change.action:<9} {change.target}: {change.detail}")
    if not [c for c in changes if c.action != "note"]:
        print("  nothing to do")


ScopeOption = Annotated[
    bool, typer.Option("--user/--project", help="User-wide settings instead of this project's.")
]


@contextmanager
def _sealing_what_changes(base: Path) -> Iterator[None]:
    """The tripwire seals what a person's install changed (nothing else); outside a workspace
    with a ledger there is no seal to keep."""
    from ledger import GovernedWorkspace, LedgerError  # noqa: PLC0415

    try:
        workspace = GovernedWorkspace(base)
    except LedgerError:
        yield
        return
    with workspace.changing_protected_files():
        yield


def _install_action(
    do: Callable[..., tuple[Path, list[Any]]],
    client: str,
    user: bool,
    root: str | None,
    as_json: bool,
    **options: Any,  # noqa: ANN401 -- install-only keyword options, passed through
) -> None:
    from ledger import CLIENTS, find_root  # noqa: PLC0415

    def action() -> int:
        spec = CLIENTS[client]
        if spec.user_only and not user:  # a usage error (exit 2), said before anything else
            raise UsageError(
                f"{spec.title} reads hooks only from ~/{spec.user_file}, for every project: "
                "add --user (projects without `ledger init` then deny tool calls)"
            )
        base = find_root(root) if (root or not user) else Path.cwd()
        with _sealing_what_changes(base):
            path, changes = do(client, root=base, user=user, **options)
        _print_changes(path, changes, as_json)
        return OK

    _run(action)


@app.command()
def install(
    client: ClientArgument,
    user: ScopeOption = False,
    root: RootOption = None,
    as_json: JsonOption = False,
    hardened: Annotated[
        bool,
        typer.Option(
            "--hardened",
            help="Also configure the client's OS sandbox so shell commands cannot "
            "write ledger's files or read its key (see docs/trust-model.md).",
        ),
    ] = False,
    pre_push: Annotated[
        bool,
        typer.Option(
            "--pre-push",
            help="Also add a git pre-push hook that runs `ledger push` with every git push "
            "(the evidence travels with the code; a failed evidence push never blocks yours).",
        ),
    ] = False,
) -> None:
    """Add ledger's hooks to a client's settings (idempotent; keeps your other hooks)."""
    from ledger import install as do_install  # noqa: PLC0415
    from ledger import install_pre_push  # noqa: PLC0415

    def with_pre_push(client: str, **options: Any) -> tuple[Path, list[Any]]:  # noqa: ANN401
        path, changes = do_install(client, **options)
        if pre_push:
            changes.append(install_pre_push(options["root"]))
        return path, changes

    _install_action(with_pre_push, client, user, root, as_json, hardened=hardened)


@app.command()
def uninstall(
    client: ClientArgument,
    user: ScopeOption = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove ledger's hooks from a client's settings, leaving other hooks alone (and the git
    pre-push hook `--pre-push` added)."""
    from ledger import uninstall as do_uninstall  # noqa: PLC0415
    from ledger import uninstall_pre_push  # noqa: PLC0415

    def with_pre_push(client: str, **options: Any) -> tuple[Path, list[Any]]:  # noqa: ANN401
        path, changes = do_uninstall(client, **options)
        removed = None if options.get("user") else uninstall_pre_push(options["root"])
        return path, [*changes, *([removed] if removed else [])]

    _install_action(with_pre_push, client, user, root, as_json)


SessionOption = Annotated[
    str | None,
    typer.Option(
        envvar=["CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID"],
        help="The agent session (default: the session this runs in; required elsewhere).",
    ),
]


_passthrough(
    intent_app,
    "list",
    "List intents, their status and scope, and the sessions working under each.",
    _intent.list_main,
)


@intent_app.command("select")
def intent_select(
    intent_id: Annotated[str, typer.Argument(metavar="ID", help="Intent id, e.g. INT-001.")],
    session: SessionOption = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Select an IN_PROGRESS intent for an agent session (recorded); prints the
    <intent_context> block. The hook applies the same rule when an agent selects."""
    _run(lambda: _intent.run_select(intent_id, session, root, as_json))


@intent_app.command("clear")
def intent_clear(
    session: SessionOption = None, root: RootOption = None, as_json: JsonOption = False
) -> None:
    """Clear a session's intent (recorded)."""
    _run(lambda: _intent.run_clear(session, root, as_json))


ReasonOption = Annotated[str, typer.Option(help="Why (recorded).")]


@intent_app.command("expand")
def intent_expand(
    intent_id: Annotated[str, typer.Argument(metavar="ID", help="Intent id.")],
    globs: Annotated[
        list[str], typer.Argument(metavar="GLOB...", help="Globs to add to the intent's scope.")
    ],
    reason: ReasonOption = "",
    session: SessionOption = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Grant extra scope to an intent. Run by a person, this is the approval (recorded);
    requested by an agent, the hook first asks a human. Globs leaving the workspace or
    matching .orchestration/ are refused."""
    _run(lambda: _intent.run_expand(intent_id, globs, reason, session, root, as_json))


@intent_app.command("expansions")
def intent_expansions(
    intent_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="Only this intent.")
    ] = None,
    include_withdrawn: Annotated[
        bool, typer.Option("--all", help="Also the withdrawn expansions.")
    ] = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """List scope expansions in force: glob, the record that granted it, how, why."""
    _run(lambda: _intent.run_expansions(intent_id, root, include_withdrawn, as_json))


@intent_app.command("withdraw")
def intent_withdraw(
    intent_id: Annotated[str, typer.Argument(metavar="ID", help="Intent id.")],
    globs: Annotated[
        list[str], typer.Argument(metavar="GLOB...", help="Expanded globs to withdraw.")
    ],
    reason: ReasonOption = "",
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Withdraw scope an expansion granted (recorded as intent.scope_withdrawn)."""
    _run(lambda: _intent.run_withdraw(intent_id, globs, reason, root, as_json))


@app.command()
def demo(
    directory: Annotated[
        Path | None,
        typer.Option("--dir", help="Workspace to create (default: a fresh temporary directory)."),
    ] = None,
    keep: Annotated[bool, typer.Option(help="Keep the temporary workspace.")] = False,
) -> None:
    """Run the main job on a throwaway workspace: a governed agent session, then verify,
    checkpoint, and what tampering, truncation and a crash look like."""
    from cli._demo import run_demo  # noqa: PLC0415

    _run(lambda: run_demo(directory, keep=keep))


_query.register(app)  # query, export, verify-export, report (cli/_query.py)


def run_app(args: list[str]) -> int:
    """Run the Typer app and return its exit code (errors already printed).

    A usage error is one line and a hint (exit 2), like the Typer-free commands'.
    """
    try:
        result = app(args=args, prog_name="ledger", standalone_mode=False)
    except typer.TyperException as exc:  # usage errors (Typer's vendored Click)
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "ledger"
        message = " ".join(exc.format_message().split()).replace("Value error, ", "")
        print(f"ledger: error: {message}", file=sys.stderr)
        print(f"hint: {where} --help", file=sys.stderr)
        return int(getattr(exc, "exit_code", UNVERIFIABLE))
    except typer.Abort:
        print("ledger: aborted", file=sys.stderr)
        return 130
    except SystemExit:
        # Click answers a reader gone early (EPIPE) itself, with exit 1, which here would mean
        # "the evidence is bad"; it leaves its PacifyFlushWrapper on stdout when it does.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            return reader_gone()
        raise
    return result if isinstance(result, int) else OK
