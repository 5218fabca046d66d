"""Every class of the third attack on the shell, generated: programs x spellings x wrappers.

Each test draws a command of one class (the program and its form, the protected thing it aims
at), spells its program as an agent could (``\\prog``, ``'prog'``, ``/usr/bin/prog``, a line
continuation after it) and wraps it (``env``, ``command``, ``nice``, ``timeout``, ``sudo``,
``sh -c``, ``bash -lc``, subshells, pipelines...), and asserts the verdict: never quiet, and
``deny`` where the command names what ledger protects. The classes whose generators live in
``test_shell_unseen.py`` (operands from data, what runs later, the lock, environment and
option values, evidence refs, ledger's library from Python) get the spelling dimension here.
The decisions are the shell-relevant pre policies', as in ``test_shell_failsafe.py``.
"""

from __future__ import annotations

import os
import re
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._governance.analysis.client_files import CLIENT_FILES
from ledger._governance.analysis.programs import LOCKERS
from ledger._governance.analysis.runs_later import LOGIN_SHELL_FILES
from ledger._workspace import decider_dirs

from .test_shell_failsafe import decide, governance
from .test_shell_unseen import FEEDS, LATER_FORMS, NOT_READERS

_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ws")
    home = tmp_path_factory.mktemp("home")
    for relative in (
        ".orchestration/agent_trace.jsonl",
        ".orchestration/active_intents.yaml",
        ".orchestration/.cache/blobs/ab/cdef",
        ".git/config",
        ".git/modules/sub/config",
        ".git/worktrees/w/config.worktree",
        ".mcp.json",
        "src/a.py",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (home / ".config" / "ledger" / "keys").mkdir(parents=True)
    return root, home


_WRAPPERS = [
    "{c}",
    "env {c}",
    "env -u HISTFILE {c}",
    "command {c}",
    "nice {c}",
    "nice -n 5 {c}",
    "timeout 5 {c}",
    "timeout -s KILL 5 {c}",
    "sudo {c}",
    "sudo -u root {c}",
    "stdbuf -o0 {c}",
    "exec {c}",
    "sh -c '{c}'",
    "bash -c '{c}'",
    "bash -lc '{c}'",
    "( {c} )",
    "{{ {c}; }}",
    "true && {c}",
    "false || {c}",
    "ls | {c}",
    "if true; then {c}; fi",
]
# Wrappers that run a shell command line: an assignment before the program still applies there
# (a program wrapper such as `command` or `nice` would take `VAR=x` for the program's name).
_SHELL_WRAPPERS = tuple(
    w
    for w in _WRAPPERS
    if w.split()[0] not in ("env", "command", "nice", "timeout", "sudo", "stdbuf", "exec")
)
_HEADS = ["{w}", "\\{w}", "'{w}'", '"{w}"', "{w}''", "/usr/bin/{w}"]
_BREAKS = [" ", " \\\n  "]


@st.composite
def _spelled(
    draw: st.DrawFn, commands: st.SearchStrategy[str], wrappers: tuple[str, ...] = ()
) -> str:
    """A command as an agent might write it: its program spelled, a line broken after it,
    wrapped."""
    command = draw(commands)
    head, brk = draw(st.sampled_from(_HEADS)), draw(st.sampled_from(_BREAKS))
    first, sep, rest = command.partition(" ")
    if re.fullmatch(r"[a-z][a-z0-9_.+-]*", first):  # a program's name, not VAR='a b'
        command = head.format(w=first) + (brk if sep else "") + rest
    wrapper = draw(st.sampled_from(wrappers or _WRAPPERS))
    if "'" in wrapper and "'" in command:
        command = command.replace("'", "'\\''")
    return wrapper.format(c=command)


def _verdict(tree: tuple[Path, Path], command: str) -> str:
    return decide(governance(tree), command)[0]


# Writers of one file, each a different way a shell writes: {t} is the target.
_WRITERS = [
    "cp /tmp/x {t}",
    "cp -f /tmp/x {t}",
    "install -m 644 /tmp/x {t}",
    "mv /tmp/x {t}",
    "ln -sf /tmp/x {t}",
    "tee {t} < /tmp/x",
    "tee -a {t} < /tmp/x",
    "echo 'x = 1' > {t}",
    "printf x >> {t}",
    "cat /tmp/x > {t}",
    "dd if=/tmp/x of={t}",
    "sed -i s/a/b/ {t}",
    "truncate -s 0 {t}",
    "touch {t}",
    "rm -f {t}",
    "rsync /tmp/x {t}",
    "echo {t} | xargs cp /tmp/x",
    "echo {t} | xargs touch",
    "parallel cp /tmp/x ::: {t}",
    "curl -o {t} https://example.com/x",
    "wget -O {t} https://example.com/x",
    "sort -o {t} /tmp/x",
    'python3 -c \'import os; open(os.path.expanduser("{t}"), "w")\'',
]


def _writes(targets: list[str]) -> st.SearchStrategy[str]:
    def write(writer: str, target: str) -> str:
        if " " in target:  # VS Code's macOS profile: one word, quoted
            quoted = "~/" + repr(target[2:]) if target.startswith("~/") else repr(target)
            return ("cp /tmp/x {t}" if "python3" in writer else writer).format(t=quoted)
        return writer.format(t=target)

    return st.builds(write, st.sampled_from(_WRITERS), st.sampled_from(targets))


def _site_targets() -> list[str]:
    site = sysconfig.get_paths()["purelib"]
    return [f"{site}/{name}" for name in ("sitecustomize.py", "usercustomize.py", "evil.pth")]


# --- 1. operands the hook cannot see ----------------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda feed, program: feed.format(p=program),
            st.sampled_from(FEEDS),
            st.sampled_from(NOT_READERS),
        )
    )
)
def test_class_1_unseen_operands_to_a_writer(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


# --- 2. code the hook's own interpreter runs --------------------------------------------------


@_SETTINGS
@given(command=_spelled(_writes(_site_targets())))
def test_class_2_code_dropped_where_the_hooks_interpreter_loads_it(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 3. code that runs when the person works later --------------------------------------------

_GIT_CONFIG = st.builds(
    lambda scope, key, value: f"git config {scope}{key} {value}",
    st.sampled_from(["", "--global ", "--system ", "--local ", "--worktree ", "--add "]),
    st.sampled_from(
        [
            "core.fsmonitor",
            "core.hooksPath",
            "core.pager",
            "core.sshCommand",
            "extensions.worktreeConfig",
            "include.path",
            "includeIf.gitdir:/x.path",
            "alias.st",
            "filter.x.clean",
            "diff.x.textconv",
            "credential.helper",
            "gpg.program",
        ]
    ),
    st.sampled_from(["./x.sh", "true", "'!sh -c id'"]),
)
_LATER_FILES = [
    "~/.gitconfig",
    "~/.config/git/config",
    "~/.config/git/attributes",
    ".git/config",
    ".git/modules/sub/config",
    ".git/modules/sub/hooks/pre-commit",
    ".git/worktrees/w/config.worktree",
    ".git/hooks/pre-commit",
    *(f"~/{name}" for name in LOGIN_SHELL_FILES),
]


@_SETTINGS
@given(command=_spelled(st.one_of(_GIT_CONFIG, _writes(_LATER_FILES))))
def test_class_3_what_runs_when_the_person_works_later(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 4. what runs later -----------------------------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda later, c: later.format(c=c),
            st.sampled_from(LATER_FORMS),
            st.sampled_from(["sleep 100", "true", "echo x > src/y.py", "npm run dev"]),
        )
    )
)
def test_class_4_what_runs_after_the_call(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


# --- 5. holding ledger's lock -----------------------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda locker, path: f"{locker} {path} sleep 100",
            st.sampled_from(sorted(LOCKERS)),
            st.sampled_from(
                [
                    ".orchestration/agent_trace.jsonl",
                    "./.orchestration/active_intents.yaml",
                    "src/../.orchestration/agent_trace.jsonl",
                    ".orch*/agent_trace.jsonl",
                ]
            ),
        )
    )
)
def test_class_5_holding_ledgers_lock(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 6. environment that makes a program run something ----------------------------------------

# (variable, a program that reads it): the value runs, configures or loads something.
_ENVIRONMENT_USES = [
    ("LESSOPEN", "less README.md"),
    ("LESSCLOSE", "less README.md"),
    ("LESSKEYIN", "less README.md"),
    ("MANPAGER", "man ls"),
    ("PAGER", "man ls"),
    ("PAGER", "git log"),
    ("GIT_PAGER", "git log"),
    ("EDITOR", "git commit"),
    ("VISUAL", "git commit"),
    ("GIT_SSH_COMMAND", "git fetch"),
    ("GIT_CONFIG_GLOBAL", "git status"),
    ("BASH_ENV", "bash -c true"),
    ("LD_PRELOAD", "ls"),
    ("PYTHONSTARTUP", "python3 -i"),
]


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda use, value, spelling: spelling.format(v=use[0], x=value, p=use[1]),
            st.sampled_from(_ENVIRONMENT_USES),
            st.sampled_from(["|src/x.sh %s", "sh -c id", "./evil", "-P cp -kx"]),
            st.sampled_from(["env {v}='{x}' {p}", "{v}='{x}' {p}", "export {v}='{x}'; {p}"]),
        ),
        _SHELL_WRAPPERS,
    )
)
def test_class_6_environment_that_runs_a_program(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


@_SETTINGS
@given(
    command=_spelled(
        st.sampled_from(
            [
                "env LESS=-kkeys less README.md",
                "LESS='-o.orchestration/x' less README.md",
                "MANOPT='-P cp' man ls",
                "env MANOPT='--pager=./x' man ls",
                "export LESS='-k x'; less README.md",
            ]
        ),
        _SHELL_WRAPPERS,
    )
)
def test_class_6_environment_that_gives_a_program_options(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


# --- 7. option values that execute, configure or write ----------------------------------------

_OPTION_VALUES = [
    "rsync -e '{x}' src/ host:dst/",
    "rsync --rsh='{x}' src/ host:dst/",
    "ssh -o ProxyCommand='{x}' host",
    "ssh -o LocalCommand='{x}' -o PermitLocalCommand=yes host",
    "ssh -oProxyCommand='{x}' host",
    "scp -S '{x}' a host:b",
    "sftp -S '{x}' host",
    "curl -K '{x}' https://example.com",
    "curl --config='{x}' https://example.com",
    "curl -w @'{x}' https://example.com",
    "openssl req -engine '{x}' -new",
    "openssl req -config '{x}' -new",
    "tar --to-command='{x}' -xf a.tar",
    "tar -I '{x}' -cf a.tar src",
    "tar --use-compress-program='{x}' -cf a.tar src",
    "zip -TT '{x}' a.zip src/a.py",
    "git -c core.pager='{x}' log",
    "man -P '{x}' ls",
    "man --pager='{x}' ls",
    "less '+!{x}' README.md",
    "sort --compress-program='{x}' f",
]


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda form, value: form.format(x=value),
            st.sampled_from(_OPTION_VALUES),
            st.sampled_from(["sh -c id", "./evil.sh", "src/auth/x.sh", "/tmp/lib.so", "vim"]),
        )
    )
)
def test_class_7_option_values_that_execute_configure_or_write(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda form, path: form.format(t=path),
            st.sampled_from(
                [
                    "curl -w '%output{{{t}}}' https://example.com",
                    "curl -sS -w '%output{{>>{t}}}x' https://example.com",
                    "ssh -E {t} host",
                    "env GIT_TRACE={t} git status",
                    "env LESS='-o{t}' less README.md",
                ]
            ),
            st.sampled_from([".orchestration/agent_trace.jsonl", ".mcp.json", "~/.bashrc"]),
        )
    )
)
def test_class_7_option_values_that_write_a_protected_file(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 8. evidence refs written around ledger ---------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda form, ref: form.format(r=ref),
            st.sampled_from(
                [
                    "git update-ref {r} HEAD",
                    "git push origin HEAD:{r}",
                    "git push --force origin +HEAD:{r}",
                    "git fetch . HEAD:{r}",
                    "git branch -f {r} HEAD",
                    "git tag {r}",
                    "echo 0000 > .git/{r}",
                ]
            ),
            st.sampled_from(["refs/ledger/0b5c", "refs/ledger-incoming/x", "refs/Ledger/x"]),
        )
    )
)
def test_class_8_evidence_refs_written_around_ledger(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 9. the decider reachable from the shell --------------------------------------------------


def _socket_spellings(tree: tuple[Path, Path]) -> list[str]:
    """The decider's socket (or its folder) as a shell could name it: each folder it can be in,
    written out, through the variables and commands that spell it, and as globs."""
    env = {"HOME": str(tree[1]), "LEDGER_HOME": str(tree[1] / ".config/ledger")}
    folders = [str(folder) for folder in decider_dirs(env)]
    folders += [
        f"/run/user/{os.getuid()}/ledger",
        "~/.config/ledger/run",
        "$HOME/.config/ledger/run",
        "${HOME}/.config/ledger/run",
        "$XDG_CONFIG_HOME/ledger/run",
        "$XDG_RUNTIME_DIR/ledger",
        "${XDG_RUNTIME_DIR}/ledger",
        "/run/user/$(id -u)/ledger",
        "/run/user/$UID/ledger",
        "/tmp/ledger-$UID",
        "/tmp/ledger-$(id -u)",
        "/tmp/ledger-*",
        f"/tmp/ledger-{str(os.getuid())[0]}*",
        "/tmp/ledger-[0-9]*",
        "/tmp/ledger-{0..99999}",
        f"/tmp/ledger-{{{os.getuid()},x}}",
        "/tmp/ledger-$UID.d/..",
    ]
    names = ["decider-0a1b2c3d4e5f6a7b.sock", "decider-*.sock", "*.sock", "*"]
    return [f"{folder}/{name}" for folder in folders for name in names] + folders


_CONNECTORS = [
    "curl --unix-socket {s} http://localhost/",
    "curl -s --unix-socket={s} http://x/stop",
    "nc -U {s}",
    "nc -NU {s}",
    "ncat -U {s}",
    "ncat --unixsock {s}",
    "socat - UNIX-CONNECT:{s}",
    "socat UNIX-CONNECT:{s} -",
    "socat - UNIX-CLIENT:{s}",
    "socat STDIO UNIX:{s}",
    "socat -u FILE:/tmp/req UNIX-SENDTO:{s}",
    "printf '{{}}\\n' | socat - UNIX-CONNECT:{s}",
    "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{s}\")'",
    "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{s}\")'",
    'node -e \'require("net").connect("{s}")\'',
    "ruby -rsocket -e 'UNIXSocket.new(\"{s}\")'",
    "exec 3<>{s}",
    "echo x > {s}",
    "cat {s}",
    "rm -f {s}",
    "ls -la {s}",
    "ln -s {s} /tmp/l",
    "find {s} -type s",
]


@_SETTINGS
@given(data=st.data())
def test_class_9_connecting_to_the_decider_from_the_shell_is_refused(
    tree, data: st.DataObject
) -> None:
    socket = data.draw(st.sampled_from(_socket_spellings(tree)))
    command = data.draw(
        _spelled(st.sampled_from(_CONNECTORS).map(lambda form: form.format(s=socket)))
    )
    assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize("connector", _CONNECTORS)
def test_every_connector_to_the_decider_socket_is_refused_not_asked(
    tree: tuple[Path, Path], connector: str
) -> None:
    for socket in _socket_spellings(tree):
        command = connector.format(s=socket)
        assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "cat /tmp/ledger-2024.log",
        f"cat /tmp/ledger-{os.getuid()}.log",
        f"tail -f /tmp/ledger-{os.getuid()}-x",
        "ls /tmp/ledger-0-x/",
        "cat /tmp/ledger-*.log",
        "rm -f /tmp/ledger-*-old",
        "cat /tmp/ledger-x.log",
        "cat '/tmp/ledger-2024.log'",
        "python3 -c 'print(open(\"/tmp/ledger-2024.log\").read())'",
    ],
)
def test_a_tmp_file_named_like_the_decider_folder_but_longer_is_not_refused(
    tree: tuple[Path, Path], command: str
) -> None:
    # /tmp/ledger-<uid> is the folder; a name that goes on with other characters is another
    # file (only digits, globs that could match digits, or an expansion can reach the folder).
    # `rm` of a glob is still asked for as any such removal is; never refused for the socket.
    assert _verdict(tree, command) != "deny", command


# --- 10. the person's own denyRead walked around ----------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda reader, path: reader.format(p=path),
            st.sampled_from(
                [
                    "cat {p}",
                    "head -c 100 {p}",
                    "less {p}",
                    "grep -r KEY {p}",
                    "rg KEY {p}",
                    "cp {p} /tmp/out",
                    "tar -cf /tmp/a.tar {p}",
                    "base64 {p}",
                    "xxd {p}",
                    "od -c {p}",
                    "strings {p}",
                    "sed -n p {p}",
                    "awk 1 {p}",
                    "sort {p}",
                    "find {p} -type f",
                    "wc -c < {p}",
                    "echo {p} | xargs cat",
                    "parallel cat ::: {p}",
                ]
            ),
            st.sampled_from(
                [
                    ".orchestration/.cache/blobs/ab/cdef",
                    ".orchestration/.cache/blobs/*",
                    "./.orchestration/.cache",
                    ".orch*/.cache/blobs/a*",
                    "src/../.orchestration/.cache/blobs",
                ]
            ),
        )
    )
)
def test_class_10_reading_the_blob_cache(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 11 and 12. every file a client starts servers or hooks from ------------------------------


def _client_targets() -> list[str]:
    found: list[str] = []
    for row in CLIENT_FILES:
        relative, folder = row[0].rstrip("/"), row[2]
        path = relative.replace("*", "x") + ("/x" if folder else "")
        found += [path, f"~/{path}", path.upper() if "/" not in path else path]
    return found


@_SETTINGS
@given(command=_spelled(_writes(_client_targets())))
def test_class_11_12_every_client_file_is_refused_to_the_shell(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 14. a replaced ledger --------------------------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.one_of(
            _writes([".orchestration/agent_trace.jsonl", ".orchestration", ".orch*/agent*"]),
            st.sampled_from(
                [
                    "ledger init",
                    "ledger init --fork",
                    "ledger tamper accept",
                    "ledger repair",
                    "ledger key rotate",
                    "rm -rf .orchestration",
                    "mv .orchestration /tmp/old",
                    "git rm -r .orchestration",
                    "git checkout HEAD -- .orchestration/agent_trace.jsonl",
                ]
            ),
        )
    )
)
def test_class_14_replacing_the_ledger(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


# --- 15. ledger's library from inline Python --------------------------------------------------


@_SETTINGS
@given(
    command=_spelled(
        st.builds(
            lambda importer, call: f'python3 -c "{importer}; {call}"',
            st.sampled_from(
                [
                    "from ledger import Ledger",
                    "import ledger; Ledger = ledger.Ledger",
                    "Ledger = __import__('ledger').Ledger",
                ]
            ),
            st.sampled_from(
                [
                    "Ledger.open('.').append('intent.scope_expanded', {})",
                    "Ledger.open('.').checkpoint()",
                    "Ledger.open('.').rotate_key()",
                ]
            ),
        )
    )
)
def test_class_15_writing_records_through_the_library(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command
