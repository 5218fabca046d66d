"""The resident decider (decision 0014): identical answers and records, and fail-closed whenever it
cannot answer -- absent, killed mid-session or mid-call, slow, of another version, sharing a
folder others can reach, or answering garbage.

Every hook here runs through the installed ``ledger`` command, as a client runs it. Each test's
decider has its own socket folder (``$XDG_RUNTIME_DIR``); a :class:`Rig` is a context manager
that stops its decider and removes that folder on the way out.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli import _decider as client
from ledger import MAX_PAYLOAD_BYTES, Ledger, decider_socket
from ledger._evidence.disclosure import Revealer
from ledger._hooks import decider as server

from ..conformance._harness import INTENTS_YAML
from ..conformance._payloads import REAL_FIXTURES
from ._support import LEDGER, clean_env, short_folder

FIXTURES = Path(__file__).parents[1] / "fixtures" / "payloads"
ROOT_TOKEN = "/home/dev/app"  # noqa: S105 -- the fixtures' workspace path, not a secret
# A random (version 4) UUID: the invocation id of a call whose client sent no tool_use_id.
RANDOM_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


#: The site-free hook runner ``ledger install`` writes before this installation's script.
THIN = Path(__file__).resolve().parents[2] / "cli" / "_thin.py"


class Rig:
    """A workspace, an environment whose hooks use (or never use) the decider, and helpers.
    Hooks run as ``ledger install`` writes them: the interpreter without ``site`` on
    ``cli/_thin.py`` (``site_free=False``: the ``ledger`` script itself)."""

    def __init__(self, base: Path, *, decider: str, site_free: bool = True) -> None:
        self.site_free = site_free
        self.root = base / "app"
        self.root.mkdir(parents=True)
        # A short folder of its own: pytest's tmp paths would push the socket past sun_path's
        # 108 bytes, into the per-user fallback that every test would share.
        runtime = short_folder()
        self.runtime = runtime
        self.env = clean_env(base / "home")
        self.env.update(
            {"HOME": str(base / "home"), "XDG_RUNTIME_DIR": str(runtime), "LEDGER_DECIDER": decider}
        )
        subprocess.run(
            [LEDGER, "init"], cwd=self.root, env=self.env, check=True, capture_output=True
        )
        subprocess.run(["git", "init", "-q", str(self.root)], check=True)
        (self.root / ".orchestration" / "active_intents.yaml").write_text(
            INTENTS_YAML.format(scope='"src/**"'), encoding="utf-8"
        )
        (self.root / "src").mkdir()
        (self.root / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Rig:
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the decider (and any this rig started), then remove the socket folder: it lives
        outside the test's tmp_path, which is too long a path for a socket."""
        subprocess.run([LEDGER, "serve", "--stop"], env=self.env, capture_output=True, check=False)
        for proc in self.procs:
            with_timeout_kill(proc)
        shutil.rmtree(self.runtime, ignore_errors=True)

    @property
    def socket(self) -> Path:
        return decider_socket(self.env, server.install_dir())

    def hook(
        self, client_name: str, event: str, payload: dict[str, Any] | bytes
    ) -> subprocess.CompletedProcess[bytes]:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        runner = [sys.executable, "-I", "-S", str(THIN)] if self.site_free else []
        return subprocess.run(
            [*runner, LEDGER, "hook", client_name, "--event", event],
            input=raw,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            timeout=60,
            check=False,
        )

    def records(self) -> list[dict[str, Any]]:
        path = self.root / ".orchestration" / "agent_trace.jsonl"
        return [json.loads(line) for line in path.read_bytes().splitlines()]

    def start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [LEDGER, "serve", "--idle", "120"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.procs.append(proc)
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the decider did not start"
            time.sleep(0.02)
        return proc

    def status(self) -> dict[str, Any]:
        done = subprocess.run(
            [LEDGER, "serve", "--status", "--json"], env=self.env, capture_output=True, check=False
        )
        return dict(json.loads(done.stdout))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with Rig(tmp_path, decider="on") as made:
        yield made


def with_timeout_kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def write_payload(
    root: Path, session: str, tool_use_id: str, event: str = "PreToolUse"
) -> dict[str, Any]:
    target = root / "src" / "app.py"
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Write",
        "tool_input": {"file_path": str(target), "content": "x = 2\n"},
        "tool_use_id": tool_use_id,
    }
    if event == "PostToolUse":
        payload["tool_response"] = {
            "type": "update",
            "filePath": str(target),
            "content": "x = 2\n",
            "structuredPatch": [],
            "originalFile": "x = 1\n",
        }
    return payload


def select_payload(root: Path, session: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ledger intent select INT-001"},
        "tool_use_id": f"toolu_select_{session}",
    }


# --- the two implementations of the socket path and limits agree ------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {"XDG_RUNTIME_DIR": "/run/user/1000"},
        {"XDG_RUNTIME_DIR": "/r/" + "x" * 120, "LEDGER_HOME": "/home/dev/.ledger"},
        {"LEDGER_HOME": "/" + "y" * 120},
        {"HOME": "/home/dev"},
        {"XDG_CONFIG_HOME": "/cfg", "HOME": "/home/dev"},
    ],
)
def test_client_and_server_agree_on_the_socket(env: dict[str, str]) -> None:
    install = server.install_dir()
    assert client.socket_path(env, install) == str(decider_socket(env, install))
    assert client._install_dir() == install


#: Audit events (PEP 578) of a process being started.
PROCESS_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec", "os.system")


def test_the_deciders_heap_tuning_starts_no_process() -> None:
    """Its C library is the interpreter's own: ``ctypes.util.find_library`` would run
    ``ldconfig -p`` as the decider starts and after every burst of calls."""
    started: list[str] = []
    watching = True

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if watching and event in PROCESS_EVENTS:
            started.append(f"{event} {args[:2]!r}")

    sys.addaudithook(audit)  # cannot be removed: `watching` makes it inert after the test
    server._glibc.cache_clear()
    try:
        server._few_heap_arenas()
        server._give_back_memory()
    finally:
        watching = False
    assert started == []
    assert server._glibc() is not None  # and it tunes the heap (Linux, glibc)


def test_client_reads_as_much_of_stdin_as_the_hook_path() -> None:
    assert client.MAX_PAYLOAD_BYTES == MAX_PAYLOAD_BYTES


def test_the_client_sends_the_decider_only_payloads_it_reads_whole() -> None:
    room = len(client.MAGIC) + 1 + 8 + 64 * 1024 + 10  # framing and an environment's header
    assert client.DECIDER_PAYLOAD_BYTES + room <= server.MAX_REQUEST
    assert (
        client.answer("claude", "PreToolUse", None, b" " * (client.DECIDER_PAYLOAD_BYTES + 1))
        is None
    )


def test_the_client_imports_nothing_of_ledger_and_no_socket_module() -> None:
    code = (
        "import sys; import cli._decider; "
        "heavy = ('ledger', 'socket', 'json', 'pathlib'); "
        "bad = [m for m in sys.modules if m.split('.')[0] in heavy]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# --- identical answers and records --------------------------------------------------------------


def _normalize(text: str, root: Path) -> str:
    return RANDOM_UUID.sub("<uuid4>", text.replace(str(root), "<root>"))


def _comparable(records: list[dict[str, Any]], root: Path) -> list[Any]:
    """Records as a decision sees them: kind, actor and body, without times and signatures, and
    with the content a v3 record commits read back from the disclosures (each salt is random)."""
    volatile = {"duration_ms", "ts", "started_at", "elapsed_ms"}
    revealer = Revealer.beside(root / ".orchestration" / "agent_trace.jsonl")

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in volatile}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str):
            return _normalize(value, root)
        return value

    return [
        (r["kind"], strip(r.get("actor")), strip(revealer.body(r["body"]))) for r in records[1:]
    ]


def _fixture_calls() -> list[tuple[str, str, str]]:
    """(client, event, payload text) of every payload fixture, real sessions in their order."""
    calls = []
    for path in sorted(REAL_FIXTURES.glob("*/*/*.json")):
        text = path.read_text(encoding="utf-8").replace("/workspace", ROOT_TOKEN)
        calls.append((path.parts[-3].split("-", 1)[0], path.stem.split("-")[1], text))
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "real"):
        calls.extend(
            (folder.name, path.stem.split("-")[0], path.read_text(encoding="utf-8"))
            for path in sorted(folder.glob("*.json"))
        )
    return calls


def test_every_payload_fixture_gets_the_same_answer_and_records_through_the_decider(
    tmp_path: Path,
) -> None:
    with (
        Rig(tmp_path / "direct", decider="off", site_free=False) as direct,
        Rig(tmp_path / "served", decider="on") as served,
    ):
        served.start()
        calls = _fixture_calls()
        assert len(calls) > 150
        extra = [
            ("claude", "PreToolUse", "{not json"),
            ("claude", "PreToolUse", "x" * (MAX_PAYLOAD_BYTES + 10)),
        ]
        for client_name, event, text in [*calls, *extra]:
            answers = []
            for rig in (direct, served):
                raw = text.replace(ROOT_TOKEN, str(rig.root)).encode()
                done = rig.hook(client_name, event, raw)
                answers.append(
                    (
                        done.returncode,
                        _normalize(done.stdout.decode(), rig.root),
                        _normalize(done.stderr.decode(), rig.root),
                    )
                )
            assert answers[0] == answers[1], (client_name, event, text[:200])
        assert server.decider_status(served.env).requests >= len(calls)  # it did answer them
        assert _comparable(direct.records(), direct.root) == _comparable(
            served.records(), served.root
        )
    for rig in (direct, served):
        assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok


# --- fails closed ---------------------------------------------------------------------------------


def _decision(done: subprocess.CompletedProcess[bytes]) -> str | None:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout or b"{}")
    decision = out.get("hookSpecificOutput", {}).get("permissionDecision")
    return None if decision is None else str(decision)


def test_decider_killed_mid_session_the_next_call_decides_in_process(rig: Rig) -> None:
    proc = rig.start()
    assert _decision(rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t1"))) == "deny"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert rig.socket.exists()  # left behind by the killed decider
    assert _decision(rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t2"))) == "deny"
    kinds = [r["kind"] for r in rig.records()]
    assert kinds.count("hook.pre") == 2
    assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok


def _slow_hooks(root: Path, seconds: float) -> None:
    (root / ".orchestration" / "hooks.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n"
        f"        - type: command\n          command: sleep {seconds}\n",
        encoding="utf-8",
    )


def test_decider_killed_mid_call_the_caller_decides_and_one_record_is_written(rig: Rig) -> None:
    _slow_hooks(rig.root, 1.5)
    proc = rig.start()
    killer = threading.Timer(0.7, lambda: proc.send_signal(signal.SIGKILL))
    killer.start()
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-mid"))
    killer.join()
    assert _decision(done) == "deny"  # INTENT_REQUIRED, decided in the hook's own process
    pre = [r for r in rig.records() if r["kind"] == "hook.pre"]
    assert [r["body"]["tool_use_id"] for r in pre] == ["t-mid"]


def test_slow_decider_the_caller_decides_and_the_decider_records_nothing(rig: Rig) -> None:
    _slow_hooks(rig.root, 1.2)
    rig.start()
    rig.env["LEDGER_DECIDER_BUDGET"] = "0.3"
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-slow"))
    assert _decision(done) == "deny"
    time.sleep(1.5)  # the decider finishes its copy of the call, sees the caller gone
    pre = [r for r in rig.records() if r["kind"] == "hook.pre"]
    assert [r["body"]["tool_use_id"] for r in pre] == ["t-slow"]


def _listen_in_its_place(rig: Rig, warm: str = "t-warm") -> socket.socket:
    """A socket of our own where the decider's goes (as any process of the user could bind),
    after one hook call has made the per-user secret."""
    rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", warm))
    rig.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(rig.socket))
    rig.socket.chmod(0o600)
    listener.listen(1)
    listener.settimeout(30)
    return listener


def test_a_decider_that_closes_mid_answer_gets_the_in_process_answer(rig: Rig) -> None:
    listener = _listen_in_its_place(rig)

    def half_answer() -> None:  # proves itself as the decider would, then dies mid-answer
        conn, _ = listener.accept()
        conn.settimeout(5)
        conn.sendall(server.prove(server._read_line(conn), os.urandom(16)))
        conn.recv(1 << 20)
        conn.sendall(b'LEDGER-DECIDE 1 ok 0 500 0\n{"hookSpecific')
        conn.close()

    thread = threading.Thread(target=half_answer)
    thread.start()
    try:
        done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-half"))
    finally:
        thread.join()
        listener.close()
    assert _decision(done) == "deny"
    assert b"INTENT_REQUIRED" in done.stdout
    assert [r["body"]["tool_use_id"] for r in rig.records() if r["kind"] == "hook.pre"] == [
        "t-warm",
        "t-half",
    ]


def test_a_socket_folder_others_can_reach_is_refused_with_one_line(rig: Rig) -> None:
    rig.start()
    rig.socket.parent.chmod(0o755)
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-wide"))
    assert _decision(done) == "deny"
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1
    assert "not using the decider" in lines[0]
    assert "mode 755" in lines[0]
    assert server.decider_status(rig.env).requests == 0  # it was never asked


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand the socket to another user")
def test_a_socket_owned_by_another_user_is_refused(rig: Rig) -> None:
    rig.start()
    os.chown(rig.socket, 65534, 65534)
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-other"))
    assert _decision(done) == "deny"
    assert "owned by uid 65534" in done.stderr.decode()


def test_a_decider_of_another_version_retires_and_the_caller_decides(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = rig.start()
    rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-warm"))  # the secret exists
    monkeypatch.setattr(client, "_version", lambda _install: "0.0.0-old")
    monkeypatch.setattr(os, "environ", {**rig.env, "LEDGER_DECIDER": "on"})
    payload = json.dumps(write_payload(rig.root, "s", "t-ver")).encode()
    assert client.answer("claude", "PreToolUse", None, payload) is None
    proc.wait(timeout=10)  # it retired
    assert not server.decider_status(rig.env).running


def test_two_deciders_racing_to_start_exactly_one_serves(rig: Rig) -> None:
    procs = [
        subprocess.Popen([LEDGER, "serve", "--idle", "60"], env=rig.env, stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    deadline = time.monotonic() + 30
    while not any(p.poll() is not None for p in procs):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (loser,) = [p for p in procs if p.poll() is not None]
    assert loser.returncode == 0
    assert b"another one already serves" in (loser.stdout.read() if loser.stdout else b"")
    status = rig.status()
    assert status["running"]
    (winner,) = [p for p in procs if p.poll() is None]
    assert status["pid"] == winner.pid
    subprocess.run([LEDGER, "serve", "--stop"], env=rig.env, capture_output=True, check=False)
    with_timeout_kill(winner)


def test_decider_refuses_to_serve_from_a_folder_others_can_reach(rig: Rig) -> None:
    rig.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    rig.socket.parent.chmod(0o777)
    done = subprocess.run(
        [LEDGER, "serve"], env=rig.env, capture_output=True, timeout=30, check=False
    )
    assert done.returncode != 0
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1
    assert "chmod 700" in err[0]
    assert "Traceback" not in done.stderr.decode()


def test_the_first_hook_call_starts_a_decider_for_the_next(tmp_path: Path) -> None:
    with Rig(tmp_path, decider="auto") as rig:
        assert (
            _decision(rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-a")))
            == "deny"
        )
        deadline = time.monotonic() + 30
        while not server.decider_status(rig.env).running:
            assert time.monotonic() < deadline, "no decider was started"
            time.sleep(0.05)
        assert (
            _decision(rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-b")))
            == "deny"
        )
        assert server.decider_status(rig.env).requests == 1


def test_concurrent_sessions_through_the_decider_make_one_chain(rig: Rig) -> None:
    rig.start()
    sessions, calls = 6, 8
    rig.hook(
        "claude",
        "SessionStart",
        {**select_payload(rig.root, "w"), "hook_event_name": "SessionStart"},
    )

    def session(n: int) -> None:
        sid = f"c{n}"
        assert _decision(rig.hook("claude", "PreToolUse", select_payload(rig.root, sid))) in (
            None,
            "allow",
        )
        for i in range(calls):
            for event in ("PreToolUse", "PostToolUse"):
                done = rig.hook("claude", event, write_payload(rig.root, sid, f"t{n}-{i}", event))
                assert done.returncode == 0, done.stderr

    threads = [threading.Thread(target=session, args=(n,)) for n in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = rig.records()
    hook_ids = [
        (r["kind"], r["body"].get("tool_use_id"))
        for r in records
        if r["kind"] in ("hook.pre", "hook.post")
    ]
    assert len(hook_ids) == len(set(hook_ids)) == sessions * (1 + 2 * calls)
    assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok
    assert server.decider_status(rig.env).requests >= sessions * (1 + 2 * calls)  # all of them


def test_an_impostor_on_the_deciders_socket_gets_no_payload_and_no_environment(rig: Rig) -> None:
    # An agent's shell (same user) binds a socket where the decider's goes and answers "allow":
    # it cannot prove it holds the per-user secret, so the hook never sends it anything.
    listener = _listen_in_its_place(rig, warm="t-warm")
    received: list[bytes] = []

    def impostor() -> None:
        conn, _ = listener.accept()
        conn.settimeout(5)
        received.append(conn.recv(1 << 20))
        conn.sendall(b"LEDGER-DECIDE 1 proof " + b"0" * 64 + b"\n")
        with contextlib.suppress(OSError):
            received.append(conn.recv(1 << 20))
        conn.close()

    thread = threading.Thread(target=impostor)
    thread.start()
    rig.env["LEDGER_SIGNING_KEY_CANARY"] = "do-not-leak"
    try:
        done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-imp"))
    finally:
        thread.join()
        listener.close()
    assert _decision(done) == "deny"  # decided in its own process: INTENT_REQUIRED
    assert b"is not ledger's decider" in done.stderr
    sent = b"".join(received)
    assert sent.startswith(b"LEDGER-DECIDE 1 hello ")
    assert b"do-not-leak" not in sent
    assert b"tool_input" not in sent


def test_a_client_that_disconnects_mid_request_leaves_no_record_and_a_healthy_decider(
    rig: Rig,
) -> None:
    rig.start()
    rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-first"))  # the secret
    before = len(rig.records())
    nonce = os.urandom(16)
    home = Path(rig.env["LEDGER_HOME"])
    payload = json.dumps(write_payload(rig.root, "s", "t-cut")).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(rig.socket))
        sock.sendall(server.hello(nonce, home))
        challenge = bytes.fromhex(server._read_line(sock).split()[-1].decode())
        secret = (home / "cache.secret").read_bytes()
        sock.sendall(server.caller_proof(secret, challenge, os.getpid()))
        header = b"op=hook\0client=claude\0event=PreToolUse"
        sock.sendall(
            server.MAGIC + b"\n" + b"%08d" % len(header) + header + b"%010d" % len(payload)
        )
        sock.sendall(payload[: len(payload) // 2])  # then the caller is gone
    done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-next"))
    assert _decision(done) == "deny"
    assert [r["body"].get("tool_use_id") for r in rig.records()[before:]] == ["t-next"]
    assert server.decider_status(rig.env).requests == 1  # the next one (the first made the secret)


def test_a_go_between_relaying_the_real_deciders_proof_is_refused(rig: Rig) -> None:
    # The real decider proves itself to whoever asks; a process of the same user that holds a
    # connection to it, then takes its socket's place, could relay that proof. The proof names
    # the decider's pid, and the caller checks it against the socket's peer.
    if not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("SO_PEERCRED is Linux's")
    rig.start()
    rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-warm"))  # the secret
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(str(rig.socket))  # held open before the swap
    rig.socket.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(rig.socket))
    rig.socket.chmod(0o600)
    listener.listen(1)
    listener.settimeout(30)
    leaked: list[bytes] = []

    def relay() -> None:
        conn, _ = listener.accept()
        conn.settimeout(5)
        upstream.sendall(server._read_line(conn))
        conn.sendall(server._read_line(upstream))  # the genuine proof, relayed
        with contextlib.suppress(OSError):
            leaked.append(conn.recv(1 << 20))
        conn.close()

    thread = threading.Thread(target=relay)
    thread.start()
    try:
        done = rig.hook("claude", "PreToolUse", write_payload(rig.root, "s", "t-relay"))
    finally:
        thread.join()
        listener.close()
        upstream.close()
    assert _decision(done) == "deny"  # decided in its own process
    assert b"not the prover" in done.stderr
    assert b"tool_input" not in b"".join(leaked)


def test_a_caller_with_another_home_is_declined_and_decides_in_its_own_process(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~`` in scope globs and protected paths is the process's HOME: a decider started by a
    hook with another HOME must not decide for this caller (nor retire, nor start another)."""
    proc = rig.start()
    rig.hook("claude", "PreToolUse", select_payload(rig.root, "s"))  # the secret exists
    monkeypatch.setattr(os, "environ", {**rig.env, "LEDGER_DECIDER": "on", "HOME": "/elsewhere"})
    payload = json.dumps(write_payload(rig.root, "s", "t-home")).encode()

    def recorded() -> int:
        return sum(r["body"].get("tool_use_id") == "t-home" for r in rig.records())

    assert client.answer("claude", "PreToolUse", None, payload) is None
    assert recorded() == 0, "the decider decided for a caller with another HOME"
    assert proc.poll() is None, "a declined call must not retire the decider"
    monkeypatch.setattr(os, "environ", {**rig.env, "LEDGER_DECIDER": "on"})
    assert client.answer("claude", "PreToolUse", None, payload) is not None
    assert recorded() == 1


def test_a_rig_leaves_no_socket_folder_behind(tmp_path: Path) -> None:
    with Rig(tmp_path, decider="on") as rig:
        rig.start()
        runtime = rig.runtime
        assert rig.socket.exists()
    assert not runtime.exists()
