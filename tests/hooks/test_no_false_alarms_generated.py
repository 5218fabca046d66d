"""No false alarms, generated: ordinary edits of every registered client's settings never trip
the tripwire, and the same edits with one real change to what runs always do.

Every client of the registry is installed (project and user scope) into a temporary workspace
and home, so the files are what ``ledger install`` really writes: ledger's hooks and its MCP
server entry. Hypothesis then edits one of them, or one that did not exist, as a person or the
client does between two hook calls (permission rules added and removed, the model, theme and
UI state, ``env`` variables that load no code, MCP servers switched on and off, the client's
own counters and history, keys reordered, the file re-indented or written compactly), and the
tripwire's own comparison (:func:`fingerprint`, :func:`compare`, :func:`tampering`) must find
nothing. The mutated twin adds one real change on top (ledger's hook command edited, a hook
added or removed, the MCP server's command, arguments or environment changed, a server added,
a variable that loads code): it must always trip. The end-to-end corpus, through real hook
calls, is ``test_no_false_alarms.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._clients.install import install
from ledger._clients.registry import CLIENTS
from ledger._hooks.tripwire import compare, fingerprint, protected_set, tampering

LEDGER_CMD = "/opt/ledger/bin/python3 -I /opt/ledger/bin/ledger"
WATCHED = ("client-config", "mcp-config")
Document = dict[str, Any]

_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class Installed:
    """Every client installed into one workspace and home; the JSON files it watches."""

    def __init__(self, base: Path) -> None:
        self.root = base / "ws"
        self.home = base / "home"
        (self.root / ".git").mkdir(parents=True)
        (self.home / ".config" / "ledger").mkdir(parents=True)
        self.environ = {"HOME": str(self.home), "LEDGER_HOME": str(self.home / ".config/ledger")}
        for name, spec in CLIENTS.items():
            for user in (True,) if spec.user_only else (False, True):
                install(name, root=self.root, user=user, ledger_cmd=LEDGER_CMD, home=self.home)
        rules = protected_set(self.root, "0b5c0000-0000-4000-8000-000000000000", self.environ)
        self.files: dict[str, tuple[str, bytes]] = {}  # path: (rule, content as installed)
        self.absent: dict[str, str] = {}  # path: rule, of the watched files not there
        for path, rule in sorted(rules.items()):
            if rule not in WATCHED or not path.endswith(".json"):
                continue
            if os.path.isfile(path):  # noqa: PTH113
                self.files[path] = (rule, Path(path).read_bytes())
            elif not os.path.exists(path):  # noqa: PTH110
                self.absent[path] = rule


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return Installed(tmp_path_factory.mktemp("installed"))


def test_every_client_left_files_to_edit(installed: Installed) -> None:
    assert len(installed.files) >= 10, sorted(installed.files)
    assert installed.absent
    text = b"".join(content for _, content in installed.files.values())
    assert b"/opt/ledger/bin/ledger" in text  # ledger's hooks and MCP entry, as installed


# --- ordinary edits -----------------------------------------------------------------------

Edit = Callable[[Document], None]
_TEXT = st.text(st.characters(codec="utf-8"), max_size=24)
_JSON_LEAF = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _TEXT
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_RULES = (
    st.sampled_from(
        [
            "Bash(npm test)",
            "Bash(git status:*)",
            "Read(**)",
            "WebFetch(domain:docs.python.org)",
            "Edit(src/**)",
            "mcp__ledger__list_intents",
            "WebSearch",
        ]
    )
    | _TEXT
)
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


@st.composite
def _settings_edit(draw: st.DrawFn) -> Edit:
    """One edit a person or the client makes to a settings file (a client-config rule)."""
    kind = draw(
        st.sampled_from(
            ["rule+", "rule-", "scalar", "env+", "env-", "toggle", "mcpjson", "ui", "projects"]
        )
    )
    if kind in ("rule+", "rule-"):
        which = draw(st.sampled_from(["allow", "ask", "additionalDirectories"]))
        rule = draw(_RULES)

        def rules(doc: Document) -> None:
            listed = _at(doc, "permissions").setdefault(which, [])
            if not isinstance(listed, list):
                return
            if kind == "rule+":
                listed.append(rule)
            elif listed:
                listed.pop(0)

        return rules
    if kind == "scalar":
        key = draw(
            st.sampled_from(
                [
                    "model",
                    "theme",
                    "outputStyle",
                    "spinnerTipsEnabled",
                    "includeCoAuthoredBy",
                    "cleanupPeriodDays",
                    "enableAllProjectMcpServers",
                    "model_reasoning_effort",
                ]
            )
        )
        value = draw(_JSON)
        return lambda doc: doc.__setitem__(key, value)
    if kind in ("env+", "env-"):
        name, value = draw(_PLAIN_VARIABLES), draw(_TEXT)

        def env(doc: Document) -> None:
            variables = _at(doc, "env")
            if kind == "env+":
                variables[name] = value
            else:
                variables.pop(name, None)
                if not variables:
                    doc.pop("env")

        return env
    if kind == "toggle":
        return _toggle_edit(draw)
    if kind == "mcpjson":
        key = draw(st.sampled_from(["enabledMcpjsonServers", "disabledMcpjsonServers"]))
        name = draw(st.sampled_from(["ledger", "github", "filesystem"]))
        return lambda doc: (
            doc.setdefault(key, []).append(name) if isinstance(doc.get(key, []), list) else None
        )
    if kind == "ui":
        path = draw(
            st.sampled_from(
                [
                    ("ui", "theme"),
                    ("general", "vimMode"),
                    ("security", "auth", "selectedType"),
                    ("ide", "hasSeenNudge"),
                    ("tui", "notifications"),
                ]
            )
        )
        value = draw(_JSON)
        return lambda doc: _at(doc, *path[:-1]).__setitem__(path[-1], value)
    project, value = draw(_TEXT), draw(_JSON)
    return lambda doc: _at(doc, "projects").__setitem__(project, value)


def _toggle_edit(draw: st.DrawFn) -> Edit:
    toggle, value = draw(_TOGGLES), draw(_JSON)
    remove = draw(st.booleans())

    def toggles(doc: Document) -> None:
        for server in _servers(doc):
            if remove:
                server.pop(toggle, None)
            else:
                server[toggle] = value

    return toggles


@st.composite
def _state_edit(draw: st.DrawFn) -> Edit:
    """One edit a client makes to an MCP configuration it also keeps state in (mcp-config):
    anything but the servers' definitions (~/.claude.json's counters, history, projects)."""
    if draw(st.booleans()):
        return _toggle_edit(draw)
    key = draw(_TEXT.filter(lambda k: k not in ("mcpServers", "servers", "mcp_servers")))
    value = draw(_JSON)
    if isinstance(value, dict):
        value.pop("mcpServers", None)
        value.pop("servers", None)
        value.pop("mcp_servers", None)
    return lambda doc: doc.__setitem__(key, value)


def _encoded(document: Document, style: int, order: int) -> bytes:
    """The document as a person's editor or the client could write it: indented or not, keys
    in another order, with or without a final newline."""
    if order:
        document = _reordered(document, order)
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


@st.composite
def _edited(draw: st.DrawFn, installed: Installed) -> tuple[str, str, bytes, Document]:
    """(path, rule, content before, the document after ordinary edits)."""
    paths = sorted(installed.files) + sorted(installed.absent)
    path = draw(st.sampled_from(paths))
    if path in installed.files:
        rule, before = installed.files[path]
        document = json.loads(before)
    else:
        rule, before, document = installed.absent[path], b"", {}
    edits = draw(
        st.lists(_settings_edit() if rule == "client-config" else _state_edit(), max_size=6)
    )
    for edit in edits:
        edit(document)
    return path, rule, before, document


def _tripped(path: str, rule: str, before: bytes | None, after: bytes | None) -> list[str]:
    """What the tripwire's comparison finds between the file as sealed and as edited."""
    target = Path(path)

    def state(content: bytes | None) -> Any:
        if content is None or (content == b"" and rule):
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        return fingerprint({path: rule})  # type: ignore[dict-item]

    try:
        sealed, now = state(before), state(after)
    finally:
        target.unlink(missing_ok=True)
    found = tampering(compare(sealed, now), during_call=False, upgraded=False)
    return [c.describe() for c in found]


@_SETTINGS
@given(data=st.data())
def test_ordinary_edits_of_any_clients_settings_never_trip(
    installed: Installed, data: st.DataObject
) -> None:
    path, rule, before, document = data.draw(_edited(installed))
    after = _encoded(document, data.draw(st.integers(0, 29)), data.draw(st.integers(0, 2)))
    assert _tripped(path, rule, before or None, after) == [], (path, after[:400])


# --- the same edits with one real change to what runs -------------------------------------


def _mutations(path: str, rule: str, document: Document) -> list[Callable[[Document], None]]:
    """Changes to what runs that the document admits (each must trip)."""
    found: list[Callable[[Document], None]] = []
    hooks = document.get("hooks")
    text = json.dumps(document)
    if "/opt/ledger/bin/ledger" in text and "hook" in text and isinstance(hooks, dict):

        def edit_command(doc: Document) -> None:
            raw = json.dumps(doc).replace("/opt/ledger/bin/ledger", "/tmp/evil/ledger", 1)
            doc.clear()
            doc.update(json.loads(raw))

        found.append(edit_command)
        found.append(lambda doc: doc.pop("hooks"))
    servers = _servers(document)
    if servers:
        found.append(lambda doc: _servers(doc)[0].__setitem__("command", "/tmp/evil"))
        found.append(lambda doc: _servers(doc)[0].__setitem__("args", ["-c", "evil"]))
        found.append(lambda doc: _servers(doc)[0].__setitem__("env", {"X": "1"}))
        found.append(lambda doc: _servers(doc)[0].__setitem__("url", "http://evil.example/"))

    def add_server(doc: Document) -> None:
        key = "servers" if path.endswith(".vscode/mcp.json") or "Code/User" in path else None
        key = key or "mcpServers"
        listed = doc.setdefault(key, {})
        if isinstance(listed, dict):
            listed["evil"] = {"command": "/tmp/evil", "args": []}

    found.append(add_server)
    if rule == "client-config":
        found.append(
            lambda doc: (
                _at(doc, "hooks")
                .setdefault("PreToolUse", [])
                .append({"matcher": "*", "hooks": [{"type": "command", "command": "/tmp/evil"}]})
                if isinstance(_at(doc, "hooks").get("PreToolUse", []), list)
                else _at(doc, "hooks").__setitem__("PreToolUse", [])
            )
        )
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
        found.append(lambda doc: doc.__setitem__("statusLine", {"command": "/tmp/evil"}))
        found.append(lambda doc: doc.__setitem__("apiKeyHelper", "/tmp/evil"))
    return found


@_SETTINGS
@given(data=st.data())
def test_the_same_edits_with_a_change_to_what_runs_always_trip(
    installed: Installed, data: st.DataObject
) -> None:
    path, rule, before, document = data.draw(_edited(installed))
    mutate = data.draw(st.sampled_from(_mutations(path, rule, document)))
    mutate(document)
    after = _encoded(document, data.draw(st.integers(0, 29)), data.draw(st.integers(0, 2)))
    assert _tripped(path, rule, before or None, after), (path, after[:400])
