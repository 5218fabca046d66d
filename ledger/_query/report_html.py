"""``report.html``: one self-contained page (inline SVG charts, inline CSS, no script, no network).

A Content-Security-Policy of ``default-src 'none'`` makes the browser refuse any request the page
might try, so opening it is safe offline and leaks nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any, Final

__all__ = ["render_report_html"]

_COLORS: Final = {
    "allow": "#3b8f5a",
    "ask": "#d39b2a",
    "deny": "#c8453b",
    "agent": "#4a6fd1",
    "git": "#3b8f5a",
    "unknown": "#9aa3ad",
}
_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;
color:#1d2430;padding:0 1rem;overflow-wrap:break-word}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid
#dde2e8;padding-bottom:.3rem}.muted{color:#5c6773}.ok{color:#2d7a4a}.bad{color:#b23a30}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #eef1f4;vertical-align:top}th{background:#f6f8fa;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
.legend span{display:inline-block;margin-right:1rem}.legend i{display:inline-block;width:.8rem;
height:.8rem;margin-right:.3rem;vertical-align:-1px}svg text{font:11px system-ui,sans-serif;
fill:#38414d}.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{border:1px solid #dde2e8;
border-radius:6px;padding:.6rem .9rem;min-width:9rem}.card b{display:block;font-size:1.3rem}
.scroll{overflow-x:auto;max-width:100%}.scroll svg{min-width:820px}td.t{white-space:nowrap}
@media (max-width:600px){body{margin:1rem auto}.card{min-width:6rem}}
"""


def _when(value: Any) -> str:  # noqa: ANN401 -- a record's RFC 3339 time, or nothing
    """``2026-11-21 10:43:00 UTC``: to the second (the microseconds are in the ledger)."""
    if isinstance(value, str) and len(value) >= 19 and value[10] == "T":
        return escape(f"{value[:10]} {value[11:19]} UTC")
    return _e(value)


def _scroll(html: str) -> str:
    """A chart or table that scrolls inside its own box on a narrow screen, never the page."""
    return f'<div class="scroll">{html}</div>'


def _e(value: Any) -> str:  # noqa: ANN401 -- any JSON value
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, list):
        return escape(", ".join(str(v) for v in value)) or '<span class="muted">—</span>'
    return escape(str(value))


def _legend(names: Iterable[str]) -> str:
    items = "".join(
        f'<span><i style="background:{_COLORS[n]}"></i>{escape(n)}</span>' for n in names
    )
    return f'<div class="legend">{items}</div>'


def _timeline_svg(timeline: dict[str, Any]) -> str:
    buckets = timeline["buckets"]
    width, height, left, bottom = 1000, 220, 40, 40
    if not buckets:
        return (
            '<svg id="chart-timeline" role="img" aria-label="no decisions" width="1000" '
            'height="40"><text x="0" y="20">no decisions recorded</text></svg>'
        )
    peak = max(b["allow"] + b["ask"] + b["deny"] for b in buckets) or 1
    slot = (width - left) / len(buckets)
    bar = min(max(1.0, slot * 0.8), 48.0)
    parts = [
        f'<svg id="chart-timeline" role="img" aria-label="decisions over time" '
        f'viewBox="0 0 {width} {height}" width="100%">'
    ]
    plot = height - bottom
    parts.append(f'<line x1="{left}" y1="{plot}" x2="{width}" y2="{plot}" stroke="#c5ccd3"/>')
    parts.append(f'<text x="0" y="12">{peak}</text><text x="0" y="{plot}">0</text>')
    for i, b in enumerate(buckets):
        x = left + i * slot
        y = float(plot)
        for name in ("allow", "ask", "deny"):
            h = b[name] / peak * (plot - 10)
            if h > 0:
                y -= h
                parts.append(
                    f'<rect class="bar-{name}" x="{x:.1f}" y="{y:.1f}" '
                    f'width="{bar:.1f}" height="{h:.1f}" fill="{_COLORS[name]}">'
                    f"<title>{escape(str(b['bucket']))}: {b[name]} {name}</title></rect>"
                )
    step = max(1, len(buckets) // 8)
    for i in range(0, len(buckets), step):
        label = str(buckets[i]["bucket"]).replace("T", " ")[:16]
        parts.append(f'<text x="{left + i * slot:.1f}" y="{height - 20}">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _hbars_svg(
    svg_id: str, label: str, rows: Sequence[tuple[str, dict[str, int]]], series: Sequence[str]
) -> str:
    if not rows:
        return (
            f'<svg id="{svg_id}" role="img" aria-label="{escape(label)}" width="1000" '
            f'height="40"><text x="0" y="20">nothing recorded</text></svg>'
        )
    width, row_h, left = 1000, 24, 260
    peak = max(sum(v.values()) for _, v in rows) or 1
    height = row_h * len(rows) + 10
    parts = [
        f'<svg id="{svg_id}" role="img" aria-label="{escape(label)}" '
        f'viewBox="0 0 {width} {height}" width="100%">'
    ]
    for i, (name, values) in enumerate(rows):
        y = i * row_h + 4
        parts.append(f'<text x="0" y="{y + 14}">{escape(name[:40])}</text>')
        x = float(left)
        for s in series:
            w = values.get(s, 0) / peak * (width - left - 60)
            if w > 0:
                parts.append(
                    f'<rect class="bar-{s}" x="{x:.1f}" y="{y}" width="{w:.1f}" '
                    f'height="{row_h - 8}" fill="{_COLORS.get(s, "#c8453b")}"><title>'
                    f"{escape(name)}: {values[s]} {escape(s)}</title></rect>"
                )
                x += w
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 14}">{sum(values.values())}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(
    table_id: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[dict[str, Any]],
    numeric: Iterable[str] = (),
) -> str:
    numbers = set(numeric)
    head = "".join(f"<th>{escape(title)}</th>" for _, title in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class=t>{_when(row.get(key))}</td>"
            if key == "ts" or key.endswith("_ts")
            else f"<td{' class=n' if key in numbers else ''}>{_e(row.get(key))}</td>"
            for key, _ in columns
        )
        + "</tr>"
        for row in rows
    )
    if not rows:
        body = f'<tr><td colspan="{len(columns)}" class="muted">none</td></tr>'
    return _scroll(
        f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def render_report_html(report: dict[str, Any]) -> str:
    """The page for :func:`~ledger._query.report.build_report` data."""
    overview = report["overview"]
    denials = [
        (r["code"] or "(no code)", {"deny": r["n"]})
        for r in report["decisions_by_code"]
        if r["decision"] == "deny"
    ]
    lines = [
        (r["directory"], {k: r[k] for k in ("agent", "git", "unknown")})
        for r in report["lines_by_directory"]
    ]
    left_out = report.get("left_out") or []
    verified = not left_out and all(
        item["verification"] == "verified" for item in report["ledgers"]
    )
    status = "".join(
        f'<li class="{"ok" if item["verification"] == "verified" else "bad"}">'
        f"{escape(item['label'])}: {escape(item['summary'])}</li>"
        for item in report["ledgers"]
    )
    status += "".join(f'<li class="bad">left out: {escape(why)}</li>' for why in left_out)
    status += "".join(
        f'<li class="{"ok" if c["ok"] else "bad"}">checkpoint {escape(c["name"])}: '
        f"{escape(c['message'])}</li>"
        for c in report["checkpoints"]
    )
    # "no checkpoint" only when no ledger's own verification compared one (the stored ones)
    if not report["checkpoints"] and not any(
        "checkpoint" in item["summary"] for item in report["ledgers"]
    ):
        status += (
            '<li class="muted">no checkpoint compared (pass --checkpoint FILE to prove '
            "the ledger was not truncated)</li>"
        )
    denied = sum(r["n"] for r in report["decisions_by_code"] if r["decision"] == "deny")
    asked = sum(r["n"] for r in report["decisions_by_code"] if r["decision"] == "ask")
    cards = "".join(
        f'<div class="card">{label}<b>{value}</b></div>'
        for label, value in (
            ("records", overview["records"]),
            ("sessions", len(report["sessions"])),
            ("denials", denied),
            ("sent to a human", asked),
            ("files written", len(report["top_files"])),
        )
    )
    basis = (
        "from the current blame"
        if report["lines_basis"] == "blame"
        else "estimate without blame: lines of the last recorded agent write while the file is "
        "unchanged count as agent; everything else is unknown"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ledger report</title><style>{_CSS}</style></head>
<body>
<h1>ledger report</h1>
<p class="muted">generated {_when(report["generated_at"])} · records from
{_when(overview["first_ts"])} to {_when(overview["last_ts"])} · ledger {_e(overview["ledgers"])}</p>
<div class="cards">{cards}</div>
<h2 id="verification">Verification {
        "<span class=ok>✓</span>" if verified else "<span class=bad>✗</span>"
    }</h2><ul>{status}</ul>
<h2>Decisions over time (per {escape(report["timeline"]["unit"])})</h2>
{_legend(("allow", "ask", "deny"))}{_scroll(_timeline_svg(report["timeline"]))}
<h2>Denials by code</h2>
{_scroll(_hbars_svg("chart-denials", "denials by code", denials, ("deny",)))}
<h2>Lines by status per directory</h2>
<p class="muted">{escape(basis)}</p>
{_legend(("agent", "git", "unknown"))}
{_scroll(_hbars_svg("chart-lines", "lines per directory", lines, ("agent", "git", "unknown")))}
<h2>Sessions</h2>
{
        _table(
            "sessions",
            (
                ("session", "session"),
                ("client", "client"),
                ("models", "models"),
                ("intents", "intents"),
                ("first_ts", "first"),
                ("last_ts", "last"),
                ("calls", "calls"),
                ("denials", "denied"),
                ("asks", "asked"),
                ("lines_written", "lines written"),
            ),
            report["sessions"],
            ("calls", "denials", "asks", "lines_written"),
        )
    }
<h2>Per intent</h2>
{
        _table(
            "intents",
            (
                ("intent", "intent"),
                ("calls", "calls"),
                ("denials", "denied"),
                ("asks", "asked"),
                ("codes", "refusal codes"),
            ),
            report["per_intent"],
            ("calls", "denials", "asks"),
        )
    }
<h2>Destructive commands and their human approvals</h2>
{
        _table(
            "destructive",
            (
                ("ts", "time"),
                ("session", "session"),
                ("intent", "intent"),
                ("paths", "files"),
                ("outcome", "answer"),
                ("reason", "reason"),
            ),
            report["destructive"],
        )
    }
<h2>Most-touched files</h2>
{
        _table(
            "files",
            (
                ("path", "path"),
                ("writes", "writes"),
                ("lines_written", "lines written"),
                ("sessions", "sessions"),
                ("last_write", "last write"),
            ),
            report["top_files"],
            ("writes", "lines_written", "sessions"),
        )
    }
</body></html>
"""
