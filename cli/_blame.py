"""``ledger blame PATH[:LINE[-END]]``: who wrote each line, under which intent, or why not known."""

import argparse
import json
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Annotated

from cli._exit import OK, UNVERIFIABLE, guarded
from ledger import BlameReport, InputError, blame_file

if TYPE_CHECKING:
    import typer

_RANGE = re.compile(r"^(?P<path>.+?):(?P<first>\d+)(?:-(?P<last>\d+))?$")
_NOT_COMMITTED = "0" * 40
_COLOURS = {"agent": "\x1b[32m", "git": "\x1b[34m", "unknown": "\x1b[33m"}


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    delta = max(0, int(time.time() - seconds))
    for unit, size in (("y", 31_536_000), ("mo", 2_592_000), ("d", 86_400), ("h", 3600), ("m", 60)):
        if delta >= size:
            return f"{delta // size}{unit} ago"
    return f"{delta}s ago"


def _epoch(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return time.mktime(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
    except ValueError:
        return None


def _human(report: BlameReport) -> str:
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    width = len(str(report.lines[-1].line)) if report.lines else 1
    out = []
    for row in report.lines:
        facts = row.facts
        if row.status == "agent":
            ident, who = (
                str(facts.get("record_hash") or "")[:8],
                (
                    f"{facts.get('intent_id') or '-':<8} "
                    f"{str(facts.get('session_id') or '-')[:10]:<10}"
                    f" {str(facts.get('model') or '-')[:16]:<16}"
                ),
            )
            age = _age(_epoch(facts.get("ts")))
        elif row.status == "git":
            ident = str(facts.get("commit"))[:8]
            who = f"{'-':<8} {str(facts.get('author') or '-')[:10]:<10} {'-':<16}"
            age = _age(facts.get("author_time"))
        else:
            ident, who, age = "-" * 8, f"{'-':<8} {'-':<10} {'-':<16}", "-"
        status = f"{row.status:<7}"
        if colour:
            status = f"{_COLOURS[row.status]}{status}\x1b[0m"
        mark = "!" if facts.get("denied") else " "
        out.append(f"{row.line:>{width}} {ident:<8} {status} {who} {age:>8}{mark}| {row.text}")
    summary = report.summary()
    out.append(
        f"-- {report.file}: "
        + ", ".join(
            f"{summary[s]['lines']} {s} ({summary[s]['percent']}%)"
            for s in ("agent", "git", "unknown")
        )
        + ("" if report.at is None else f" (as of seq {report.at})")
    )
    return "\n".join(out)


def _porcelain(report: BlameReport) -> str:
    """git's ``--line-porcelain`` with its field meanings kept; ledger facts in ``x-ledger-*``."""
    out: list[str] = []
    for row in report.lines:
        facts = row.facts
        if row.status == "git":
            out.append(f"{facts['commit']} {facts['orig_line']} {row.line} 1")
            author, when = str(facts.get("author")), facts.get("author_time") or 0
        else:
            # As git prints a working-tree line: no commit, original line = final line.
            out.append(f"{_NOT_COMMITTED} {row.line} {row.line} 1")
            author, when = "Not Committed Yet", 0
        out += [
            f"author {author}",
            f"author-time {when}",
            "author-tz +0000",
            f"committer {author}",
            f"committer-time {when}",
            "committer-tz +0000",
            f"x-ledger-status {row.status}",
            f"x-ledger-content-hash {row.content_hash}",
        ]
        for key, value in sorted(facts.items()):
            if key in ("commit", "orig_line", "author", "author_time", "denied") or value is None:
                continue
            out.append(f"x-ledger-{key.replace('_', '-')} {value}")
        if facts.get("denied"):
            out.append("x-ledger-denied " + json.dumps(facts["denied"], sort_keys=True))
        out.append(f"filename {facts.get('orig_file') or report.file}")
        out.append(f"\t{row.text}")
    return "\n".join(out)


def run(
    target: str,
    *,
    at: int | None = None,
    porcelain: bool = False,
    as_json: bool = False,
    root: str | None = None,
) -> int:
    """Blame ``target`` and print it; returns the exit code."""

    def action() -> int:
        path, lines = target, None
        match = _RANGE.match(target)
        if match and not os.path.exists(target):  # noqa: PTH110 -- a file may contain ':'
            path = match["path"]
            first = int(match["first"])
            lines = (first, int(match["last"] or first))
        try:
            report = blame_file(path, root=root, lines=lines, at=at)
        except InputError as exc:  # a bad path or range is bad usage (exit 2)
            print(f"ledger: error: {exc}", file=sys.stderr)
            return UNVERIFIABLE
        if as_json:
            print(json.dumps(report.to_json(), indent=2, sort_keys=True))
        elif porcelain:
            print(_porcelain(report))
        else:
            print(_human(report))
        return OK

    return guarded(action)


_HELP = (
    "Who wrote each line: agent (the tool call, intent, session, model), git (unchanged "
    "since a commit) or unknown (with the reason). A gap is acceptable, a "
    "misattribution is not."
)


def main(argv: list[str]) -> int:
    """``ledger blame`` without Typer: it is run interactively and from editors, where start-up
    time is the whole wall time (bench/bench_blame.py compares it with ``git blame -L``)."""
    parser = argparse.ArgumentParser(prog="ledger blame", description=_HELP)
    parser.add_argument("target", metavar="PATH[:LINE[-END]]")
    parser.add_argument(
        "--at", type=int, metavar="SEQ", help="the line model as of a record (no disk, no git)"
    )
    parser.add_argument(
        "--porcelain",
        action="store_true",
        help="git blame --line-porcelain fields, ledger facts as x-ledger-* keys",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="schemas/blame.v1.schema.json"
    )
    parser.add_argument("--root", default=os.environ.get("LEDGER_ROOT"), help="workspace root")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if args.at is not None and args.at < 0:
        print("ledger: error: --at must be >= 0", file=sys.stderr)
        return UNVERIFIABLE
    return run(
        args.target, at=args.at, porcelain=args.porcelain, as_json=args.as_json, root=args.root
    )


def register(app: "typer.Typer") -> None:
    """Add ``blame`` to the Typer app (for ``ledger --help``; runs are dispatched to
    :func:`main` by ``cli._entry``)."""
    import typer  # noqa: PLC0415

    # No `from __future__ import annotations` in this module: Typer evaluates these
    # annotations, and `typer` is only a local name here.
    @app.command(name="blame", help=_HELP)
    def blame(
        target: Annotated[str, typer.Argument(metavar="PATH[:LINE[-END]]")],
        at: Annotated[
            int | None,
            typer.Option(
                "--at",
                min=0,
                metavar="SEQ",
                help=("The line model as of a record (no disk, no git)."),
            ),
        ] = None,
        porcelain: Annotated[
            bool,
            typer.Option(
                "--porcelain",
                help=("git blame --line-porcelain fields, ledger facts as x-ledger-* keys."),
            ),
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help=("schemas/blame.v1.schema.json."))
        ] = False,
        root: Annotated[
            str | None, typer.Option("--root", envvar="LEDGER_ROOT", help="Workspace root.")
        ] = None,
    ) -> None:
        code = run(target, at=at, porcelain=porcelain, as_json=as_json, root=root)
        if code != OK:
            raise typer.Exit(code)
