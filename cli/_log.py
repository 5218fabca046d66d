"""``ledger log`` and ``ledger show``: what happened, one line per record; one record in full.

Interactive commands, so they skip Typer (and with it pydantic, ~100 ms): ``cli._entry``
dispatches them here, and the Typer app registers the same commands (for the command list and
shell completion) with the same options, which a test keeps in step with :func:`log_parser`.

One line per record::

    seq  MM-DD HH:MM:SS (UTC)  session  tool  target  decision  code  reason

Long values are shortened at a word (or path) boundary, never in the middle of a word. Colour
only on a terminal, and never when ``NO_COLOR`` is set (https://no-color.org).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NamedTuple, NoReturn

from cli._exit import OK, NotServedError, UsageError, guarded

if TYPE_CHECKING:
    from collections.abc import Callable

    from _typeshed import SupportsWrite

    from ledger import CommandCall, Revealer

#: The kinds ledger itself writes; application kinds are whatever ``ledger append`` recorded.
KNOWN_KINDS: Final = (
    "ledger.genesis",
    "ledger.repaired",
    "key.rotated",
    "key.revoked",
    "hook.pre",
    "hook.post",
    "hook.event",
    "hook.error",
    "intent.selected",
    "intent.cleared",
    "intent.scope_expanded",
    "intent.scope_withdrawn",
    "key.added",
    "governance.config_changed",
    "governance.tamper",
    "governance.tamper_accepted",
    "governance.tamper_reverted",
    "governance.tripwire_armed",
    "governance.evidence_refused",
    "ledger.forgotten",
)
DECISIONS: Final = ("deny", "ask", "allow")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_TARGET_WIDTH: Final = 32
_PIPE_TARGET_WIDTH: Final = 60
_CORRELATE_LIMIT: Final = 4096  # pre-call targets remembered to label the post-call records
_FOLLOW_INTERVAL: Final = 0.2
_COLORS: Final = {
    "deny": "31",
    "failed": "31",
    "ask": "33",
    "allow": "32",
    "done": "32",
    "dim": "2",
    "code": "1",
}


class CommandParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line plus a hint instead of the usage block."""

    #: Parsing for a caller of the resident decider: anything argparse would print itself
    #: (help, usage) is left to the caller's own process.
    for_caller = False

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if self.for_caller:
            raise NotServedError(self.prog)
        super()._print_message(message, file)

    def completions(self, previous: str | None, incomplete: str) -> list[str]:
        """What shell completion offers for the word ``incomplete`` after ``previous``: the
        options (once a dash is typed), or the values of an option with fixed choices
        (``--decision de``)."""
        out = []
        for action in self._actions:
            if incomplete.startswith("-"):
                out += [o for o in action.option_strings if o.startswith(incomplete)]
            elif previous in action.option_strings and action.choices is not None:
                out += [c for c in map(str, action.choices) if c.startswith(incomplete)]
        return out

    def error(self, message: str) -> NoReturn:
        extra = message.removeprefix("unrecognized arguments: ")
        if extra != message and extra.startswith("-"):
            message = f"No such option: {extra}"  # as Click words it for the other commands
        raise UsageError(f"{message}\nhint: {self.prog} --help")


class Output(NamedTuple):
    """Where a command prints, and whose terminal, directory and environment it answers for:
    this process's (:func:`this_process`), or a caller's the resident decider answers for
    (``cli/_entry.py``: ``log``, ``show``, ``intent list``)."""

    stream: IO[str]
    environ: Mapping[str, str]
    tty: bool
    #: the terminal's width as the caller's stdout reports it (0: unknown)
    terminal_columns: int
    #: the directory relative paths and the workspace search start from (None: this process's)
    cwd: str | None = None

    @property
    def color(self) -> bool:
        """Colour on a terminal only, and never with ``NO_COLOR`` set (to anything non-empty)."""
        env = self.environ
        return self.tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"  # no-color.org

    @property
    def width(self) -> int:
        """The terminal's width on a terminal (``$COLUMNS`` first, as ``shutil`` reads it),
        else ``$COLUMNS`` when set, else 0 (no terminal: no width to fit)."""
        columns = self.environ.get("COLUMNS", "")
        if self.tty:
            wanted = int(columns) if columns.strip().lstrip("-").isdigit() else 0
            return wanted if wanted > 0 else self.terminal_columns or 80
        return int(columns) if columns.isdigit() else 0


def this_process(out: IO[str] | None = None) -> Output:
    """This process's stdout (or ``out``), environment and directory."""
    stream = out or sys.stdout
    if stream is sys.stdout and hasattr(stream, "reconfigure"):
        # A terminal in another encoding (latin-1) gets `?` for what it cannot show (`…`),
        # never a traceback.
        stream.reconfigure(errors="replace")
    isatty = getattr(stream, "isatty", None)
    tty = bool(isatty and isatty())
    columns = 0
    stdout = sys.__stdout__
    if tty and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns  # as shutil does
        except (AttributeError, ValueError, OSError):
            columns = 0
    return Output(stream, os.environ, tty, columns)


# --- what a record says ---------------------------------------------------------------------


class Summary(NamedTuple):
    """The columns of one log line (all plain strings; ``""`` when not applicable)."""

    seq: int
    ts: str
    session: str
    what: str
    target: str
    decision: str
    code: str
    reason: str


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _relative(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def tool_target(tool_input: Mapping[str, Any], cwd: str = "") -> str:
    """What a tool call acts on: its file (relative to ``cwd``), command, pattern or URL."""
    for key in ("file_path", "notebook_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return _relative(value, cwd)
    for key in ("command", "pattern", "url", "query", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return _text(value)
    return ""


def _intent_of(body: Mapping[str, Any]) -> str:
    for source in (body, _dict(body.get("data")), _dict(_dict(body.get("error")).get("meta"))):
        value = source.get("intent_id")
        if isinstance(value, str):
            return value
    return ""


def _key_columns(kind: str, body: Mapping[str, Any]) -> tuple[str, str]:
    """Target and reason of the ledger's own key and repair records."""
    old, new, kid = _text(body.get("old_key")), _text(body.get("new_key")), _text(body.get("key"))
    if kind == "key.rotated":
        return f"{old or '?'} -> {new or '?'}", ""
    if kind == "key.revoked":
        since = body.get("from_seq")
        return (
            f"{_text(body.get('kid')) or kid}{f' from seq {since}' if since is not None else ''}",
            "",
        )
    if kind == "ledger.genesis":
        forked = _dict(body.get("forked_from"))
        fork = (
            f"forked from {_text(forked.get('ledger_id'))} at seq {forked.get('seq')}"
            if forked
            else ""
        )
        return f"key {kid}" if kid else "", fork
    removed = body.get("removed_bytes")
    return _text(body.get("quarantine_file")), (
        f"{removed} torn byte(s) quarantined" if removed is not None else ""
    )


def _tripwire_columns(kind: str, body: Mapping[str, Any]) -> tuple[str, str, str]:
    """Target, decision and reason of the tripwire's records (ledger/_hooks/tripwire.py)."""
    if kind == "governance.tamper":
        problems = body.get("problems")
        first = _text(problems[0]) if isinstance(problems, list) and problems else ""
        return first, "deny", "every call denied until `ledger tamper accept|revert`"
    if kind == "governance.tripwire_armed":
        return f"{body.get('files')} protected file(s) sealed", "", ""
    files = body.get("files")
    count = len(files) if isinstance(files, list) else 0
    tamper = body.get("tamper_seq")
    replaced = body.get("replaced_ledger")
    why = [f"resolves seq {tamper}"] if tamper is not None else []
    if replaced:
        why.append(f"replaces ledger {_text(replaced)}")
    return f"{count} protected file(s)", "", "; ".join(why)


def summarize(data: Mapping[str, Any], targets: Mapping[str, str] | None = None) -> Summary:
    """The log columns of one record (``data`` is the parsed record).

    ``targets`` maps invocation ids to the target of their pre-call record, so that a post-call
    record, which does not repeat the tool input, is labelled with the same file or command.
    """
    body = _dict(data.get("body"))
    actor = _dict(data.get("actor"))
    kind = str(data.get("kind", ""))
    session = actor.get("session") or body.get("session")
    error = _dict(body.get("error"))
    code = str(error.get("code") or "")
    reason = _text(error.get("message")) or _text(body.get("reason"))
    cwd = str(body.get("cwd") or "")
    if cwd:  # paths in reasons read as the target does: relative to where the agent ran
        reason = reason.replace(cwd.rstrip("/") + "/", "")
    if code and reason.startswith(code.split("_", maxsplit=1)[0] + ":"):
        reason = reason.partition(":")[2].strip()  # "DESTRUCTIVE: rm ..." under its code
    what, target, decision = kind, "", ""
    if kind.startswith("hook."):
        what = str(body.get("tool") or body.get("client_event") or body.get("event") or kind)
        target = tool_target(_dict(body.get("tool_input")), cwd)
        decision = str(body.get("decision") or "")
        if kind == "hook.post":
            # Format 2 keeps what changed in attribution.files and what was read in observed;
            # format 1 kept them in data (changed, seen).
            data_ = _dict(body.get("data"))
            files = _dict(body.get("attribution")).get("files")
            changed = (
                (
                    [f.get("path") for f in files if isinstance(f, dict)]
                    if isinstance(files, list)
                    else None
                )
                or data_.get("changed")
                or list(_dict(body.get("observed")) or _dict(data_.get("seen")))
            )
            target = (targets or {}).get(str(body.get("invocation")), "") or (
                _text(changed[0]) if isinstance(changed, list) and changed else ""
            )
            if decision != "deny":
                decision = "failed" if body.get("outcome") == "failure" else "done"
            reason = reason or _text(body.get("tool_error"))
        elif kind == "hook.event":
            target = (
                _text(body.get("prompt"))
                or _text(body.get("source"))
                or _text(body.get("event_reason"))
            )
            if decision == "allow" and not code:
                decision = ""  # an observed event decides nothing
        elif kind == "hook.error":
            what, reason = "hook error", _text(body.get("message"))
    elif kind.startswith("intent."):
        target = _intent_of(body)
        globs = body.get("globs")
        if isinstance(globs, list):
            target += " " + " ".join(str(glob) for glob in globs)
        via = body.get("via") or body.get("approved_via")
        reason = reason or (f"via {via}" if via else "")
    elif kind in ("key.rotated", "key.revoked", "ledger.genesis", "ledger.repaired"):
        target, reason = _key_columns(kind, body)
    elif kind.startswith("governance.tamper") or kind == "governance.tripwire_armed":
        target, decision, reason = _tripwire_columns(kind, body)
    else:
        reason = reason or json.dumps(body, sort_keys=True, ensure_ascii=False)
    return Summary(
        int(data.get("seq", -1)),
        str(data.get("ts", "")),
        str(session or ""),
        what,
        target.strip(),
        decision,
        code,
        reason,
    )


# --- shortening, never mid-word ---------------------------------------------------------------


def shorten(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters: cut at the last space that fits and
    end with ``…``; a first word longer than ``width`` is the one thing cut inside (it still
    ends with ``…``), so a column never pushes the next one out of line."""
    text = " ".join(text.split())
    if width <= 0 or len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width)  # text[:cut] + "…" has at most width characters
    kept = text[:cut].rstrip(" ,;:") if cut > 0 else ""
    return (kept or text[: width - 1]) + "…"


def shorten_path(text: str, width: int) -> str:
    """A path (or a command) within ``width``: a path keeps its last components
    (``…/middleware/jwt.ts``), cut at ``/`` where one fits; anything else goes to
    :func:`shorten`."""
    text = " ".join(text.split())
    if width <= 0 or len(text) <= width:
        return text
    if " " in text or "/" not in text:
        return shorten(text, width)
    start = text.find("/")
    while start != -1:
        if len(text) - start + 1 <= width:
            return "…" + text[start:]
        start = text.find("/", start + 1)
    return shorten(text, width)


def tool_label(tool: str) -> str:
    """An MCP tool's name without its transport's prefix: ``mcp__ledger__list_intents``,
    ``mcp_ledger_list_intents`` (Gemini CLI) and ``MCP:ledger:list_intents`` (Cursor) all read
    ``ledger:list_intents``."""
    for prefix, separator in (("mcp__", "__"), ("MCP:", ":")):
        if tool.startswith(prefix) and separator in tool[len(prefix) :]:
            return tool[len(prefix) :].replace(separator, ":", 1)
    return tool


# --- rendering ------------------------------------------------------------------------------


def color_enabled(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal only, and never with ``NO_COLOR`` set (:attr:`Output.color`)."""
    isatty = getattr(stream, "isatty", None)
    tty = bool(isatty and isatty())
    return Output(stream, os.environ if environ is None else environ, tty, 0).color


def _paint(text: str, style: str, color: bool) -> str:
    code = _COLORS.get(style)
    return f"\x1b[{code}m{text}\x1b[0m" if color and code and text else text


def _pad(text: str, width: int) -> str:
    return text + " " * (width - len(text))


class Layout(NamedTuple):
    """Column widths for a batch of lines (``width`` 0: no limit, as in a pipe)."""

    seq: int
    what: int
    target: int
    decision: int
    code: int
    width: int
    #: ``MM-DD HH:MM:SS`` (14) or, in a narrow terminal, ``MM-DD HH:MM`` (11)
    ts: int = 14


#: Columns given up, in this order, until a line leaves the reason its room: (column, narrowest
#: width). The target's tail goes first, then the date (``HH:MM:SS`` when every line is of one
#: day, else ``MM-DD HH:MM``), the tool's name and the code; the seq, session and decision are
#: never cut. ``ledger show`` has every value whole.
_SHRINK: Final = (
    ("target", 24),
    ("ts", 8),
    ("what", 12),
    ("code", 19),
    ("target", 16),
    ("code", 15),
    ("what", 8),
    ("target", 12),
    ("code", 11),
)
_REASON_MIN: Final = 12  # a narrower reason says nothing: the column is left out
_SESSION: Final = 8


def layout_for(rows: Iterable[Summary], width: int) -> Layout:
    """Widths that fit ``rows`` in ``width`` columns: each column as wide as its longest value,
    within bounds, then narrowed in the order of :data:`_SHRINK` until the reason has a third of
    the line (at least 20 columns) or nothing more can give."""
    rows = list(rows)
    natural = {
        "seq": max((len(str(r.seq)) for r in rows), default=1),
        "what": min(max((len(tool_label(r.what)) for r in rows), default=0), 16),
        "target": min(
            max((len(r.target) for r in rows), default=0),
            _TARGET_WIDTH if width else _PIPE_TARGET_WIDTH,
        ),
        "decision": max((len(r.decision) for r in rows), default=0),
        "code": min(max((len(r.code) for r in rows), default=0), 26),
        "ts": 14,
    }
    if width:
        one_day = len({r.ts[:10] for r in rows}) <= 1
        wanted = max(20, width // 3) if any(r.reason for r in rows) else 0
        for column, narrowest in _SHRINK:
            if _fixed_width(natural) + wanted <= width:
                break
            natural[column] = min(natural[column], narrowest if column != "ts" or one_day else 11)
    return Layout(width=width, **natural)


def _fixed_width(columns: Mapping[str, int]) -> int:
    """Characters before the reason: every column and the space after it."""
    return sum(columns[c] for c in ("seq", "ts", "what", "target", "decision", "code")) + (
        _SESSION + 7
    )


def format_line(row: Summary, layout: Layout, *, color: bool = False) -> str:
    """One aligned log line within ``layout.width`` (never wrapped: what does not fit ends in
    ``…``); the reason takes what is left of the terminal width."""
    stamp = row.ts[5:19].replace("T", " ")  # MM-DD HH:MM:SS; `ledger show` has the year
    what, target = tool_label(row.what), row.target
    if layout.width:
        what = shorten(what, layout.what)
        target = shorten_path(target, layout.target)
        code = shorten(row.code, layout.code)
    else:  # a pipe: nothing is cut but the target
        target, code = shorten_path(target, layout.target), row.code
    fixed = [
        str(row.seq).rjust(layout.seq),
        _paint(stamp[6:] if layout.ts == 8 else stamp[: layout.ts], "dim", color),
        (row.session[:_SESSION] or "-").ljust(_SESSION),
        _pad(what, layout.what),
        _pad(target, layout.target),
        _paint(_pad(row.decision, layout.decision), row.decision, color),
        _paint(_pad(code, layout.code), "code", color),
    ]
    if not layout.width:
        return " ".join([*fixed, " ".join(row.reason.split())]).rstrip()
    used = (
        layout.seq
        + layout.ts
        + _SESSION
        + max(len(what), layout.what)
        + max(len(target), layout.target)
        + layout.decision
        + max(len(code), layout.code)
        + 7
    )
    room = layout.width - used
    reason = shorten(row.reason, room) if room >= _REASON_MIN else ""
    return " ".join([*fixed, reason]).rstrip()


# --- options, filters -----------------------------------------------------------------------


def _since_bound(text: str, now: float | None = None) -> str:
    """The RFC 3339 lower bound of ``--since``: ``30m``, ``2h``, ``3d``, ``1w`` ago, or a date
    or time (``2026-11-21``, ``2026-11-21T10:00``, ``2026-11-21 10:00:00``; UTC)."""
    raw = text.strip()
    if len(raw) >= 2 and raw[-1] in _UNITS and raw[:-1].isdigit():
        seconds = (time.time() if now is None else now) - int(raw[:-1]) * _UNITS[raw[-1]]
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    import datetime as dt  # noqa: PLC0415 - only for an absolute --since

    try:
        parsed = dt.datetime.fromisoformat(raw.removesuffix("Z").replace(" ", "T"))
    except ValueError:
        raise UsageError(
            f"--since {text!r}: use a duration (30m, 2h, 3d, 1w) or a UTC date/time "
            "(2026-11-21, 2026-11-21T10:00)\nhint: ledger log --help"
        ) from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


class LogOptions(NamedTuple):
    """Options of ``ledger log``."""

    limit: int = 20
    kinds: tuple[str, ...] = ()
    session: str | None = None
    intent: str | None = None
    decision: str | None = None
    code: str | None = None
    tool: str | None = None
    since: str | None = None
    follow: bool = False
    root: str | None = None
    as_json: bool = False
    ledger: str | None = None
    """A teammate's fetched ledger (``origin/<ledger id>``) in place of this clone's own."""

    @property
    def filtered(self) -> bool:
        """Whether any filter is set (else the tail of the file is enough)."""
        return bool(
            self.kinds
            or self.session
            or self.intent
            or self.decision
            or self.code
            or self.tool
            or self.since
        )


def _kind_matches(kind: str, wanted: tuple[str, ...]) -> bool:
    return not wanted or any(
        kind == w or (w.endswith(".*") and kind.startswith(w[:-1])) for w in wanted
    )


def matches(data: Mapping[str, Any], row: Summary, options: LogOptions, since: str | None) -> bool:
    """Whether a record passes every filter of ``options``."""
    body = _dict(data.get("body"))
    if not _kind_matches(str(data.get("kind", "")), options.kinds):
        return False
    if options.session and not row.session.startswith(options.session):
        return False
    if options.intent and _intent_of(body).lower() != options.intent.lower():
        return False
    if options.decision and row.decision != options.decision:
        return False
    if options.code and row.code.lower() != options.code.lower():
        return False
    if options.tool and str(body.get("tool") or "").lower() != options.tool.lower():
        return False
    return not (since and row.ts[:19] < since)


def log_parser() -> CommandParser:
    """The options of ``ledger log``."""
    parser = CommandParser(
        prog="ledger log",
        description="Show recent records, one line each: time (UTC), session, tool, target, "
        "decision, code, reason. Not verified: run `ledger verify` for that.",
        epilog="Examples: ledger log --decision deny; ledger log --session 3f1c --since 1h; "
        "ledger log -f; ledger show SEQ for one record in full.",
    )
    parser.add_argument(
        "-n",
        "--count",
        type=_positive,
        default=20,
        help="How many records (the most recent that match; default 20).",
    )
    parser.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="KIND",
        help="Only records of this kind (e.g. hook.pre, or hook.* for a prefix). Repeatable.",
    )
    parser.add_argument("--session", help="Only this session (a prefix of its id is enough).")
    parser.add_argument("--intent", help="Only records about this intent, e.g. INT-001.")
    parser.add_argument("--decision", choices=DECISIONS, help="Only this decision.")
    parser.add_argument("--code", help="Only this error code, e.g. SCOPE_VIOLATION.")
    parser.add_argument("--tool", help="Only this tool, e.g. Write or Bash.")
    parser.add_argument(
        "--since",
        help="Only records since a duration ago (30m, 2h, 3d, 1w) or "
        "a UTC date/time (2026-11-21, 2026-11-21T10:00).",
    )
    parser.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="Keep printing new records as they are appended (Ctrl-C stops).",
    )
    _ledger_option(parser)
    _common_options(parser)
    return parser


def show_parser() -> CommandParser:
    """The options of ``ledger show``."""
    parser = CommandParser(
        prog="ledger show",
        description="Print one record in full (default: the last one).",
        epilog="Examples: ledger show 42; ledger show origin/3f1c:42 (a teammate's record, "
        "after ledger fetch).",
    )
    parser.add_argument(
        "seq",
        nargs="?",
        type=_show_target,
        metavar="SEQ",
        help="The record's seq, as `ledger log` shows it; REMOTE/LEDGER_ID:SEQ for a "
        "teammate's fetched record.",
    )
    _ledger_option(parser)
    _common_options(parser)
    return parser


def _ledger_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ledger",
        metavar="REMOTE/LEDGER_ID",
        help="Read a teammate's ledger that `ledger fetch` kept (e.g. origin/3f1c; a unique "
        "prefix of the id is enough), verified here, with the disclosures fetched with it.",
    )


def _show_target(text: str) -> tuple[str | None, int | None]:
    """``SEQ``, ``REMOTE/LEDGER_ID:SEQ``, or ``REMOTE/LEDGER_ID`` (its last record)."""
    name, colon, seq = text.rpartition(":")
    if not colon:
        return (text, None) if "/" in text else (None, _non_negative(text))
    if "/" not in name:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seq or REMOTE/LEDGER_ID:SEQ (e.g. 42, origin/3f1c:42)"
        )
    return name, _non_negative(seq)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        default=None,  # find_root reads $LEDGER_ROOT (the caller's)
        help="Workspace root (default: nearest parent holding .orchestration/; env LEDGER_ROOT).",
    )
    parser.add_argument(
        "--json",
        dest="as_json",
        action="store_true",
        help="Print machine-readable JSON (full records).",
    )


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _check_kinds(kinds: Iterable[str]) -> None:
    for kind in kinds:
        stem = kind[:-2] if kind.endswith(".*") else kind
        if not stem or not all(c.isalnum() or c in "._-" for c in stem) or not stem[0].isalpha():
            raise UsageError(
                f"--kind {kind!r} is not a record kind (e.g. hook.pre, or hook.* for "
                "a prefix)\nhint: ledger log --help"
            )


def _unknown_kinds(wanted: Iterable[str], seen: set[str]) -> list[str]:
    return [
        w
        for w in wanted
        if w not in KNOWN_KINDS
        and not any(_kind_matches(kind, (w,)) for kind in (*KNOWN_KINDS, *seen))
    ]


# --- reading, unverified and light ------------------------------------------------------------
# Records are read through ledger's one read path (``read_records``/``tail_records``: one parser,
# old formats upcast). Reading them for display needs no key material: the read path does not
# load ``cryptography``.


class Line(NamedTuple):
    """One stored record: its bytes and their parse."""

    raw: bytes
    data: dict[str, Any]


def ledger_path(root: str | None, output: Output | None = None) -> Path:
    """The workspace's ledger file (found like git, from the caller's directory), or why there
    is none."""
    from ledger import NotInitializedError, Workspace, find_root  # noqa: PLC0415

    start = Path(output.cwd) if output is not None and output.cwd is not None else None
    environ = output.environ if output is not None else None
    workspace = Workspace(find_root(root, start=start, environ=environ))
    if not workspace.ledger_path.exists():
        raise NotInitializedError(f"no ledger in {workspace.orchestration}; run `ledger init`")
    return workspace.ledger_path


def _parse(raw: bytes) -> Line:
    from ledger import parse_stored  # noqa: PLC0415

    return Line(raw, parse_stored(raw))


def read_lines(path: Path) -> Iterator[Line]:
    """Every complete record, through ledger's one read path (upcast; a torn last line,
    mid-append, is skipped)."""
    from ledger import read_records  # noqa: PLC0415

    for stored in read_records(path):
        yield Line(stored.line, stored.data)


def line_at(path: Path, index: int) -> Line | None:
    """The complete record on line ``index``, parsing only that line."""
    from ledger import record_at  # noqa: PLC0415

    stored = record_at(path, index)
    return None if stored is None else Line(stored.line, stored.data)


def tail_lines(path: Path, count: int) -> list[Line]:
    """The last ``count`` complete records, oldest first, read backwards from the end."""
    from ledger import tail_records  # noqa: PLC0415

    return [Line(stored.line, stored.data) for stored in tail_records(path, count)]


# --- the commands ---------------------------------------------------------------------------


def _remember(targets: dict[str, str], data: Mapping[str, Any], row: Summary) -> None:
    if data.get("kind") == "hook.pre" and row.target:
        targets[str(_dict(data.get("body")).get("invocation"))] = row.target
        if len(targets) > _CORRELATE_LIMIT:
            del targets[next(iter(targets))]


def run_log(options: LogOptions, out: IO[str] | Output | None = None) -> int:
    """``ledger log``: print the matching records, then follow the file if asked."""
    output = out if isinstance(out, Output) else this_process(out)
    _check_kinds(options.kinds)
    if options.ledger is None:
        path = ledger_path(options.root, output)
        return _print_log(path, _Reveal(lambda: _revealer(path)), options, output)
    if options.follow:
        raise UsageError(
            "--follow reads this clone's own ledger; a fetched one changes only with "
            "`ledger fetch`\nhint: ledger fetch, then ledger log --ledger NAME"
        )
    from ledger import open_fetched_ledger  # noqa: PLC0415

    with open_fetched_ledger(
        _start(options.root, output), options.ledger, environ=output.environ
    ) as reading:
        reveal = _Reveal(reading.revealer, batch=True)
        return _print_log(reading.segment, reveal, options, output)


def _start(root: str | None, output: Output) -> str | None:
    """Where the workspace is looked for: ``--root``, else the caller's directory."""
    if root is not None or output.cwd is None:
        return root
    from ledger import find_root  # noqa: PLC0415

    return str(find_root(None, start=Path(output.cwd), environ=output.environ))


def _print_log(path: Path, reveal: _Reveal, options: LogOptions, output: Output) -> int:
    stream = output.stream
    since = _since_bound(options.since) if options.since else None
    targets: dict[str, str] = {}
    seen: set[str] = set()
    picked: deque[tuple[Line, Summary]] = deque(maxlen=options.limit)
    if options.filtered:
        records: Iterator[Line] = read_lines(path)
    else:
        tail = tail_lines(path, options.limit)
        reveal.prepare(tail)
        records = iter(tail)
    for record in records:
        data = reveal(record.raw, record.data)
        seen.add(str(data.get("kind")))
        row = summarize(data, targets)
        _remember(targets, data, row)
        if matches(data, row, options, since):
            picked.append((record, row))
    unknown = _unknown_kinds(options.kinds, seen)
    if unknown:
        from ledger import did_you_mean  # noqa: PLC0415 - error path

        raise UsageError(
            f"--kind {unknown[0]!r}: no such kind in this ledger"
            f"{did_you_mean(unknown[0], (*KNOWN_KINDS, *seen))}\n"
            f"hint: kinds here: {', '.join(sorted(seen))}"
        )
    color, width = output.color, output.width
    if not picked and not options.as_json:
        print("no records match" if options.filtered else "no records", file=stream)
    layout = layout_for([row for _, row in picked], width)
    for record, row in picked:
        print(
            record.raw.decode() if options.as_json else format_line(row, layout, color=color),
            file=stream,
        )
    stream.flush()
    if options.follow:
        _follow(path, options, since, targets, stream, color, width)
    return OK


def _revealer(path: Path) -> Revealer:
    """Shows disclosed values (``--json`` prints the stored line: the commitments)."""
    from ledger import Revealer  # noqa: PLC0415

    return Revealer.beside(path)


class _Reveal:
    """Reveals a record's committed content, loading the disclosure reader (its hashing and
    secret rules, ~26 ms of imports) only at the first stored line that holds a commitment: a
    log of records without content never pays for it."""

    def __init__(self, make: Callable[[], Revealer], *, batch: bool = False) -> None:
        self._make = make
        self._batch = batch
        self._revealer: Revealer | None = None

    def prepare(self, lines: list[Line]) -> None:
        """With ``batch`` (a teammate's records, whose fields are mostly withheld, so their
        own lines in the store seldom settle them): look up the commitments of the records
        about to be shown in one scan of the store."""
        held = [line.data.get("body") for line in lines if b'"commitment":' in line.raw]
        if self._batch and held:
            if self._revealer is None:
                self._revealer = self._make()
            self._revealer.prepare(held)

    def __call__(self, raw: bytes, data: Mapping[str, Any]) -> Mapping[str, Any]:
        if b'"commitment":' not in raw:
            return data
        if self._revealer is None:
            self._revealer = self._make()
        return self._revealer.record(data)


def _new_lines(path: Path, offset: int) -> tuple[list[bytes], int]:
    """Complete lines appended after ``offset`` and the offset after them (a partial line,
    mid-append, waits for its newline)."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < offset:  # `ledger repair` truncated a torn tail
            return [], size
        handle.seek(offset)
        data = handle.read(size - offset)
    end = data.rfind(b"\n") + 1
    return [line for line in data[:end].split(b"\n") if line], offset + end


def _follow_lines(path: Path, interval: float) -> Iterator[bytes]:
    offset = path.stat().st_size
    while True:
        lines, offset = _new_lines(path, offset)
        yield from lines
        if not lines:
            time.sleep(interval)


def _follow(
    path: Path,
    options: LogOptions,
    since: str | None,
    targets: dict[str, str],
    stream: IO[str],
    color: bool,
    width: int,
) -> None:
    layout = layout_for(
        [Summary(99999, "", "", "x" * 12, "x" * 24, "allow", "x" * 16, "x")], width
    )  # new records' widths are not known in advance: room for usual ones
    from ledger import LedgerError  # noqa: PLC0415

    try:
        for line in _follow_lines(path, _FOLLOW_INTERVAL):
            try:
                data = _revealer(path).record(_parse(line).data)  # its disclosures are new too
            except LedgerError:
                continue  # verify reports it; following goes on
            row = summarize(data, targets)
            _remember(targets, data, row)
            if matches(data, row, options, since):
                print(
                    line.decode() if options.as_json else format_line(row, layout, color=color),
                    file=stream,
                    flush=True,
                )
    except KeyboardInterrupt:
        return


def _wrap(label: str, text: str, width: int) -> list[str]:
    import textwrap  # noqa: PLC0415

    indent = " " * 10
    lines = textwrap.wrap(
        " ".join(text.split()),
        width=max(width, 40) - len(indent),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]
    return [f"{label:<10}{lines[0]}", *(indent + line for line in lines[1:])]


def render_record(data: Mapping[str, Any], width: int = 100) -> str:
    """One record in full, for a person: what it says first, then the whole body and envelope."""
    row = summarize(data)
    actor = _dict(data.get("actor"))
    who = ", ".join(f"{k} {actor[k]}" for k in ("client", "model", "agent") if actor.get(k))
    out = [f"seq {row.seq}  {data.get('kind')}  {row.ts.replace('T', ' ').removesuffix('Z')} UTC"]
    if row.session or who:
        out.append(f"{'session':<10}{row.session or '-'}" + (f"  ({who})" if who else ""))
    if row.what != data.get("kind") or row.target:
        out.append(f"{'what':<10}{row.what}  {row.target}".rstrip())
    if row.decision or row.code:
        out.append(f"{'decision':<10}{row.decision}  {row.code}".rstrip())
    if row.reason:
        out += _wrap("reason", row.reason, width)
    body = json.dumps(data.get("body"), indent=2, sort_keys=True, ensure_ascii=False)
    out.append("body")
    out += ["  " + line for line in body.splitlines()]
    for field in ("key", "hash", "prev", "ledger", "sig", "v"):
        out.append(f"{field:<10}{data.get(field)}")
    return "\n".join(out)


def run_show(
    seq: int | None,
    root: str | None,
    as_json: bool,
    out: IO[str] | Output | None = None,
    *,
    ledger: str | None = None,
) -> int:
    """``ledger show [SEQ]``: one record in full (``--json``: the stored line itself);
    ``ledger``: of a teammate's fetched ledger (``origin/<ledger id>``)."""
    output = out if isinstance(out, Output) else this_process(out)
    if ledger is None:
        path = ledger_path(root, output)
        return _print_record(path, seq, lambda: _revealer(path), as_json, output)
    from ledger import open_fetched_ledger  # noqa: PLC0415

    with open_fetched_ledger(_start(root, output), ledger, environ=output.environ) as reading:
        return _print_record(
            reading.segment,
            seq,
            reading.revealer,
            as_json,
            output,
            lister=f"ledger log --ledger {reading.name}",
        )


def _print_record(
    path: Path,
    seq: int | None,
    revealer: Callable[[], Revealer],
    as_json: bool,
    output: Output,
    *,
    lister: str = "ledger log",
) -> int:
    """Print one record of the ledger at ``path``; ``lister``: the command that lists that
    ledger's records (the hint when there is no such seq)."""
    stream = output.stream
    if seq is None:
        found = tail_lines(path, 1)
        record = found[0] if found else None
    else:  # seqs are contiguous from 0, so seq N is line N (verify checks that)
        record = line_at(path, seq)
    if record is None or (seq is not None and record.data.get("seq") != seq):
        last = tail_lines(path, 1)
        end = f"the last is seq {last[0].data.get('seq')}" if last else "the ledger is empty"
        raise UsageError(f"no record with seq {seq} ({end})\nhint: {lister}")
    if as_json:
        print(record.raw.decode(), file=stream)
    else:
        print(render_record(revealer().record(record.data), output.width or 100), file=stream)
    return OK


def _log(args: list[str], output: Output, *, for_caller: bool = False) -> int:
    parser = log_parser()
    parser.for_caller = for_caller
    ns = parser.parse_args(args)
    if ns.follow and for_caller:
        raise NotServedError("ledger log --follow")  # it never ends: the caller's own process
    if ns.ledger is not None and for_caller:
        raise NotServedError("ledger log --ledger")  # runs git and verifies: its own process
    return run_log(
        LogOptions(
            ns.count,
            tuple(ns.kind),
            ns.session,
            ns.intent,
            ns.decision,
            ns.code,
            ns.tool,
            ns.since,
            ns.follow,
            ns.root,
            ns.as_json,
            ns.ledger,
        ),
        output,
    )


def _show(args: list[str], output: Output, *, for_caller: bool = False) -> int:
    parser = show_parser()
    parser.for_caller = for_caller
    ns = parser.parse_args(args)
    name, seq = ns.seq if ns.seq is not None else (None, None)
    if name is not None and ns.ledger is not None and name != ns.ledger:
        raise UsageError(f"{name} and --ledger {ns.ledger} name two ledgers; give one")
    ledger = name or ns.ledger
    if ledger is not None and for_caller:
        raise NotServedError("ledger show of a fetched ledger")  # runs git: its own process
    return run_show(seq, ns.root, ns.as_json, output, ledger=ledger)


def log_main(args: list[str]) -> int:
    """``ledger log`` without Typer."""
    return guarded(lambda: _log(args, this_process()))


def show_main(args: list[str]) -> int:
    """``ledger show`` without Typer."""
    return guarded(lambda: _show(args, this_process()))


def answer_for(call: CommandCall, run: Callable[[list[str], Output], int]) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of a command run for a caller of the resident decider,
    exactly as :func:`guarded` would print them in the caller's own process.

    Raises:
        NotServedError: a command line the decider leaves to the caller (help, ``--follow``).
    """
    import io  # noqa: PLC0415

    out, err = io.StringIO(), io.StringIO()
    output = Output(out, call.environ, call.tty, call.columns, call.cwd)
    code = guarded(lambda: run(call.args, output), err=err)
    return code, out.getvalue(), err.getvalue()


def served_log(call: CommandCall) -> tuple[int, str, str]:
    """``ledger log`` for a caller of the resident decider (``cli/_serve.py`` registers it)."""
    return answer_for(call, lambda args, output: _log(args, output, for_caller=True))


def served_show(call: CommandCall) -> tuple[int, str, str]:
    """``ledger show`` for a caller of the resident decider."""
    return answer_for(call, lambda args, output: _show(args, output, for_caller=True))
