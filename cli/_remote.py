"""``ledger push`` and ``ledger fetch``: evidence that travels through git (decision 0018).
The work is the library's (``ledger.push_evidence``, ``ledger.fetch_evidence``); this module
parses the arguments and prints one line per ledger."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from cli._exit import OK, UsageError
from cli._options import JsonOption, RootOption, run_action

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
        disclose: Annotated[
            str,
            typer.Option(
                "--disclose",
                metavar="none|policy|all",
                help="Which disclosures to publish beside the chain, in "
                "refs/ledger-disclosures/<ledger id> (rewritten every push, so what `ledger "
                "forget` erased leaves the remote): policy (default) the fields hooks.yaml's "
                "disclose: names, by default commands and reasons, no prompt, no file "
                "content; none; all.",
            ),
        ] = "policy",
    ) -> None:
        """Publish this clone's signed evidence (its records and a checkpoint of them) to
        refs/ledger/<ledger id> on REMOTE, as a fast-forward of the previous push, and the
        disclosures --disclose chooses to refs/ledger-disclosures/<ledger id>. The chain holds
        commitments in place of content (prompts, commands, files); a disclosure not chosen
        stays on this machine."""

        def action() -> int:
            from ledger import DISCLOSE_MODES, find_root, push_workspace_evidence  # noqa: PLC0415

            if disclose not in DISCLOSE_MODES:
                raise UsageError(f"--disclose {disclose!r}: use one of {', '.join(DISCLOSE_MODES)}")
            result = push_workspace_evidence(
                find_root(root),
                remote,
                disclose=disclose,
                publish_verbatim_content=publish_verbatim_content,
            )
            shared = f"; {result.disclosed} disclosures ({disclose})" if result.disclosed else ""
            if as_json:
                print(json.dumps(result._asdict(), indent=2, sort_keys=True))
            elif result.status == "current":
                print(f"{remote} already holds {result.ref} ({result.records} records{shared})")
            else:
                print(f"pushed {result.records} records to {remote} {result.ref}{shared}")
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
            from ledger import GovernedWorkspace, fetch_evidence_reading, find_root  # noqa: PLC0415

            where = find_root(root)
            if (where / ".orchestration" / "agent_trace.jsonl").exists():
                fetched = GovernedWorkspace(where).fetch_evidence(remote)
            else:  # a clone that only reads: no ledger, no key needed
                fetched = fetch_evidence_reading(where, remote)
            if as_json:
                print(json.dumps([f._asdict() for f in fetched], indent=2, sort_keys=True))
            elif not fetched:
                print(f"{remote} holds no ledger evidence (refs/ledger/*)")
            for item in [] if as_json else fetched:
                if item.status in ("unverified", "skipped"):
                    # Nothing is wrong with this clone: a teammate's key to pin (docs/team.md).
                    print(item.reason, file=sys.stderr)
                else:
                    shared = f", {item.disclosed} disclosures" if item.disclosed else ""
                    print(
                        f"{item.status}: ledger {item.ledger_id}, {item.records} records, "
                        f"verified{shared}"
                    )
            for warning in (w for item in fetched for w in item.warnings):
                print(warning, file=sys.stderr)
            return OK

        run_action(action)
