"""``ledger report --range``: the review as a page, rendered in headless Chromium."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._review import build_review, render_review_html
from tests.cli.inprocess import run_in_process
from tests.query.test_report import CHROMIUM_FLAGS, _chromium, chromium_env
from tests.review._support import based_world, commit


@pytest.fixture
def reviewed(tmp_path: Path) -> tuple[dict[str, Any], Path, dict[str, str]]:
    world, _ = based_world(tmp_path)
    world.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    world.write("s2", "docs/<guide>.md", "guide & <b>more</b>\n")
    (world.root / "README").write_text("hello\nperson\n", encoding="utf-8")
    commit(world)
    review = build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env, by="intent")
    return review, world.root, world.ws.env


def test_the_page_is_self_contained_and_escapes_what_it_shows(
    reviewed: tuple[dict[str, Any], Path, dict[str, str]],
) -> None:
    page = render_review_html(reviewed[0])
    assert "default-src 'none'" in page
    assert "<script" not in page
    assert not re.search(r"(?:src|href)=\"?https?:", page)
    assert "docs/&lt;guide&gt;.md" in page
    assert "<b>more</b>" not in page
    for table in ("files", "intents", "agent-lines", "evidence"):
        assert f'<table id="{table}">' in page
    assert '<svg id="chart-history"' in page


def test_cli_report_range_writes_the_page(
    reviewed: tuple[dict[str, Any], Path, dict[str, str]], tmp_path: Path
) -> None:
    import os  # noqa: PLC0415

    _, root, env = reviewed
    out = tmp_path / "out"
    args = ["report", "--range", "HEAD~1..HEAD", "--by", "week", "--out", str(out)]
    done = run_in_process(args, stdin=b"", cwd=root, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Shares by week" in page
    again = run_in_process(args, stdin=b"", cwd=root, env={**os.environ, **env})
    assert again.returncode == 3
    assert "--force" in again.stderr.decode()


@pytest.mark.slow
def test_the_review_page_renders_in_headless_chromium(
    reviewed: tuple[dict[str, Any], Path, dict[str, str]], tmp_path: Path
) -> None:
    chromium = _chromium()
    page = tmp_path / "review.html"
    page.write_text(render_review_html(reviewed[0]), encoding="utf-8")
    dom = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=chromium_env(tmp_path),
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    for chart in ("chart-files", "chart-history"):
        assert re.search(rf'<svg id="{chart}"[^>]*>.*?<rect', dom.stdout, re.S), chart
    assert re.search(r'<table id="agent-lines">.*?INT-001', dom.stdout, re.S)
    console = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line
    ]
    assert console == []
