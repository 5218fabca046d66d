"""What the governance policies share: the tool sets, the policy switches, one call's analysis,
the refusal they return, and the edit model of the file tools (what an edit writes, which lines
it adds).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ledger._governance.engine import HookOutcome, Invocation
from ledger._governance.snapshot import (
    BLOB_LIMIT,
)
from ledger._governance.vocabulary import hook_error

if TYPE_CHECKING:
    from ledger._governance.analysis.intent_command import IntentCommand
    from ledger._governance.analysis.shell_core import CommandClass

FILE_WRITE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
DELETE_TOOLS: Final = frozenset({"Delete"})  # Cursor's documented Delete tool
PATCH_TOOLS: Final = frozenset({"ApplyPatch"})
READ_TOOLS: Final = frozenset({"Read"})
_PREVIEW_LINES: Final = 20
_SOURCES_KEPT: Final = 8
"""Files a shell command reads whose content the pre hook keeps (copy sources)."""
_COMMAND_KEPT: Final = 1000
"""Characters of a shell command kept in its record's attribution (blame names it)."""
_BLOB_LIMIT: Final = BLOB_LIMIT
# ledger subcommands an agent may run in its shell: they read, never write, the ledger. The
# intent commands it may run are recognised exactly (parse_intent_command) and governed.
_READ_ONLY_LEDGER: Final = frozenset(
    {"verify", "log", "blame", "query", "show", "--help", "-h", "--version", "intent list"}
)
# Names that, anywhere in a word, point at a protected path.
_PROTECTED_SUBSTRINGS: Final = (
    ".orchestration",
    "ledger/keys",
    "ledger_home",
    "agent_trace",
    ".claude/settings",
    ".cursor/hooks",
    ".gemini/settings",
    ".codex/",
    ".clinerules/hooks",
    ".github/hooks",
    ".copilot/hooks",
    ".gemini/config",
    ".windsurf/hooks",
    ".codeium/windsurf",
    ".mcp.json",
    "/mcp.json",
    "mcp-config.json",
    "mcp_settings.json",
    ".config/ledger",
)
# ... and in code handed to an interpreter (a word with spaces or parentheses), once quotes,
# `+` and spaces are squeezed out: ".orch" "estration" is the ledger directory in Python.
_CODE_FRAGMENTS: Final = (
    ".orch",
    "estration",
    ".claude",
    ".codex",
    ".cursor",
    ".gemini",
    ".clinerules",
    "ledger/keys",
    ".config/ledger",
    "ledger_home",
    "agent_trace",
)
_CODE_MARKERS: Final = frozenset("( ;\n")
_SQUEEZE: Final = str.maketrans("", "", "\"'`+ \t\n,")


class GovernanceConfig(NamedTuple):
    """Switches for the built-in policies (``policies:`` in ``.orchestration/hooks.yaml``)."""

    intent_required: bool = True
    scope: bool = True
    stale_file: bool = True
    destructive: str = "ask"  # ask | deny | allow
    fail_closed: bool = True


class Analysis(NamedTuple):
    """What one tool call would touch, computed once per invocation."""

    paths: tuple[str, ...]
    mutating: bool
    command: CommandClass | None
    intent_command: IntentCommand | None


def _error(code: str, message: str, inv: Invocation, **meta: Any) -> dict[str, Any]:  # noqa: ANN401
    return hook_error(code, message, meta={"invocation_id": inv.id, "tool": inv.tool_name, **meta})


def _deny(code: str, message: str, inv: Invocation, **meta: Any) -> HookOutcome:  # noqa: ANN401
    return HookOutcome(
        decision="deny", reason=f"{code}: {message}", error=_error(code, message, inv, **meta)
    )


def _patch_paths(patch: str) -> list[str]:
    # Codex apply_patch bodies: "*** Add File: p", "*** Update File: p", "*** Delete File: p",
    # "*** Move to: p" (the Codex CLI patch format). Codex trims each line before matching the
    # header, so " *** Delete File: x" deletes x: trim too (decision 0005).
    markers = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
    paths: list[str] = []
    for raw in patch.splitlines():
        line = raw.strip()
        paths.extend(line[len(m) :].strip() for m in markers if line.startswith(m))
    return paths


def edit_payload(inv: Invocation) -> dict[str, Any] | None:
    """The edit itself, as the client described it: enough to rebuild line attribution."""
    tool, data = inv.tool_name, inv.tool_input
    response = inv.tool_response if isinstance(inv.tool_response, dict) else {}
    if tool not in FILE_WRITE_TOOLS and tool not in PATCH_TOOLS:
        return None
    edit: dict[str, Any] = {}
    for key in (
        "content",
        "old_string",
        "new_string",
        "replace_all",
        "edits",
        "patch",
        "new_source",
        "cell_id",
        "edit_mode",
    ):
        if key in data:
            edit[key] = data[key]
    if isinstance(response.get("structuredPatch"), list):
        edit["structured_patch"] = response["structuredPatch"]
    if isinstance(response.get("type"), str):
        edit["write_type"] = response["type"]
    if "originalFile" in response and response["originalFile"] is None:
        edit["created"] = True
    return edit


def _simulate(old: str | None, tool_input: dict[str, Any]) -> str | None:
    """The file content after a Write/Edit/MultiEdit, computed before the tool runs."""
    if isinstance(tool_input.get("content"), str):
        return str(tool_input["content"])
    edits = tool_input.get("edits")
    steps = edits if isinstance(edits, list) else [tool_input]
    text = old
    for step in steps:
        if not isinstance(step, dict) or text is None:
            return None
        before, after = step.get("old_string"), step.get("new_string")
        if not isinstance(before, str) or not isinstance(after, str) or before not in text:
            return None
        count = step.get("expected_replacements")  # Gemini CLI's replace
        times = count if isinstance(count, int) and count > 1 else 1
        text = text.replace(before, after, -1 if step.get("replace_all") else times)
    return text


def _lines_of(text: str) -> list[str]:
    """Lines without their endings (a client may write CRLF where the edit said LF)."""
    return text.replace("\r\n", "\n").rstrip("\n").split("\n")


def _added_ranges(edit: dict[str, Any], content: str | None) -> list[list[int]]:
    """1-based inclusive line ranges the edit added, in the file after the write."""
    patch = edit.get("structured_patch")
    if patch:
        ranges: list[list[int]] = []
        for hunk in patch:
            line = int(hunk.get("newStart", 1))
            for text in hunk.get("lines", []):
                if text.startswith("+"):
                    if ranges and ranges[-1][1] == line - 1:
                        ranges[-1][1] = line
                    else:
                        ranges.append([line, line])
                    line += 1
                elif text.startswith(" "):
                    line += 1
        return ranges
    if content is None:
        return []
    if "content" in edit and "old_string" not in edit:
        count = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return [[1, count]] if count else []
    news = (
        [edit["new_string"]]
        if isinstance(edit.get("new_string"), str)
        else [e.get("new_string") for e in edit.get("edits", []) if isinstance(e, dict)]
    )
    out = []
    for new in news:
        if not isinstance(new, str) or not new:
            continue
        start = content.find(new)
        if start < 0:
            continue
        first = content.count("\n", 0, start) + 1
        out.append([first, first + new.rstrip("\n").count("\n")])
    return out


def _certain_ranges(edit: dict[str, Any], content: str | None) -> list[tuple[int, int]]:
    """The written ranges, only where they are certain: a structured patch, a whole-file
    write, or new strings that each occur exactly once (a second occurrence would make the
    range a guess, and a guess can misattribute)."""
    if content is None:
        return []
    if not edit.get("structured_patch") and not ("content" in edit and "old_string" not in edit):
        news = (
            [edit.get("new_string")]
            if "new_string" in edit
            else [e.get("new_string") for e in edit.get("edits") or [] if isinstance(e, dict)]
        )
        if (
            edit.get("replace_all")
            or not news
            or any(not isinstance(n, str) or content.count(n) != 1 for n in news)
        ):
            return []
    return [(a, b) for a, b in _added_ranges(edit, content)]


def _whole_write_text(edit: dict[str, Any], sha256: str | None) -> str | None:
    """A whole-file write's text (a ``Write``'s ``content``) when it is the file on disk: its
    UTF-8 bytes hash to ``sha256``, the file's as read after the call. Else ``None`` (an edit,
    or the disk holds something else: a formatter on save, a write racing this hook)."""
    text = edit.get("content")
    if sha256 is None or not isinstance(text, str) or "old_string" in edit or "edits" in edit:
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return text if hashlib.sha256(data).hexdigest() == sha256 else None


def _patch_moves(patch: str) -> dict[str, str]:
    """``destination -> source`` of each ``*** Move to:`` in an apply_patch body."""
    moves: dict[str, str] = {}
    current: str | None = None
    for line in patch.splitlines():
        if line.startswith("*** Update File: "):
            current = line[len("*** Update File: ") :].strip()
        elif line.startswith("*** Move to: ") and current is not None:
            moves[line[len("*** Move to: ") :].strip()] = current
        elif line.startswith("*** "):
            current = None
    return moves


def _escape_text(text: str) -> str:
    """Intent names and globs come from a file: keep them from closing the ``<ledger>`` tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
