"""``ledger report --range``: a review as one self-contained page (inline SVG and CSS, no
script, no network; a ``default-src 'none'`` Content-Security-Policy makes the browser refuse
any request the page might try)."""

from __future__ import annotations

from html import escape
from typing import Any, Final

from ledger._review.render import scope_when_written

__all__ = ["render_review_html"]

_COLORS: Final = {"agent": "#4a6fd1", "git": "#3b8f5a", "unknown": "#9aa3ad"}
_STATUSES: Final = ("agent", "git", "unknown")
_MAX_ROWS: Final = 2000  # rows per table; the rest is counted, as in the Markdown comment
_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;
color:#1d2430;padding:0 1rem}h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;
margin-top:2rem;border-bottom:1px solid #dde2e8;padding-bottom:.3rem}.muted{color:#5c6773}
.bad{color:#b23a30;font-weight:600}table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eef1f4;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}.legend span{display:inline-block;margin-right:1rem}.legend i{display:
inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-1px}svg text{font:11px
system-ui,sans-serif;fill:#38414d}.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{border:1px
solid #dde2e8;border-radius:6px;padding:.6rem .9rem;min-width:9rem}.card b{display:block;
font-size:1.3rem}
"""


def _e(value: Any) -> str:  # noqa: ANN401 -- any JSON value
    if value is None or value == "":
        return '<span class="muted">—</span>'
    return escape(str(value))


def _table(table_id: str, header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows[:_MAX_ROWS]
    )
    more = (
        f'<p class="muted">… {len(rows) - _MAX_ROWS} more rows: `ledger review --json`</p>'
        if len(rows) > _MAX_ROWS
        else ""
    )
    return f'<table id="{table_id}"><tr>{head}</tr>{body}</table>{more}'


def _flagged(count: int) -> str:
    return f'<span class="bad">{count}</span>' if count else "0"


def _legend() -> str:
    items = "".join(f'<span><i style="background:{_COLORS[s]}"></i>{s}</span>' for s in _STATUSES)
    return f'<div class="legend">{items}</div>'


def _bars(chart_id: str, label: str, groups: list[tuple[str, dict[str, Any]]]) -> str:
    """One horizontal stacked bar per group: its lines by status, as shares of the group."""
    if not groups:
        return (
            f'<svg id="{chart_id}" role="img" aria-label="no lines" width="1000" height="30">'
            '<text x="0" y="20">no lines</text></svg>'
        )
    row, left, width = 22, 260, 1000
    height = row * len(groups) + 10
    parts = [
        f'<svg id="{chart_id}" role="img" aria-label="{escape(label)}" '
        f'viewBox="0 0 {width} {height}" width="100%">'
    ]
    for i, (name, counts) in enumerate(groups):
        y = 5 + i * row
        parts.append(f'<text x="0" y="{y + 14}">{escape(name[:40])}</text>')
        total = counts["total"] or 1
        x = float(left)
        for status in _STATUSES:
            w = counts[status] / total * (width - left - 60)
            if w > 0:
                parts.append(
                    f'<rect class="bar-{status}" x="{x:.1f}" y="{y}" width="{w:.1f}" '
                    f'height="{row - 6}" fill="{_COLORS[status]}"><title>{escape(name)}: '
                    f"{counts[status]} {status}</title></rect>"
                )
                x += w
        parts.append(f'<text x="{width - 55}" y="{y + 14}">{counts["total"]}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_review_html(review: dict[str, Any]) -> str:
    """The page: totals, a bar per file (the most agent lines first), the shares over time or
    by group when the review has them (``--by``), intents, agent lines, governance, evidence."""
    span = review["range"]
    totals = review["totals"]
    files = sorted(
        review["files"], key=lambda f: (-f["lines"]["agent"], -f["lines"]["total"], f["path"])
    )
    cards = "".join(
        f'<div class="card">{s}<b>{totals[s]}</b>{totals["shares"][s]:g}%</div>' for s in _STATUSES
    ) + (
        f'<div class="card">unverified<b class="{"bad" if totals["unverified"] else ""}">'
        f"{totals['unverified']}</b>counted unknown</div>"
    )
    sections = [
        f"<h1>ledger review <code>{escape(span['spec'])}</code></h1>",
        f'<p class="muted">{escape(span["base"][:12])}..{escape(span["head"][:12])}, '
        f"{span['commits']} commits, {len(review['files'])} files, generated "
        f"{escape(review['generated_at'])}</p>",
        f'<div class="cards">{cards}</div>',
        *(f'<p class="muted">{escape(note)}</p>' for note in review["notes"]),
        "<h2>Files</h2>",
        _legend(),
        _bars(
            "chart-files",
            "lines by status per file",
            [(f["path"], f["lines"]) for f in files[:40] if f["lines"]["total"]],
        ),
        _table(
            "files",
            ["file", "change", "agent", "git", "unknown", "unverified", "note"],
            [
                [
                    f"<code>{escape(f['path'])}</code>",
                    escape(f["change"]),
                    *(f'<span class="n">{f["lines"][s]}</span>' for s in _STATUSES),
                    _flagged(f["lines"]["unverified"]),
                    _e(f["note"]),
                ]
                for f in files
            ],
        ),
    ]
    history = review.get("history")
    if history:
        sections += [
            f"<h2>Shares by {escape(history['by'])}</h2>",
            _legend(),
            _bars(
                "chart-history",
                f"shares by {history['by']}",
                [(g["key"], g) for g in history["groups"]],
            ),
        ]
    sections += [
        "<h2>Intents</h2>",
        _table(
            "intents",
            [
                "intent",
                "name",
                "scope",
                "scope when written",
                "agent lines",
                "in scope",
                "outside",
                "expansions used",
                "acceptance criteria",
            ],
            [
                [
                    f"<code>{escape(i['id'])}</code>",
                    _e(i["name"]),
                    _e(", ".join(i["owned_scope"])),
                    _e("; ".join(scope_when_written(v) for v in i.get("scopes", []))),
                    str(i["lines"]),
                    str(i["in_scope"]),
                    _flagged(i["out_of_scope"]),
                    _e(
                        "; ".join(
                            f"{u['glob']} (approved by {u.get('approved_by')}, seq {u.get('seq')})"
                            for u in i["expansions_used"]
                        )
                    ),
                    _e("; ".join(i["acceptance_criteria"])),
                ]
                for i in review["intents"]
            ],
        ),
        "<h2>Agent lines</h2>",
        _table(
            "agent-lines",
            ["file", "lines", "intent", "session", "client", "model", "ledger · seq", "scope"],
            [
                [
                    f"<code>{escape(f['path'])}</code>",
                    f"{r['start']}–{r['end']}",
                    _e(r.get("intent_id")),
                    _e(r.get("session_id")),
                    _e(r.get("client")),
                    _e(r.get("model")),
                    f"<code>{escape(str(r.get('ledger_id'))[:8])}</code> · {r.get('seq')}",
                    {True: "in", False: '<span class="bad">outside</span>', None: "?"}[
                        r.get("in_scope")
                    ],
                ]
                for f in files
                for r in f.get("runs", [])
                if r["status"] == "agent"
            ],
        ),
        "<h2>Governance on the way</h2>",
        _table(
            "governance",
            ["when", "type", "code", "tool", "answer / approver", "detail", "ledger · seq"],
            [
                [
                    _e(i["ts"]),
                    escape(i["type"]),
                    _e(i.get("code")),
                    _e(i.get("tool")),
                    _e(i.get("answer") or i.get("approved_by")),
                    _e(i.get("detail")),
                    f"<code>{escape(i['ledger_id'][:8])}</code> · {i['seq']}",
                ]
                for i in review["governance"]
            ],
        ),
        "<h2>Evidence</h2>",
        _table(
            "evidence",
            ["ledger", "whose", "verified", "key", "pinned", "newest checkpoint", "pushed", "fix"],
            [
                [
                    f"<code>{escape(e['ledger_id'])}</code>",
                    escape(e["whose"]),
                    "yes" if e["verified"] else '<span class="bad">no</span>',
                    _e(e["key"]),
                    "yes" if e["pinned"] else "no",
                    _e(None if e["newest_checkpoint"] is None else e["newest_checkpoint"]["size"]),
                    _e(None if e["pushed"] is None else e["pushed"]["records"]),
                    _e(e["fix"]),
                ]
                for e in review["evidence"]
            ],
        ),
    ]
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>ledger review {escape(span['spec'])}</title><style>{_CSS}</style></head><body>"
        + "".join(sections)
        + "</body></html>\n"
    )
