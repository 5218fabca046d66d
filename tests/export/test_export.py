"""``ledger export`` and ``ledger verify-export``: contents, Agent Trace validity, tampering."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pytest

from ledger import (
    ExportOptions,
    InputError,
    Ledger,
    SigningKey,
    StorageError,
    export_ledger,
    verify_export,
)
from ledger._export.manifest import generate_schemas, render
from tests.cli.inprocess import run_ledger
from tests.query._governed import BOB, Governed, governed_workspace

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMAS = ROOT / "schemas"
LEDGER_BIN = Path(sys.executable).parent / "ledger"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Governed:
    return governed_workspace(tmp_path_factory.mktemp("governed"))


def open_ledger(governed: Governed) -> Ledger:
    return Ledger.open(governed.ws.root, environ=governed.ws.env)


def export(
    governed: Governed, out: Path, fmt: str = "parquet", **options: object
) -> dict[str, Any]:
    return export_ledger(open_ledger(governed), ExportOptions(out, fmt, **options)).manifest  # type: ignore[arg-type]


def codes(directory: Path) -> set[str]:
    return {p.code for p in verify_export(directory).problems}


# --- contents ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl", "agent-trace"])
def test_every_format_exports_and_verifies(governed: Governed, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "export"
    manifest = export(governed, out, fmt)
    check = verify_export(out)
    assert check.ok, check.problems
    jsonschema.validate(
        json.loads((out / "manifest.json").read_text()),
        json.loads((SCHEMAS / "export/manifest.v1.schema.json").read_text()),
    )
    records = len(governed.ledger_path.read_bytes().splitlines())
    assert manifest["segment"]["first_seq"] == 0
    assert manifest["segment"]["records"] == records
    assert (out / "segment/agent_trace.jsonl").read_bytes() == governed.ledger_path.read_bytes()
    assert manifest["gaps"] == {"state": "none", "missing": []}
    assert manifest["verification"]["state"] == "verified"
    assert manifest["complete"] is True
    assert manifest["retention"]["period_months"] == 6
    kid = manifest["signing_key"]
    assert {f["path"] for f in manifest["files"] if f["role"] == "key"} == {
        f"keys/{kid}.json",
        f"keys/{kid}.pem",
    }
    assert [k["kid"] for k in manifest["keys"]] == [kid]
    data = [f for f in manifest["files"] if f["role"] == "data"]
    assert all(f["query"] and "segment/agent_trace.jsonl" in f["query"] for f in data)
    if fmt != "agent-trace":
        assert sum(f["rows"] for f in data) == manifest["selected_records"] == records


def test_parquet_is_hive_partitioned_by_ledger_and_date(governed: Governed, tmp_path: Path) -> None:
    manifest = export(governed, tmp_path / "x")
    ledger_id = manifest["ledger_id"]
    found = duckdb.execute(
        f"SELECT ledger_id, count(*) FROM read_parquet('{tmp_path}/x/data/**/*.parquet', "
        "hive_partitioning = true) GROUP BY ALL"
    ).fetchall()
    assert found == [(ledger_id, manifest["selected_records"])]
    part = next(f for f in manifest["files"] if f["role"] == "data")
    assert part["path"].startswith(f"data/ledger_id={ledger_id}/date=")


def test_the_stated_query_reproduces_the_data_file(governed: Governed, tmp_path: Path) -> None:
    manifest = export(governed, tmp_path / "x", "csv")
    entry = next(f for f in manifest["files"] if f["role"] == "data")
    cwd = Path.cwd()
    os.chdir(tmp_path / "x")  # the query names the segment relative to the export directory
    try:
        con = duckdb.connect()
        from ledger._query.views import ATTRIBUTION_RANGES_MACRO  # noqa: PLC0415

        con.execute(ATTRIBUTION_RANGES_MACRO)
        rows = con.execute(entry["query"]).fetchall()
    finally:
        os.chdir(cwd)
    assert len(rows) == entry["rows"]


def test_agent_trace_records_validate_against_the_vendored_schema(
    governed: Governed, tmp_path: Path
) -> None:
    export(governed, tmp_path / "x", "agent-trace")
    schema = json.loads((SCHEMAS / "vendor/agent-trace-schema.json").read_text())
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    lines = (tmp_path / "x/data/agent-trace.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the Edit and the Write
    for line in lines:
        record = json.loads(line)
        validator.validate(record)
        assert record["version"] == "0.1.0"
        meta = record["metadata"]["dev.ledger"]
        assert meta["decision"] == "allow"
        assert len(meta["record_hash"]) == 64
        assert isinstance(meta["seq"], int)
        conversation = record["files"][0]["conversations"][0]
        assert conversation["contributor"]["type"] == "ai"
        assert conversation["contributor"]["model_id"].startswith("anthropic/claude-")
        assert {r["type"] for r in conversation["related"]} == {"session", "intent"}
        assert all(r["content_hash"].startswith("sha256:") for r in conversation["ranges"])
        assert record["tool"] == {"name": "claude-code"}


def test_content_hash_is_the_sha256_of_the_written_lines(
    governed: Governed, tmp_path: Path
) -> None:
    import hashlib  # noqa: PLC0415

    export(governed, tmp_path / "x", "agent-trace")
    edit = json.loads((tmp_path / "x/data/agent-trace.jsonl").read_text().splitlines()[0])
    line = '  return jwt.verify(token, secret, { algorithms: ["HS256"] });\n'
    assert edit["files"][0]["conversations"][0]["ranges"] == [
        {
            "start_line": 4,
            "end_line": 4,
            "content_hash": "sha256:" + hashlib.sha256(line.encode()).hexdigest(),
        }
    ]


def test_filtered_export_ships_the_contiguous_segment(governed: Governed, tmp_path: Path) -> None:
    manifest = export(governed, tmp_path / "x", "jsonl", session=BOB)
    assert verify_export(tmp_path / "x").ok
    lines = [json.loads(x) for x in (tmp_path / "x/data/records.jsonl").read_text().splitlines()]
    assert lines
    assert all(BOB in (r["actor"]["session"], r["body"].get("session")) for r in lines)
    segment = [
        json.loads(x) for x in (tmp_path / "x/segment/agent_trace.jsonl").read_text().splitlines()
    ]
    seqs = [r["seq"] for r in segment]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    assert (seqs[0], seqs[-1]) == (lines[0]["seq"], lines[-1]["seq"])
    assert len(segment) > len(lines)  # alice's records in between are in the segment only
    assert manifest["filters"]["session"] == BOB
    assert manifest["segment"]["first_prev"] != "0" * 64


def test_manifest_schema_is_generated_from_the_models() -> None:
    for name, schema in generate_schemas().items():
        committed = SCHEMAS / name
        assert committed.exists(), f"{name} missing: run `python -m ledger._export.manifest`"
        assert committed.read_text(encoding="utf-8") == render(schema), (
            f"{name} drifted from the models: run `python -m ledger._export.manifest`"
        )
        jsonschema.Draft202012Validator.check_schema(schema)


# --- tampering ----------------------------------------------------------------------------------


@pytest.fixture
def exported(governed: Governed, tmp_path: Path):
    def make(fmt: str = "jsonl") -> Path:
        out = tmp_path / f"export-{fmt}"
        if not out.exists():
            export(governed, out, fmt)
        return out

    return make


def test_edited_row_is_detected(exported) -> None:
    out = exported("csv")
    path = out / "data/events.csv"
    path.write_text(path.read_text().replace("STALE_FILE", "SCOPE_VIOLATION", 1))
    assert {"hash-mismatch", "row-mismatch"} <= codes(out)


def test_edited_row_is_detected_even_with_the_manifest_hash_updated(exported) -> None:
    out = exported("jsonl")
    path = out / "data/records.jsonl"
    path.write_text(path.read_text().replace('"decision":"deny"', '"decision":"allow"', 1))
    manifest = json.loads((out / "manifest.json").read_text())
    from ledger._export.export import sha256_file  # noqa: PLC0415

    for entry in manifest["files"]:
        if entry["path"] == "data/records.jsonl":
            entry["sha256"], entry["bytes"] = sha256_file(path), path.stat().st_size
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    found = codes(out)
    assert {"bad-signature", "row-mismatch"} <= found
    assert "hash-mismatch" not in found


def test_deleted_row_is_detected(exported) -> None:
    out = exported("jsonl")
    path = out / "data/records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + lines[4:]))
    assert {"hash-mismatch", "row-count", "row-mismatch", "missing-rows"} <= codes(out)


def test_replaced_file_is_detected(exported, governed: Governed, tmp_path: Path) -> None:
    out = exported("parquet")
    other = tmp_path / "other"
    export(governed, other, "parquet", session=BOB)
    target = next((out / "data").rglob("*.parquet"))
    shutil.copyfile(next((other / "data").rglob("*.parquet")), target)
    assert {"hash-mismatch", "row-count", "row-mismatch"} <= codes(out)


def _resign(out: Path, key: SigningKey, *, ship_key: bool) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["signing_key"] = key.kid
    payload = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (out / "manifest.json").write_bytes(payload)
    (out / "manifest.sig").write_bytes(base64.b64encode(key.sign(payload)) + b"\n")
    if ship_key:
        from ledger import KeyEntry, Keyring  # noqa: PLC0415

        Keyring({}).save_entry(out / "keys", KeyEntry(key.kid, key.public_raw))


def test_manifest_resigned_under_an_unknown_key_is_detected(exported) -> None:
    out = exported("jsonl")
    _resign(out, SigningKey.generate(), ship_key=False)
    assert "unknown-signing-key" in codes(out)


def test_manifest_resigned_under_a_planted_key_is_detected(exported) -> None:
    out = exported("jsonl")
    _resign(out, SigningKey.generate(), ship_key=True)
    assert {"signing-key-not-in-chain", "unlisted-file"} <= codes(out)


def test_trusted_key_pins_the_signer(exported) -> None:
    out = exported("jsonl")
    pinned_elsewhere = {
        p.code
        for p in verify_export(out, trusted_keys=frozenset({"ed25519-0000000000000000"})).problems
    }
    assert "untrusted-signing-key" in pinned_elsewhere
    assert any(code.startswith("segment-") for code in pinned_elsewhere)  # records, too
    kid = json.loads((out / "manifest.json").read_text())["signing_key"]
    assert verify_export(out, trusted_keys=frozenset({kid})).ok


def test_deleted_signature_is_detected(exported) -> None:
    out = exported("jsonl")
    (out / "manifest.sig").unlink()
    assert codes(out) == {"missing-signature"}


def test_truncated_segment_is_detected(exported) -> None:
    out = exported("jsonl")
    path = out / "segment/agent_trace.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-2]))
    assert {"hash-mismatch", "segment-truncated", "segment-count"} <= codes(out)


def test_segment_with_a_gap_is_detected(exported) -> None:
    out = exported("jsonl")
    path = out / "segment/agent_trace.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5] + lines[6:]))
    assert {"hash-mismatch", "segment-seq-gap"} <= codes(out)


def test_path_traversal_in_the_manifest_is_refused(exported) -> None:
    out = exported("jsonl")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"][0]["path"] = "../../../../etc/passwd"
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert {"bad-path", "bad-signature"} <= codes(out)


# --- plain tools -------------------------------------------------------------------------------


def test_auditor_can_verify_with_sha256sum_and_openssl(exported, tmp_path: Path) -> None:
    if shutil.which("openssl") is None or shutil.which("sha256sum") is None:
        pytest.skip("openssl and sha256sum are in every Debian base image; not here")
    out = exported("parquet")
    manifest = json.loads((out / "manifest.json").read_text())
    sums = "".join(f"{f['sha256']}  {f['path']}\n" for f in manifest["files"])
    checked = subprocess.run(
        ["sha256sum", "--check", "--strict", "-"],
        input=sums,
        text=True,
        cwd=out,
        capture_output=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    sig = tmp_path / "manifest.sig.bin"
    sig.write_bytes(base64.b64decode((out / "manifest.sig").read_bytes()))
    cmd = [
        "openssl",
        "pkeyutl",
        "-verify",
        "-pubin",
        "-inkey",
        f"keys/{manifest['signing_key']}.pem",
        "-rawin",
        "-in",
        "manifest.json",
        "-sigfile",
        str(sig),
    ]
    good = subprocess.run(cmd, cwd=out, capture_output=True, text=True, check=False)
    assert good.returncode == 0, good.stdout + good.stderr
    (out / "manifest.json").write_text(
        (out / "manifest.json").read_text().replace('"complete": true', '"complete": false')
    )
    bad = subprocess.run(cmd, cwd=out, capture_output=True, text=True, check=False)
    assert bad.returncode != 0


# --- bad input ----------------------------------------------------------------------------------


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_bad_input_is_refused_and_nothing_is_half_written(
    governed: Governed, tmp_path: Path
) -> None:
    out = tmp_path / "x"
    with pytest.raises(InputError, match="unknown format"):
        export(governed, out, "xml")
    with pytest.raises(InputError, match="not before"):
        export(governed, out, since="2030-01-02", until="2030-01-01")
    with pytest.raises(InputError, match="not a date"):
        export(governed, out, since="yesterday")
    with pytest.raises(InputError, match="no record matches"):
        export(governed, out, intent="INT-404")
    assert not out.exists()
    assert _leftovers(tmp_path) == []
    out.mkdir()
    with pytest.raises(InputError, match="--force"):
        export(governed, out)
    export(governed, out, force=True)
    assert verify_export(out).ok
    assert _leftovers(tmp_path) == []


def test_unwritable_directory_is_a_clear_error(governed: Governed, tmp_path: Path) -> None:
    from tests.query.test_query import unwritable_dir  # noqa: PLC0415

    with pytest.raises((StorageError, InputError), match=r"cannot write|does not exist"):
        export(governed, unwritable_dir(tmp_path) / "x")


# --- CLI ----------------------------------------------------------------------------------------


def cli(governed: Governed, *args: str) -> subprocess.CompletedProcess[str]:
    """``ledger ARGS`` in this process (tests/cli/inprocess.py): its output and exit code."""
    env = {k: v for k, v in os.environ.items() if k not in {"LEDGER_ROOT", "LEDGER_SIGNING_KEY"}}
    env["LEDGER_HOME"] = str(governed.ws.home)
    return run_ledger(*args, env=env)


def test_cli_export_verify_and_query_the_export(governed: Governed, tmp_path: Path) -> None:
    out = tmp_path / "x"
    done = cli(
        governed,
        "export",
        "--root",
        str(governed.ws.root),
        "--out",
        str(out),
        "--format",
        "agent-trace",
        "--retention-months",
        "12",
    )
    assert done.returncode == 0, done.stderr
    assert "verify-export" in done.stdout
    assert json.loads((out / "manifest.json").read_text())["retention"]["period_months"] == 12
    ok = cli(governed, "verify-export", str(out), "--json")
    assert ok.returncode == 0, ok.stdout
    assert json.loads(ok.stdout)["ok"] is True
    again = cli(governed, "export", "--root", str(governed.ws.root), "--out", str(out))
    assert again.returncode == 3
    assert "--force" in again.stderr
    both = cli(
        governed,
        "query",
        "--ledgers",
        str(tmp_path / "*"),
        "--format",
        "json",
        "SELECT ledger_id, count(*) AS n FROM decisions GROUP BY ALL",
    )
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)[0]["n"] == 9
    (out / "manifest.sig").unlink()
    bad = cli(governed, "verify-export", str(out))
    assert bad.returncode == 1
    assert "missing-signature" in bad.stdout
    missing = cli(governed, "verify-export", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "not a directory" in missing.stderr


def test_segment_missing_its_first_record_is_detected(exported) -> None:
    out = exported("jsonl")
    path = out / "segment/agent_trace.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[1:]))
    assert {"hash-mismatch", "segment-bad-anchor", "segment-count"} <= codes(out)
