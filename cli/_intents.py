"""``ledger intents``, ``ledger intent show ID``, ``ledger map``: intent state from the ledger."""

import json
import sys
from typing import Annotated, Any

import typer

from cli._exit import OK, UNVERIFIABLE, guarded
from cli._options import JsonOption, RootOption
from ledger import intent_summaries, write_intent_map


def _exit(code: int) -> None:
    if code != OK:
        raise typer.Exit(code)


def _decisions(summary: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(summary["decisions"].items())) or "-"


def intents(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Every intent: status, sessions, files touched, lines attributed now, decisions."""

    def action() -> int:
        summaries = intent_summaries(root)
        if as_json:
            print(json.dumps(summaries, indent=2, sort_keys=True))
            return OK
        print(f"{'ID':<12} {'STATUS':<12} {'SESSIONS':>8} {'FILES':>5} {'LINES':>6}  DECISIONS")
        for s in summaries:
            print(
                f"{s['id']:<12} {s['status'][:12]:<12} {len(s['sessions']):>8} "
                f"{len(s['files_touched']):>5} {s['lines_attributed']:>6}  {_decisions(s)}"
            )
        return OK

    _exit(guarded(action))


def intent_show(
    intent_id: Annotated[str, typer.Argument(help="Intent id, e.g. INT-001.")],
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """One intent: status, effective scope (with approved expansions), sessions, files
    touched, lines currently attributed, decisions by code, last activity."""

    def action() -> int:
        found = [s for s in intent_summaries(root) if s["id"] == intent_id]
        if not found:
            print(
                f"ledger: error: no intent {intent_id} in the intents file or the ledger; "
                "see `ledger intents`",
                file=sys.stderr,
            )
            return UNVERIFIABLE
        s = found[0]
        if as_json:
            print(json.dumps(s, indent=2, sort_keys=True))
            return OK
        print(f"{s['id']}: {s['name'] or '(unnamed)'}  [{s['status']}]")
        print(f"scope:      {', '.join(s['owned_scope']) or '-'}")
        print(f"expansions: {', '.join(s['approved_expansions']) or '-'} (approved)")
        print(f"sessions:   {', '.join(s['sessions']) or '-'}")
        print(f"decisions:  {_decisions(s)}")
        print(
            f"last:       seq {s['last_seq']} at {s['last_ts']}"
            if s["last_seq"] is not None
            else "last:       no activity recorded"
        )
        print(f"lines now:  {s['lines_attributed']}")
        for file in s["files_touched"]:
            ranges = s["lines"].get(file, [])
            spans = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges) or "none now"
            print(f"  {file}: {spans}")
        return OK

    _exit(guarded(action))


def intent_map(root: RootOption = None) -> None:
    """Regenerate .orchestration/intent_map.md: per intent, the files and lines it owns now."""

    def action() -> int:
        path, summaries = write_intent_map(root)
        print(f"wrote {path} ({len(summaries)} intents)")
        return OK

    _exit(guarded(action))


def register(app: typer.Typer, intent_app: typer.Typer) -> None:
    """Add ``intents``, ``map`` and ``intent show``."""
    app.command(name="intents")(intents)
    app.command(name="map")(intent_map)
    intent_app.command(name="show")(intent_show)
