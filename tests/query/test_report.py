"""``ledger report``: the numbers, and the HTML page rendered in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ledger import build_report, render_report_html
from tests.query._governed import ALICE, BOB, Governed, governed_workspace

LEDGER_BIN = Path(sys.executable).parent / "ledger"
#: Where the page's screenshot is kept for a person to look at, when ``LEDGER_TEST_ARTIFACTS``
#: names a folder (a test writes nothing outside its temporary folder otherwise).
ARTIFACTS_ENV = "LEDGER_TEST_ARTIFACTS"
#: Debian's chromium, headless, offline (env/machines/python.md: without the background
#: networking flags it keeps trying to reach Google's hosts).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1200,1800",
)


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Governed:
    return governed_workspace(tmp_path_factory.mktemp("governed"))


@pytest.fixture(scope="module")
def report(governed: Governed) -> dict[str, Any]:
    source = governed.ws.source
    return build_report([source], verifications=[source.verify()])


def test_report_counts_decisions_denials_and_approvals(report: dict[str, Any]) -> None:
    by_code = {(r["decision"], r["code"]): r["n"] for r in report["decisions_by_code"]}
    assert by_code[("deny", "STALE_FILE")] == 1
    assert sum(n for (d, _), n in by_code.items() if d == "deny") == 4
    intents = {r["intent"]: r for r in report["per_intent"]}
    assert intents["INT-001"]["asks"] == 1
    assert [d["outcome"] for d in report["destructive"]] == ["no answer recorded"]
    sessions = {s["session"]: s for s in report["sessions"]}
    assert set(sessions) == {ALICE, BOB}
    assert sessions[BOB]["lines_written"] == 1
    assert report["ledgers"][0]["verification"] == "verified"
    assert report["top_files"][0]["path"] == "src/auth/middleware.ts"
    assert report["top_files"][0]["writes"] == 2


def test_lines_by_directory_count_the_last_write_while_the_file_is_unchanged(
    report: dict[str, Any],
) -> None:
    assert report["lines_basis"] == "blame"  # the lines view (the blame projection)
    (row,) = report["lines_by_directory"]
    assert row["directory"] == "src/auth"
    # alice's Edit rewrote one line and bob's Write added one; both are still there (the
    # attribution-only estimate could credit only the last write)
    assert row["agent"] == 2
    assert "human" not in row  # exactly blame's statuses: agent, git, unknown
    assert row["agent"] + row["git"] + row["unknown"] == 6  # the file has six lines


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "chromium"],
            check=False,
            capture_output=True,
            timeout=900,
        )
        found = shutil.which("chromium")
    if found is None:
        pytest.skip(
            "Debian's chromium is not installed and cannot be installed here (.ci/run installs it)"
        )
    return found


def chromium_env(tmp_path: Path) -> dict[str, str]:
    """Chromium's environment: a home of the test's own, since its crash reporter writes
    ``$HOME/.config/chromium/Crash Reports`` whatever ``--user-data-dir`` says."""
    return {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.mark.slow
def test_report_html_renders_in_headless_chromium(report: dict[str, Any], tmp_path: Path) -> None:
    chromium = _chromium()
    page = tmp_path / "report.html"
    page.write_text(render_report_html(report), encoding="utf-8")
    profile = tmp_path / "profile"
    kept = os.environ.get(ARTIFACTS_ENV)
    shot = (Path(kept) if kept else tmp_path) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    env = chromium_env(tmp_path)
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    for chart in ("chart-timeline", "chart-denials", "chart-lines"):
        assert re.search(rf'<svg id="{chart}"[^>]*>.*?<rect', dom.stdout, re.S), chart
    assert '<table id="sessions">' in dom.stdout
    assert ALICE in dom.stdout
    # the lines legend is blame's statuses, exactly
    legends = re.findall(r'<div class="legend">(.*?)</div>', dom.stdout, re.S)
    assert any(re.findall(r"</i>(\w+)</span>", x) == ["agent", "git", "unknown"] for x in legends)
    console = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line
    ]
    assert console == []
    rendered = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a real page, not a blank one
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_page_is_self_contained(report: dict[str, Any]) -> None:
    page = render_report_html(report)
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script" not in page


def cli(governed: Governed, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LEDGER_BIN), *args, "--root", str(governed.ws.root)],
        capture_output=True,
        text=True,
        check=False,
        env=governed.ws.proc_env,  # its ledger home: never the real ~/.config/ledger
        timeout=120,
    )


def test_cli_report_writes_the_page_and_refuses_to_overwrite(
    governed: Governed, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    done = cli(governed, "report", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Decisions by code" in done.stdout
    assert "STALE_FILE" in done.stdout
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert oct((out / "report.html").stat().st_mode & 0o777) == "0o644"
    again = cli(governed, "report", "--out", str(out))
    assert again.returncode == 3
    assert "--force" in again.stderr
    assert cli(governed, "report", "--out", str(out), "--force").returncode == 0
    data = json.loads(cli(governed, "report", "--json").stdout)
    assert data["overview"]["records"] == len(governed.ledger_path.read_bytes().splitlines())


def test_cli_report_compares_checkpoints(governed: Governed, tmp_path: Path) -> None:
    ckpt = tmp_path / "ledger.ckpt"
    made = subprocess.run(
        [str(LEDGER_BIN), "checkpoint", "--root", str(governed.ws.root), "--out", str(ckpt)],
        env=governed.ws.proc_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    done = cli(governed, "report", "--checkpoint", str(ckpt), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["checkpoints"][0]["ok"] is True


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_report_never_scrolls_the_page_sideways(
    report: dict[str, Any], tmp_path: Path, width: int
) -> None:
    """At a desktop's and a phone's width the page is no wider than the window (wide tables
    and charts scroll inside their own box) and chart text stays legible. Headless Chromium's
    window is at least 500 px wide, so the page is opened in a frame of that width, by a probe
    page whose script reads the frame's scrollWidth into the DOM it dumps."""
    chromium = _chromium()
    (tmp_path / "report.html").write_text(render_report_html(report), encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(
        f'<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="report.html" '
        f'width="{width}" height="900" style="border:0"></iframe><script>'
        'document.getElementById("f").onload = function () {'
        " var d = this.contentDocument, t = d.querySelector('svg text');"
        " document.body.dataset.sw = d.documentElement.scrollWidth;"
        " document.body.dataset.text = t ? t.getBoundingClientRect().height : 0; };"
        "</script></body></html>",
        encoding="utf-8",
    )
    dom = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--allow-file-access-from-files",
            "--window-size=1400,1000",
            "--virtual-time-budget=3000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=chromium_env(tmp_path),
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-sw="(\d+)" data-text="([\d.]+)"', dom.stdout)
    assert found is not None, dom.stdout[-500:]
    assert int(found.group(1)) <= width
    assert float(found.group(2)) >= 8  # chart labels a person can read (px)
    page = render_report_html(report)
    assert "</i>git</span>" in page  # the legend is blame's statuses
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page)
    body = page.split("<body", 1)[1]
    assert not re.search(r"T\d\d:\d\d:\d\d\.\d{6}Z", body)  # no microseconds to wrap


@pytest.mark.parametrize(
    ("seconds", "unit"),
    [(0, "second"), (45, "second"), (600, "minute"), (4 * 3600, "hour"), (9 * 86400, "day")],
)
def test_the_time_chart_bucket_follows_the_span(seconds: int, unit: str) -> None:
    import duckdb  # noqa: PLC0415

    from ledger._query.report import _timeline  # noqa: PLC0415

    con = duckdb.connect()
    con.execute("CREATE TABLE decisions (ts TIMESTAMP, decision VARCHAR)")
    con.execute(
        "INSERT INTO decisions VALUES (TIMESTAMP '2026-11-21 10:00:00', 'allow'), "
        f"(TIMESTAMP '2026-11-21 10:00:00' + INTERVAL {seconds} SECOND, 'deny')"
    )
    timeline = _timeline(con)
    assert timeline["unit"] == unit
    assert sum(b["allow"] + b["deny"] for b in timeline["buckets"]) == 2


def test_the_verification_section_never_contradicts_itself(report: dict[str, Any]) -> None:
    stored = {
        **report,
        "ledgers": [
            {
                **report["ledgers"][0],
                "summary": "ok: 9 records, head seq 8, 2 checkpoint(s) consistent",
            }
        ],
    }
    assert "no checkpoint compared" not in render_report_html(stored)
    bare = {
        **report,
        "checkpoints": [],
        "ledgers": [{**report["ledgers"][0], "summary": "ok: 9 records, head seq 8"}],
    }
    assert "no checkpoint compared" in render_report_html(bare)
