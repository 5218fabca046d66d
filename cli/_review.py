"""``ledger review [RANGE]``: a git range as the evidence sees it, for a reviewer or a CI gate."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli._exit import EXIT_CODES_HELP, INTEGRITY, OK, UsageError
from cli._options import JsonOption, RootOption, run_action
from ledger import (
    GROUPINGS,
    build_review,
    no_agent_line,
    parse_fail_on,
    render_review_html,
    render_review_markdown,
    render_review_sarif,
    render_review_text,
    review_failures,
)

__all__ = ["register"]

_HELP = """Review a git range (BASE..HEAD; default: the merge base with the upstream, else with
the remote's default branch, up to HEAD): the lines it adds or changes by blame status (agent,
git, unknown) with each agent line's client, model, intent, session and ledger; the intents and
whether each agent line lay inside the scope its session held; what governance refused or
asked on the way; and whether the evidence verifies. Evidence that does not verify never
counts as agent.

--fail-on takes a comma-separated list: unverified, tamper, out-of-scope, hook-error,
unknown>N%, agent>N%; exit 1 when one holds."""


def review(
    spec: Annotated[
        str | None, typer.Argument(metavar="RANGE", help="BASE..HEAD, BASE...HEAD or BASE.")
    ] = None,
    as_json: JsonOption = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="A pull-request comment (under 65,536 characters).")
    ] = False,
    sarif: Annotated[
        bool, typer.Option("--sarif", help="SARIF 2.1.0 for code-scanning annotations.")
    ] = False,
    fail_on: Annotated[
        str | None,
        typer.Option("--fail-on", help="Exit 1 when one holds, e.g. unverified,agent>80%."),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Also the shares by week, intent, model, client or author."),
    ] = None,
    root: RootOption = None,
) -> None:
    def action() -> int:
        if sum((as_json, markdown, sarif)) > 1:
            raise UsageError("choose one of --json, --markdown, --sarif\nhint: ledger review -h")
        _check_by(by)
        try:
            conditions = parse_fail_on(fail_on or "")
        except ValueError as exc:
            raise UsageError(f"{exc}\nhint: ledger review -h") from None
        # The comment and SARIF never name a git line's commit: git need not be asked for it.
        data = build_review(spec, root=root, by=by, git_facts=not (markdown or sarif))
        if as_json:
            print(json.dumps(data, indent=2, sort_keys=True))
        elif markdown:
            sys.stdout.write(render_review_markdown(data))
        elif sarif:
            print(json.dumps(render_review_sarif(data), indent=2))
        else:
            for line in render_review_text(data):
                print(line)
        held = review_failures(data, conditions)
        if held:
            print(f"ledger review: failed on {'; '.join(held)}", file=sys.stderr)
            return INTEGRITY
        empty = no_agent_line(data)
        if not data["files"]:
            print(f"ledger review: {data['range']['spec']} changes no files", file=sys.stderr)
        elif empty is not None:
            print(f"ledger review: {empty}", file=sys.stderr)
        return OK

    run_action(action)


def review_report(
    spec: str,
    *,
    by: str | None,
    out: Path | None,
    force: bool,
    as_json: bool,
    root: str | None,
) -> int:
    """``ledger report --range``: the review as a page (``--out DIR``), or as the terminal
    table, or its data (``--json``)."""
    from cli._query import check_report_dir, write_report_dir  # noqa: PLC0415

    _check_by(by)
    if out is not None:
        check_report_dir(out, force=force)
    data = build_review(spec, root=root, by=by)
    if out is not None:
        write_report_dir(out, render_review_html(data))
    if as_json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        for line in render_review_text(data):
            print(line)
        if out is not None:
            print(f"\nwrote {out / 'report.html'}")
    return OK


def _check_by(by: str | None) -> None:
    if by is not None and by not in GROUPINGS:
        raise UsageError(f"--by {by!r}: use one of {', '.join(GROUPINGS)}\nhint: ledger review -h")


def register(app: typer.Typer) -> None:
    """Add ``ledger review`` to ``app``."""
    app.command(help=_HELP, epilog=EXIT_CODES_HELP)(review)
