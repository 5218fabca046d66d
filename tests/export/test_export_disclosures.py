"""What an export carries of committed content, and how ``verify-export`` checks it.

By default nothing: digests only, whatever the format. ``--disclose all`` adds the selected
records' disclosures; ``verify-export`` opens each one against its commitment in the segment
and fails, naming the seq and field, on one that does not open (a doctored value or salt, even
with the manifest re-hashed and re-signed by the ledger's own key), and counts the fields it
cannot open as withheld, or forgotten. Records from before format v3 (content verbatim) are
exported only when asked for by name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ledger._evidence.record as record_module
from ledger import (
    ExportOptions,
    ForgetSelector,
    InputError,
    Ledger,
    export_ledger,
    verify_export,
)
from ledger._evidence.ledger import forget
from tests.cli.inprocess import run_ledger
from tests.hooks._support import Session, Workspace, make_workspace

CODENAME = "Operation Bluefin launches on the ninth"
TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"


def _workspace(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    alice = Session(ws, "alice")
    alice.event("UserPromptSubmit", prompt=f"{CODENAME}; the token is {TOKEN}")
    alice.select("INT-001")
    alice.pre("Bash", {"command": f"grep -rn '{CODENAME}' src"})
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "w").mkdir()
    return _workspace(tmp_path / "w")


def _export(ws: Workspace, out: Path, fmt: str = "jsonl", **options: Any) -> dict[str, Any]:
    ledger = Ledger.open(ws.root, environ=ws.env)
    return export_ledger(ledger, ExportOptions(out, fmt, **options)).manifest


def _bytes_under(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl", "agent-trace"])
def test_an_export_carries_no_content_by_default(ws: Workspace, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "x"
    manifest = _export(ws, out, fmt)
    assert manifest["disclose"] == "none"
    assert not (out / "disclosures.jsonl").exists()
    carried = _bytes_under(out)
    assert CODENAME.encode() not in carried
    assert TOKEN.encode() not in carried
    check = verify_export(out)
    assert check.ok, check.problems
    assert check.disclosures is not None
    assert check.disclosures.committed > 0
    assert check.disclosures.withheld == check.disclosures.committed  # every field withheld
    assert f"{check.disclosures.committed} fields withheld (0 forgotten)" in check.summary()


def test_disclose_all_carries_the_disclosures_and_each_opens_its_commitment(
    ws: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "x"
    manifest = _export(ws, out, disclose="all")
    assert manifest["disclose"] == "all"
    [entry] = [f for f in manifest["files"] if f["role"] == "disclosures"]
    carried = (out / entry["path"]).read_bytes()
    assert entry["rows"] == len(carried.splitlines()) > 0
    assert CODENAME.encode() in carried
    assert TOKEN.encode() not in _bytes_under(out)  # the store never held it
    check = verify_export(out)
    assert check.ok, check.problems
    assert check.disclosures is not None
    assert check.disclosures.withheld == 0
    assert check.to_json()["disclosures"]["disclosed"] == check.disclosures.committed


def test_a_filtered_export_carries_only_the_selected_records_disclosures(
    ws: Workspace, tmp_path: Path
) -> None:
    other = Session(ws, "bob")
    other.event("UserPromptSubmit", prompt="bob's own plans for the quarter")
    out = tmp_path / "x"
    _export(ws, out, disclose="all", session="alice")
    carried = (out / "disclosures.jsonl").read_bytes()
    assert CODENAME.encode() in carried
    assert b"bob's own plans" not in carried
    assert verify_export(out).ok


def _tamper_disclosure(out: Path, ws: Workspace, change: dict[str, Any]) -> str:
    """Change one carried disclosure, then re-hash and re-sign the manifest with the ledger's
    own key (an insider's forgery); returns the field changed."""
    path = out / "disclosures.jsonl"
    lines = path.read_bytes().splitlines()
    first = json.loads(lines[0])
    first["disclosed"].update(change)
    lines[0] = json.dumps(first, separators=(",", ":"), ensure_ascii=False).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "disclosures.jsonl":
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
            entry["bytes"] = path.stat().st_size
    payload = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (out / "manifest.json").write_bytes(payload)
    key = Ledger.open(ws.root, environ=ws.env).active_signing_key()
    (out / "manifest.sig").write_bytes(base64.b64encode(key.sign(payload)) + b"\n")
    return str(first["disclosed"]["field"])


@pytest.mark.parametrize(
    "change", [{"value": "a different prompt"}, {"salt": "00" * 16}], ids=["value", "salt"]
)
def test_verify_export_fails_a_doctored_disclosure_naming_seq_and_field(
    ws: Workspace, tmp_path: Path, change: dict[str, Any]
) -> None:
    out = tmp_path / "x"
    _export(ws, out, disclose="all")
    field = _tamper_disclosure(out, ws, change)
    check = verify_export(out)
    assert [p.code for p in check.problems] == ["bad-disclosure"]
    assert field in check.problems[0].message
    assert "seq " in check.problems[0].message
    done = run_ledger("verify-export", str(out), env=ws.proc_env)
    assert done.returncode == 1
    assert "bad-disclosure" in done.stdout


def test_verify_export_counts_a_forgotten_field(ws: Workspace, tmp_path: Path) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    assert forget(ledger, ForgetSelector(match="Bluefin")).fields >= 1
    out = tmp_path / "x"
    _export(ws, out, disclose="all")
    assert CODENAME.encode() not in _bytes_under(out)
    check = verify_export(out)
    assert check.ok, check.problems
    assert check.disclosures is not None
    assert check.disclosures.forgotten >= 1
    assert "forgotten)" in check.summary()


def test_an_export_of_records_holding_content_verbatim_needs_the_flag_that_says_so(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger.open(ws.root, environ=ws.env)
    monkeypatch.setattr(record_module, "FORMAT_VERSION", 2)  # as the previous release wrote
    ledger._append_entries([("hook.event", {"prompt": CODENAME})], internal=True)
    monkeypatch.undo()
    out = tmp_path / "x"
    with pytest.raises(InputError, match="--publish-verbatim-content"):
        _export(ws, out)
    assert not out.exists()
    _export(ws, out, verbatim=True)
    assert verify_export(out).ok


def test_the_cli_exports_with_and_without_disclosures(ws: Workspace, tmp_path: Path) -> None:
    plain, full = tmp_path / "plain", tmp_path / "full"
    args = ["export", "--root", str(ws.root), "--format", "jsonl", "--out"]
    done = run_ledger(*args, str(plain), env=ws.proc_env)
    assert done.returncode == 0, done.stderr
    assert "content: none" in done.stdout
    done = run_ledger(*args, str(full), "--disclose", "all", env=ws.proc_env)
    assert done.returncode == 0, done.stderr
    assert "disclosure line(s) in disclosures.jsonl" in done.stdout
    bad = run_ledger(*args, str(tmp_path / "bad"), "--disclose", "some", env=ws.proc_env)
    assert bad.returncode == 3
    assert "--disclose 'some'" in bad.stderr
    checked = run_ledger("verify-export", str(full), "--json", env=ws.proc_env)
    assert checked.returncode == 0, checked.stdout
    assert json.loads(checked.stdout)["disclosures"]["withheld"] == 0


def _doc_script() -> str:
    """The shell check docs/auditors.md gives auditors, as written there."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "auditors.md").read_text()
    marker = page.index("tests/export/test_export_disclosures.py runs it there")
    start = page.index("```sh\n", marker) + len("```sh\n")
    return page[start : page.index("```", start)]


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="sha256sum is in coreutils")
def test_the_auditors_shell_check_opens_every_disclosure_and_catches_a_doctored_one(
    ws: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "x"
    _export(ws, out, disclose="all")
    script = _doc_script()
    good = subprocess.run(
        ["bash", "-c", script], cwd=out, capture_output=True, text=True, check=False
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout == ""
    _tamper_disclosure(out, ws, {"value": "a different prompt"})
    bad = subprocess.run(
        ["bash", "-c", script], cwd=out, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert "does not open" in bad.stdout
