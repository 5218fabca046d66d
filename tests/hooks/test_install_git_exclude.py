"""``ledger install`` never leaves a file naming this machine's paths for ``git add -A``: each
one is listed in the repository's ``info/exclude`` (never committed), and uninstall takes the
lines back once their files are gone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ledger._clients.install import install, uninstall

from ._support import make_workspace


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _untracked_after_add_all(root: Path) -> list[str]:
    _git(root, "add", "-A")
    return _git(root, "diff", "--cached", "--name-only").splitlines()


@pytest.mark.parametrize("client", ["claude", "gemini", "cursor", "codex", "copilot", "vscode"])
def test_git_add_all_commits_no_file_naming_this_machine(tmp_path: Path, client: str) -> None:
    ws = make_workspace(tmp_path)
    _git(ws.root, "init", "-q")
    _, changes = install(client, root=ws.root, home=tmp_path / "home", ledger_cmd="/opt/x/ledger")
    staged = _untracked_after_add_all(ws.root)
    naming = [
        name for name in staged if "/opt/x/ledger" in (ws.root / name).read_text(encoding="utf-8")
    ]
    assert naming == [], staged
    assert any(c.target == ".git/info/exclude" for c in changes)
    assert not any("keep it out of git" in c.detail for c in changes)


def test_uninstall_takes_its_lines_back_and_keeps_the_persons(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    _git(ws.root, "init", "-q")
    exclude = ws.root / ".git" / "info" / "exclude"
    exclude.write_text("*.log\n", encoding="utf-8")
    install("claude", root=ws.root, home=tmp_path / "home", ledger_cmd="/opt/x/ledger")
    assert "/.mcp.json" in exclude.read_text(encoding="utf-8")
    install("claude", root=ws.root, home=tmp_path / "home", ledger_cmd="/opt/x/ledger")
    assert exclude.read_text(encoding="utf-8").count("/.mcp.json") == 1  # idempotent
    uninstall("claude", root=ws.root, home=tmp_path / "home")
    assert exclude.read_text(encoding="utf-8") == "*.log\n"


def test_a_tracked_file_is_named_since_excluding_cannot_hide_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    _git(ws.root, "init", "-q")
    (ws.root / ".mcp.json").write_text('{"mcpServers": {}}\n', encoding="utf-8")
    _git(ws.root, "add", ".mcp.json")
    _, changes = install("claude", root=ws.root, home=tmp_path / "home", ledger_cmd="/x/ledger")
    notes = [c for c in changes if c.action == "note" and c.target == ".mcp.json"]
    assert any("git tracks this file" in c.detail for c in notes)


def test_outside_a_git_repository_nothing_is_written_and_the_note_stays(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    _, changes = install("claude", root=ws.root, home=tmp_path / "home", ledger_cmd="/x/ledger")
    assert not (ws.root / ".git").exists()
    assert any("keep it out of git" in c.detail for c in changes)
