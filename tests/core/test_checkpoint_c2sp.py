"""Checkpoints are C2SP signed notes that the reference implementation accepts.

The reference is Go's ``golang.org/x/mod/sumdb/note`` (findings §4): Debian's ``golang-go`` and
``golang-golang-x-mod-dev`` provide it offline. The test installs them with apt when they are
missing; with ``LEDGER_REQUIRE_TOOLS=1`` (set by ``.ci/run``) a missing tool fails the test
instead of skipping it.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger import CheckpointError, Ledger, SigningKey, parse_checkpoint
from ledger._evidence.checkpoint import MAX_CHECKPOINT_BYTES, read_checkpoint_file
from ledger._evidence.keys import note_key_id, verifier_key

GOPATH = "/usr/share/gocode"
NOTE_PACKAGE = Path(GOPATH, "src/golang.org/x/mod/sumdb/note")
APT_PACKAGES = ("golang-go", "golang-golang-x-mod-dev")

# A program around note.Open: argv[1] is the verifier key, argv[2] the note file.
VERIFIER_GO = """package main

import (
\t"fmt"
\t"os"

\t"golang.org/x/mod/sumdb/note"
)

func main() {
\tverifier, err := note.NewVerifier(os.Args[1])
\tif err != nil {
\t\tfmt.Println("bad verifier key:", err)
\t\tos.Exit(3)
\t}
\tmsg, err := os.ReadFile(os.Args[2])
\tif err != nil {
\t\tfmt.Println(err)
\t\tos.Exit(3)
\t}
\tn, err := note.Open(msg, note.VerifierList(verifier))
\tif err != nil {
\t\tfmt.Println("rejected:", err)
\t\tos.Exit(1)
\t}
\tfmt.Printf("verified by %d key(s)\\n%s", len(n.Sigs), n.Text)
}
"""

KEY = SigningKey.from_seed(bytes(range(32)))
OTHER = SigningKey.from_seed(bytes([7]) * 32)


def _find_go() -> str | None:
    found = shutil.which("go") or next(
        (str(p) for p in Path("/usr/lib").glob("go*/bin/go") if p.is_file()), None
    )
    return found if found and NOTE_PACKAGE.is_dir() else None


def _install_go() -> None:
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "install", "-y", "-q", *APT_PACKAGES],
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", *APT_PACKAGES],
    ):
        done = subprocess.run(command, env=env, capture_output=True, check=False, timeout=900)
        if done.returncode == 0 and command[1] == "install":
            return


@pytest.fixture(scope="module")
def go_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled verifier program (built once per module)."""
    go = _find_go()
    if go is None:
        _install_go()
        go = _find_go()
    if go is None:
        message = f"Go's sumdb/note is not available (apt-get install {' '.join(APT_PACKAGES)})"
        if os.environ.get("LEDGER_REQUIRE_TOOLS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    work = tmp_path_factory.mktemp("go-note")
    (work / "main.go").write_text(VERIFIER_GO)
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": GOPATH,
        "GOPROXY": "off",
        "GOFLAGS": "",
        "GOCACHE": str(work / "cache"),
        "HOME": str(work),
    }
    done = subprocess.run(
        [go, "build", "-o", str(work / "verify-note"), "main.go"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return work / "verify-note"


def go_open(
    verifier: Path, key: str, note: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "note.txt"
    path.write_bytes(note.encode())
    return subprocess.run(
        [str(verifier), key, str(path)], capture_output=True, text=True, check=False, timeout=60
    )


def make_ledger(root: Path, records: int) -> Ledger:
    ledger = Ledger.init(root / "ws", signing_key=KEY, environ={"LEDGER_HOME": str(root / "h")})
    ledger.append_many([("app.event", {"n": n}) for n in range(records - 1)])
    return ledger


# --- the format itself, pinned to Go's documented example ------------------------------------


def test_key_id_and_verifier_key_match_go_documentation() -> None:
    # golang.org/x/mod/sumdb/note example_test.go: PeterNeumann's verifier key.
    vkey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    public = base64.b64decode(vkey.split("+", 2)[2])[1:]  # split("+", 2): base64 holds "+"
    assert note_key_id("PeterNeumann", public) == bytes.fromhex("c74f20a3")
    assert verifier_key("PeterNeumann", public) == vkey
    # ... and the documented signature covers the text as written, final newline included.
    text = (
        b"If you think cryptography is the answer to your problem,\n"
        b"then you don't know what your problem is.\n"
    )
    blob = base64.b64decode(
        "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfq"
        "dngotpRZb6KE6RyyBwJnAM="
    )
    assert blob[:4] == bytes.fromhex("c74f20a3")
    Ed25519PublicKey.from_public_bytes(public).verify(blob[4:], text)


def test_checkpoint_is_a_signed_note_of_the_text_as_written(tmp_path: Path) -> None:
    checkpoint = make_ledger(tmp_path, 3).checkpoint()
    text = checkpoint.text()
    body, _, signature_line = text.partition("\n\n")
    dash, name, blob = signature_line.rstrip("\n").split(" ")
    assert (dash, name) == ("\u2014", KEY.kid)
    raw = base64.b64decode(blob)
    assert raw[:4] == note_key_id(KEY.kid, KEY.public_raw)
    Ed25519PublicKey.from_public_bytes(KEY.public_raw).verify(raw[4:], (body + "\n").encode())
    assert " " not in KEY.kid
    assert "+" not in KEY.kid


# --- the reference verifier ------------------------------------------------------------------


def test_go_note_verifier_accepts_a_ledger_checkpoint(go_verifier: Path, tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path, 70)
    checkpoint = ledger.checkpoint()
    key = ledger.keyring().get(KEY.kid)
    assert key is not None
    done = go_open(go_verifier, key.note_verifier_key(), checkpoint.text(), tmp_path)
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("verified by 1 key(s)\n")
    assert done.stdout.endswith(checkpoint.note_text())
    assert "\n70\n" in done.stdout


@pytest.mark.parametrize("edit", ["size", "head", "origin"])
def test_go_note_verifier_rejects_a_one_character_change(
    go_verifier: Path, tmp_path: Path, edit: str
) -> None:
    text = make_ledger(tmp_path, 70).checkpoint().text()
    lines = text.split("\n")
    index = {"origin": 0, "size": 1, "head": 2}[edit]
    line = lines[index]
    position = len(line) - 1 if edit != "head" else 5
    replacement = "1" if line[position] != "1" else "2"
    lines[index] = line[:position] + replacement + line[position + 1 :]
    forged = "\n".join(lines)
    done = go_open(go_verifier, verifier_key(KEY.kid, KEY.public_raw), forged, tmp_path)
    assert done.returncode == 1, done.stdout
    assert "invalid signature" in done.stdout or "malformed" in done.stdout
    with pytest.raises(CheckpointError):
        parse_checkpoint(forged).verified_target(make_ledger(tmp_path / "b", 2).keyring(), "x")


def test_go_and_ledger_both_ignore_an_unknown_cosigner(go_verifier: Path, tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path, 5)
    checkpoint = ledger.checkpoint()
    cosig = OTHER.sign(checkpoint.note_text().encode())
    blob = base64.b64encode(note_key_id(OTHER.kid, OTHER.public_raw) + cosig).decode()
    cosigned = checkpoint.text() + f"\u2014 {OTHER.kid} {blob}\n"
    done = go_open(go_verifier, verifier_key(KEY.kid, KEY.public_raw), cosigned, tmp_path)
    assert done.returncode == 0, done.stdout
    assert ledger.verify(checkpoints=[("cosigned", cosigned)], jobs=1).ok


# --- reading old checkpoints; bounded reads --------------------------------------------------


def test_legacy_checkpoint_is_still_read_and_checked(tmp_path: Path) -> None:
    legacy = Path(__file__).parent.parent / "fixtures" / "legacy_v1"  # checkpoint: pre-C2SP
    root = tmp_path / "ws"
    (root / ".orchestration").mkdir(parents=True)
    shutil.copytree(legacy / "keys", root / ".orchestration" / "keys")
    shutil.copy(legacy / "agent_trace.jsonl", root / ".orchestration" / "agent_trace.jsonl")
    ledger = Ledger.open(root, environ={"LEDGER_HOME": str(tmp_path / "h")})
    text = (legacy / "checkpoint.txt").read_text()
    assert [s.format for s in parse_checkpoint(text).signatures] == ["legacy"]
    report = ledger.verify(checkpoints=[("legacy", text)], jobs=1)
    assert report.ok, report.problems
    assert [c.ok for c in report.checkpoints] == [True]
    forged = text.replace("\n12\n", "\n13\n")
    with pytest.raises(CheckpointError, match="does not verify"):
        ledger.verify(checkpoints=[("forged", forged)], jobs=1)


def test_checkpoint_file_read_is_bounded(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="over"):
        read_checkpoint_file("/dev/zero")  # would never end without the cap
    big = tmp_path / "big"
    big.write_bytes(b"a" * (MAX_CHECKPOINT_BYTES + 1))
    with pytest.raises(CheckpointError, match="over"):
        read_checkpoint_file(big)
    with pytest.raises(CheckpointError, match="control characters"):
        parse_checkpoint("ledger/x\n1\n" + "A" * 44 + "\n\n\u2014 k \x00\n")


@pytest.mark.parametrize("line", [2, 4])
def test_non_ascii_base64_in_a_checkpoint_is_a_checkpoint_error(tmp_path: Path, line: int) -> None:
    # base64.b64decode raises a plain ValueError (not binascii.Error) on a non-ASCII str: found
    # by flipping a byte of a pushed checkpoint (tests/evidence/test_remote.py).
    ledger = Ledger.init(tmp_path / "ws", environ={"LEDGER_HOME": str(tmp_path / "home")})
    lines = ledger.checkpoint().text().split("\n")
    lines[line] = lines[line][:-5] + "\u00e9" + lines[line][-4:]  # in the base64
    with pytest.raises(CheckpointError):
        parse_checkpoint("\n".join(lines))
