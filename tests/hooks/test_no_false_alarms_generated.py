"""No false alarms, generated: ordinary edits of every registered client's settings never trip
the tripwire, and the same edits with one real change to what runs, or one loosening, always do.

Every client of the registry is installed (project and user scope) into a temporary workspace
and home, so the files are what ``ledger install`` really writes: ledger's hooks and its MCP
server entry. Hypothesis then edits one of them, or one that did not exist, as the person or
that client does between two hook calls: Claude Code's permission rules (allow and
``additionalDirectories`` added and removed, deny and ask rules and sandbox deny paths added),
its model, theme, status line padding and ``env`` variables that load no code; Gemini CLI's UI,
auth and model state and its excluded tools; Codex's model, trusted projects and dismissed
notices; MCP servers switched on and off; the client's own counters and history; keys
reordered, the file re-indented or written compactly. The edits are this test's own list, per
client, not read from ledger's key tables (ledger/_hooks/settings_keys.py): a table that left
an ordinary key out would trip here. The tripwire's own comparison (:func:`fingerprint`,
:func:`compare`, :func:`tampering`, with the sealed copy a real :class:`TripwireStore` keeps and
:func:`settings_tightened`) must find nothing.

The mutated twin adds one real change on top (ledger's hook command edited, a hook added or
removed, the MCP server's command, arguments or environment changed, a server added, a variable
that loads code, a status line or credential helper command, hooks switched off, a loosened
permission mode, a deny rule Claude Code cannot parse): it must always trip; so must removing a
deny, ask or exclude entry the file had. The end-to-end corpus, through real hook calls, is
``test_no_false_alarms.py``.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._clients.install import install
from ledger._clients.registry import CLIENTS
from ledger._hooks.tripwire import (
    TripwireStore,
    compare,
    fingerprint,
    protected_set,
    settings_tightened,
    tampering,
)

LEDGER_CMD = "/opt/ledger/bin/python3 -I /opt/ledger/bin/ledger"
LEDGER_ID = "0b5c0000-0000-4000-8000-000000000000"
WATCHED = ("client-config", "mcp-config")
Document = dict[str, Any]
Edit = Callable[[Document], None]

_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def client_of(path: str, rule: str) -> str:
    """Whose ordinary edits a watched file gets: ``claude``, ``gemini``, ``codex``, ``mcp`` (a
    file of MCP servers and client state), ``hooks`` (a file of hooks alone)."""
    if rule == "mcp-config":
        return "mcp"
    if re.search(r"/\.claude/settings(\.local)?\.json$", path):
        return "claude"
    if path.endswith("/.gemini/settings.json"):
        return "gemini"
    if re.search(r"/\.codex/[^/]*\.toml$", path):
        return "codex"
    return "hooks"


class Installed:
    """Every client installed into one workspace and home; the JSON and TOML files it watches,
    and a tripwire store (in the temporary ledger home) to keep the sealed copies in."""

    def __init__(self, base: Path) -> None:
        self.root = base / "ws"
        self.home = base / "home"
        (self.root / ".git").mkdir(parents=True)
        (self.home / ".config" / "ledger").mkdir(parents=True)
        self.environ = {"HOME": str(self.home), "LEDGER_HOME": str(self.home / ".config/ledger")}
        for name, spec in CLIENTS.items():
            for user in (True,) if spec.user_only else (False, True):
                install(name, root=self.root, user=user, ledger_cmd=LEDGER_CMD, home=self.home)
        rules = protected_set(self.root, LEDGER_ID, self.environ)
        self.files: dict[str, tuple[str, bytes]] = {}  # path: (rule, content as installed)
        self.absent: dict[str, str] = {}  # path: rule, of the watched files not there
        for path, rule in sorted(rules.items()):
            if rule not in WATCHED or not path.endswith((".json", ".toml")):
                continue
            if os.path.isfile(path):  # noqa: PTH113
                self.files[path] = (rule, Path(path).read_bytes())
            elif not os.path.exists(path):  # noqa: PTH110
                self.absent[path] = rule
        self.store = TripwireStore(LEDGER_ID, self.environ)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return Installed(tmp_path_factory.mktemp("installed"))


def test_every_client_left_files_to_edit(installed: Installed) -> None:
    assert len(installed.files) >= 10, sorted(installed.files)
    assert installed.absent
    text = b"".join(content for _, content in installed.files.values())
    assert b"/opt/ledger/bin/ledger" in text  # ledger's hooks and MCP entry, as installed
    clients = {client_of(path, rule) for path, (rule, _) in installed.files.items()}
    assert clients == {"claude", "gemini", "codex", "mcp", "hooks"}


# --- ordinary edits -----------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8"), max_size=24)
_JSON_LEAF = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _TEXT
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
#: Values a TOML file can hold (no null; strings without control characters).
_TOML_VALUE = (
    st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), max_size=24)
)
#: Permission rules as people write them (plain shapes: the ones deny and ask accept).
_RULES = st.sampled_from(
    [
        "Bash(npm test)",
        "Bash(git status:*)",
        "Bash(rm -rf *)",
        "Bash(curl:*)",
        "Bash(git push --force *)",
        "Read(**)",
        "Read(.env)",
        "Read(./secrets/**)",
        "Read(~/.ssh/**)",
        "WebFetch(domain:docs.python.org)",
        "Edit(src/**)",
        "mcp__ledger__list_intents",
        "mcp__github__*",
        "WebSearch",
        "Agent(model:opus)",
    ]
) | st.from_regex(r"[A-Z][a-z]{2,8}\([a-z0-9 ./*:_-]{1,20}\)", fullmatch=True)
_PATHS = st.sampled_from(["~/.ssh", "~/.aws/**", "/etc/**", "./secrets", ".env", "*.pem"])
_DOMAINS = st.sampled_from(["example.com", "*.internal.example", "pastebin.com"])
#: Variables a person sets in a client's ``env`` that load no code.
_PLAIN_VARIABLES = st.sampled_from(
    [
        "DEBUG",
        "ANTHROPIC_MODEL",
        "MAX_THINKING_TOKENS",
        "HTTPS_PROXY",
        "TZ",
        "LANG",
        "NO_COLOR",
        "BASH_DEFAULT_TIMEOUT_MS",
        "DISABLE_TELEMETRY",
        "CLAUDE_CODE_USE_BEDROCK",
        "AWS_REGION",
    ]
)
_TOGGLES = st.sampled_from(
    ["disabled", "enabled", "autoApprove", "alwaysAllow", "disabledTools", "timeout", "trust"]
)


def _at(document: Document, *path: str) -> Document:
    node = document
    for key in path:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    return node


def _listed(document: Document, *path: str) -> list[Any]:
    node = _at(document, *path[:-1])
    listed = node.get(path[-1])
    if not isinstance(listed, list):
        listed = node[path[-1]] = []
    return listed


def _servers(document: Any) -> list[Document]:
    """Every MCP server definition in the document, at any depth."""
    found: list[Document] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in ("mcpServers", "servers", "mcp_servers") and isinstance(value, dict):
                found += [s for s in value.values() if isinstance(s, dict)]
            else:
                found += _servers(value)
    return found


def _add(*path: str, entries: st.SearchStrategy[Any]) -> st.SearchStrategy[Edit]:
    return entries.map(lambda entry: lambda doc: _listed(doc, *path).append(entry))


def _set(*path: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Edit]:
    return values.map(lambda value: lambda doc: _at(doc, *path[:-1]).__setitem__(path[-1], value))


def _remove_first(*path: str) -> Edit:
    def remove(doc: Document) -> None:
        listed = _listed(doc, *path)
        if listed:
            listed.pop(0)

    return remove


def _env_edit(name: str, value: str, *, add: bool) -> Edit:
    def env(doc: Document) -> None:
        variables = _at(doc, "env")
        if add:
            variables[name] = value
        else:
            variables.pop(name, None)
            if not variables:
                doc.pop("env")

    return env


@st.composite
def _toggle_edit(draw: st.DrawFn, values: st.SearchStrategy[Any] = _JSON) -> Edit:
    toggle, value = draw(_TOGGLES), draw(values)
    remove = draw(st.booleans())

    def toggles(doc: Document) -> None:
        for server in _servers(doc):
            if remove:
                server.pop(toggle, None)
            else:
                server[toggle] = value

    return toggles


#: What Claude Code and the person write into Claude Code's settings as they use it.
_CLAUDE_EDITS = st.one_of(
    _add("permissions", "allow", entries=_RULES | _TEXT),
    st.just(_remove_first("permissions", "allow")),
    _add("permissions", "additionalDirectories", entries=_TEXT),
    st.just(_remove_first("permissions", "additionalDirectories")),
    _add("permissions", "deny", entries=_RULES),
    _add("permissions", "ask", entries=_RULES),
    _add("sandbox", "filesystem", "denyRead", entries=_PATHS),
    _add("sandbox", "filesystem", "denyWrite", entries=_PATHS),
    _add("sandbox", "network", "deniedDomains", entries=_DOMAINS),
    *(
        _set(key, values=_JSON)
        for key in (
            "model",
            "theme",
            "outputStyle",
            "spinnerTipsEnabled",
            "includeCoAuthoredBy",
            "cleanupPeriodDays",
            "enableAllProjectMcpServers",
            "alwaysThinkingEnabled",
            "effortLevel",
            "language",
            "$schema",
            "spinnerVerbs",
            "attribution",
        )
    ),
    _set("statusLine", "padding", values=st.integers(0, 8)),
    st.builds(lambda n, v: _env_edit(n, v, add=True), _PLAIN_VARIABLES, _TEXT),
    st.builds(lambda n: _env_edit(n, "", add=False), _PLAIN_VARIABLES),
    _add("enabledMcpjsonServers", entries=st.sampled_from(["ledger", "github", "filesystem"])),
    _add("disabledMcpjsonServers", entries=st.sampled_from(["ledger", "github", "filesystem"])),
    _toggle_edit(),
)
#: What Gemini CLI and the person write into Gemini CLI's settings.
_GEMINI_EDITS = st.one_of(
    *(
        _set(*path, values=_JSON)
        for path in (
            ("ui", "theme"),
            ("ui", "hideBanner"),
            ("general", "vimMode"),
            ("general", "checkpointing", "enabled"),
            ("general", "preferredEditor"),
            ("security", "auth", "selectedType"),
            ("ide", "hasSeenNudge"),
            ("model", "name"),
            ("privacy", "usageStatisticsEnabled"),
            ("$schema",),
        )
    ),
    _add("tools", "exclude", entries=st.sampled_from(["run_shell_command(rm)", "web_fetch"])),
    _add("mcp", "excluded", entries=st.sampled_from(["github", "filesystem"])),
    _toggle_edit(),
)
#: What Codex and the person write into Codex's config.toml.
_CODEX_EDITS = st.one_of(
    *(
        _set(*path, values=_TOML_VALUE)
        for path in (
            ("model",),
            ("model_reasoning_effort",),
            ("personality",),
            ("tui", "notifications"),
            ("notice", "hide_full_access_warning"),
            ("notice", "hide_rate_limit_model_nudge"),
        )
    ),
    st.builds(
        lambda where, level: (
            lambda doc: _at(doc, "projects", where).__setitem__("trust_level", level)
        ),
        st.sampled_from(["/home/me/src/app", "/work/x y"]),
        st.sampled_from(["trusted", "untrusted"]),
    ),
    _toggle_edit(_TOML_VALUE),
)
#: A file of hooks alone is not edited but for the JSON schema an editor adds.
_HOOK_FILE_EDITS = _set("$schema", values=st.just("https://json.schemastore.org/x.json"))


@st.composite
def _state_edit(draw: st.DrawFn) -> Edit:
    """One edit a client makes to an MCP configuration it also keeps state in (mcp-config):
    anything but the servers' definitions (~/.claude.json's counters, history, projects)."""
    if draw(st.booleans()):
        return draw(_toggle_edit())
    key = draw(_TEXT.filter(lambda k: k not in ("mcpServers", "servers", "mcp_servers")))
    value = draw(_JSON)
    if isinstance(value, dict):
        value.pop("mcpServers", None)
        value.pop("servers", None)
        value.pop("mcp_servers", None)
    return lambda doc: doc.__setitem__(key, value)


_EDITS: dict[str, st.SearchStrategy[Edit]] = {
    "claude": _CLAUDE_EDITS,
    "gemini": _GEMINI_EDITS,
    "codex": _CODEX_EDITS,
    "hooks": _HOOK_FILE_EDITS,
    "mcp": _state_edit(),
}


def _parsed(path: str, content: bytes) -> Document:
    if not content:
        return {}
    return tomllib.loads(content.decode()) if path.endswith(".toml") else json.loads(content)


def _encoded(path: str, document: Document, style: int, order: int) -> bytes:
    """The document as a person's editor or the client could write it: indented or not, keys
    in another order, with or without a final newline (TOML: tables after the keys)."""
    if order:
        document = _reordered(document, order)
    if path.endswith(".toml"):
        return _toml(document).encode()
    indent = [2, 4, None, "\t", 1][style % 5]
    text = json.dumps(document, indent=indent, ensure_ascii=bool(style % 2))
    return (text + ("\n" if style % 3 else "")).encode()


def _reordered(node: Any, order: int) -> Any:
    if isinstance(node, dict):
        items = sorted(node.items(), reverse=order % 2 == 0)
        return {k: _reordered(v, order) for k, v in items}
    if isinstance(node, list):
        return [_reordered(v, order) for v in node]
    return node


def _toml(document: Document) -> str:
    """A TOML document of tables, strings, integers, booleans and lists of them."""
    lines: list[str] = []

    def key(name: str) -> str:
        return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)

    def value(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, list):
            return "[" + ", ".join(value(v) for v in item) + "]"
        return json.dumps(item, ensure_ascii=False) if isinstance(item, str) else str(item)

    def table(node: Document, where: tuple[str, ...]) -> None:
        plain = [(k, v) for k, v in node.items() if not isinstance(v, dict)]
        if where and (plain or not node):
            lines.append(f"[{'.'.join(key(k) for k in where)}]")
        lines.extend(f"{key(k)} = {value(v)}" for k, v in plain)
        for k, v in node.items():
            if isinstance(v, dict):
                table(v, (*where, k))

    table(document, ())
    return "\n".join(lines) + "\n"


@st.composite
def _edited(draw: st.DrawFn, installed: Installed) -> tuple[str, str, bytes, Document]:
    """(path, rule, content before, the document after ordinary edits of its client)."""
    paths = sorted(installed.files) + sorted(installed.absent)
    path = draw(st.sampled_from(paths))
    if path in installed.files:
        rule, before = installed.files[path]
    else:
        rule, before = installed.absent[path], b""
    document = _parsed(path, before)
    for edit in draw(st.lists(_EDITS[client_of(path, rule)], max_size=6)):
        edit(document)
    return path, rule, before, document


def _tripped(
    installed: Installed, path: str, rule: str, before: bytes | None, after: bytes | None
) -> list[str]:
    """What the tripwire finds between the file as sealed (its copy kept, as a seal keeps it)
    and as edited, judged as a hook call judges it."""
    target = Path(path)

    def state(content: bytes | None) -> Any:
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        return fingerprint({path: rule})  # type: ignore[dict-item]

    try:
        sealed = state(before)
        if path in sealed:
            installed.store.keep(path, sealed[path])
        now = state(after)
        found = tampering(
            compare(sealed, now),
            during_call=False,
            upgraded=False,
            tightens=lambda change: settings_tightened(
                installed.store, change, sealed.get(change.path), now.get(change.path)
            ),
        )
    finally:
        target.unlink(missing_ok=True)
    return [c.describe() for c in found]


@_SETTINGS
@given(data=st.data())
def test_ordinary_edits_of_any_clients_settings_never_trip(
    installed: Installed, data: st.DataObject
) -> None:
    path, rule, before, document = data.draw(_edited(installed))
    style, order = data.draw(st.integers(0, 29)), data.draw(st.integers(0, 2))
    after = _encoded(path, document, style, order)
    assert _tripped(installed, path, rule, before or None, after) == [], (path, after[:600])


# --- the same edits with one real change to what runs -------------------------------------


def _mutations(path: str, rule: str, document: Document) -> list[Edit]:
    """Changes to what runs, or loosenings, that the document admits (each must trip)."""
    found: list[Edit] = []
    client = client_of(path, rule)
    hooks = document.get("hooks")
    text = json.dumps(document)
    if "/opt/ledger/bin/ledger" in text and "hook" in text and isinstance(hooks, dict):

        def edit_command(doc: Document) -> None:
            raw = json.dumps(doc).replace("/opt/ledger/bin/ledger", "/tmp/evil/ledger", 1)
            doc.clear()
            doc.update(json.loads(raw))

        found.append(edit_command)
        found.append(lambda doc: doc.pop("hooks"))
    if _servers(document):
        found.append(lambda doc: _servers(doc)[0].__setitem__("command", "/tmp/evil"))
        found.append(lambda doc: _servers(doc)[0].__setitem__("args", ["-c", "evil"]))
        found.append(lambda doc: _servers(doc)[0].__setitem__("env", {"X": "1"}))
        found.append(lambda doc: _servers(doc)[0].__setitem__("url", "http://evil.example/"))

    def add_server(doc: Document) -> None:
        key = "servers" if path.endswith(".vscode/mcp.json") or "Code/User" in path else None
        key = key or ("mcp_servers" if client == "codex" else "mcpServers")
        listed = doc.setdefault(key, {})
        if isinstance(listed, dict):
            listed["evil"] = {"command": "/tmp/evil", "args": []}

    found.append(add_server)
    if client in ("claude", "gemini", "hooks"):
        found.append(
            lambda doc: (
                _at(doc, "hooks")
                .setdefault("PreToolUse", [])
                .append({"matcher": "*", "hooks": [{"type": "command", "command": "/tmp/evil"}]})
                if isinstance(_at(doc, "hooks").get("PreToolUse", []), list)
                else _at(doc, "hooks").__setitem__("PreToolUse", [])
            )
        )
    command = {"type": "command", "command": "/tmp/evil"}
    if client == "claude":
        found.extend(
            lambda doc, v=variable: _at(doc, "env").__setitem__(v, "/tmp/evil")  # type: ignore[misc]
            for variable in (
                "NODE_OPTIONS",
                "LD_PRELOAD",
                "PYTHONPATH",
                "BASH_ENV",
                "GIT_SSH_COMMAND",
            )
        )
        found.extend(
            lambda doc, k=key, v=value: doc.__setitem__(k, v)  # type: ignore[misc]
            for key, value in (
                ("statusLine", command),
                ("fileSuggestion", command),
                ("apiKeyHelper", "/tmp/evil"),
                ("awsAuthRefresh", "/tmp/evil"),
                ("awsCredentialExport", "/tmp/evil"),
                ("otelHeadersHelper", "/tmp/evil"),
                ("disableAllHooks", True),
                ("enabledPlugins", {"evil@market": True}),
            )
        )
        found.append(lambda doc: _at(doc, "statusLine").__setitem__("command", "/tmp/evil"))
        found.append(
            lambda doc: _at(doc, "permissions").__setitem__("defaultMode", "bypassPermissions")
        )
        found.append(lambda doc: _at(doc, "sandbox").__setitem__("enabled", False))
        found.append(lambda doc: _listed(doc, "sandbox", "excludedCommands").append("curl"))
        # Shell syntax in a rule has made Claude Code skip the whole file, hooks included.
        found.append(lambda doc: _listed(doc, "permissions", "deny").append("Bash(curl *| bash)"))
        found.append(lambda doc: _listed(doc, "permissions", "deny").append({"tool": "Bash"}))
    if client == "gemini":
        found.append(lambda doc: _listed(doc, "hooksConfig", "disabled").append("ledger"))
        found.append(lambda doc: _at(doc, "hooksConfig").__setitem__("enabled", False))
        found.append(
            lambda doc: _at(doc, "general").__setitem__("defaultApprovalMode", "auto_edit")
        )
        found.append(lambda doc: _listed(doc, "tools", "allowed").append("run_shell_command"))
        found.append(lambda doc: _at(doc, "tools").__setitem__("discoveryCommand", "/tmp/evil"))
        found.append(lambda doc: _at(doc, "tools", "shell").__setitem__("pager", "/tmp/evil"))
    if client == "codex":
        found.append(lambda doc: doc.__setitem__("notify", ["/tmp/evil"]))
        found.append(lambda doc: doc.__setitem__("approval_policy", "never"))
        found.append(lambda doc: doc.__setitem__("sandbox_mode", "danger-full-access"))
        found.append(
            lambda doc: _at(doc, "shell_environment_policy", "set").__setitem__(
                "LD_PRELOAD", "/tmp/evil.so"
            )
        )
    return found


@_SETTINGS
@given(data=st.data())
def test_the_same_edits_with_a_change_to_what_runs_always_trip(
    installed: Installed, data: st.DataObject
) -> None:
    path, rule, before, document = data.draw(_edited(installed))
    mutate = data.draw(st.sampled_from(_mutations(path, rule, document)))
    mutate(document)
    after = _encoded(path, document, data.draw(st.integers(0, 29)), data.draw(st.integers(0, 2)))
    assert _tripped(installed, path, rule, before or None, after), (path, after[:600])


#: Lists whose entries only tighten, per client: one removed loosens.
_TIGHTENING: dict[str, list[tuple[str, ...]]] = {
    "claude": [
        ("permissions", "deny"),
        ("permissions", "ask"),
        ("sandbox", "filesystem", "denyRead"),
        ("sandbox", "network", "deniedDomains"),
    ],
    "gemini": [("tools", "exclude"), ("mcp", "excluded")],
}


@_SETTINGS
@given(data=st.data())
def test_removing_a_deny_ask_or_exclude_entry_always_trips(
    installed: Installed, data: st.DataObject
) -> None:
    path = data.draw(
        st.sampled_from(
            [
                p
                for p, (rule, _) in sorted(installed.files.items())
                if client_of(p, rule) in _TIGHTENING
            ]
        )
    )
    rule, installed_content = installed.files[path]
    where = data.draw(st.sampled_from(_TIGHTENING[client_of(path, rule)]))
    sealed_document = json.loads(installed_content)
    entries = data.draw(st.lists(_RULES, min_size=1, max_size=4, unique=True))
    _listed(sealed_document, *where).extend(entries)
    before = _encoded(path, sealed_document, 0, 0)
    document = json.loads(before)
    for edit in data.draw(st.lists(_EDITS[client_of(path, rule)], max_size=4)):
        edit(document)
    listed = _listed(document, *where)
    gone = data.draw(st.sampled_from(entries))
    listed[:] = [entry for entry in listed if entry != gone]
    after = _encoded(path, document, data.draw(st.integers(0, 29)), data.draw(st.integers(0, 2)))
    assert _tripped(installed, path, rule, before, after), (path, where, gone)
