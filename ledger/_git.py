"""git for ledger: HEAD read from ``.git`` directly (no ``git`` subprocess per hook), and the one
way ledger runs a ``git`` command (:func:`git_command`), with every command a config file could
make git run switched off."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ledger._startup.search_path import absolute_search_path

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "GIT_EXEC_KEYS",
    "git_command",
    "git_diff_files",
    "git_environment",
    "one_config_read",
    "read_head",
    "repository_dirs",
]

# Config keys whose value git executes, or that make git read more configuration (which may
# hold such keys): "git -c core.pager='rm -rf x' log" runs it [git-config(1) Variables].
GIT_EXEC_KEYS = (
    r"(core\.(pager|editor|sshcommand|fsmonitor|hookspath|gitproxy|askpass|worktree)"
    r"|sequence\.editor|diff\.external|diff\.tool|merge\.tool|pager\..*|alias\..*"
    r"|include\..*|includeif\..*|credential\..*|gpg\..*program|ssh\.variant|http\..*proxy.*"
    r"|uploadpack\..*|receive\..*|remote\..*\.(uploadpack|receivepack|vcs|proxy)|protocol\..*"
    r"|url\..*|submodule\..*\.update|instaweb\..*|sendemail\..*|web\.browser|browser\..*"
    r"|gc\..*|maintenance\..*|init\.templatedir|clone\.templatedir|safe\.directory"
    r"|(diff|merge|filter|difftool|mergetool|man|credential)\..*"
    r"|.*\.(textconv|clean|smudge|process|command|cmd|helper|program|path))"
)


def _git_dir(root: Path) -> Path | None:
    for candidate in (root, *root.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (candidate / target).resolve()
            return None
    return None


def _common_dir(git_dir: Path) -> Path:
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def _resolve_ref(git_dir: Path, ref: str) -> str | None:
    for base in (git_dir, _common_dir(git_dir)):
        try:
            value = (base / ref).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        return value if not value.startswith("ref:") else _resolve_ref(git_dir, value[4:].strip())
    try:
        packed = (_common_dir(git_dir) / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


def repository_dirs(root: str | Path) -> list[Path]:
    """The git directory of the repository holding ``root``, and its common directory when it
    is another (a worktree's): where its config and hooks live. Empty outside a repository."""
    git_dir = _git_dir(Path(root))
    if git_dir is None:
        return []
    common = _common_dir(git_dir)
    return [git_dir] if common == git_dir else [git_dir, common]


def read_head(root: str | Path) -> str | None:
    """The commit HEAD points at (40/64 hex), or ``None`` outside a repository or before the
    first commit."""
    git_dir = _git_dir(Path(root))
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        return _resolve_ref(git_dir, head[4:].strip())
    return head or None


# --- running git on a repository an agent could have configured ------------------------------
#
# An agent's shell can write `.git/config` (and, without `--hardened`, `~/.gitconfig`). git runs
# commands named there: `core.fsmonitor` on any index refresh, `filter.<driver>.clean` on the
# contents blame compares (`--contents`), `diff.<driver>.textconv`, a pager, hooks, and a remote
# helper or ssh command when a partial clone fetches a missing object. Every git command ledger
# runs goes through `git_command`, which switches each of those off for that one command. The
# user's identity and `safe.directory` stay: global and system config are still read, only the
# keys that run something are overridden (a `-c` beats every config file, includes too).
# pygit2 (line attribution) only diffs two buffers in memory: it opens no repository and reads
# no config.

#: Settings that switch off everything git would run on ledger's behalf, whatever a config
#: file says. Drivers (filters, diff drivers) are named per config, see `_driver_overrides`.
_SAFE_SETTINGS: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=false",
    "credential.helper=",
    "protocol.allow=never",  # no transport, so no lazy fetch, remote helper or upload-pack
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
)

#: The environment git runs in: no prompt, no lock on the index, no trace file (trace2 targets
#: in the global config could append to any file), C messages for the parsers.
_SAFE_ENVIRONMENT: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PAGER": "cat",
    "GIT_TRACE2": "0",
    "GIT_TRACE2_EVENT": "0",
    "GIT_TRACE2_PERF": "0",
    "LC_ALL": "C",
}

#: The driver keys that name a command to run, per driver section, and the harmless command
#: that replaces each: an empty filter is not run (git's convert.c), an empty textconv is run
#: and fails, ``cat`` converts nothing. ``diff.external`` and ``diff.<driver>.command`` have no
#: harmless value: a diff ledger runs passes ``--no-ext-diff``.
_DRIVER_COMMANDS: dict[str, dict[str, str]] = {
    "filter": {"clean": "", "smudge": "", "process": ""},
    "diff": {"textconv": "cat"},
}


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``, the person's own) with git's executing knobs off, and a
    ``PATH`` of its absolute folders only: git is found there (``subprocess`` searches the
    ``PATH`` it is given), and so is what git runs (``ssh``), never in the current folder
    (:mod:`ledger._startup.search_path`)."""
    env = {**(os.environ if base is None else base), **_SAFE_ENVIRONMENT}
    env["PATH"] = absolute_search_path(env.get("PATH", os.defpath))
    return env


def run_bounded(
    argv: list[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    data: bytes | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(argv, input=data, capture_output=True, timeout=timeout)`` without its
    wait loop: with a timeout, CPython's ``Popen.wait`` polls ``waitpid`` with sleeps from
    1 ms, and a child that closed its pipes a moment before it exited costs a whole sleep (1 ms
    a git call here: blame's two, an ambiguous edit's diff). A timer kills the child at the
    deadline instead, and the wait blocks.

    Raises:
        OSError: the program cannot be started.
        subprocess.TimeoutExpired: it ran past ``timeout`` (it was killed).
    """
    import subprocess  # noqa: PLC0415 -- only callers that run git import it
    import threading  # noqa: PLC0415 -- subprocess has imported it already

    with subprocess.Popen(  # noqa: S603 -- argv is the caller's fixed git command
        argv,
        stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
    ) as process:
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            process.kill()

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            stdout, stderr = process.communicate(data)
        finally:
            timer.cancel()
        if expired.is_set():
            raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
        return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _driver_overrides(root: Path, env: Mapping[str, str]) -> list[str]:
    """``-c`` pairs replacing every filter and textconv command any config file (and its
    includes) defines, with :data:`_DRIVER_COMMANDS`' harmless ones."""
    import subprocess  # noqa: PLC0415 -- the hook path never runs git

    try:
        listed = run_bounded(
            ["git", "-C", str(root), *_settings_args(), "config", "--list", "--includes", "-z"],
            env=env,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    overrides: list[str] = []
    for entry in listed.stdout.split(b"\0"):
        name = entry.split(b"\n", 1)[0].decode("utf-8", "replace")
        section, _, rest = name.partition(".")
        driver, _, key = rest.rpartition(".")
        harmless = _DRIVER_COMMANDS.get(section.lower(), {}).get(key.lower())
        if driver and harmless is not None:
            setting = f"{section}.{driver}.{key}={harmless}"
            if setting not in overrides:
                overrides += ["-c", setting]
    return overrides


_READ_ONCE: dict[str, list[str]] = {}


@contextmanager
def one_config_read(root: Path, env: Mapping[str, str]) -> Iterator[None]:
    """Inside: every :func:`git_command` of ``root`` in this process uses the driver overrides
    read once on entry, instead of running ``git config --list`` before each command (a
    review runs git blame for thousands of files: half its processes were those reads)."""
    key = str(root)
    if key in _READ_ONCE:  # already inside one
        yield
        return
    _READ_ONCE[key] = _driver_overrides(root, env)
    try:
        yield
    finally:
        _READ_ONCE.pop(key, None)


def _overrides(root: Path, env: Mapping[str, str]) -> list[str]:
    found = _READ_ONCE.get(str(root))
    return list(found) if found is not None else _driver_overrides(root, env)


def _settings_args() -> list[str]:
    return [arg for setting in _SAFE_SETTINGS for arg in ("-c", setting)]


#: What a command that talks to a remote (``ledger push``/``fetch``, decision 0018) needs
#: on top of :data:`_SAFE_SETTINGS`: the transports git itself implements, and plain ``ssh``
#: from PATH instead of a configured ``core.sshCommand``. A later ``-c`` wins, and
#: ``protocol.<name>.allow`` beats ``protocol.allow`` [git-config(1) protocol.allow], so every
#: other transport (``ext::``, remote helpers named by a URL or ``remote.*.vcs``) stays off.
_TRANSPORT_SETTINGS: tuple[str, ...] = (
    "protocol.file.allow=always",
    "protocol.ssh.allow=always",
    "protocol.https.allow=always",
    "core.sshCommand=ssh",
)


def git_command(
    root: Path, *args: str, env: Mapping[str, str], transport: bool = False
) -> list[str]:
    """The argv that runs ``git -C root args…`` with nothing an agent planted in a config file
    able to run (see the section comment); ``env`` is :func:`git_environment`'s. ``transport``
    allows git's own transports (file, ssh, https) for a push or fetch; the caller names the
    remote's URL and ``--upload-pack``/``--receive-pack`` itself, so no ``remote.*`` key runs."""
    extra = [arg for setting in _TRANSPORT_SETTINGS for arg in ("-c", setting)] if transport else []
    return [
        "git",
        "--no-pager",
        "-C",
        str(root),
        *_settings_args(),
        *extra,
        *_overrides(root, env),
        *args,
    ]


# --- git's own diff of two files, outside any repository (decision 0010) --------------------
#
# libgit2's xdiff does not give git's hunks on repeated blocks (findings-2026-11-24.md §0), so
# line attribution asks git itself when git is on PATH. `git diff --no-index` still reads the
# system and global config (diff.algorithm, diff.indentHeuristic, diff.external, color ...) and
# the config of a repository it finds above its working directory: it runs in a directory of its
# own, below a ceiling, with no config file at all and every algorithm choice on the command line
# (git's defaults: Myers, the indent heuristic), so the hunks are what `git diff` gives on a
# machine with no configuration.

_DIFF_ARGS: tuple[str, ...] = (
    "diff",
    "--no-index",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--text",
    "--unified=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--no-renames",
)


def git_diff_files(old: bytes, new: bytes, *, timeout: float = 10.0) -> bytes | None:
    """``git diff --no-index -U0`` of two texts (see the section comment), or ``None`` when git
    cannot be run or fails (the caller then diffs another way)."""
    import subprocess  # noqa: PLC0415 -- only an ambiguous diff runs git
    import tempfile  # noqa: PLC0415

    try:
        with tempfile.TemporaryDirectory(prefix="ledger-diff-") as folder:
            Path(folder, "a").write_bytes(old)
            Path(folder, "b").write_bytes(new)
            env = {
                "PATH": absolute_search_path(os.environ.get("PATH", os.defpath)),
                **_SAFE_ENVIRONMENT,
                "HOME": folder,
                "XDG_CONFIG_HOME": folder,
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CEILING_DIRECTORIES": str(Path(folder).parent),
            }
            done = run_bounded(
                ["git", "--no-pager", *_settings_args(), *_DIFF_ARGS, "--", "a", "b"],
                cwd=folder,
                env=env,
                timeout=timeout,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    # --no-index exits 1 when the files differ, 0 when they do not.
    return done.stdout if done.returncode in (0, 1) else None
