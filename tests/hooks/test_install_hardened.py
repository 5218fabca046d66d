"""``ledger install --hardened``: generated sandbox settings against the clients' documented
schemas, and a real bubblewrap sandbox built from them refusing writes to ``.orchestration/`` and
to ledger's trust state outside the workspace (stored checkpoints, trust pins)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ledger._clients.hardening import claude_settings, codex_block
from ledger._clients.install import install, uninstall
from ledger._errors import ConfigError
from ledger._evidence.ledger import Ledger
from ledger._hooks.decider import decider_socket

from ._support import short_folder

# Claude Code settings, the parts --hardened writes. Written from the settings and sandboxing
# docs (https://code.claude.com/docs/en/settings, /en/sandboxing, /en/permissions) and the zod
# schema they are validated with (`SandboxSettingsSchema` in Claude Code's
# entrypoints/sandboxTypes.ts): unknown sandbox keys are errors there, so they are here.
_STRINGS = {"type": "array", "items": {"type": "string"}}
_RULES = {"type": "array", "items": {"type": "string", "pattern": r"^[A-Za-z]+(\(.+\))?$"}}
CLAUDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hooks": {"type": "object"},
        "permissions": {
            "type": "object",
            "properties": {
                "allow": _RULES,
                "deny": _RULES,
                "ask": _RULES,
                "additionalDirectories": _STRINGS,
                "defaultMode": {"type": "string"},
            },
        },
        "sandbox": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean"},
                "failIfUnavailable": {"type": "boolean"},
                "autoAllowBashIfSandboxed": {"type": "boolean"},
                "allowUnsandboxedCommands": {"type": "boolean"},
                "excludedCommands": _STRINGS,
                "ignoreViolations": {"type": "object"},
                "network": {"type": "object"},
                "filesystem": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "allowWrite": _STRINGS,
                        "denyWrite": _STRINGS,
                        "denyRead": _STRINGS,
                        "allowRead": _STRINGS,
                        "allowManagedReadPathsOnly": {"type": "boolean"},
                    },
                },
            },
        },
    },
}

# Codex config, the parts --hardened writes: `PermissionProfileToml` and the top-level
# `default_permissions` of openai/codex codex-rs/core/config.schema.json (generated from the
# config types; `additionalProperties: false` there as here).
CODEX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "default_permissions": {"type": "string"},
        "permissions": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "description": {"type": "string"},
                    "extends": {"type": "string"},
                    "filesystem": {"type": "object"},
                    "network": {"type": "object"},
                    "workspace_roots": {"type": "object"},
                },
            },
        },
    },
}
_ACCESS = {"read", "write", "deny", "none"}


def _workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".orchestration").mkdir(parents=True)
    (root / ".orchestration" / "agent_trace.jsonl").write_text("{}\n", encoding="utf-8")
    (root / "src").mkdir()
    keys = home / ".config" / "ledger" / "keys"
    keys.mkdir(parents=True)
    (keys / "k1.pem").write_text("PRIVATE\n", encoding="utf-8")
    return root, home, {"LEDGER_HOME": str(home / ".config" / "ledger")}


def test_claude_hardened_settings_match_the_documented_schema(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    path, changes = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    settings = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(settings, CLAUDE_SCHEMA)
    sandbox = settings["sandbox"]
    assert (
        sandbox["enabled"],
        sandbox["failIfUnavailable"],
        sandbox["allowUnsandboxedCommands"],
    ) == (True, True, False)
    writes = sandbox["filesystem"]["denyWrite"]
    assert f"/{root}/.orchestration" in writes
    assert f"/{root}/.claude/settings.json" in writes
    assert f"/{root}/.claude/settings.local.json" in writes
    assert f"/{root}/.claude" not in writes  # the pitfall: it breaks every sandboxed command
    assert all(w.startswith(("//", "~/")) for w in writes)
    # $LEDGER_HOME holds the keys, the trust pins, the cache secret and (state/) the checkpoints
    assert "~/.config/ledger" in writes
    assert _without_tmp_fallback(sandbox["filesystem"]["denyRead"]) == [
        "~/.config/ledger/keys",
        "~/.config/ledger/cache.secret",
        "~/.config/ledger/run",  # the resident decider's socket folder
    ]
    deny = settings["permissions"]["deny"]
    assert f"Edit(/{root}/.orchestration/**)" in deny
    assert "Edit(~/.config/ledger/**)" in deny
    assert "Read(~/.config/ledger/keys/**)" in deny
    assert "Read(~/.config/ledger/cache.secret)" in deny
    assert any(c.action == "note" and "Bash" in c.detail for c in changes)
    # idempotent, and the team's shared settings file exists so the sandbox can protect it
    assert (root / ".claude" / "settings.json").read_text() == "{}\n"
    again = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )[1]
    assert {c.action for c in again} <= {"unchanged", "note"}


def _without_tmp_fallback(paths: list[str]) -> list[str]:
    """``denyRead`` without ``/tmp/ledger-<uid>``, the decider's fallback folder for long
    paths, which is named only when it exists on this machine."""
    return [p for p in paths if p != f"//tmp/ledger-{os.getuid()}"]


def xdg_env(home: Path) -> dict[str, str]:
    """The default layout: no $LEDGER_HOME, so keys and pins under ~/.config/ledger and the
    checkpoints under ~/.local/state/ledger (the XDG variables name the same defaults)."""
    return {
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


def test_hardening_denies_writes_to_the_checkpoints_and_pins_outside_the_workspace(
    tmp_path: Path,
) -> None:
    root, home, _ = _workspace(tmp_path)
    env = xdg_env(home)
    path, changes = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    settings = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(settings, CLAUDE_SCHEMA)
    writes = settings["sandbox"]["filesystem"]["denyWrite"]
    assert {"~/.config/ledger", "~/.local/state/ledger"} <= set(writes)
    assert _without_tmp_fallback(settings["sandbox"]["filesystem"]["denyRead"]) == [
        "~/.config/ledger/keys",
        "~/.config/ledger/cache.secret",
        "~/.config/ledger/run",
    ]
    deny = settings["permissions"]["deny"]
    assert {"Edit(~/.config/ledger/**)", "Edit(~/.local/state/ledger/**)"} <= set(deny)
    # The sandbox binds only what exists: the installer made the state folder, private.
    state = home / ".local" / "state" / "ledger"
    assert state.is_dir()
    assert state.stat().st_mode & 0o777 == 0o700
    assert any(c.target == str(state) for c in changes)
    install("codex", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    data = tomllib.loads((root / ".codex" / "config.toml").read_text(encoding="utf-8"))
    jsonschema.validate(data, CODEX_SCHEMA)
    fs = data["permissions"]["ledger"]["filesystem"]
    assert fs["~/.config/ledger"] == fs["~/.local/state/ledger"] == "read"
    assert fs["~/.config/ledger/keys"] == fs["~/.config/ledger/cache.secret"] == "deny"
    assert {v for k, v in fs.items() if k != ":workspace_roots"} <= _ACCESS
    # Uninstalling takes ledger's entries out again. The trust state folders stay, even empty:
    # they are per user, and another workspace's hardened sandbox binds them (it can protect
    # only a path that exists).
    uninstall("claude", root=root, home=home, environ=env)
    left = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    assert "sandbox" not in left
    assert (home / ".config" / "ledger" / "keys" / "k1.pem").is_file()
    uninstall("codex", root=root, home=home, environ=env)
    assert state.is_dir()
    assert state.stat().st_mode & 0o777 == 0o700


def test_cursor_hardening_names_a_sandbox_json_that_opens_the_trust_state(
    tmp_path: Path,
) -> None:
    root, home, _ = _workspace(tmp_path)
    env = xdg_env(home)
    _, quiet = install(
        "cursor", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    assert not [c for c in quiet if "sandbox.json" in c.target]
    (home / ".cursor").mkdir()
    (home / ".cursor" / "sandbox.json").write_text(
        json.dumps({"additionalReadwritePaths": ["~/.local/state", "~/projects/cache"]}),
        encoding="utf-8",
    )
    (root / ".cursor").mkdir(exist_ok=True)
    (root / ".cursor" / "sandbox.json").write_text(
        json.dumps({"type": "insecure_none"}), encoding="utf-8"
    )
    _, changes = install(
        "cursor", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    notes = {c.target: c.detail for c in changes if c.target.endswith("sandbox.json")}
    assert "'~/.local/state'" in notes[str(home / ".cursor" / "sandbox.json")]
    assert "projects" not in notes[str(home / ".cursor" / "sandbox.json")]
    assert "insecure_none" in notes[str(root / ".cursor" / "sandbox.json")]


def test_codex_hardened_profile_matches_the_config_schema_and_keeps_user_keys(
    tmp_path: Path,
) -> None:
    root, home, env = _workspace(tmp_path)
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n', encoding="utf-8"
    )
    install("codex", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    jsonschema.validate(data, CODEX_SCHEMA)
    assert data["model"] == "gpt-5"  # still top level, not swallowed by a table
    assert data["mcp_servers"]["docs"]["command"] == "docs-mcp"
    assert data["default_permissions"] == "ledger"
    profile = data["permissions"]["ledger"]
    assert profile["extends"] == ":workspace"
    roots = profile["filesystem"][":workspace_roots"]
    assert roots["."] == "write"
    assert roots[".orchestration"] == roots[".codex"] == "read"
    assert set(roots.values()) <= _ACCESS
    assert profile["filesystem"]["~/.config/ledger/keys"] == "deny"
    assert profile["filesystem"]["~/.config/ledger"] == "read"  # pins, checkpoints (state/)
    uninstall("codex", root=root, home=home, environ=env)
    assert tomllib.loads(config.read_text(encoding="utf-8")) == {
        "model": "gpt-5",
        "mcp_servers": {"docs": {"command": "docs-mcp"}},
    }


def test_codex_hardening_never_overrides_a_sandbox_choice_already_made(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('sandbox_mode = "read-only"\n', encoding="utf-8")
    _, changes = install(
        "codex", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    hardening = [c for c in changes if c.target == str(config) and "MCP server" not in c.detail]
    assert [c.action for c in hardening] == ["skipped"]
    kept = tomllib.loads(config.read_text(encoding="utf-8"))
    assert kept["sandbox_mode"] == "read-only"  # the person's choice, untouched
    assert "default_permissions" not in kept
    assert set(kept) == {"sandbox_mode", "mcp_servers"}  # only `ledger mcp` was registered


def test_clients_without_a_configurable_sandbox_say_what_is_not_protected(
    tmp_path: Path,
) -> None:
    root, home, env = _workspace(tmp_path)
    for client, words in (
        ("cursor", "no setting that denies"),
        ("cline", "no OS sandbox"),
        ("gemini", "stays writable"),
    ):
        _, changes = install(
            client, root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
        )
        assert any(c.action == "note" and words in c.detail for c in changes), client
        if client != "cline":  # a sandbox that leaves the workspace writable says what stays
            assert any(".git/config" in c.detail for c in changes), client


def _bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found is None and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "bubblewrap"],
            capture_output=True,
            timeout=300,
            check=False,
        )
        found = shutil.which("bwrap")
    if found is None:
        return None
    probe = subprocess.run(
        [found, "--bind", "/", "/", "--dev", "/dev", "true"],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return found if probe.returncode == 0 else None


def _expand(path: str, home: Path) -> str:
    return str(home / path[2:]) if path.startswith("~/") else path[1:]


Sandboxed = Callable[[str], subprocess.CompletedProcess[str]]


def _claude_like_sandbox(
    root: Path, home: Path, env: dict[str, str], ledger_cmd: str = "/x/ledger"
) -> Sandboxed:
    """What Claude Code's Linux sandbox does with the ``--hardened`` settings, done with
    bubblewrap directly: a read-only bind of each ``denyWrite`` path, an empty tmpfs over each
    ``denyRead`` folder and ``/dev/null`` over each ``denyRead`` file. Everything else stays
    writable here (Claude Code's own sandbox writes only the workspace), so what fails below
    fails because of the generated settings alone."""
    bwrap = _bwrap()
    if bwrap is None:
        message = "bubblewrap is not available and could not be installed"
        if os.environ.get("LEDGER_REQUIRE_TOOLS") == "1":  # .ci/run: never skipped
            pytest.fail(message)
        pytest.skip(message)
    fs = claude_settings(root, home=home, environ=env, ledger_cmd=ledger_cmd)["sandbox"][
        "filesystem"
    ]
    args = [bwrap, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in fs["denyWrite"]:
        target = _expand(path, home)
        # a symlink is bound through its folder; what it points at is listed on its own
        if Path(target).exists() and not Path(target).is_symlink():
            args += ["--ro-bind", target, target]
    for path in fs["denyRead"]:
        hidden = Path(_expand(path, home))
        if hidden.is_file():
            args += ["--ro-bind", "/dev/null", str(hidden)]
        elif hidden.is_dir():
            args += ["--tmpfs", str(hidden)]
    args += ["--chdir", str(root), "sh", "-c"]

    def sandboxed(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*args, command], capture_output=True, text=True, timeout=60, check=False
        )

    return sandboxed


def _refused(ran: subprocess.CompletedProcess[str], attack: str) -> None:
    assert ran.returncode != 0, attack
    assert "Read-only file system" in ran.stderr or "Permission denied" in ran.stderr, ran


def test_a_sandboxed_shell_cannot_reach_the_deciders_socket(tmp_path: Path) -> None:
    """The decider runs outside the sandbox and answers whoever reaches its socket (its proof
    authenticates it to the caller, not the caller to it): a shell that could connect could
    have it sign forged hook records, or run git and hooks.yaml commands with a PATH of its
    choosing outside the sandbox."""
    root, home, env = _workspace(tmp_path)
    runtime = short_folder()  # short: sun_path is 108 bytes
    env = {**env, "XDG_RUNTIME_DIR": str(runtime)}
    install("claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    path = decider_socket(env)
    assert path.parent.is_dir(), "the installer makes the folder, so the sandbox can hide it"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(1)
        connect = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""
        assert subprocess.run(["sh", "-c", connect], check=False).returncode == 0  # reachable
        ran = _claude_like_sandbox(root, home, env)(connect)
        assert ran.returncode != 0, "the sandboxed shell reached the decider's socket"
        assert "FileNotFoundError" in ran.stderr or "No such file" in ran.stderr, ran.stderr
    finally:
        listener.close()
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_sandboxed_shell_cannot_write_orchestration_or_read_the_key(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    sandboxed = _claude_like_sandbox(root, home, env)
    for attack in (
        "echo forged >> .orchestration/agent_trace.jsonl",
        "sort -o .orchestration/agent_trace.jsonl .orchestration/agent_trace.jsonl",
        "rm -f .orchestration/agent_trace.jsonl",
        "python3 -c \"open('.claude/settings.json','w').write('{}')\"",
        "touch .orchestration/new",
    ):
        _refused(sandboxed(attack), attack)
    assert (root / ".orchestration" / "agent_trace.jsonl").read_text() == "{}\n"
    stolen = sandboxed(f"cat {home}/.config/ledger/keys/k1.pem")
    assert stolen.returncode != 0
    assert "PRIVATE" not in stolen.stdout
    work = sandboxed("echo ok > src/app.py && cat src/app.py")
    assert (work.returncode, work.stdout) == (0, "ok\n")


def test_a_sandboxed_shell_cannot_rewrite_checkpoints_or_trust_pins_or_read_the_cache_secret(
    tmp_path: Path,
) -> None:
    """The rollback the stored checkpoints catch stays caught: the agent's shell can neither
    delete nor forge a checkpoint, nor pin a key of its own, nor read the cache secret."""
    root, home = tmp_path / "ws", tmp_path / "home"
    env = xdg_env(home)
    ledger = Ledger.init(root, environ=env)
    ledger.append("app.event", {"n": 1})
    assert ledger.auto_checkpoint(session_end=True).status == "written"
    (root / "src").mkdir()
    install("claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env)
    from ledger._workspace import cache_secret  # noqa: PLC0415 -- creates it, as a hook would

    secret = cache_secret(env)
    assert secret is not None
    state = home / ".local" / "state" / "ledger"
    notes = sorted((state / "checkpoints").rglob("*.note"))
    assert notes
    note = notes[-1]
    pins = sorted((home / ".config" / "ledger" / "trusted").glob("*.json"))
    assert pins
    before = {p: p.read_bytes() for p in [*notes, *pins]}
    sandboxed = _claude_like_sandbox(root, home, env)
    for attack in (
        f"rm -f {note}",
        f"echo forged >> {note}",
        f"touch {note.parent}/1-0.note",
        f"rm -rf {state}/checkpoints",
        f"mv {state}/workspaces {state}/gone",
        f"echo '{{}}' > {pins[0]}",
        f"touch {home}/.config/ledger/trusted/agent.json",
        f"python3 -c \"open('{home}/.config/ledger/cache.secret','wb').write(b'x')\"",
    ):
        _refused(sandboxed(attack), attack)
    assert {p: p.read_bytes() for p in before} == before
    assert Ledger.open(root, environ=env).verify().ok
    peek = sandboxed(f"od -An -tx1 {home}/.config/ledger/cache.secret | tr -d ' \\n'")
    assert secret.hex() not in peek.stdout
    work = sandboxed("echo ok > src/app.py && cat src/app.py")
    assert (work.returncode, work.stdout) == (0, "ok\n")


# --- what runs outside the sandbox: the hook's runtime and git's configuration ----------------


def _venv_in(folder: Path) -> Path:
    """A venv-shaped ledger installation in ``folder``: bin/ledger whose #! names bin/python,
    beside pyvenv.cfg and a site-packages (enough for the installer to see what it is)."""
    (folder / "bin").mkdir(parents=True)
    (folder / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    python = folder / "bin" / "python"
    python.symlink_to(shutil.which("python3") or "/usr/bin/python3")
    script = folder / "bin" / "ledger"
    script.write_text(f"#!{python}\nimport ledger\n", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_hardened_refuses_a_hook_in_a_venv_the_sandboxed_shell_can_write(
    tmp_path: Path, client: str
) -> None:
    """The `.pth` escape: a venv inside the workspace is writable by the agent's shell, and
    every .pth file in its site-packages runs in the next, unsandboxed, hook call."""
    root, home, env = _workspace(tmp_path)
    script = _venv_in(root / ".venv")
    before = sorted(p for p in root.rglob("*") if ".venv" not in p.parts)
    with pytest.raises(ConfigError) as refused:
        install(client, root=root, home=home, ledger_cmd=str(script), hardened=True, environ=env)
    message = str(refused.value)
    assert "\n" not in message
    for words in (".pth", "pipx install", "uv tool install"):
        assert words in message
    assert sorted(p for p in root.rglob("*") if ".venv" not in p.parts) == before  # nothing written


def test_hardened_refuses_an_editable_install_whose_source_is_in_the_workspace(
    tmp_path: Path,
) -> None:
    root, home, env = _workspace(tmp_path)
    script = _venv_in(tmp_path / "tools" / "venv")
    site = next((tmp_path / "tools" / "venv" / "lib").glob("python*/site-packages"))
    (root / "ledger").mkdir()
    (site / "__editable__.agent_ledger-1.pth").write_text(f"{root}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="inside"):
        install("claude", root=root, home=home, ledger_cmd=str(script), hardened=True, environ=env)


def test_hardened_refuses_a_signing_key_in_the_environment(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    with pytest.raises(ConfigError, match="LEDGER_SIGNING_KEY"):
        install(
            "claude",
            root=root,
            home=home,
            ledger_cmd="/x/ledger",
            hardened=True,
            environ={**env, "LEDGER_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----"},
        )
    assert not (root / ".claude").exists()
    # without --hardened nothing is promised about the shell, so nothing is refused
    install("claude", root=root, home=home, ledger_cmd="/x/ledger", environ=env)


@pytest.mark.parametrize(
    "variable", ["PYTHONPATH", "LD_PRELOAD", "PYTHONHOME", "BASH_ENV", "GIT_CONFIG_GLOBAL"]
)
def test_hardened_refuses_a_variable_that_loads_code_from_the_workspace(
    tmp_path: Path, variable: str
) -> None:
    root, home, env = _workspace(tmp_path)
    with pytest.raises(ConfigError, match=variable):
        install(
            "claude",
            root=root,
            home=home,
            ledger_cmd="/x/ledger",
            hardened=True,
            environ={**env, variable: f"/usr/lib:{root / 'src'}"},
        )
    # the same variable naming only places outside the workspace is fine
    install(
        "claude",
        root=root,
        home=home,
        ledger_cmd="/x/ledger",
        hardened=True,
        environ={**env, variable: "/usr/lib"},
    )


def test_hardened_settings_deny_writes_to_every_clients_user_wide_hooks(tmp_path: Path) -> None:
    """A hook added to a client's user-wide settings runs unsandboxed in every project."""
    root, home, env = _workspace(tmp_path)
    for name in (".claude/settings.json", ".codex/config.toml", ".gemini/settings.json"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("{}\n", encoding="utf-8")
    path, _ = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    writes = json.loads(path.read_text(encoding="utf-8"))["sandbox"]["filesystem"]["denyWrite"]
    assert {"~/.claude/settings.json", "~/.codex/config.toml", "~/.gemini/settings.json"} <= set(
        writes
    )


def test_codex_hardening_refuses_a_hook_under_tmp_which_its_sandbox_writes(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    script = _venv_in(tmp_path / "tools" / "venv")
    with pytest.raises(ConfigError, match="inside /tmp"):
        install(
            "codex",
            root=root,
            home=home,
            ledger_cmd=str(script),
            hardened=True,
            environ={**env, "TMPDIR": str(tmp_path)},
        )
    # Claude Code's sandbox writes only the workspace: the same venv is fine there
    install("claude", root=root, home=home, ledger_cmd=str(script), hardened=True, environ=env)


def _ledger_venv(folder: Path) -> Path:
    """A working ledger in a venv of its own at ``folder`` (outside the workspace), so attacks on
    its site-packages never touch the venv running the tests: its .pth puts this checkout and
    the test venv's packages on its path."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120
    )
    site = next(folder.glob("lib/python*/site-packages"))
    here = Path(__file__).resolve().parent.parent.parent
    (site / "ledger_checkout.pth").write_text(
        f"{here}\n{sysconfig.get_paths()['purelib']}\n", encoding="utf-8"
    )
    script = folder / "bin" / "ledger"
    script.write_text(
        f"#!{folder}/bin/python\nimport sys\nfrom cli._entry import main\nsys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _git_repo(root: Path, home: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Ann\n", encoding="utf-8")


def test_hardened_settings_deny_writes_to_the_hook_runtime_and_git_config(tmp_path: Path) -> None:
    root, home, env = _workspace(tmp_path)
    _git_repo(root, home)
    script = _venv_in(tmp_path / "tools" / "venv")
    shutil.rmtree(root / ".git" / "hooks", ignore_errors=True)
    path, changes = install(
        "claude", root=root, home=home, ledger_cmd=str(script), hardened=True, environ=env
    )
    assert any(c.target == str(root / ".git" / "hooks") for c in changes)
    assert (root / ".git" / "hooks").is_dir()  # created, so the sandbox can bind it
    settings = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(settings, CLAUDE_SCHEMA)
    writes = settings["sandbox"]["filesystem"]["denyWrite"]
    venv = tmp_path / "tools" / "venv"
    for protected in (script, venv, root / ".git" / "config", root / ".git" / "hooks"):
        assert f"/{protected}" in writes, protected
    assert "~/.gitconfig" in writes
    deny = settings["permissions"]["deny"]
    assert f"Edit(/{venv}/**)" in deny
    assert f"Edit(/{root}/.git/hooks/**)" in deny
    assert f"Edit(/{root}/.git/config)" in deny
    # Codex's profile names the same paths (the block harden() writes: installing it here is
    # refused, since Codex's sandbox writes /tmp, where pytest put this venv)
    top, tables = codex_block(root, home=home, environ=env, ledger_cmd=str(script))
    data = tomllib.loads(f"{top}\n{tables}\n")
    jsonschema.validate(data, CODEX_SCHEMA)
    fs = data["permissions"]["ledger"]["filesystem"]
    assert fs[str(venv)] == fs["~/.gitconfig"] == "read"
    assert fs[":workspace_roots"][".git/config"] == fs[":workspace_roots"][".git/hooks"] == "read"
    # uninstall takes every entry out again, the runtime's included
    uninstall("claude", root=root, home=home, environ=env)
    left = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    assert "sandbox" not in left
    assert "permissions" not in left


def test_hardened_names_a_hooks_path_the_agent_can_write(tmp_path: Path) -> None:
    """husky's `core.hooksPath = .husky/_`: git runs hooks from the workspace for the person."""
    root, home, env = _workspace(tmp_path)
    _git_repo(root, home)
    subprocess.run(
        ["git", "-C", str(root), "config", "core.hooksPath", ".husky/_"],
        check=True,
        capture_output=True,
    )
    (root / ".husky" / "_").mkdir(parents=True)
    _, changes = install(
        "claude", root=root, home=home, ledger_cmd="/x/ledger", hardened=True, environ=env
    )
    notes = [c.detail for c in changes if c.target == "core.hooksPath"]
    assert len(notes) == 1
    assert str(root / ".husky" / "_") in notes[0]


def test_a_sandboxed_shell_cannot_plant_code_that_runs_outside_the_sandbox(
    tmp_path: Path,
) -> None:
    """Every escape of layer 2, tried from a sandbox built from the settings `ledger install
    claude --hardened` writes with this test run's own ledger (a venv outside the workspace):
    a .pth file or sitecustomize in the hook's site-packages, the hook script and its
    interpreter, git's config and hooks, the user's git config, a user-wide client hook, the
    private key. Then, outside the sandbox, the hook and the person's git run, and nothing
    planted runs with them. In-scope work goes on."""
    root, home, env = _workspace(tmp_path)
    _git_repo(root, home)
    xdg_git = home / ".config" / "git" / "config"
    xdg_git.parent.mkdir(parents=True)
    xdg_git.write_text("[color]\n\tui = auto\n", encoding="utf-8")
    user_claude = home / ".claude" / "settings.json"
    user_claude.parent.mkdir(parents=True)
    user_claude.write_text("{}\n", encoding="utf-8")
    hook = _ledger_venv(tmp_path / "tools" / "venv")
    ledger_cmd = str(hook)
    install("claude", root=root, home=home, ledger_cmd=ledger_cmd, hardened=True, environ=env)
    sandboxed = _claude_like_sandbox(root, home, env, ledger_cmd)
    site = next(hook.parent.parent.glob("lib/python*/site-packages"))
    marker = tmp_path / "pwned"
    before = {p: p.read_bytes() for p in (root / ".git" / "config", xdg_git, user_claude)}
    for attack in (
        f"echo 'import os; os.system(\"touch {marker}\")' > {site}/zz_agent.pth",
        f"echo 'import os; os.system(\"touch {marker}\")' > {site}/sitecustomize.py",
        f"echo '#!/bin/sh' > {hook}",
        f"rm -f {hook}",
        f"mv {hook} {hook}.old",
        f"ln -sf /bin/true {hook.parent}/python",
        f"git config core.fsmonitor 'touch {marker}'",
        "printf '[core]\\n\\tfsmonitor = x\\n' >> .git/config",
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit",
        f"git config --global core.pager 'touch {marker}'; grep -q {marker} {home}/.gitconfig",
        f"echo '[alias]' >> {home}/.gitconfig",
        f"printf '[core]\\n\\tfsmonitor = x\\n' >> {xdg_git}",
        f"echo '{{\"hooks\": {{}}}}' > {user_claude}",
    ):
        ran = sandboxed(f"HOME={home} {attack}")
        assert ran.returncode != 0, attack
    assert not list(site.glob("zz_agent*"))
    assert not (site / "sitecustomize.py").exists()
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (home / ".gitconfig").read_text(encoding="utf-8") == "[user]\n\tname = Ann\n"
    assert {p: p.read_bytes() for p in before} == before
    stolen = sandboxed(f"cat {home}/.config/ledger/keys/k1.pem")
    assert "PRIVATE" not in stolen.stdout
    work = sandboxed("mkdir -p src/auth && echo ok > src/auth/new.py && git add src && echo done")
    assert (work.returncode, work.stdout) == (0, "done\n"), work.stderr
    assert (root / "src" / "auth" / "new.py").read_text(encoding="utf-8") == "ok\n"
    # outside the sandbox, as the client and the person run them: nothing planted runs
    outside = {"PATH": os.environ["PATH"], "HOME": str(home), **env}
    runs = subprocess.run(
        [str(hook), "--version"], capture_output=True, text=True, env=outside, check=False
    )
    assert runs.returncode == 0, runs.stderr
    subprocess.run(["git", "-C", str(root), "status"], capture_output=True, env=outside, check=True)
    assert not marker.exists()
