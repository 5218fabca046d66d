"""What an agent's sandboxed shell must not change because the change runs code *outside* the
sandbox, and when ``ledger install --hardened`` must refuse because it cannot protect that.

Two kinds of file run code later, unsandboxed:

* **the hook's runtime**: the ``ledger`` executable the client runs on every tool call, the
  Python interpreter its ``#!`` names, and that interpreter's environment (the venv: its
  ``site-packages``, where any ``.pth`` file is executed at start-up, and ``pyvenv.cfg``), the
  base interpreter's prefix when the user owns it (a uv- or pyenv-managed Python), the user
  site-packages when the interpreter reads them, and the source folder an editable install
  imports from;
* **git's configuration**: ``.git/config`` (and ``config.worktree``) and ``.git/hooks`` of the
  repository holding the workspace, ``~/.gitconfig`` and ``$XDG_CONFIG_HOME/git/config``: a
  ``core.fsmonitor``, a filter or a hook planted there runs when the person runs git.

A sandbox can deny writes to a path; it cannot protect what lives where it must let the agent
write (the workspace, and for Codex the temp folders). There ``--hardened`` refuses, with the
way out (:func:`refusals`). So does a variable that makes code load from there
(``PYTHONPATH``, ``LD_PRELOAD``, ``BASH_ENV``, ``GIT_CONFIG_GLOBAL``…), and a signing key in
the environment: every process the client starts inherits it, the agent's shell too, and no
sandbox setting hides a variable.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ledger._clients.registry import CLIENTS
from ledger._clients.settings import script_interpreter
from ledger._evidence.keys import SIGNING_KEY_ENV, private_key_dir
from ledger._git import git_command, git_environment, repository_dirs
from ledger._governance.analysis.runs_later import git_files
from ledger._startup.search_path import program_on_path

__all__ = [
    "client_files",
    "git_config_paths",
    "hook_runtime_paths",
    "hooks_path_inside",
    "refusals",
    "render_client_files",
]

#: Variables that make what runs outside the sandbox load or run code from the paths they name:
#: the hook's interpreter (``PYTHON*``), the dynamic loader (``LD_*``), the shell running the
#: hook command (bash sources ``$BASH_ENV``), the person's git (``GIT_CONFIG_*``,
#: ``GIT_EXEC_PATH``). One inside the workspace is a way out too.
_CODE_PATH_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONSTARTUP",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_EXEC_PATH",
)


def _program(ledger_cmd: str) -> tuple[Path | None, Path | None]:
    """(the script a hook command runs, its interpreter): ``python -I /path/ledger`` names
    both, a script its ``#!`` line names the interpreter of (``None`` for what cannot be read)."""
    try:
        words = shlex.split(ledger_cmd)
    except ValueError:
        return None, None
    if len(words) >= 3 and words[1] == "-I":
        return Path(words[2]), _found(words[0])
    program = _found(words[0]) if words else None
    return program, script_interpreter(program) if program is not None else None


def _found(word: str) -> Path | None:
    if "/" in word:
        return Path(word)
    found = program_on_path(word)
    return Path(found) if found else None


def _venv(interpreter: Path) -> tuple[Path, dict[str, str]] | None:
    """(the venv root, its ``pyvenv.cfg``) for an interpreter inside one (PEP 405)."""
    root = interpreter.parent.parent
    try:
        text = (root / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    config = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            config[key.strip().lower()] = value.strip()
    return root, config


def _owned(path: Path) -> bool:
    """The current user owns ``path``, so a process running as them can rewrite it."""
    try:
        return path.stat().st_uid == os.getuid()
    except (OSError, AttributeError):
        return False


def _editable_sources(site_packages: Path) -> list[Path]:
    """The folders an editable install's ``.pth`` or ``__editable__`` finder imports from."""
    sources: list[Path] = []
    for entry in sorted(site_packages.glob("*.pth")) + sorted(
        site_packages.glob("__editable__*finder.py")
    ):
        try:
            text = entry.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if entry.suffix == ".pth":
            found = [ln.strip() for ln in text.splitlines() if ln.startswith("/")]
        else:
            found = re.findall(r"['\"](/[^'\"]+)['\"]", text)
        sources += [Path(p) for p in found if Path(p).exists()]
    return sources


def hook_runtime_paths(ledger_cmd: str, home: Path) -> list[Path]:
    """Everything whose change runs code in the next (unsandboxed) hook call of ``ledger_cmd``,
    as far as the files tell: the executable (and what its symlink points at), its interpreter,
    the venv, a user-owned base Python, the user site-packages it reads, editable sources."""
    program, interpreter = _program(ledger_cmd)
    if program is None:
        return []
    found = [program]
    if program.exists():
        found.append(Path(os.path.realpath(program)))
    user_site = True
    if interpreter is not None:
        found += [interpreter, Path(os.path.realpath(interpreter))]
        venv = _venv(interpreter)
        if venv is not None:
            root, config = venv
            found.append(root)
            user_site = config.get("include-system-site-packages", "false").lower() == "true"
            base = Path(config["home"]).parent if config.get("home") else None
            if base is not None and base != Path("/usr") and _owned(base):
                found.append(base)
            for site_packages in root.glob("lib*/python*/site-packages"):
                found += _editable_sources(site_packages)
    if user_site:
        found += [p for p in (home / ".local" / "lib").glob("python*/site-packages") if p.is_dir()]
    # A file owned by root (the system Python) is out of the agent's reach already; one that
    # does not exist yet could be created where the hook will look.
    unique: list[Path] = []
    for path in found:
        if path not in unique and (_owned(path) or not path.exists()):
            unique.append(path)
    return unique


def git_config_paths(
    root: Path, home: Path, environ: Mapping[str, str] | None = None
) -> tuple[list[Path], Path | None]:
    """(the git files whose change runs code that exist and the user can write, the
    repository's hooks folder when it is missing), from the one list
    (:func:`ledger._governance.analysis.runs_later.git_files`: submodules' and worktrees'
    included). The caller creates a missing hooks folder so the sandbox can bind it."""
    found: list[Path] = []
    missing_hooks: Path | None = None
    dirs = repository_dirs(root)
    for path, is_hooks in git_files(root, home, environ):
        if path.exists() and (_owned(path) or home in path.parents):
            found.append(Path(os.path.normpath(path)))
        elif is_hooks and dirs and path == dirs[-1] / "hooks" and not path.exists():
            missing_hooks = path
    return [p for i, p in enumerate(found) if p not in found[:i]], missing_hooks


def hooks_path_inside(root: Path) -> Path | None:
    """The folder ``core.hooksPath`` (in the repository's own config) points at when it lies in
    the workspace (husky, lefthook…): git runs the hooks there for the person, and the agent's
    shell may write them (the scripts they call too, so a sandbox rule cannot cover it)."""
    import subprocess  # noqa: PLC0415 -- install time only

    env = git_environment()
    for folder in repository_dirs(root):
        config = ("config", "--file", str(folder / "config"), "--get", "core.hooksPath")
        try:
            done = subprocess.run(  # noqa: S603
                git_command(root, *config, env=env),
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
                env=env,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        value = done.stdout.strip()
        if value:
            target = Path(os.path.realpath(root / Path(value).expanduser()))
            real_root = Path(os.path.realpath(root))
            return target if target == real_root or real_root in target.parents else None
    return None


def _writable_by_the_sandbox(client: str, root: Path, environ: Mapping[str, str]) -> list[Path]:
    """Where ``client``'s sandbox lets the agent's shell write: the workspace; for Codex also
    ``/tmp`` and ``$TMPDIR`` (its workspace-write policy's defaults)."""
    places = [root]
    if client == "codex":
        places += [Path("/tmp"), *([Path(environ["TMPDIR"])] if environ.get("TMPDIR") else [])]  # noqa: S108
    return [Path(os.path.realpath(p)) for p in places]


def refusals(
    client: str, root: Path, ledger_cmd: str, home: Path, environ: Mapping[str, str]
) -> list[str]:
    """Why ``--hardened`` cannot hold for ``client`` here, one line each (empty: it can)."""
    why: list[str] = []
    if environ.get(SIGNING_KEY_ENV):
        why.append(
            f"${SIGNING_KEY_ENV} is set, and every process the client starts inherits it, "
            "the agent's shell too (`env` prints it; no sandbox setting hides a variable): "
            "unset it where you start the client and keep the key as a file in "
            f"{private_key_dir(environ)}, which --hardened makes unreadable"
        )
    writable = _writable_by_the_sandbox(client, root, environ)
    for variable in _CODE_PATH_VARIABLES:
        for entry in filter(None, environ.get(variable, "").replace(" ", ":").split(":")):
            real = Path(os.path.realpath(root / entry))
            place = next((w for w in writable if real == w or w in real.parents), None)
            if place is not None:
                why.append(
                    f"${variable} names {entry}, inside {place}, which the sandboxed shell may "
                    "write: code from there would run outside the sandbox (in the hook or the "
                    "person's git); unset it where you start the client"
                )
                break
    for path in hook_runtime_paths(ledger_cmd, home):
        real = Path(os.path.realpath(path))
        place = next((w for w in writable if real == w or w in real.parents), None)
        if place is not None:
            why.append(
                f"the hook runs {path}, inside {place}, which the sandboxed shell may write: "
                "it could drop a .pth file (or edit the code) that the next hook call runs "
                "outside the sandbox. Install ledger outside the workspace, non-editable "
                "(`pipx install <ledger checkout>` or `uv tool install <ledger checkout>`), "
                "then run `ledger install "
                f"{client} --hardened` with that ledger"
            )
            break
    return why


# --- where the clients read what runs: one table, from the registry ------------------------------

#: The generated table's home: the governance layer reads it (it may not import the registry).
CLIENT_FILES_MODULE: Final = (
    Path(__file__).parents[1] / "_governance" / "analysis" / "client_files.py"
)


def client_files() -> tuple[tuple[str, str, bool, str, str, bool, str], ...]:
    """Every file and folder a registered client reads hooks, settings or MCP servers from,
    relative to the workspace and the home folder alike, from :data:`CLIENTS` alone:
    ``(protected path, area name, everything below it, watched folder, watched glob, watched
    recursively, tripwire rule)``. The rule is ``mcp-config`` for a file that only names MCP
    servers (the tripwire holds what they run fixed, not the client's toggles and state beside
    them) and ``client-config`` otherwise."""
    rows: dict[str, tuple[str, str, bool, str, str, bool, str]] = {}

    def add(entry: str, title: str, *, folder: bool, mcp: bool) -> None:
        if folder:
            path = watch_dir = entry.rstrip("/")
            glob, recursive, below = "*", True, True
        elif any(c in entry.rsplit("/", 1)[-1] for c in "*?["):
            path, _, glob = entry.rpartition("/")
            watch_dir, recursive, below = path, False, True
        else:
            path, below, recursive = entry, False, False
            watch_dir, _, glob = entry.rpartition("/")
        rule = "mcp-config" if mcp else "client-config"
        old = rows.get(path)
        if old is not None:
            rule = "client-config" if "client-config" in (old[6], rule) else rule
            title = old[1]
        rows[path] = (path, title, below, watch_dir, glob, recursive, rule)

    servers = "an MCP server configuration"
    for spec in CLIENTS.values():
        title = f"a {spec.title} hook or settings file"
        folder = spec.layout == "scripts"  # one executable per hook in a folder (Cline)
        for entry in (spec.shared_file, spec.local_file, spec.user_file, spec.sandbox_file):
            if entry:
                add(entry, title, folder=folder, mcp=False)
        for entry in spec.reads:
            mcp = "mcp" in entry.rsplit("/", 1)[-1]  # a further MCP file (another install)
            add(entry, servers if mcp else title, folder=entry.endswith("/"), mcp=mcp)
    for spec in CLIENTS.values():
        for entry in (spec.mcp.project_file, spec.mcp.user_file):
            if entry:
                add(entry, servers, folder=False, mcp=spec.mcp.format == "json")
    return tuple(sorted(rows.values()))


def render_client_files() -> str:
    """The source of :data:`CLIENT_FILES_MODULE` (``python -m ledger._clients.runs_outside``
    writes it; a test fails when it differs)."""
    rows = (
        "".join(
            "    (\n" + "".join(f"        {json.dumps(field)},\n" for field in row) + "    ),\n"
            for row in client_files()
        )
        .replace("true,", "True,")
        .replace("false,", "False,")
    )
    return (
        '"""Where the registered clients read hooks, settings and MCP servers from: GENERATED\n'
        "from ledger/_clients/registry.py by ``python -m ledger._clients.runs_outside`` (do not\n"
        "edit; tests/hooks/test_runs_later.py fails when it differs). The governance layer may\n"
        "not import the registry, so it reads this copy. Rows: see\n"
        '``ledger._clients.runs_outside.client_files``."""\n\n'
        "from typing import Final\n\n"
        "CLIENT_FILES: Final[tuple[tuple[str, str, bool, str, str, bool, str], ...]] = (\n"
        f"{rows})\n"
    )


if __name__ == "__main__":
    CLIENT_FILES_MODULE.write_text(render_client_files(), encoding="utf-8")
