"""``ledger demo``, run once as the installed command: it works end to end (a tampered copy is
caught, a query, a report and an export an auditor accepts), and it reads well: reasons wrapped
whole, one label for a passing call, jargon glossed, next steps at the end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ledger import verify_export
from ledger._evidence.disclosure import Revealer

LEDGER = Path(sys.executable).parent / "ledger"
WIDTH = 64


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    base = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "XDG_"))}
    env["COLUMNS"] = str(WIDTH)
    env["HOME"] = str(tmp_path_factory.mktemp("user-home"))  # the demo must leave it empty
    done = subprocess.run(
        [str(LEDGER), "demo", "--dir", str(base)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert list(Path(env["HOME"]).iterdir()) == []  # its keys, caches and state: its own home
    return done.stdout, base / "workspace"


def test_demo_catches_the_tampered_copy(demo: tuple[str, Path]) -> None:
    out, _ = demo
    assert "ok:" in out
    assert "FAILED" in out
    assert "truncated" in out


def test_demo_ends_with_a_query_a_report_and_an_accepted_export(demo: tuple[str, Path]) -> None:
    out, workspace = demo
    tail = out[out.index("== ledger query") :]
    assert "STALE_FILE" in tail
    assert (workspace.parent / "report/report.html").exists()
    assert "ok: export of ledger" in tail
    assert verify_export(workspace.parent / "export").ok


def _reasons(out: str) -> list[str]:
    """Each refusal reason as printed: the indented lines under a `-> deny|ask` line, joined."""
    reasons: list[list[str]] = []
    current: list[str] | None = None
    for line in out.splitlines():
        if re.search(r"-> (deny|ask)$", line):
            current = []
            reasons.append(current)
        elif (
            current is not None
            and line.startswith("      ")
            and not line.strip().startswith(("(", "---", "+++", "@@", "+", "}"))
        ):
            current.append(line.strip())
        else:
            current = None
    return [" ".join(parts) for parts in reasons]


def test_refusal_reasons_are_wrapped_whole(demo: tuple[str, Path]) -> None:
    out, workspace = demo
    stored = []
    ledger_path = workspace / ".orchestration" / "agent_trace.jsonl"
    revealer = Revealer.beside(ledger_path)  # a v3 record commits the message; it is disclosed
    for line in ledger_path.read_text().splitlines():
        record = json.loads(line)
        body = revealer.body(record["body"] or {})
        error = body.get("error") if record["kind"] == "hook.pre" else None
        if error and body["decision"] in ("deny", "ask"):
            stored.append(error["message"].split("\n")[0])
    printed = _reasons(out)
    assert len(printed) == len(stored) >= 5
    for shown, message in zip(printed, stored, strict=True):
        # The whole reason, nothing cut: re-joining the wrapped lines gives it back.
        assert shown.endswith(" ".join(message.replace(f"{workspace}/", "").split()))
    for line in out.splitlines():
        if line.startswith("      ") and " " in line.strip():
            assert len(line) <= WIDTH, line


def test_one_label_for_a_passing_call(demo: tuple[str, Path]) -> None:
    out, _ = demo
    labels = re.findall(r"^  \[\w+\] .* -> (\S+)$", out, flags=re.MULTILINE)
    assert set(labels) == {"allow", "deny", "ask"}
    assert "no objection" not in out
    assert "-> recorded" not in out


def test_jargon_is_glossed_once(demo: tuple[str, Path]) -> None:
    out, _ = demo
    assert out.count("(INTENT_EVOLUTION: mutation class:") == 1
    for code in ("INTENT_REQUIRED", "SCOPE_VIOLATION", "STALE_FILE", "ORCHESTRATION_PROTECTED"):
        assert out.count(f"({code}: ") == 1, code


def test_ends_with_next_steps(demo: tuple[str, Path]) -> None:
    out, _ = demo
    tail = out[out.index("next, in a real project:") :]
    for command in (
        "ledger init",
        "ledger install claude",
        "ledger doctor",
        "ledger log --decision deny",
        "ledger checkpoint -o",
    ):
        assert command in tail


def test_the_kept_demo_names_its_report_and_the_report_is_there(demo: tuple[str, Path]) -> None:
    out, workspace = demo
    report = workspace.parent / "report" / "report.html"
    assert f"its report at {report}" in " ".join(out.split())
    assert report.is_file()
