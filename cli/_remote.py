"""``ledger push`` and ``ledger fetch``: evidence that travels through git (decision 0018).
The work is the library's (``ledger.push_evidence``, ``ledger.fetch_evidence``); this module
parses the arguments and prints one line per ledger."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from cli._exit import OK
from cli._options import JsonOption, RootOption, run_action
from ledger import Ledger, push_evidence

RemoteArgument = Annotated[
    str,
    typer.Argument(metavar="REMOTE", help="The git remote (an audit repository works the same)."),
]


def register(app: typer.Typer) -> None:
    """Add ``push`` and ``fetch`` to the app."""

    @app.command()
    def push(
        remote: RemoteArgument = "origin",
        root: RootOption = None,
        as_json: JsonOption = False,
        publish_verbatim_content: Annotated[
            bool,
            typer.Option(
                "--publish-verbatim-content",
                help="Also publish records from before format v3, whose prompts, command "
                "lines and file contents are in the chain verbatim (refused without it).",
            ),
        ] = False,
    ) -> None:
        """Publish this clone's signed evidence (its records and a checkpoint of them) to
        refs/ledger/<ledger id> on REMOTE, as a fast-forward of the previous push. Content
        (prompts, commands, files) is not published: the chain holds commitments to it, and
        the disclosure store stays on this machine."""

        def action() -> int:
            result = push_evidence(
                Ledger.open(root), remote, publish_verbatim_content=publish_verbatim_content
            )
            if as_json:
                print(json.dumps(result._asdict(), indent=2, sort_keys=True))
            elif result.status == "current":
                print(f"{remote} already holds {result.ref} ({result.records} records)")
            else:
                print(f"pushed {result.records} records to {remote} {result.ref}")
            return OK

        run_action(action)

    @app.command()
    def fetch(
        remote: RemoteArgument = "origin", root: RootOption = None, as_json: JsonOption = False
    ) -> None:
        """Fetch teammates' evidence (refs/ledger/*) from REMOTE and verify it before keeping
        it under refs/ledger-remotes/REMOTE/: a rewritten, forked or badly signed ref is
        refused (exit 1) and nothing of it is kept. Evidence signed by a key not pinned here
        is listed as unverified on stderr, with the file to commit (exit 0), and not kept."""

        def action() -> int:
            from ledger import GovernedWorkspace, find_root  # noqa: PLC0415

            where = find_root(root)
            if (where / ".orchestration" / "agent_trace.jsonl").exists():
                fetched = GovernedWorkspace(where).fetch_evidence(remote)
            else:  # a clone that only reads: no ledger, no key needed
                fetched = GovernedWorkspace.fetch_evidence_reading(where, remote)
            if as_json:
                print(json.dumps([f._asdict() for f in fetched], indent=2, sort_keys=True))
            elif not fetched:
                print(f"{remote} holds no ledger evidence (refs/ledger/*)")
            for item in [] if as_json else fetched:
                if item.status in ("unverified", "skipped"):
                    # Nothing is wrong with this clone: a teammate's key to pin (docs/team.md).
                    print(item.reason, file=sys.stderr)
                else:
                    print(
                        f"{item.status}: ledger {item.ledger_id}, {item.records} records, verified"
                    )
            return OK

        run_action(action)
