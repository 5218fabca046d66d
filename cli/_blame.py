"""``ledger blame PATH[:LINE[-END]]``: who wrote each line, under which intent, or why not known.

Run interactively and from editors, where start-up is most of the wall time (decision 0008: within
``git blame -L N,N``; ``bench/bench_blame.py``): no Typer, and argparse only for ``--help`` and
for what the few-line parser of the usual invocations leaves to it (it also words the errors).
"""

import os
import re
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

from cli._exit import OK, UNVERIFIABLE, NotServedError, exit_code_for, guarded
from ledger import BlameReport, InputError, LedgerError, blame_file

if TYPE_CHECKING:
    import argparse

    import typer

    from ledger import CommandCall

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
    """Seconds since the epoch of a record's RFC 3339 UTC ``ts`` (no ``time.strptime``: its
    import costs more than the rest of a one-line blame)."""
    if not ts or len(ts) < 19 or ts[4] + ts[7] + ts[10] + ts[13] + ts[16] != "--T::":
        return None
    try:
        year, month, day = int(ts[0:4]), int(ts[5:7]), int(ts[8:10])
        hour, minute, second = int(ts[11:13]), int(ts[14:16]), int(ts[17:19])
    except ValueError:
        return None
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    # days from 1970-01-01 to year-month-day (proleptic Gregorian; H. Hinnant's days_from_civil)
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days = era * 146_097 + day_of_era - 719_468
    return float(days * 86_400 + hour * 3600 + minute * 60 + second)


def _human(report: BlameReport, *, colour: bool) -> str:
    width = len(str(report.lines[-1].line)) if report.lines else 1
    # A teammate's agent line (blame in any clone) shows whose ledger: agent@<short id>.
    # A line a fetched ledger that does not verify here claims says so: never agent, not git.
    labels = [
        f"agent@{str(row.facts['ledger_id'])[:4]}"
        if row.status == "agent" and row.facts.get("ledger_id") not in (None, report.ledger_id)
        else "unverified"
        if row.facts.get("unverified")
        else row.status
        for row in report.lines
    ]
    label_width = max([7, *map(len, labels)])
    out = []
    for row, label in zip(report.lines, labels, strict=True):
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
        status = f"{label:<{label_width}}"
        if colour:
            status = f"{_COLOURS[row.status]}{status}\x1b[0m"
        mark = "!" if facts.get("denied") else " "
        out.append(f"{row.line:>{width}} {ident:<8} {status} {who} {age:>8}{mark}| {row.text}")
    summary = report.summary()
    unverified = summary["unverified"]["lines"]
    out.append(
        f"-- {report.file}: "
        + ", ".join(
            f"{summary[s]['lines']} {s} ({summary[s]['percent']}%)"
            for s in ("agent", "git", "unknown")
        )
        + (f", {unverified} of them unverified" if unverified else "")
        + ("" if report.at is None else f" (as of seq {report.at})")
    )
    # Each broken ledger's reason once: what does not verify, and the command that fixes it.
    reasons = dict.fromkeys(
        str(r.facts["reason"]) for r in report.lines if r.facts.get("unverified")
    )
    out.extend(f"-- unverified: {reason}" for reason in reasons)
    return "\n".join(out)


def _porcelain(report: BlameReport) -> str:
    """git's ``--line-porcelain`` with its field meanings kept; ledger facts in ``x-ledger-*``."""
    out: list[str] = []
    for row in report.lines:
        facts = row.facts
        if facts.get("commit"):  # git's lines, and a teammate's agent lines (committed)
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
            if isinstance(value, str) and ("\n" in value or "\r" in value):
                import json  # noqa: PLC0415

                value = json.dumps(value)  # noqa: PLW2901 -- one header line (a shell command)
            name = "id" if key == "ledger_id" else key.replace("_", "-")
            out.append(f"x-ledger-{name} {value}")
        if facts.get("denied"):
            import json  # noqa: PLC0415

            out.append("x-ledger-denied " + json.dumps(facts["denied"], sort_keys=True))
        out.append(f"filename {facts.get('orig_file') or report.file}")
        out.append(f"\t{row.text}")
    return "\n".join(out)


def blame_text(
    target: str,
    *,
    at: int | None = None,
    porcelain: bool = False,
    as_json: bool = False,
    root: str | None = None,
    colour: bool = False,
    cwd: str | None = None,
    environ: dict[str, str] | None = None,
) -> str:
    """What ``ledger blame`` prints for ``target``, for a caller in ``cwd`` (default: here).

    Raises:
        LedgerError: as :func:`ledger.blame_file` (InputError: bad path or range).
    """
    path, lines = target, None
    match = _RANGE.match(target)
    if match and not os.path.exists(os.path.join(cwd or "", target)):  # noqa: PTH110, PTH118 -- a file may contain ':'
        path = match["path"]
        first = int(match["first"])
        lines = (first, int(match["last"] or first))
    report = blame_file(path, root=root, lines=lines, at=at, environ=environ, cwd=cwd)
    if as_json:
        import json  # noqa: PLC0415

        return json.dumps(report.to_json(), indent=2, sort_keys=True)
    return _porcelain(report) if porcelain else _human(report, colour=colour)


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
        try:
            text = blame_text(
                target,
                at=at,
                porcelain=porcelain,
                as_json=as_json,
                root=root,
                colour=sys.stdout.isatty() and not os.environ.get("NO_COLOR"),
            )
        except InputError as exc:  # a bad path or range is bad usage (exit 2)
            print(f"ledger: error: {exc}", file=sys.stderr)
            return UNVERIFIABLE
        print(text, flush=True)  # a reader gone early (`| head`): cli/_entry.py
        return OK

    return guarded(action)


def served(call: "CommandCall") -> tuple[int, str, str]:
    """``ledger blame`` run by the resident decider for a caller (``cli/_serve.py`` registers
    it): the same text and exit code as :func:`main` in the caller's own process, from an
    interpreter that has everything imported (decision 0014; ``bench/bench_blame.py --small``).

    Raises:
        NotServedError: not one of the usual invocations (help, a usage error): the caller
            runs it itself, and argparse words it.
    """
    values = fast_parse(call.args, call.environ)
    if values is None:
        raise NotServedError("ledger blame: left to the caller")
    try:
        text = blame_text(
            values["target"],
            at=values["at"],
            porcelain=values["porcelain"],
            as_json=values["as_json"],
            root=values["root"],
            colour=call.tty and not call.environ.get("NO_COLOR"),
            cwd=call.cwd,
            environ=call.environ,
        )
    except InputError as exc:
        return UNVERIFIABLE, "", f"ledger: error: {exc}\n"
    except LedgerError as exc:
        return exit_code_for(exc), "", f"ledger: error: {exc}\n"
    return OK, text + "\n", ""


_HELP = (
    "Who wrote each line: agent (the tool call, intent, session, model), git (unchanged "
    "since a commit) or unknown (with the reason). A gap is acceptable, a "
    "misattribution is not."
)


#: ``ledger blame``'s options (flag -> (metavar, or None for a flag; help)), their one
#: declaration: :func:`fast_parse` and :func:`parser` read them, and :func:`register` declares
#: the Typer command (``--help``, completion) from them.
OPTIONS: dict[str, tuple[str | None, str]] = {
    "--at": ("SEQ", "The line model as of a record (no disk, no git)."),
    "--porcelain": (None, "git blame --line-porcelain fields, ledger facts as x-ledger-* keys."),
    "--json": (None, "schemas/blame.v1.schema.json."),
    "--root": ("DIR", "Workspace root."),
}
_DEST = {"--json": "as_json"}
_FLAGS = {flag: _DEST.get(flag, flag[2:]) for flag, (metavar, _) in OPTIONS.items() if not metavar}
_VALUED = {flag: _DEST.get(flag, flag[2:]) for flag, (metavar, _) in OPTIONS.items() if metavar}


def fast_parse(argv: list[str], environ: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The usual invocations (``PATH[:N]``, ``--json``, ``--porcelain``, ``--at N``, ``--root
    R``, each at most once) as :func:`parser` would parse them; ``None`` for anything else
    (help, abbreviations, ``--``, errors), which :func:`parser` then parses and words."""
    values: dict[str, Any] = {
        "target": None,
        "at": None,
        "porcelain": False,
        "as_json": False,
        "root": (os.environ if environ is None else environ).get("LEDGER_ROOT"),
    }
    seen: set[str] = set()
    items = iter(argv)
    for arg in items:
        name, equals, value = arg.partition("=")
        if arg in _FLAGS and arg not in seen:
            values[_FLAGS[arg]] = True
        elif name in _VALUED and name not in seen:
            if not equals:
                value = next(items, "-")
            if value.startswith("-") or not value:
                return None
            values[_VALUED[name]] = value
        elif not arg.startswith("-") and values["target"] is None:
            values["target"] = arg
        else:
            return None
        seen.add(name)
    at = values["at"]
    if values["target"] is None or (at is not None and not (at.isascii() and at.isdigit())):
        return None
    values["at"] = None if at is None else int(at)
    return values


def parser() -> "argparse.ArgumentParser":
    """``ledger blame``'s full command-line parser."""
    from cli._log import CommandParser  # noqa: PLC0415 -- see the module docstring

    parser = CommandParser(prog="ledger blame", description=_HELP)
    parser.add_argument("target", metavar="PATH[:LINE[-END]]")
    for flag, (metavar, help_text) in OPTIONS.items():
        dest = _DEST.get(flag, flag[2:])
        if metavar is None:
            parser.add_argument(flag, action="store_true", dest=dest, help=help_text)
        elif flag == "--at":
            parser.add_argument(flag, type=int, metavar=metavar, help=help_text)
        else:
            default = os.environ.get("LEDGER_ROOT")
            parser.add_argument(flag, metavar=metavar, default=default, help=help_text)
    return parser


def main(argv: list[str]) -> int:
    """``ledger blame`` without Typer (see the module docstring)."""
    values = fast_parse(argv)
    if values is None:
        parsed: dict[str, Any] = {}

        def parse() -> int:  # a usage error is one line and a hint, as for every command
            parsed.update(vars(parser().parse_args(argv)))
            return OK

        try:
            if guarded(parse) != OK:
                return 2
        except SystemExit as exc:  # --help
            return int(exc.code or 0)
        values = parsed
    if values["at"] is not None and values["at"] < 0:
        print("ledger: error: --at must be >= 0", file=sys.stderr)
        return UNVERIFIABLE
    return run(
        values["target"],
        at=values["at"],
        porcelain=values["porcelain"],
        as_json=values["as_json"],
        root=values["root"],
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
            typer.Option("--at", min=0, metavar=OPTIONS["--at"][0], help=OPTIONS["--at"][1]),
        ] = None,
        porcelain: Annotated[
            bool, typer.Option("--porcelain", help=OPTIONS["--porcelain"][1])
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help=OPTIONS["--json"][1])] = False,
        root: Annotated[
            str | None, typer.Option("--root", envvar="LEDGER_ROOT", help=OPTIONS["--root"][1])
        ] = None,
    ) -> None:
        code = run(target, at=at, porcelain=porcelain, as_json=as_json, root=root)
        if code != OK:
            raise typer.Exit(code)
