"""Every ``ledger`` command end to end.

Commands run in-process through the console script's own entry point (``cli._entry.main``) with
their own environment, working directory and standard streams, which is what a command's
behaviour depends on. The installed console script itself runs (``spawn=True``) where only a
real process proves the point: that the installed command works, exits with the documented code
and prints no traceback on bad input, runs under dropped privileges, survives input that nests
deep enough to exhaust a fresh interpreter's stack, and imports nothing heavy.

Each test gets its own ``LEDGER_HOME`` (private keys) and workspace; ``LEDGER_SIGNING_KEY`` and
``LEDGER_ROOT`` are removed from the inherited environment. Exit codes (cli/_exit.py):
0 ok, 1 integrity problem, 2 could not check / could not run, 3 invalid input.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.cli.inprocess import run_in_process

LEDGER_BIN = Path(sys.executable).parent / "ledger"
OK, INTEGRITY, UNVERIFIABLE, INVALID_INPUT = 0, 1, 2, 3


class CLI:
    """Runs ``ledger`` with an isolated environment: in-process, or as the installed binary."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.ws = tmp_path / "ws"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"LEDGER_SIGNING_KEY", "LEDGER_ROOT", "LEDGER_HOME"}
        }
        self.env["LEDGER_HOME"] = str(self.home)
        self.env["COLUMNS"] = "120"

    @property
    def ledger_path(self) -> Path:
        return self.ws / ".orchestration" / "agent_trace.jsonl"

    def run(
        self,
        *args: str,
        stdin: bytes = b"",
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        spawn: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """``ledger *args``: in-process, or (``spawn``) as the installed console script."""
        if spawn:
            return self.spawn(*args, stdin=stdin, cwd=cwd, env=env)
        return run_in_process(list(args), stdin=stdin, cwd=cwd or self.tmp, env=env or self.env)

    def spawn(
        self,
        *args: str,
        stdin: bytes = b"",
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[bytes]:
        """``ledger *args`` as the installed console script, in its own process."""
        return subprocess.run(
            [*prefix, str(LEDGER_BIN), *args],
            input=stdin,
            capture_output=True,
            check=False,
            cwd=cwd or self.tmp,
            env=env or self.env,
            timeout=120,
        )

    def ok(
        self,
        *args: str,
        stdin: bytes = b"",
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        spawn: bool = False,
    ) -> str:
        done = self.run(*args, stdin=stdin, cwd=cwd, env=env, spawn=spawn)
        assert done.returncode == OK, (args, done.stdout, done.stderr)
        return done.stdout.decode()

    def init(self) -> None:
        self.ok("init", "--parents", "--root", str(self.ws))

    def append(self, body: object, *extra: str) -> str:
        return self.ok("append", "--root", str(self.ws), *extra, stdin=json.dumps(body).encode())

    def lines(self) -> list[bytes]:
        return self.ledger_path.read_bytes().splitlines()


@pytest.fixture
def cli(tmp_path: Path) -> CLI:
    return CLI(tmp_path)


@pytest.fixture
def ledger(cli: CLI) -> CLI:
    """An initialised workspace with three appended records (seqs 0..3)."""
    cli.init()
    for i in range(3):
        cli.append({"i": i}, "--kind", "app.step")
    return cli


def assert_clean_error(done: subprocess.CompletedProcess[bytes], code: int, fragment: str) -> str:
    """Exit ``code``, one ``ledger: error:`` line on stderr naming ``fragment``, no traceback."""
    stderr = done.stderr.decode()
    assert done.returncode == code, (done.returncode, stderr)
    assert "Traceback" not in stderr
    assert stderr.endswith("\n")
    assert len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("ledger: error: "), stderr
    assert fragment in stderr, stderr
    assert done.stdout == b""
    return stderr


def squash(text: str) -> str:
    """Help text without Rich's box drawing and line wrapping."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


# --- init -------------------------------------------------------------------------------------


def test_init_creates_workspace_and_private_key(cli: CLI) -> None:
    out = cli.ok("init", "--parents", "--root", str(cli.ws), spawn=True)
    assert out.startswith("ledger ")
    assert "signing key ed25519-" in out
    info = json.loads(cli.ok("init", "--root", str(cli.ws), "--json", spawn=True))  # idempotent
    assert {"key", "keyring", "ledger", "ledger_id"} <= set(info)
    assert info["created"] is False
    assert info["ledger_id"] in out
    assert Path(info["ledger"]) == cli.ledger_path
    assert len(cli.lines()) == 1
    genesis = json.loads(cli.lines()[0])
    assert genesis["kind"] == "ledger.genesis"
    assert genesis["key"] == info["key"]
    assert (cli.ws / ".orchestration" / "keys" / f"{info['key']}.json").is_file()
    pem = cli.home / "keys" / f"{info['key']}.pem"
    assert pem.stat().st_mode & 0o777 == 0o600
    assert not list(cli.ws.rglob("*.pem"))


def test_init_uses_current_directory_by_default(cli: CLI) -> None:
    cli.ws.mkdir()
    cli.ok("init", cwd=cli.ws)
    assert cli.ledger_path.is_file()


# --- append -----------------------------------------------------------------------------------


def test_append_body_on_stdin_with_actor_options(ledger: CLI) -> None:
    out = ledger.append(
        {"tool": "Edit", "file": "src/a.py"},
        "--kind",
        "app.review",
        "--client",
        "claude-code",
        "--session",
        "s-1",
        "--agent",
        "reviewer",
        "--model",
        "claude-sonnet-4-5",
    )
    match = re.fullmatch(r"seq 4 ([0-9a-f]{16}) app\.review\n", out)
    assert match, out
    record = json.loads(ledger.lines()[-1])
    assert record["hash"].startswith(match.group(1))
    assert record["body"] == {"file": "src/a.py", "tool": "Edit"}
    assert record["actor"] == {
        "agent": "reviewer",
        "client": "claude-code",
        "model": "claude-sonnet-4-5",
        "session": "s-1",
    }


def test_append_defaults_and_equals_form(ledger: CLI) -> None:
    ledger.append({}, "--kind=app.deploy", "--client=ci")
    ledger.append({"x": "ünï 😀"})
    deploy, default = (json.loads(line) for line in ledger.lines()[-2:])
    assert deploy["kind"] == "app.deploy"
    assert deploy["actor"]["client"] == "ci"
    assert default["kind"] == "app.event"
    assert default["actor"] == {"agent": None, "client": None, "model": None, "session": None}
    assert default["body"] == {"x": "ünï 😀"}


def test_append_json_prints_the_record(ledger: CLI) -> None:
    out = ledger.append({"n": 7}, "--json", "--session", "abc")
    printed = json.loads(out)
    assert printed == json.loads(ledger.lines()[-1])
    assert printed["seq"] == 4
    assert printed["actor"]["session"] == "abc"


def test_append_refuses_a_torn_tail(ledger: CLI) -> None:
    with ledger.ledger_path.open("ab") as handle:
        handle.write(b'{"partial":')
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), stdin=b"{}")
    assert_clean_error(done, INTEGRITY, "ledger repair")
    assert ledger.ledger_path.read_bytes() == before


# --- log --------------------------------------------------------------------------------------


def test_log_shows_recent_records(ledger: CLI) -> None:
    ledger.append({"tool": "Bash"}, "--kind", "app.check", "--client", "cc", "--session", "s9")
    out = ledger.ok("log", "--root", str(ledger.ws))
    rows = out.splitlines()
    assert [int(row.split()[0]) for row in rows] == [0, 1, 2, 3, 4]
    assert "ledger.genesis" in rows[0]
    # session, then what happened: the kind, for an application record (hook.* is reserved)
    assert rows[4].split()[3:5] == ["s9", "app.check"]
    last_two = ledger.ok("log", "--root", str(ledger.ws), "-n", "2").splitlines()
    assert [int(row.split()[0]) for row in last_two] == [3, 4]


def test_log_json_prints_raw_lines_and_filters_by_kind(ledger: CLI) -> None:
    ledger.append({"k": 1}, "--kind", "app.other")
    out = ledger.ok("log", "--root", str(ledger.ws), "--json")
    assert out.encode().splitlines() == ledger.lines()  # the canonical bytes themselves
    steps = ledger.ok("log", "--root", str(ledger.ws), "--json", "--kind", "app.step", "-n", "2")
    assert [json.loads(line)["body"]["i"] for line in steps.splitlines()] == [1, 2]
    unknown = ledger.run("log", "--root", str(ledger.ws), "--kind", "app.stpe")
    assert unknown.returncode == UNVERIFIABLE  # an unknown kind is an error, not silence
    assert "(did you mean 'app.step'?)" in unknown.stderr.decode()


def test_log_count_must_be_positive(ledger: CLI) -> None:
    done = ledger.run("log", "--root", str(ledger.ws), "-n", "0")
    assert done.returncode == UNVERIFIABLE
    assert b"Traceback" not in done.stderr


# --- verify -----------------------------------------------------------------------------------


def test_verify_intact(ledger: CLI) -> None:
    assert ledger.ok("verify", "--root", str(ledger.ws)) == "ok: 4 records, head seq 3\n"
    report = json.loads(ledger.ok("verify", "--root", str(ledger.ws), "--json"))
    assert report["ok"] is True
    assert report["records"] == 4
    assert report["head_seq"] == 3
    assert report["problems"] == []
    assert report["head_hash"] == json.loads(ledger.lines()[-1])["hash"]


def test_verify_tampering_exits_1(ledger: CLI) -> None:
    lines = ledger.lines()
    lines[2] = lines[2].replace(b'"i":1', b'"i":5')
    ledger.ledger_path.write_bytes(b"\n".join(lines) + b"\n")
    done = ledger.run("verify", "--root", str(ledger.ws), spawn=True)
    assert done.returncode == INTEGRITY
    assert done.stdout.decode().startswith("FAILED: 1 problem(s); first at seq 2: bad-hash")
    done = ledger.run("verify", "--root", str(ledger.ws), "--json")
    assert done.returncode == INTEGRITY
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert [(p["code"], p["seq"], p["line"]) for p in report["problems"]] == [("bad-hash", 2, 3)]


def test_verify_torn_tail_exits_1(ledger: CLI) -> None:
    with ledger.ledger_path.open("ab") as handle:
        handle.write(b'{"actor":{"ag')
    done = ledger.run("verify", "--root", str(ledger.ws), "--json")
    assert done.returncode == INTEGRITY
    report = json.loads(done.stdout)
    assert report["only_torn_tail"] is True
    assert [(p["code"], p["category"], p["seq"]) for p in report["problems"]] == [
        ("torn-tail", "torn", 4)
    ]
    human = ledger.run("verify", "--root", str(ledger.ws))
    assert human.returncode == INTEGRITY
    assert b"ledger repair" in human.stdout


def test_verify_without_keyring_exits_2(ledger: CLI) -> None:
    shutil.rmtree(ledger.ws / ".orchestration" / "keys")
    done = ledger.run("verify", "--root", str(ledger.ws))
    assert_clean_error(done, UNVERIFIABLE, "no pinned keys")


@pytest.mark.parametrize("edit", [b'"v":9}', b'"v":"2"}', b"}"], ids=["v9", "string", "removed"])
def test_edited_format_version_is_tampering_exit_1(ledger: CLI, edit: bytes) -> None:
    lines = ledger.lines()
    version = re.search(rb'"v":\d+}$', lines[-1])  # the record's own format version, at its end
    assert version is not None
    last = lines[-1].replace(b"," + version.group(), b"}") if edit == b"}" else lines[-1]
    lines[-1] = last.replace(version.group(), edit)
    assert lines[-1] != ledger.lines()[-1]
    ledger.ledger_path.write_bytes(b"\n".join(lines) + b"\n")
    done = ledger.run("verify", "--root", str(ledger.ws), "--json")
    assert done.returncode == INTEGRITY  # its hash, signature and link were still checked
    report = json.loads(done.stdout)
    codes = [p["code"] for p in report["problems"]]
    assert "bad-hash" in codes
    assert codes[0] in ("unsupported-version", "malformed")


def test_verify_help_documents_exit_codes(cli: CLI) -> None:
    text = squash(cli.ok("verify", "--help"))
    for phrase in (
        "Exit codes:",
        "0 ok/intact",
        "1 integrity problem",
        "torn tail",
        "2 could not check",
        "3 invalid input",
    ):
        assert phrase in text, phrase


# --- checkpoint -------------------------------------------------------------------------------


def test_checkpoint_then_verify_detects_truncation(ledger: CLI) -> None:
    cp = ledger.tmp / "cp.txt"
    out = ledger.ok("checkpoint", "--root", str(ledger.ws), "--out", str(cp))
    assert out == f"checkpoint of 4 records written to {cp}\n"
    text = cp.read_text(encoding="utf-8")
    assert text.splitlines()[1] == "4"
    printed = ledger.ok("checkpoint", "--root", str(ledger.ws))
    assert printed == text  # deterministic: same head, same key
    as_json = json.loads(ledger.ok("checkpoint", "--root", str(ledger.ws), "--json"))
    assert as_json["size"] == 4
    assert as_json["text"] == text
    assert as_json["written_to"] is None
    assert ledger.ok("verify", "--root", str(ledger.ws), "--checkpoint", str(cp)).startswith(
        "ok: 4 records, head seq 3, 1 checkpoint(s) consistent"
    )
    ledger.append({"after": "checkpoint"})  # growing past a checkpoint is fine
    assert ledger.run("verify", "--root", str(ledger.ws), "--checkpoint", str(cp)).returncode == 0

    lines = ledger.lines()
    ledger.ledger_path.write_bytes(b"\n".join(lines[:3]) + b"\n")  # drop seqs 3 and 4
    assert ledger.run("verify", "--root", str(ledger.ws)).returncode == OK  # chain alone: fine
    done = ledger.run("verify", "--root", str(ledger.ws), "--checkpoint", str(cp), "--json")
    assert done.returncode == INTEGRITY
    report = json.loads(done.stdout)
    assert [(p["code"], p["seq"]) for p in report["problems"]] == [("truncated", 3)]
    assert report["checkpoints"][0]["code"] == "truncated"


def test_verify_with_missing_checkpoint_file_exits_2(ledger: CLI) -> None:
    done = ledger.run(
        "verify", "--root", str(ledger.ws), "--checkpoint", str(ledger.tmp / "nope.txt")
    )
    assert_clean_error(done, UNVERIFIABLE, "cannot read checkpoint")


def test_verify_with_forged_checkpoint_exits_1(ledger: CLI) -> None:
    cp = ledger.tmp / "cp.txt"
    ledger.ok("checkpoint", "--root", str(ledger.ws), "--out", str(cp))
    lines = cp.read_text(encoding="utf-8").split("\n")
    lines[1] = "3"  # claim a different size under the same signature
    cp.write_text("\n".join(lines), encoding="utf-8")
    done = ledger.run("verify", "--root", str(ledger.ws), "--checkpoint", str(cp))
    assert_clean_error(done, INTEGRITY, "does not verify")


# --- repair -----------------------------------------------------------------------------------


def test_repair_fixes_torn_tail(ledger: CLI) -> None:
    assert ledger.ok("repair", "--root", str(ledger.ws)) == (
        "nothing to repair: the ledger ends with a complete record\n"
    )
    torn = b'{"actor":{"agent":null,"cli'
    intact = ledger.ledger_path.read_bytes()
    with ledger.ledger_path.open("ab") as handle:
        handle.write(torn)
    out = ledger.ok("repair", "--root", str(ledger.ws))
    assert re.fullmatch(
        r"repaired: moved 27 torn byte\(s\) to quarantine/\S+\.torn; "
        r"recorded as seq 4\n",
        out,
    ), out
    quarantined = list((ledger.ws / ".orchestration" / "quarantine").iterdir())
    assert [q.read_bytes() for q in quarantined] == [torn]
    assert ledger.ledger_path.read_bytes().startswith(intact)
    repaired = json.loads(ledger.lines()[-1])
    assert repaired["kind"] == "ledger.repaired"
    assert repaired["body"]["removed_bytes"] == len(torn)
    assert ledger.ok("verify", "--root", str(ledger.ws)) == "ok: 5 records, head seq 4\n"
    ledger.append({"after": "repair"})


def test_repair_json(ledger: CLI) -> None:
    with ledger.ledger_path.open("ab") as handle:
        handle.write(b"{")
    result = json.loads(ledger.ok("repair", "--root", str(ledger.ws), "--json"))
    assert result["repaired"] is True
    assert result["removed_bytes"] == 1
    assert result["repair_seq"] == 4


def test_repair_refuses_mid_file_tampering(ledger: CLI) -> None:
    lines = ledger.lines()
    lines[1] = lines[1].replace(b'"i":0', b'"i":9')
    ledger.ledger_path.write_bytes(b"\n".join(lines) + b'\n{"torn')
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("repair", "--root", str(ledger.ws))
    assert_clean_error(done, INTEGRITY, "refusing to repair")
    assert ledger.ledger_path.read_bytes() == before
    assert not (ledger.ws / ".orchestration" / "quarantine").exists()


# --- keys -------------------------------------------------------------------------------------


def test_key_list_rotate_revoke(ledger: CLI) -> None:
    (first,) = json.loads(ledger.ok("key", "list", "--root", str(ledger.ws), "--json"))
    assert first["active"] is True
    assert first["revoked_from_seq"] is None
    out = ledger.ok("key", "rotate", "--root", str(ledger.ws))
    match = re.fullmatch(
        r"rotated (ed25519-[0-9a-f]{16}) -> (ed25519-[0-9a-f]{16}) at seq 4\n", out
    )
    assert match, out
    old, new = match.groups()
    assert old == first["kid"]
    assert (ledger.home / "keys" / f"{new}.pem").is_file()
    keys = {
        k["kid"]: k
        for k in json.loads(ledger.ok("key", "list", "--root", str(ledger.ws), "--json"))
    }
    assert keys[new]["active"] is True
    assert keys[old]["active"] is False
    ledger.append({"signed": "by new key"})  # seq 5
    assert json.loads(ledger.lines()[-1])["key"] == new

    out = ledger.ok(
        "key", "revoke", old, "--from-seq", "5", "--reason", "rotated", "--root", str(ledger.ws)
    )
    assert out == f"revoked {old} from seq 5 (recorded at seq 6)\n"
    listing = ledger.ok("key", "list", "--root", str(ledger.ws))
    assert f"{old}  created" in listing
    assert "REVOKED from seq 5" in listing
    assert f"{new}  created" in listing
    assert "(active: signs new records)" in listing
    assert ledger.run("verify", "--root", str(ledger.ws)).returncode == OK

    # Revoking from a seq the old key did sign makes those records fail verification: refused
    # (exit 2, nothing written) until --yes.
    before = ledger.ledger_path.read_bytes()
    refused = ledger.run("key", "revoke", old, "--from-seq", "2", "--root", str(ledger.ws))
    assert refused.returncode == UNVERIFIABLE
    error, hint = refused.stderr.decode().splitlines()
    assert error.startswith(
        f"ledger: error: revoking {old} from seq 2 makes 3 record(s) it "
        "already signed invalid (seq 2..4)"
    )
    assert hint == "hint: to stop it signing only new records, use --from-seq 7"
    assert ledger.ledger_path.read_bytes() == before
    out = ledger.ok("key", "revoke", old, "--from-seq", "2", "--yes", "--root", str(ledger.ws))
    assert "3 record(s) it signed (seq 2..4) no longer verify" in out
    done = ledger.run("verify", "--root", str(ledger.ws), "--json")
    assert done.returncode == INTEGRITY
    problems = json.loads(done.stdout)["problems"]
    assert [(p["code"], p["seq"]) for p in problems] == [
        ("revoked-key", 2),
        ("revoked-key", 3),
        ("revoked-key", 4),
    ]


def test_key_list_marks_rotated_out_and_revoking_the_active_key_says_it_made_a_new_one(
    ledger: CLI,
) -> None:
    (first,) = json.loads(ledger.ok("key", "list", "--root", str(ledger.ws), "--json"))
    ledger.ok("key", "rotate", "--root", str(ledger.ws))
    rows = json.loads(ledger.ok("key", "list", "--root", str(ledger.ws), "--json"))
    assert {r["kid"]: r["status"] for r in rows}[first["kid"]] == "rotated-out"
    assert "rotated out after seq 4" in ledger.ok("key", "list", "--root", str(ledger.ws))
    active = next(r["kid"] for r in rows if r["active"])
    out = ledger.ok("key", "revoke", active, "--from-seq", "5", "--root", str(ledger.ws))
    successor = json.loads(ledger.lines()[-1])["body"]["successor"]
    assert f"it was the active key, so a new key {successor} was made" in out
    statuses = {
        r["kid"]: r["status"]
        for r in json.loads(ledger.ok("key", "list", "--root", str(ledger.ws), "--json"))
    }
    assert statuses == {first["kid"]: "rotated-out", active: "revoked", successor: "active"}


def test_key_revoke_unknown_key_exits_2(ledger: CLI) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run(
        "key", "revoke", "ed25519-0000000000000000", "--from-seq", "1", "--root", str(ledger.ws)
    )
    assert_clean_error(done, UNVERIFIABLE, "not pinned")
    assert ledger.ledger_path.read_bytes() == before


# --- demo, workspace discovery ---------------------------------------------------------------


def test_root_option_env_and_walking_up(ledger: CLI) -> None:
    elsewhere = ledger.tmp / "elsewhere"
    elsewhere.mkdir()
    ledger.ok("append", "--root", str(ledger.ws), stdin=b'{"via": "root"}', cwd=elsewhere)
    env = {**ledger.env, "LEDGER_ROOT": str(ledger.ws)}
    ledger.ok("append", stdin=b'{"via": "env"}', cwd=elsewhere, env=env)
    assert ledger.ok("verify", cwd=elsewhere, env=env).startswith("ok: 6 records")
    deep = ledger.ws / "src" / "pkg" / "deep"
    deep.mkdir(parents=True)
    ledger.ok("append", stdin=b'{"via": "walk-up"}', cwd=deep)
    assert ledger.ok("verify", cwd=deep).startswith("ok: 7 records")
    assert "walk-up" in ledger.ok("log", "-n", "1", cwd=deep)
    assert [json.loads(line)["body"].get("via") for line in ledger.lines()[-3:]] == [
        "root",
        "env",
        "walk-up",
    ]
    # --root wins over LEDGER_ROOT.
    other = ledger.tmp / "other"
    ledger.ok("init", "--parents", "--root", str(other))
    ledger.ok("append", "--root", str(other), stdin=b"{}", cwd=elsewhere, env=env)
    assert len((other / ".orchestration" / "agent_trace.jsonl").read_bytes().splitlines()) == 2


# --- bad input: clear one-line error, documented exit code, ledger untouched -------------------

BAD_BODIES = [
    pytest.param(b'{"a": ', "not valid ledger JSON", id="malformed-json"),
    pytest.param(b'{"a": "\xff\xfe"}', "not UTF-8", id="non-utf8"),
    pytest.param(b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}', "exceeds", id="10MB-body"),
    pytest.param(b'{"x": 1.5}', "float", id="float"),
    pytest.param(b'{"x": 1e3}', "float", id="exponent"),
    pytest.param(b'{"x": 9007199254740992}', "2**53", id="huge-int"),
    pytest.param(b'{"x": NaN}', "not valid ledger JSON", id="nan"),
    pytest.param(b'{"x": [1, {"y": 2.0}]}', "float", id="nested-float"),
    pytest.param(b'{"x": "\\ud800"}', "lone surrogate", id="lone-surrogate-escape"),
    # Under the 4 MiB stdin limit, but the signed record around it is over the record limit.
    pytest.param(b'{"x": "' + b"a" * (4 * 1024 * 1024 - 16) + b'"}', "exceeds", id="4MiB-body"),
    pytest.param(b"[1, 2]", "must be a JSON object", id="array"),
    pytest.param(b'"text"', "must be a JSON object", id="string"),
    pytest.param(b"", "no JSON body", id="empty-stdin"),
    pytest.param(b"  \n", "no JSON body", id="whitespace-stdin"),
]


@pytest.mark.parametrize(("body", "fragment"), BAD_BODIES)
def test_bad_body_is_refused(ledger: CLI, body: bytes, fragment: str) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), stdin=body, spawn=True)
    assert_clean_error(done, INVALID_INPUT, fragment)
    assert ledger.ledger_path.read_bytes() == before


def test_deeply_nested_body_is_refused(ledger: CLI) -> None:
    before = ledger.ledger_path.read_bytes()
    body = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    done = ledger.run("append", "--root", str(ledger.ws), stdin=body, spawn=True)
    assert ledger.ledger_path.read_bytes() == before
    assert_clean_error(done, INVALID_INPUT, "body on stdin")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        *(
            pytest.param(["--kind", kind], "reserved", id=f"reserved-{kind}")
            for kind in (
                "ledger.genesis",
                "key.added",
                "hook.pre",
                "intent.scope_expanded",
                "intent.selected",
                "governance.config_changed",
                "checkpoint.x",
                "blame.x",
                "export.x",
                "query.x",
            )
        ),
        pytest.param(["--kind", "Bad Kind"], "invalid kind", id="invalid-kind"),
    ],
)
def test_bad_kind_is_refused(ledger: CLI, args: list[str], fragment: str) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), *args, stdin=b"{}")
    assert_clean_error(done, INVALID_INPUT, fragment)
    assert ledger.ledger_path.read_bytes() == before


def test_missing_private_key_exits_2(ledger: CLI) -> None:
    for pem in (ledger.home / "keys").glob("*.pem"):
        pem.unlink()
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), stdin=b'{"a": 1}')
    assert_clean_error(done, UNVERIFIABLE, "signing key")
    assert ledger.ledger_path.read_bytes() == before
    done = ledger.run("checkpoint", "--root", str(ledger.ws))
    assert_clean_error(done, UNVERIFIABLE, "signing key")


def test_missing_workspace_exits_2(cli: CLI) -> None:
    empty = cli.tmp / "empty"
    empty.mkdir()
    if any((parent / ".orchestration").is_dir() for parent in (empty, *empty.parents)):
        pytest.skip("a parent of the temporary directory holds .orchestration/")
    for args in (["append"], ["verify"], ["log"], ["key", "list"], ["repair"]):
        done = cli.run(*args, stdin=b"{}", cwd=empty)
        assert_clean_error(done, UNVERIFIABLE, "no .orchestration/ found")
    done = cli.run("append", "--root", str(cli.tmp / "nowhere"), stdin=b"{}", spawn=True)
    assert_clean_error(done, UNVERIFIABLE, "run `ledger init`")
    assert not (cli.tmp / "nowhere").exists()


@pytest.fixture
def permissions_bind() -> list[str]:
    """A command prefix under which file permission bits apply to the CLI.

    Nothing for a normal user. Root bypasses permission bits through CAP_DAC_OVERRIDE, so as
    root the CLI runs under ``setpriv`` with that capability (and DAC_READ_SEARCH) dropped from
    its bounding set; where that is impossible the test is skipped.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [str(setpriv), "--bounding-set=-dac_override,-dac_read_search", "--"]
    if (
        setpriv is None
        or subprocess.run([*prefix, "true"], check=False, capture_output=True).returncode != 0
    ):
        pytest.skip("running as root without a way to drop CAP_DAC_OVERRIDE (setpriv)")
    return prefix


def test_unwritable_ledger_file_exits_2(ledger: CLI, permissions_bind: list[str]) -> None:
    before = ledger.ledger_path.read_bytes()
    ledger.ledger_path.chmod(0o444)
    try:
        done = ledger.spawn(
            "append", "--root", str(ledger.ws), stdin=b'{"a": 1}', prefix=permissions_bind
        )
        assert_clean_error(done, UNVERIFIABLE, "Permission denied")
        done = ledger.spawn("repair", "--root", str(ledger.ws), prefix=permissions_bind)
        assert_clean_error(done, UNVERIFIABLE, "cannot open")
    finally:
        ledger.ledger_path.chmod(0o644)
    assert ledger.ledger_path.read_bytes() == before


def test_unreadable_ledger_file_verify_exits_2(ledger: CLI, permissions_bind: list[str]) -> None:
    ledger.ledger_path.chmod(0o000)
    try:
        done = ledger.spawn("verify", "--root", str(ledger.ws), prefix=permissions_bind)
        assert_clean_error(done, UNVERIFIABLE, "Permission denied")
    finally:
        ledger.ledger_path.chmod(0o644)


def test_unwritable_workspace_directory_exits_2(cli: CLI, permissions_bind: list[str]) -> None:
    parent = cli.tmp / "read-only"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        done = cli.spawn("init", "--parents", "--root", str(parent / "ws"), prefix=permissions_bind)
        assert_clean_error(done, UNVERIFIABLE, "cannot create")
    finally:
        parent.chmod(0o755)
    assert not (parent / "ws").exists()


def test_workspace_under_a_regular_file_exits_2(cli: CLI) -> None:
    # Works for every user, root included (ENOTDIR).
    parent = cli.tmp / "not-a-dir"
    parent.write_bytes(b"")
    done = cli.run("init", "--parents", "--root", str(parent / "ws"))
    assert_clean_error(done, UNVERIFIABLE, "cannot create")
    assert parent.read_bytes() == b""


def test_ledger_path_that_is_a_directory_exits_2(ledger: CLI) -> None:
    ledger.ledger_path.unlink()
    ledger.ledger_path.mkdir()
    done = ledger.run("append", "--root", str(ledger.ws), stdin=b'{"a": 1}')
    assert_clean_error(done, UNVERIFIABLE, "agent_trace.jsonl")
    assert list(ledger.ledger_path.iterdir()) == []


@pytest.mark.parametrize("command", [["verify"], ["log"], ["key", "list"], ["checkpoint"]])
def test_unknown_option_is_usage_error(ledger: CLI, command: Sequence[str]) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run(*command, "--root", str(ledger.ws), "--bogus")
    stderr = done.stderr.decode()
    assert done.returncode == UNVERIFIABLE, stderr
    assert "Traceback" not in stderr
    assert "No such option: --bogus" in stderr
    assert done.stdout == b""
    assert ledger.ledger_path.read_bytes() == before


def test_append_unknown_option_is_usage_error(ledger: CLI) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), "--bogus", stdin=b"{}")
    assert ledger.ledger_path.read_bytes() == before
    assert_clean_error(done, UNVERIFIABLE, "--bogus")


def test_append_option_without_value_is_refused(ledger: CLI) -> None:
    before = ledger.ledger_path.read_bytes()
    done = ledger.run("append", "--root", str(ledger.ws), "--kind", stdin=b"{}")
    assert done.returncode in {UNVERIFIABLE, INVALID_INPUT}
    assert "Traceback" not in done.stderr.decode()
    assert "--kind needs a value" in done.stderr.decode()
    assert ledger.ledger_path.read_bytes() == before


# --- the append fast path stays light ---------------------------------------------------------

HEAVY = {"typer", "click", "rich", "pydantic", "pydantic_core", "duckdb", "yaml", "pathspec"}


def test_append_fast_path_imports_no_heavy_modules(ledger: CLI) -> None:
    # sys.modules at exit, not `-X importtime`: ledger's public names load lazily through
    # importlib, which importtime does not report, so only the module table tells the truth.
    probe = (
        "import sys; from cli._entry import main; code = main(sys.argv[1:]); "
        "print(chr(10).join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "append", "--root", str(ledger.ws)],
        input=b'{"fast": true}',
        capture_output=True,
        check=False,
        env=ledger.env,
        cwd=ledger.tmp,
        timeout=60,
    )
    assert done.returncode == OK, done.stderr.decode()[-2000:]
    imported = set(done.stderr.decode().split())
    assert "cli._append" in imported  # the fast path really ran
    assert "ledger._evidence.ledger" in imported
    heavy = {name for name in imported if name.split(".")[0] in HEAVY}
    assert heavy == set(), sorted(heavy)
    # The installed command takes the same path (and appends).
    installed = subprocess.run(
        [str(LEDGER_BIN), "append", "--root", str(ledger.ws)],
        input=b'{"fast": true}',
        capture_output=True,
        check=False,
        env=ledger.env,
        cwd=ledger.tmp,
        timeout=60,
    )
    assert installed.returncode == OK, installed.stderr.decode()[-2000:]


@pytest.mark.parametrize(
    "args",
    [["log", "-n", "2000"], ["log", "-n", "2000", "--json"], ["query", "SELECT * FROM events"]],
)
def test_a_reader_that_stops_early_gets_no_traceback(ledger: CLI, args: list[str]) -> None:
    # `ledger log | head`: the reader closes the pipe long before the output ends.
    from ledger import Ledger  # noqa: PLC0415

    Ledger.open(ledger.ws, environ=ledger.env).append_many(
        [("app.step", {"i": i, "pad": "x" * 100}) for i in range(2000)]
    )
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert reader.stdin is not None
    writer = subprocess.run(
        [str(LEDGER_BIN), *args, "--root", str(ledger.ws)],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        env=ledger.env,
        check=False,
        timeout=120,
    )
    reader.stdin.close()
    reader.wait(timeout=30)
    assert writer.stderr == b""
    assert writer.returncode == 141  # 128 + SIGPIPE (cli/_exit.py), never 1 ("evidence is bad")
