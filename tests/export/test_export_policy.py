"""``ledger export --disclose policy``: an export carries the disclosures ``hooks.yaml``'s
``disclose:`` names, exactly the ones ``ledger push`` publishes; the signed manifest names the
fields (``disclosed_fields``), and ``verify-export`` fails a carried disclosure of any other
field, even one that opens its commitment and was re-signed by the ledger's own key (an
insider slipping a prompt into an export that says it carries command lines only).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ledger import (
    ConfigError,
    DisclosureStore,
    ExportOptions,
    Ledger,
    export_ledger,
    push_workspace_evidence,
    verify_export,
)
from ledger._evidence.disclosure import DEFAULT_DISCLOSE
from ledger._evidence.remote import DISCLOSURE_REFS
from tests.cli.inprocess import run_in_process
from tests.evidence.test_disclosure_sharing import COMMAND, FILE, PROMPT, REASON, _session
from tests.evidence.test_remote import Team, git, home


def _export(ledger: Ledger, out: Path, **options: Any) -> dict[str, Any]:
    return export_ledger(ledger, ExportOptions(out, "jsonl", **options)).manifest


def _disclosures(lines: bytes) -> set[bytes]:
    """The disclosure lines (tombstones aside) of a disclosures.jsonl."""
    return {line for line in lines.splitlines() if line and b'"forgotten"' not in line}


def _resign(ledger: Ledger, out: Path, lines: list[bytes], **manifest_changes: Any) -> None:
    """Replace the export's disclosures.jsonl with ``lines``, re-hash and re-sign the manifest
    with the ledger's own key (an insider's forgery), changing what ``manifest_changes`` says."""
    path = out / "disclosures.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest.update(manifest_changes)
    entries = [e for e in manifest["files"] if e["path"] != "disclosures.jsonl"]
    entries.append(
        {
            "bytes": path.stat().st_size,
            "path": "disclosures.jsonl",
            "role": "disclosures",
            "rows": len(lines),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }
    )
    manifest["files"] = entries
    payload = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (out / "manifest.json").write_bytes(payload)
    signature = base64.b64encode(ledger.active_signing_key().sign(payload))
    (out / "manifest.sig").write_bytes(signature + b"\n")


@pytest.mark.parametrize(
    ("disclose", "carried", "withheld"),
    [
        (None, {COMMAND, REASON}, {PROMPT, FILE}),
        (["prompt"], {PROMPT}, {COMMAND, REASON, FILE}),
        (["tool_input"], {COMMAND, FILE}, {PROMPT, REASON}),
        ([], set(), {PROMPT, COMMAND, REASON, FILE}),
    ],
    ids=["default", "prompt", "tool_input", "none"],
)
def test_export_policy_carries_exactly_what_push_publishes(
    tmp_path: Path, disclose: list[str] | None, carried: set[str], withheld: set[str]
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    if disclose is not None:
        hooks = team.a_root / ".orchestration" / "hooks.yaml"
        hooks.write_text(f"disclose: {json.dumps(disclose)}\n")
    pushed = push_workspace_evidence(team.a_root, environ=home(team.base / "ha"))
    ref = DISCLOSURE_REFS + ledger.ledger_id
    published = (
        git(team.bare, "cat-file", "blob", f"{ref}:disclosures.jsonl").encode()
        if pushed.disclosed
        else b""
    )
    out = tmp_path / "x"
    manifest = _export(ledger, out, disclose="policy")
    exported = (out / "disclosures.jsonl").read_bytes()
    assert _disclosures(exported) == _disclosures(published)
    for value in carried:
        assert json.dumps(value).encode()[1:-1] in exported
    for value in withheld:
        assert json.dumps(value).encode()[1:-1] not in exported
    assert manifest["disclose"] == "policy"
    assert manifest["disclosed_fields"] == (
        list(DEFAULT_DISCLOSE) if disclose is None else disclose
    )
    check = verify_export(out)
    assert check.ok, check.problems
    assert check.disclosures is not None
    assert check.disclosures.disclosed == len(carried)
    assert check.disclosures.withheld == check.disclosures.committed - len(carried)


def test_none_stays_the_default_and_all_names_no_field_limit(tmp_path: Path) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    plain = _export(ledger, tmp_path / "plain")
    assert (plain["disclose"], plain["disclosed_fields"]) == ("none", [])
    assert not (tmp_path / "plain" / "disclosures.jsonl").exists()
    full = _export(ledger, tmp_path / "full", disclose="all")
    assert (full["disclose"], full["disclosed_fields"]) == ("all", None)
    assert verify_export(tmp_path / "full").ok


def test_an_explicit_policy_overrides_hooks_yaml(tmp_path: Path) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    manifest = _export(ledger, tmp_path / "x", disclose="policy", policy=("reason",))
    assert manifest["disclosed_fields"] == ["reason"]
    exported = (tmp_path / "x" / "disclosures.jsonl").read_bytes()
    assert REASON.encode() in exported
    assert COMMAND.encode() not in exported


def test_verify_export_fails_a_prompt_slipped_into_a_policy_export_and_resigned(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    out = tmp_path / "x"
    _export(ledger, out, disclose="policy")
    store = DisclosureStore.beside(ledger.file.path)
    prompt = next(line["_raw"] for line in store.lines() if line.get("field") == "prompt")
    lines = (out / "disclosures.jsonl").read_bytes().splitlines()
    _resign(ledger, out, [*lines, prompt.rstrip(b"\n")])
    check = verify_export(out)
    assert [p.code for p in check.problems] == ["undisclosed-field"]
    assert "prompt" in check.problems[0].message
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    done = run_in_process(["verify-export", str(out)], stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 1
    assert "undisclosed-field" in done.stdout.decode()


def test_verify_export_fails_disclosures_in_an_export_whose_manifest_says_none(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    out = tmp_path / "x"
    _export(ledger, out)
    store = DisclosureStore.beside(ledger.file.path)
    command = next(line["_raw"] for line in store.lines() if line.get("value") == COMMAND)
    _resign(ledger, out, [command.rstrip(b"\n")])
    check = verify_export(out)
    assert [p.code for p in check.problems] == ["undisclosed-field"]
    assert "--disclose none names: none" in check.problems[0].message


def test_a_policy_export_with_a_bad_disclose_setting_is_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    team = Team(tmp_path)
    ledger = _session(team)
    (team.a_root / ".orchestration" / "hooks.yaml").write_text("disclose: {prompt: yes}\n")
    out = tmp_path / "x"
    with pytest.raises(ConfigError, match="disclose must list the fields"):
        _export(ledger, out, disclose="policy")
    assert not out.exists()
    assert list(tmp_path.glob(".x.*")) == []
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    args = ["export", "--format", "jsonl", "--disclose", "policy", "--out", str(out)]
    done = run_in_process(args, stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert "disclose must list the fields" in done.stderr.decode()


def test_the_cli_names_the_fields_a_policy_export_carries(tmp_path: Path) -> None:
    team = Team(tmp_path)
    _session(team)
    env = {**home(team.base / "ha"), "HOME": str(tmp_path / "user")}
    out = tmp_path / "x"
    args = ["export", "--format", "jsonl", "--disclose", "policy", "--out", str(out)]
    done = run_in_process(args, stdin=b"", cwd=team.a_root, env=env)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "2 disclosure line(s) in disclosures.jsonl (--disclose policy: " in text
    assert "tool_input.command" in text
    checked = run_in_process(
        ["verify-export", str(out), "--json"], stdin=b"", cwd=team.a_root, env=env
    )
    assert checked.returncode == 0, checked.stdout
    assert json.loads(checked.stdout)["disclosures"]["disclosed"] == 2
