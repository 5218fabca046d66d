"""A review as a terminal table, a pull-request comment (Markdown) and SARIF 2.1.0, and the
``--fail-on`` gate. All of them read :func:`~ledger._review.build.build_review`'s data only."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

__all__ = [
    "COMMENT_LIMIT",
    "FailOn",
    "no_agent_line",
    "parse_fail_on",
    "render_review_markdown",
    "render_review_sarif",
    "render_review_text",
    "review_failures",
    "scope_when_written",
]

COMMENT_LIMIT: Final = 65_536
"""GitHub's limit on a pull-request comment, in characters."""
_SLACK: Final = 400  # room kept for the truncation note
_FAIL: Final = re.compile(r"^(unknown|agent)\s*>\s*(\d{1,3}(?:\.\d+)?)\s*%$")
_FLAGS: Final = ("unverified", "tamper", "out-of-scope", "hook-error")


class FailOn(NamedTuple):
    """One ``--fail-on`` condition: a flag, or a share above a threshold."""

    name: str
    threshold: float | None = None

    def __str__(self) -> str:
        return self.name if self.threshold is None else f"{self.name}>{self.threshold:g}%"


def parse_fail_on(text: str) -> list[FailOn]:
    """``unverified,tamper,out-of-scope,hook-error,unknown>10%,agent>80%`` (any subset).

    Raises:
        ValueError: an unknown condition (the message names the known ones).
    """
    out: list[FailOn] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part in _FLAGS:
            out.append(FailOn(part))
            continue
        found = _FAIL.match(part)
        if found is None or float(found.group(2)) > 100:
            raise ValueError(
                f"unknown --fail-on condition {part!r}: use {', '.join(_FLAGS)}, "
                "unknown>N% or agent>N%"
            )
        out.append(FailOn(found.group(1), float(found.group(2))))
    return out


def review_failures(review: dict[str, Any], conditions: Iterable[FailOn]) -> list[str]:
    """The conditions that hold, each with what makes it hold (empty: the gate passes)."""
    totals = review["totals"]
    items = review["governance"]
    held: list[str] = []
    for condition in conditions:
        name = condition.name
        if name == "unverified":
            bad = [e["ledger_id"][:8] for e in review["evidence"] if not e["verified"]]
            if bad or totals["unverified"]:
                held.append(
                    f"unverified ({totals['unverified']} lines; ledger {', '.join(bad)} does "
                    "not verify)"
                    if bad
                    else f"unverified ({totals['unverified']} lines)"
                )
        elif name == "tamper":
            found = [i for i in items if i["type"] == "tamper"]
            if found:
                held.append(f"tamper ({len(found)} event(s), first seq {found[0]['seq']})")
        elif name == "out-of-scope":
            lines = sum(i["out_of_scope"] for i in review["intents"])
            if lines:
                held.append(f"out-of-scope ({lines} agent lines outside their session's scope)")
        elif name == "hook-error":
            found = [i for i in items if i["type"] == "hook_error"]
            if found:
                held.append(f"hook-error ({len(found)} hook error(s))")
        else:
            share = totals["shares"][name]
            if condition.threshold is not None and share > condition.threshold:
                held.append(f"{condition} ({name} {share:g}%)")
    return held


# --- shared phrases ------------------------------------------------------------------------------


def _short(value: Any, width: int = 8) -> str:  # noqa: ANN401 -- any JSON value
    return "-" if value in (None, "") else str(value)[:width]


def _pct(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


def _headline(review: dict[str, Any]) -> str:
    t = review["totals"]
    span = review["range"]
    return (
        f"{span['spec']} ({span['base'][:8]}..{span['head'][:8]}, {span['commits']} commits, "
        f"{len(review['files'])} files): {t['total']} added/changed lines: "
        f"{t['agent']} agent ({t['shares']['agent']:g}%), {t['git']} git "
        f"({t['shares']['git']:g}%), {t['unknown']} unknown ({t['shares']['unknown']:g}%)"
        + (f", {t['unverified']} of them unverified" if t["unverified"] else "")
    )


def no_agent_line(review: dict[str, Any]) -> str | None:
    """The clear line for a range that holds no agent line, else ``None``."""
    if review["totals"]["agent"]:
        return None
    return f"no agent lines in {review['range']['spec']}: nothing agents wrote to review"


# --- terminal ----------------------------------------------------------------------------------


def render_review_text(review: dict[str, Any]) -> list[str]:
    """The terminal form: the headline, files, intents, governance, evidence, notes."""
    out = [f"ledger review {_headline(review)}"]
    files = review["files"]
    if files:
        out.append("")
        width = min(60, max(len(f["path"]) for f in files))
        out.append(
            f"{'file':<{width}} {'change':<9} {'agent':>6} {'git':>6} {'unknown':>7} "
            f"{'unverified':>10}"
        )
        for f in files:
            lines = f["lines"]
            path = f["path"] if len(f["path"]) <= width else "…" + f["path"][-width + 1 :]
            note = f"  ({f['note']})" if f["note"] else ""
            out.append(
                f"{path:<{width}} {f['change']:<9} {lines['agent']:>6} {lines['git']:>6} "
                f"{lines['unknown']:>7} {lines['unverified']:>10}{note}"
            )
    for intent in review["intents"]:
        out.append("")
        out.append(
            f"intent {intent['id']} {intent['name'] or '(not in the intents file)'}: "
            f"{intent['lines']} agent lines, {intent['in_scope']} in scope, "
            f"{intent['out_of_scope']} outside; scope {', '.join(intent['owned_scope']) or '-'}"
        )
        out.extend(
            f"  expansion {used['glob']}: approved by {used.get('approved_by', '?')} "
            f"at {used.get('ts', '?')} (seq {used.get('seq', '?')})"
            for used in intent["expansions_used"]
        )
        out.extend(f"  {_scope_text(version)}" for version in intent.get("scopes", []))
        out.extend(f"  acceptance: {c}" for c in intent["acceptance_criteria"])
    if review["governance"]:
        out.append("")
        out.append("governance on the way:")
        out.extend("  " + _item_text(item) for item in review["governance"])
    history = review.get("history")
    if history:
        out.append("")
        out.append(f"{'by ' + history['by']:<30} {'agent':>12} {'git':>12} {'unknown':>12}")
        for group in history["groups"]:
            shares = group["shares"]
            out.append(
                f"{group['key'][:30]:<30} "
                + " ".join(f"{group[s]:>5} {shares[s]:>5.1f}%" for s in ("agent", "git", "unknown"))
            )
    out.append("")
    out.append("evidence:")
    out.extend("  " + _evidence_text(entry) for entry in review["evidence"])
    out.extend(f"note: {note}" for note in review["notes"])
    return out


def _scope_text(version: dict[str, Any]) -> str:
    """Which intents file some of an intent's lines were judged against."""
    digest = _short(version["intents_sha256"], 12)
    scope = ", ".join(version["owned_scope"] or []) or "not declared"
    where = version["source"] or "found nowhere: judged against this checkout's file"
    return f"{version['lines']} lines written under intents {digest} ({where}): scope {scope}"


def _item_text(item: dict[str, Any]) -> str:
    parts = [item["type"]]
    parts.extend(str(item[key]) for key in ("code", "tool", "intent_id") if item.get(key))
    if item.get("answer"):
        parts.append(f"-> {item['answer']}")
    if item.get("approved_by"):
        parts.append(f"approved by {item['approved_by']}")
    if item.get("detail"):
        parts.append(f"({item['detail'][:120]})")
    return (
        " ".join(parts)
        + f"  [seq {item['seq']} of {item['ledger_id'][:8]}, session {_short(item['session_id'])}]"
    )


def _evidence_text(entry: dict[str, Any]) -> str:
    state = "verified" if entry["verified"] else "NOT VERIFIED"
    checkpoint = entry["newest_checkpoint"]
    pushed = entry["pushed"]
    text = (
        f"ledger {entry['ledger_id'][:8]} ({entry['whose']}): {state}, "
        f"key {_short(entry['key'], 30)} {'pinned' if entry['pinned'] else 'not pinned'}, "
        f"{entry['lines']} agent lines; newest checkpoint: "
        + ("none" if checkpoint is None else f"{checkpoint['size']} records")
    )
    if entry["remote"] is None:
        text += (
            "; not pushed"
            if pushed is None
            else f"; pushed {pushed['records']} of {entry['records']} records"
        )
    if entry["fix"]:
        text += f"; fix: {entry['fix']}"
    return text


# --- Markdown (a pull-request comment) ----------------------------------------------------------


def _cell(value: Any, width: int = 80) -> str:  # noqa: ANN401 -- any JSON value
    text = "" if value is None else str(value)
    text = text.replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    return text if len(text) <= width else text[: width - 1] + "…"


class _Comment:
    """Markdown blocks added whole until the limit: a table is cut only between rows, with a
    note after it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit - _SLACK
        self.parts: list[str] = []
        self.size = 0
        self.left_out = 0

    def add(self, text: str) -> bool:
        if self.size + len(text) > self.limit:
            self.left_out += 1
            return False
        self.parts.append(text)
        self.size += len(text)
        return True

    def table(
        self, header: list[str], rows: list[list[str]], more: str, *, opening: str = ""
    ) -> None:
        head = opening + "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
        if self.size + len(head) > self.limit:
            self.left_out += 1
            return
        body: list[str] = []
        used = self.size + len(head)
        for row in rows:
            line = "| " + " | ".join(row) + " |\n"
            tail = (
                f"\n_… {len(rows) - len(body)} more {more} left out (the comment limit); "
                "`ledger review --json` lists all._\n"
            )
            if used + len(line) + len(tail) > self.limit:
                self.add(head + "".join(body) + tail)
                return
            body.append(line)
            used += len(line)
        self.add(head + "".join(body))

    def text(self) -> str:
        out = "".join(self.parts)
        if self.left_out:
            out += (
                f"\n_{self.left_out} section(s) left out to stay under GitHub's "
                f"{COMMENT_LIMIT:,}-character comment limit: run `ledger review --json` for "
                "everything._\n"
            )
        return out


def render_review_markdown(review: dict[str, Any], *, limit: int = COMMENT_LIMIT) -> str:
    """A pull-request comment: a summary table first, details in collapsible sections; always
    under ``limit`` characters (tables are cut between rows, with a note)."""
    t = review["totals"]
    span = review["range"]
    out = _Comment(limit)
    out.add(
        f"### ledger review `{_cell(span['spec'], 200)}`\n\n"
        f"{span['commits']} commits, {len(review['files'])} files, "
        f"`{span['base'][:12]}..{span['head'][:12]}`\n\n"
    )
    out.table(
        ["lines", "agent", "git", "unknown", "unverified", "total"],
        [
            [
                "added/changed",
                f"{t['agent']} ({t['shares']['agent']:g}%)",
                f"{t['git']} ({t['shares']['git']:g}%)",
                f"{t['unknown']} ({t['shares']['unknown']:g}%)",
                str(t["unverified"]),
                str(t["total"]),
            ]
        ],
        "rows",
    )
    flags = [
        f"{sum(i['out_of_scope'] for i in review['intents'])} agent lines out of scope",
        f"{sum(1 for i in review['governance'] if i['type'] == 'denial')} denials",
        f"{sum(1 for i in review['governance'] if i['type'] == 'ask')} asks",
        f"{sum(1 for i in review['governance'] if i['type'] == 'tamper')} tamper events",
        f"{sum(1 for i in review['governance'] if i['type'] == 'hook_error')} hook errors",
        f"{sum(1 for e in review['evidence'] if e['verified'])}/{len(review['evidence'])} "
        "ledgers verified",
    ]
    out.add("\n" + " · ".join(flags) + "\n")
    for note in review["notes"]:
        out.add(f"\n> {_cell(note, 400)}\n")
    if review["intents"]:
        out.table(
            [
                "intent",
                "name",
                "agent lines",
                "in scope",
                "out of scope",
                "scope when written",
                "acceptance criteria",
            ],
            [
                [
                    f"`{_cell(i['id'], 40)}`",
                    _cell(i["name"] or "(not in the intents file)", 60),
                    str(i["lines"]),
                    str(i["in_scope"]),
                    str(i["out_of_scope"]),
                    _cell(
                        "; ".join(scope_when_written(v) for v in i.get("scopes", [])) or "-", 200
                    ),
                    _cell("; ".join(i["acceptance_criteria"]) or "-", 160),
                ]
                for i in review["intents"]
            ],
            "intents",
            opening="\n",
        )
    files = review["files"]
    ordered = sorted(files, key=lambda f: (-f["lines"]["agent"], -f["lines"]["unknown"], f["path"]))
    _details_table(
        out,
        "Files",
        ["file", "change", "agent", "git", "unknown", "unverified", "note"],
        [
            [
                f"`{_cell(f['path'], 120)}`",
                _cell(f["change"]),
                str(f["lines"]["agent"]),
                str(f["lines"]["git"]),
                str(f["lines"]["unknown"]),
                str(f["lines"]["unverified"]),
                _cell(f["note"] or "", 80),
            ]
            for f in ordered
        ],
        "files",
    )
    _details_table(
        out,
        "Agent lines",
        ["file", "lines", "intent", "session", "client", "model", "ledger · seq", "scope"],
        [
            [
                f"`{_cell(f['path'], 100)}`",
                f"{r['start']}-{r['end']}",
                _cell(r.get("intent_id"), 30),
                _cell(_short(r.get("session_id"), 10)),
                _cell(r.get("client"), 20),
                _cell(r.get("model"), 30),
                f"{_short(r.get('ledger_id'))} · {r.get('seq')}",
                {True: "in", False: "**outside**", None: "?"}[r.get("in_scope")],
            ]
            for f in ordered
            for r in f.get("runs", [])
            if r["status"] == "agent"
        ],
        "runs",
    )
    _details_table(
        out,
        "Governance on the way",
        ["type", "code", "tool", "answer / approver", "detail", "ledger · seq"],
        [
            [
                _cell(i["type"]),
                _cell(i.get("code") or "", 30),
                _cell(i.get("tool") or "", 20),
                _cell(i.get("answer") or i.get("approved_by") or "", 50),
                _cell(i.get("detail") or "", 100),
                f"{_short(i['ledger_id'])} · {i['seq']}",
            ]
            for i in review["governance"]
        ],
        "items",
    )
    _details_table(
        out,
        "Evidence",
        ["ledger", "whose", "verified", "key", "pinned", "newest checkpoint", "pushed", "fix"],
        [
            [
                f"`{_short(e['ledger_id'])}`",
                _cell(e["whose"], 50),
                "yes" if e["verified"] else "**no**",
                _cell(e["key"], 40),
                "yes" if e["pinned"] else "no",
                "-"
                if e["newest_checkpoint"] is None
                else f"{e['newest_checkpoint']['size']} records",
                "-"
                if e["remote"] is not None
                else ("no" if e["pushed"] is None else f"{e['pushed']['records']} records"),
                _cell(e["fix"] or "", 120),
            ]
            for e in review["evidence"]
        ],
        "ledgers",
    )
    history = review.get("history")
    if history:
        _details_table(
            out,
            f"Shares by {history['by']}",
            [history["by"], "agent", "git", "unknown", "total"],
            [
                [
                    _cell(g["key"], 60),
                    f"{g['agent']} ({g['shares']['agent']:g}%)",
                    f"{g['git']} ({g['shares']['git']:g}%)",
                    f"{g['unknown']} ({g['shares']['unknown']:g}%)",
                    str(g["total"]),
                ]
                for g in history["groups"]
            ],
            "groups",
        )
    return out.text()


def scope_when_written(version: dict[str, Any]) -> str:
    """One version of an intent's scope in a table cell: its globs, where it was found."""
    scope = ", ".join(version["owned_scope"] or []) or "not declared"
    where = (version["source"] or "").removeprefix("git ").split(":")[0]
    return f"{scope} ({where or 'not found: judged as today'}, {version['lines']} lines)"


def _details_table(
    out: _Comment, title: str, header: list[str], rows: list[list[str]], more: str
) -> None:
    if not rows:
        return
    before = len(out.parts)
    out.table(
        header, rows, more, opening=f"\n<details><summary>{title} ({len(rows)})</summary>\n\n"
    )
    if len(out.parts) > before and not out.add("\n</details>\n"):
        out.parts[-1] += "\n</details>\n"  # the closing tag always fits: _SLACK keeps room


# --- SARIF 2.1.0 -------------------------------------------------------------------------------

_RULES: Final = {
    "ledger/out-of-scope": (
        "error",
        "Agent lines outside the scope their session held",
        "An agent wrote these lines outside the owned_scope (and approved expansions) of the "
        "intent its session had selected.",
    ),
    "ledger/unverified": (
        "error",
        "Lines from evidence that does not verify",
        "The only ledger explaining these lines does not verify here; they are not counted as "
        "agent lines.",
    ),
    "ledger/unknown": (
        "note",
        "Lines neither the ledger nor git explains",
        "No verified record and no commit explains these lines.",
    ),
}


def render_review_sarif(review: dict[str, Any]) -> dict[str, Any]:
    """SARIF 2.1.0: one result per run of agent lines outside their scope, of unknown lines,
    and of lines from an unverified ledger."""
    from ledger._version import __version__  # noqa: PLC0415

    results = []
    for file in review["files"]:
        for run in file.get("runs", []):
            rule = None
            if run["status"] == "agent" and run.get("in_scope") is False:
                rule = "ledger/out-of-scope"
                text = (
                    f"lines {run['start']}-{run['end']} written by session "
                    f"{run.get('session_id')} under {run.get('intent_id')} lie outside its scope "
                    f"(ledger {run.get('ledger_id')}, seq {run.get('seq')})"
                )
            elif run["status"] == "unknown" and run.get("unverified"):
                rule = "ledger/unverified"
                text = f"lines {run['start']}-{run['end']}: {run.get('reason')}"
            elif run["status"] == "unknown":
                rule = "ledger/unknown"
                text = f"lines {run['start']}-{run['end']}: {run.get('reason')}"
            if rule is None:
                continue
            results.append(
                {
                    "ruleId": rule,
                    "level": _RULES[rule][0],
                    "message": {"text": text},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": file["path"], "uriBaseId": "%SRCROOT%"},
                                "region": {"startLine": run["start"], "endLine": run["end"]},
                            }
                        }
                    ],
                    "properties": {
                        k: run.get(k) for k in ("ledger_id", "seq", "session_id", "intent_id")
                    },
                }
            )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ledger",
                        "version": __version__,
                        "rules": [
                            {
                                "id": rule,
                                "shortDescription": {"text": short},
                                "fullDescription": {"text": full},
                                "defaultConfiguration": {"level": level},
                            }
                            for rule, (level, short, full) in _RULES.items()
                        ],
                    }
                },
                "results": results,
                "properties": {"range": review["range"], "totals": review["totals"]},
            }
        ],
    }
