"""``ledger tamper [accept | revert]``: what the tripwire found, and a person's way out.

The tripwire (``ledger/_hooks/tripwire.py``) denies every tool call once it finds ledger's
protected files or records changed outside the hooks. Only a person, outside any agent, can
resolve it: ``accept`` keeps the disk as it is now; ``revert`` puts the sealed files back first.
Both are signed records, and both seal the protected set as it then is.
"""

from __future__ import annotations

import json

import typer

from cli._exit import INTEGRITY, OK
from cli._intent import _workspace
from cli._options import JsonOption, RootOption, run_action


def run_status(root: str | None, as_json: bool) -> int:
    """Print the pending tampering and what differs from the seal now; exit 1 when either."""
    workspace = _workspace(root)
    pending = workspace.state.tamper
    problems = list(workspace.check_tripwire(during_call=False).problems)
    if as_json:
        print(json.dumps({"pending": pending, "problems": problems}, indent=2, sort_keys=True))
    elif pending is None and not problems:
        print("tripwire: nothing changed outside the hooks")
    else:
        if pending is not None:
            print(f"tamper recorded at seq {pending.get('seq')}: every tool call is denied")
        for problem in problems or pending.get("problems", []):
            print(f"  {problem}")
        print("next: look at those files, then `ledger tamper accept` or `ledger tamper revert`")
    return INTEGRITY if pending is not None or problems else OK


def run_resolve(how: str, root: str | None, as_json: bool) -> int:
    """Record a person's resolution and seal the protected set as it now is."""
    done = _workspace(root).resolve_tamper(how)
    if as_json:
        print(
            json.dumps(
                {"files": list(done.files), "left": list(done.left), "seq": done.seq},
                indent=2,
                sort_keys=True,
            )
        )
        return OK
    verb = "restored" if how == "revert" else "accepted"
    print(f"seq {done.seq}: tampering {verb}; the tripwire is sealed again")
    for path in done.files:
        print(f"  {verb}: {path}")
    for path in done.left:
        print(f"  not restored (no copy was kept; fix it by hand): {path}")
    return OK


def register(app: typer.Typer) -> None:
    """Add the ``tamper`` group to the app."""
    tamper_app = typer.Typer(
        help="What the tripwire found (ledger's protected files or records changed outside "
        "the hooks), and how a person resolves it.",
        invoke_without_command=True,
        no_args_is_help=False,
    )
    app.add_typer(tamper_app, name="tamper")

    @tamper_app.callback()
    def tamper_status(
        ctx: typer.Context, root: RootOption = None, as_json: JsonOption = False
    ) -> None:
        """Show the pending tampering and what differs from the seal (exit 1 if anything)."""
        if ctx.invoked_subcommand is None:
            run_action(lambda: run_status(root, as_json))

    @tamper_app.command("accept")
    def tamper_accept(root: RootOption = None, as_json: JsonOption = False) -> None:
        """Keep the protected files as they are now (you checked them); tool calls resume.
        Refused inside an agent."""
        run_action(lambda: run_resolve("accept", root, as_json))

    @tamper_app.command("revert")
    def tamper_revert(root: RootOption = None, as_json: JsonOption = False) -> None:
        """Put the sealed versions of the changed files back (files added where only ledger
        adds are removed); tool calls resume. Refused inside an agent."""
        run_action(lambda: run_resolve("revert", root, as_json))
