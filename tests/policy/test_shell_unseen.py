"""What the hook cannot see from a command line: attacks named after what they break.

Each class is generated (programs x spellings x wrappers) and must be asked or denied, never
quiet; the readers of each class stay quiet. The decisions are the shell-relevant pre policies'
(``decide`` of test_shell_failsafe), run on a workspace with the protected files in place.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._governance.analysis.program_values import ENVIRONMENT
from ledger._governance.analysis.programs import LATER, PROGRAMS, WRITERS, operand_role
from ledger._governance.analysis.python_api import ledger_api_writes
from ledger._governance.analysis.shell import classify_command

from .test_shell_failsafe import decide, governance, tree

__all__ = ["tree"]  # the module-scoped workspace fixture, shared

_SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Wrappers a command may hide behind: each keeps what it runs.
_WRAPPERS = st.sampled_from(
    [
        "{c}",
        "env {c}",
        "nice -n 5 {c}",
        "timeout 5 {c}",
        "command {c}",
        "exec {c}",
        "sh -c '{c}'",
        "bash -c '{c}'",
        "( {c} )",
        "true && {c}",
        "ls | {c}",
        "{{ {c}; }}",
        "sudo {c}",
        "stdbuf -o0 {c}",
    ]
)


def _wrap(wrapper: str, command: str) -> str:
    if "'" in wrapper and "'" in command:
        command = command.replace("'", "'\\''")
    return wrapper.format(c=command)


def _verdict(tree: tuple[Path, Path], command: str) -> str:
    return decide(governance(tree), command)[0]


# --- operands from data ----------------------------------------------------------------------

# Every program the model says writes, runs or deletes what it is given: by category, from the
# tables (a program whose operands are not read, a writer modelled by a handler, a runner).
NOT_READERS = sorted(
    {n for n, s in PROGRAMS.items() if operand_role(s) not in ("read", "text")}
    | set(WRITERS)
    | {"dd", "mv", "ln", "chmod", "sed", "git", "env", "sh", "bash", "python3", "node", "make"}
)
FEEDS = (
    "echo src/x | xargs {p}",
    "xargs -a list.txt {p}",
    "xargs --arg-file=list.txt {p}",
    "xargs {p} < list.txt",
    "xargs -0 -n1 {p} < list.txt",
    "find . -name '*.md' -print0 | xargs -0 {p}",
    "git ls-files | xargs -r {p}",
    "xargs -I{{}} {p} {{}} < list.txt",
    "parallel {p} < list.txt",
    "cat list.txt | parallel -j4 {p}",
    "parallel -a list.txt {p}",
    "parallel --arg-file=list.txt -k {p} {{}}",
    "parallel {p} :::: list.txt",
    "parallel -X {p} ::: a.md :::: list.txt",
    "parallel -- {p} < list.txt",
    "rush '{p} {{}}' < list.txt",
    "rush -j 2 -i list.txt '{p}'",
    "xe {p} < list.txt",
    "xe -N2 -f list.txt {p}",
    "find -files0-from list0 -exec {p} {{}} +",
    "find -files0-from list0 -name '*.md' -exec {p} {{}} ;",
)
_FEEDS = st.sampled_from(FEEDS)


@_SETTINGS
@given(program=st.sampled_from(NOT_READERS), feed=_FEEDS, wrapper=_WRAPPERS)
def test_unseen_operands_to_a_writer_are_asked(tree, program, feed, wrapper) -> None:
    command = _wrap(wrapper, feed.format(p=program))
    assert _verdict(tree, command) in ("ask", "deny"), command


@_SETTINGS
@given(
    program=st.sampled_from(["cp src/a.py", "tee", "tee -a", "touch", "install -m 644 src/a.py"]),
    feed=_FEEDS,
)
def test_unseen_operands_near_a_protected_path_are_denied(tree, program, feed) -> None:
    command = "echo .orchestration/agent_trace.jsonl; " + feed.format(p=program)
    assert _verdict(tree, command) == "deny", command


@_SETTINGS
@given(
    program=st.sampled_from(["cp src/a.py", "tee", "touch", "rm", "mv src/a.py"]),
    form=st.sampled_from(
        [
            "parallel {p} ::: {t}",
            "parallel -j2 {p} {{}} ::: src/x {t}",
            "parallel -I XX {p} XX ::: {t}",
            "parallel --arg-sep ,, {p} ,, {t}",
            "parallel {p} -- {t}",
            "parallel -- '{p} {t}'",
            "parallel ::: '{p} {t}'",
            "xe -a {p} -- {t}",
            "xe -A :: {p} :: {t}",
            "rush -o {t} 'cat {{}}'",
            "parallel --joblog {t} wc ::: a",
        ]
    ),
    target=st.sampled_from(
        [".orchestration/agent_trace.jsonl", ".claude/settings.json", ".orch*/agent*"]
    ),
    wrapper=_WRAPPERS,
)
def test_shown_operands_of_a_fan_out_are_checked_like_words(
    tree, program, form, target, wrapper
) -> None:
    command = _wrap(wrapper, form.format(p=program, t=target))
    assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.py' | xargs grep -l jwt",
        "git ls-files | xargs wc -l",
        "xargs -a files.txt cat",
        "find . -print0 | xargs -0 sha256sum",
        "xargs -n1 basename < list.txt",
        "rg -l TODO | xargs head -3",
        "xargs grep -n -- TODO < list.txt",
        "wc -l --files0-from=list0",
        "find -files0-from list0 -name '*.py' -print",
        "find -files0-from list0 -exec grep -l TODO {} +",
        "find . -name '*.md' | parallel -X grep -l TODO",
        "git ls-files | parallel -j8 --bar sha256sum",
        "parallel wc -l :::: list.txt",
        "parallel -a list.txt -k head -3",
        "parallel -j4 'grep -c TODO {}' ::: src/a.py src/auth/login.py",
        "parallel gzip -t ::: a.gz b.gz",
        "parallel ::: 'ls src' 'wc -l src/a.py'",
        "parallel wc -l -- a b",
        "rush -j 4 'cat {}' -k < list.txt",
        "rush -i list.txt 'wc -l {}'",
        "xe -f list.txt cat",
        "xe -a wc -l -- src/a.py src/auth/login.py",
    ],
)
def test_readers_given_unseen_operands_stay_quiet(tree, command: str) -> None:
    assert _verdict(tree, command) == "allow", command


@pytest.mark.parametrize(
    "command",
    [
        "echo docs/x.md | xargs cp src/auth/login.py",
        "echo README.md | xargs tee",
        "echo ~/.bashrc | xargs touch",
        "xargs sort < list.txt",  # sort -o in the data would write
        "xargs git config < list.txt",
        "xargs env < list.txt",
        "xargs sh -c 'cp \"$@\" /tmp' sh < list.txt",
        "xargs dd < list.txt",
        "find -files0-from list0 -exec cp /tmp/e {} ;",
        "find -files0-from list0 -delete",
        "rsync --files-from=list . /tmp/out",
        "parallel cp {} /tmp ::: a b",
        "parallel cp src/auth/login.py < list.txt",
        "cat list | parallel 'gzip -c {} > {}.gz'",
        "cat cmds.txt | parallel",
        "parallel ::: 'ls' 'rm -rf src'",
        "parallel -j2 -- 'rm x'",
        "parallel echo {= s/a/b/ =} ::: a",
        "parallel -S host echo ::: a",
        "parallel --filter x echo ::: a",
        "parallel --rpl '{x} s/a/b/' echo {x} ::: a",
        "parallel --bg touch ::: x",
        "rush 'cp {} out/' < list.txt",
        "rush 'cat {} > {}.txt'",
        "xe -s 'cp $1 /tmp' < list.txt",
        "xe -a rm -- a b",
        "xe -A :: rm :: a b",
        "find -files0-from list0 -exec python3 {} +",
    ],
)
def test_writers_given_unseen_operands_break_scope(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


# --- what runs later -------------------------------------------------------------------------

LATER_FORMS = (
    "{c} &",
    "( sleep 4; {c} ) &",
    "nohup {c}",
    "nohup {c} &",
    "setsid {c}",
    "setsid -f {c}",
    "{c} & disown",
    "echo '{c}' | at now + 1 minute",
    "at now <<< '{c}'",
    "echo '{c}' | batch",
    "crontab jobs.txt",
    "systemd-run --user {c}",
    "tmux new -d '{c}'",
    "tmux new-session -d -s x '{c}'",
    "screen -dm {c}",
    "daemonize /usr/bin/env {c}",
    "start-stop-daemon --start --exec /bin/sh -- -c '{c}'",
    "dtach -n /tmp/s {c}",
    "pm2 start '{c}'",
    "coproc {c}",
)
_LATER = st.sampled_from(LATER_FORMS)


@_SETTINGS
@given(
    later=_LATER,
    command=st.sampled_from(["sleep 100", "true", "echo x > src/y.py", "npm run dev", "ls"]),
    wrapper=_WRAPPERS,
)
def test_what_runs_after_the_call_is_asked(tree, later, command, wrapper) -> None:
    line = _wrap(wrapper, later.format(c=command))
    assert _verdict(tree, line) in ("ask", "deny"), line


def test_rewriting_governance_from_the_background_is_denied(tree) -> None:
    command = "(sleep 4; echo 'x: 1' > .orchestration/hooks.yaml) &"
    assert _verdict(tree, command) == "deny"


@pytest.mark.parametrize("command", ["crontab -l", "tmux ls", "screen -ls", "pm2 logs", "jobs"])
def test_listing_what_runs_later_stays_quiet(tree, command: str) -> None:
    assert _verdict(tree, command) == "allow"


# --- holding ledger's lock -------------------------------------------------------------------


@_SETTINGS
@given(
    locker=st.sampled_from(
        [
            "flock {f} sleep 100000",
            "flock -x {f} -c 'sleep 100'",
            "flock -w 0 {f} true",
            "flock -s {f} cat src/a.py",
            "lockf {f} sleep 100",
            "lckdo {f} sleep 100",
            "setlock {f} sleep 100",
            "dotlockfile -l {f}",
            "exec 9<{f}; flock 9 sleep 100",
            "flock 9 sleep 100 9<{f}",
            "python3 -c 'import fcntl; fcntl.flock(open(\"{f}\"), 2)'",
        ]
    ),
    path=st.sampled_from(
        [
            ".orchestration/agent_trace.jsonl",
            ".orchestration/active_intents.yaml",
            "./.orchestration/agent_trace.jsonl",
            "src/../.orchestration/agent_trace.jsonl",
        ]
    ),
    wrapper=_WRAPPERS,
)
def test_holding_ledgers_lock_from_the_shell_is_refused(tree, locker, path, wrapper) -> None:
    command = _wrap(wrapper, locker.format(f=path))
    assert _verdict(tree, command) == "deny", command


def test_a_lock_of_ones_own_file_stays_quiet(tree) -> None:
    assert _verdict(tree, "flock /tmp/build.lock make") == "allow"


# --- environment and option values -----------------------------------------------------------

_RUNS = st.sampled_from(["sh -c id", "src/auth/x.sh", "./evil", "python3 -c 1", "vim", "rm -rf x"])


@_SETTINGS
@given(
    variable=st.sampled_from(sorted(n for n, r in ENVIRONMENT.items() if r in ("exec", "remote"))),
    value=_RUNS,
    program=st.sampled_from(["less README.md", "man ls", "git log", "cat src/a.py", "pytest"]),
    spelling=st.sampled_from(["{v}='{x}' {p}", "env {v}='{x}' {p}", "export {v}='{x}'; {p}"]),
)
def test_environment_that_runs_a_program_is_asked(tree, variable, value, program, spelling):
    command = spelling.format(v=variable, x=value, p=program)
    assert _verdict(tree, command) in ("ask", "deny"), command


@_SETTINGS
@given(
    variable=st.sampled_from(
        [
            *sorted(n for n, r in ENVIRONMENT.items() if r in ("config", "load")),
            *("LESSOPEN", "MANOPT", "LESS", "GIT_CONFIG_KEY_0", "LD_BIND_NOW", "BASH_FUNC_x"),
        ]
    ),
    program=st.sampled_from(["less README.md", "man ls", "git status", "grep x src/a.py"]),
    wrapper=_WRAPPERS,
)
def test_environment_that_configures_or_loads_is_asked(tree, variable, program, wrapper):
    value = {"MANOPT": "-P cp", "LESS": "-kkeys"}.get(variable, "|src/x.sh %s")
    command = f"{variable}='{value}' " + _wrap(wrapper, program)
    assert _verdict(tree, command) in ("ask", "deny"), command


@_SETTINGS
@given(
    name=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=3, max_size=12),
    program=st.sampled_from(["less README.md", "git log", "grep -r x src", "ls", "sort f"]),
)
def test_a_variable_the_table_does_not_know_is_asked(tree, name, program) -> None:
    if name in ENVIRONMENT or name.startswith(("LC_", "GIT_TRACE")):
        return
    assert _verdict(tree, f"{name}=1 {program}") in ("ask", "deny"), name


@pytest.mark.parametrize(
    "command",
    [
        "LESSOPEN='|src/auth/x.sh %s' less README.md",
        "LESSCLOSE='src/x.sh %s %s' less README.md",
        "LESSKEYIN=keys less README.md",
        "MANPAGER='sh -c id' man ls",
        "MANOPT='-P cp' man ls",
        "PAGER='sh -c id' git log",
        "GIT_PAGER='./x' git log",
        "EDITOR=./x git commit",
        "LD_PRELOAD=./x.so ls",
        "PYTHONSTARTUP=x.py python3 -i",
        "BASH_ENV=x.sh bash -c true",
        "PERL5OPT=-Mx perl -e 1",
        "GIT_SSH_COMMAND='ssh -o ProxyCommand=id' git fetch",
        "rsync -e 'sh -c id' src/ host:dst/",
        "rsync --rsh='./x' src/ host:dst/",
        "ssh -o ProxyCommand=id host",
        "ssh -oLocalCommand=id -oPermitLocalCommand=yes host",
        "ssh -o 'ProxyCommand id' host",
        "ssh -F ./cfg host",
        "ssh -o Include=./cfg host",
        "ssh -o PKCS11Provider=./lib.so host",
        "ssh -o NoSuchKey=1 host",
        "scp -S ./x a host:b",
        "sftp -S ./x host",
        "curl -K cfg https://example.com",
        "curl --config cfg https://example.com",
        "curl -w @fmt https://example.com",
        "openssl req -engine ./lib.so -new",
        "openssl req -config ./x.cnf -new",
        "openssl s_client -provider ./p",
        "tar --to-command=./x -xf a.tar",
        "tar -I ./x -cf a.tar src",
        "tar --use-compress-program=./x -cf a.tar src",
        "zip -TT ./x a.zip src/a.py",
        "git -c core.pager=./x log",
        "less '+!id' README.md",
        "less '+|id' README.md",
        "man -H./x ls",
    ],
)
def test_values_that_run_configure_or_load_are_asked(tree, command: str) -> None:
    assert _verdict(tree, command) in ("ask", "deny"), command


@pytest.mark.parametrize(
    "command",
    [
        "curl -sS -w '%output{.orchestration/agent_trace.jsonl}' https://example.com",
        "curl -w '%output{>>.claude/settings.json}x' https://example.com",
        "GIT_TRACE=.orchestration/x git status",
        "HISTFILE=.orchestration/x bash -c true",
        "ssh -E .orchestration/log host",
        "LESS='-o.orchestration/x' less README.md",
    ],
)
def test_values_that_write_a_protected_file_are_denied(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "LANG=C sort data.txt",
        "LC_ALL=C grep -rn x src",
        "TZ=UTC date",
        "NO_COLOR=1 git diff",
        "CI=1 pytest -q",
        "NODE_ENV=test npm test",
        "PYTHONPATH=src pytest -q",
        "PORT=3000 npm start",
        "GIT_PAGER=cat git log -3",
        "PAGER=cat git diff",
        "MANPAGER='less -R' man ls",
        "LESS=-R git log",
        "GIT_TRACE=1 git status",
        "GIT_SSH_COMMAND='ssh -i ~/.ssh/id_ed25519' git fetch",
        "rsync -av -e 'ssh -p 2222' src/ host:dst/",
        "ssh -o StrictHostKeyChecking=no -o ConnectTimeout=5 host uptime",
        "curl -s -o /dev/null -w '%{http_code}' https://example.com",
        "less +G README.md",
        "openssl rand -hex 16",
        "D=src; ls $D",
    ],
)
def test_harmless_environment_and_values_stay_quiet(tree, command: str) -> None:
    assert _verdict(tree, command) == "allow", command


# --- evidence refs ---------------------------------------------------------------------------


@_SETTINGS
@given(
    ref=st.sampled_from(
        [
            "refs/ledger/0b5c",
            "refs/ledger-incoming/x",
            "refs/ledger-remotes/origin/x",
            "refs/Ledger/x",
        ]
    ),
    form=st.sampled_from(
        [
            "git update-ref {r} HEAD",
            "git update-ref -d {r}",
            "git symbolic-ref {r} refs/heads/main",
            "git push origin HEAD:{r}",
            "git push origin +HEAD:{r}",
            "git push origin :{r}",
            "git push --force origin {r}",
            "git fetch origin +{r}:{r}",
            "git fetch . HEAD:{r}",
            "git branch -f {r} HEAD",
            "git tag {r}",
            "git config remote.origin.fetch +{r}:{r}",
            "echo 0000 > .git/{r}",
            "cp /tmp/x .git/{r}",
        ]
    ),
    wrapper=_WRAPPERS,
)
def test_writing_evidence_refs_around_ledger_is_refused(tree, ref, form, wrapper) -> None:
    command = _wrap(wrapper, form.format(r=ref))
    assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "git push --mirror origin",
        "git push origin 'refs/*:refs/*'",
        "git fetch origin '+refs/*:refs/*'",
        "git remote add --mirror=fetch backup https://example.com/x.git",
        "echo x >> .git/packed-refs",
        "rm -rf .git/refs/led*",
    ],
)
def test_pushing_or_fetching_every_ref_is_refused(tree, command: str) -> None:
    assert _verdict(tree, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    ["git log refs/ledger/abc", "git for-each-ref refs/ledger", "git push origin main"],
)
def test_reading_evidence_refs_stays_quiet(tree, command: str) -> None:
    assert _verdict(tree, command) == "allow", command


# --- ledger's library from inline Python ------------------------------------------------------


@_SETTINGS
@given(
    importer=st.sampled_from(
        [
            "from ledger import Ledger",
            "import ledger; Ledger = ledger.Ledger",
            "import importlib; Ledger = importlib.import_module('ledger').Ledger",
            "Ledger = __import__('ledger').Ledger",
            "from ledger._evidence.ledger import Ledger",
        ]
    ),
    call=st.sampled_from(
        [
            "Ledger.open('.').append('intent.scope_expanded', {{}})",
            "Ledger.open('.').append_many([])",
            "Ledger.open('.').checkpoint()",
            "Ledger.open('.').rotate_key()",
            "Ledger.open('.').revoke_key('k')",
        ]
    ),
    runner=st.sampled_from(
        ['python3 -c "{code}"', 'uv run python -c "{code}"', "python3 - <<'EOF'\n{code}\nEOF"]
    ),
)
def test_writing_records_through_the_library_from_the_shell_is_refused(
    tree, importer, call, runner
) -> None:
    code = f"{importer}; {call}" if "<<" not in runner else f"{importer}\n{call}"
    command = runner.format(code=code.replace("{{}}", "{}"))
    assert _verdict(tree, command) == "deny", command


def test_reading_through_the_library_stays_quiet(tree) -> None:
    command = "python3 -c 'from ledger import Ledger; print(Ledger.open(\".\").verify())'"
    assert _verdict(tree, command) == "allow"
    assert ledger_api_writes("import ledger; print(ledger.__version__)") == ()
    assert ledger_api_writes("import ledger; (") == ("unparsable",)


def test_every_later_program_asks_by_itself() -> None:
    for name in LATER:
        assert classify_command(f"{name} x y").unanalysable, name
