"""Hook matchers: Claude Code matcher semantics (hook-protocols.md §1.9) and permission rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger._errors import PolicyError
from ledger._governance.matchers import FILE_TOOLS, SHELL_TOOLS, Matcher, compile_matcher

REPO = Path(__file__).resolve().parents[2]

TOOLS = [
    "Bash", "Edit", "Write", "Read", "MultiEdit", "NotebookEdit", "Glob", "Grep", "Agent",
    "Task", "WebFetch", "PowerShell", "mcp__memory__create_entities", "mcp__github__create_issue",
    "mcp__plugin_x_srv__tool", "my-tool", "my_tool", "run_shell_command",
]  # fmt: skip


def matching(pattern: str | None) -> set[str]:
    matcher = compile_matcher(pattern)
    return {tool for tool in TOOLS if matcher.matches(tool)}


# --- hook-protocols.md §1.9 ---------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [None, "", "*"])
def test_match_all(pattern: str | None) -> None:
    assert matching(pattern) == set(TOOLS)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("Bash", {"Bash"}),
        ("Edit|Write", {"Edit", "Write"}),
        ("Edit, Write", {"Edit", "Write"}),  # commas, whitespace trimmed (v2.1.191+)
        (" Edit |Write ", {"Edit", "Write"}),
        ("Edit|Write|MultiEdit|NotebookEdit", {"Edit", "Write", "MultiEdit", "NotebookEdit"}),
        ("my-tool", {"my-tool"}),  # hyphens are exact (v2.1.195+)
        ("Edit.*", {"Edit", "MultiEdit", "NotebookEdit"}),  # regex, unanchored
        ("^Edit$", {"Edit"}),
        ("Write|Edit$", {"Write", "Edit", "MultiEdit", "NotebookEdit"}),
        ("mcp__memory", set()),  # exact-string path: matches no MCP tool
        ("mcp__memory__.*", {"mcp__memory__create_entities"}),
        ("mcp__.*__create.*", {"mcp__memory__create_entities", "mcp__github__create_issue"}),
        ("bash", set()),  # case-sensitive
        ("[Bb]ash", {"Bash"}),
        ("Task|Agent", {"Task", "Agent"}),
    ],
)
def test_name_matchers(pattern: str, expected: set[str]) -> None:
    assert matching(pattern) == expected


def test_exact_name_is_not_a_substring_match() -> None:
    assert not compile_matcher("Edit").matches("MultiEdit")
    assert not compile_matcher("Edit").matches("Edits")


@pytest.mark.parametrize("pattern", ["Edit[", "(Bash", "*Edit", "Bash(?<x)"])
def test_invalid_regex_raises_one_line_policy_error(pattern: str) -> None:
    with pytest.raises(PolicyError) as info:
        compile_matcher(pattern)
    message = str(info.value)
    assert "\n" not in message
    assert "invalid matcher regex" in message


@pytest.mark.parametrize("pattern", [" ", "|", " , | "])
def test_empty_name_list_raises(pattern: str) -> None:
    with pytest.raises(PolicyError, match="names no tool"):
        compile_matcher(pattern)


def test_non_string_pattern_raises() -> None:
    with pytest.raises(PolicyError):
        compile_matcher(42)  # type: ignore[arg-type]


def test_repr_and_pattern() -> None:
    matcher = compile_matcher("Edit|Write")
    assert isinstance(matcher, Matcher)
    assert matcher.pattern == "Edit|Write"
    assert repr(matcher) == "compile_matcher('Edit|Write')"


names = st.text(alphabet="abcXYZ_-0", min_size=1, max_size=6)


@given(pattern=names, tool=names)
def test_exact_names_match_only_themselves(pattern: str, tool: str) -> None:
    assert compile_matcher(pattern).matches(tool) is (pattern == tool)


@given(parts=st.lists(names, min_size=1, max_size=4), tool=names, sep=st.sampled_from(["|", ","]))
def test_name_lists_match_members(parts: list[str], tool: str, sep: str) -> None:
    assert compile_matcher(sep.join(parts)).matches(tool) is (tool in parts)


# --- permission rules: Bash(...) ------------------------------------------------------------


def bash(command: str) -> dict[str, object]:
    return {"command": command}


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git *)", "git status", True),
        ("Bash(git *)", "git push --force origin main", True),
        ("Bash(git *)", "git", True),  # a single trailing " *" is optional
        ("Bash(git *)", "gitk", False),  # the space is a word boundary
        ("Bash(git *)", "echo git status", False),  # anchored at both ends
        ("Bash(git*)", "gitk", True),
        ("Bash(npm run build)", "npm run build", True),
        ("Bash(npm run build)", "npm run build --watch", False),
        ("Bash(npm run test:*)", "npm run test", True),  # legacy prefix form
        ("Bash(npm run test:*)", "npm run test -- -k x", True),
        ("Bash(npm run test:*)", "npm run testx", False),
        ("Bash(git * main)", "git push origin main", True),
        ("Bash(git * main)", "git push origin dev", False),
        ("Bash(* --version)", "python --version", True),
        ("Bash(rm -rf *)", "rm -rf src", True),
        ("Bash(rm -rf *)", "  rm -rf src  ", True),  # surrounding whitespace ignored
        ("Bash(echo (x))", "echo (x)", True),  # parentheses inside the specifier
        ("Bash(echo a.b)", "echo aXb", False),  # only * is special
        ("Bash(*)", "anything at all", True),
        ("Bash", "anything", True),
        ("Bash(git *)", "git log\nrm -rf x", True),  # * spans newlines, like Claude Code's
    ],
)
def test_bash_rules(rule: str, command: str, expected: bool) -> None:
    assert compile_matcher(rule).matches("Bash", bash(command)) is expected


def test_bash_rule_needs_the_right_tool_and_input() -> None:
    rule = compile_matcher("Bash(git *)")
    assert not rule.matches("Edit", {"file_path": "git x"})
    assert not rule.matches("Bash")  # no tool_input: the specifier cannot match
    assert not rule.matches("Bash", {})
    assert not rule.matches("Bash", {"command": 42})


@pytest.mark.parametrize("tool", sorted(SHELL_TOOLS))
def test_shell_rules_apply_to_every_shell_tool(tool: str) -> None:
    rule = compile_matcher(f"{tool}(git *)")
    assert rule.matches(tool, bash("git status"))
    assert not rule.matches(tool, bash("ls"))


def test_star_rule_matches_any_tool_with_a_command() -> None:
    rule = compile_matcher("*(rm *)")
    assert rule.matches("Bash", bash("rm -rf x"))
    assert rule.matches("mcp__shell__exec", bash("rm x"))  # unknown tool: uses its command key
    assert not rule.matches("Bash", bash("ls"))


# --- permission rules: file tools -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "expected"),
    [
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/a/b.ts"}, True),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/b.ts"}, True),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/src/a/b.js"}, False),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/ws/lib/src/b.ts"}, False),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/other/src/b.ts"}, False),  # outside root
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "src/a/b.ts"}, True),  # relative input
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "../ws/src/b.ts"}, False),
        ("Edit(src/**/*.ts)", "Write", {"file_path": "/ws/src/b.ts"}, False),  # tool differs
        ("Write(*.md)", "Write", {"file_path": "/ws/docs/deep/x.md"}, True),  # any depth
        ("Write(/README.md)", "Write", {"file_path": "/ws/docs/README.md"}, False),  # anchored
        ("Write(/README.md)", "Write", {"file_path": "/ws/README.md"}, True),
        ("Read(./.env)", "Read", {"file_path": "/ws/.env"}, True),
        ("Read(./.env)", "Read", {"file_path": "/ws/sub/.env"}, False),
        ("Read(.env)", "Read", {"file_path": "/ws/sub/.env"}, True),
        ("MultiEdit(src/)", "MultiEdit", {"file_path": "/ws/src/x.py", "edits": []}, True),
        ("NotebookEdit(nb/*.ipynb)", "NotebookEdit", {"notebook_path": "/ws/nb/a.ipynb"}, True),
        ("NotebookEdit(nb/*.ipynb)", "NotebookEdit", {"file_path": "/ws/x/a.ipynb"}, False),
        ("Glob(src/**)", "Glob", {"pattern": "*.py", "path": "/ws/src/sub"}, True),
        ("Edit|Write(src/**)", "Write", {"file_path": "/ws/src/x"}, True),
        ("Edit|Write(src/**)", "Read", {"file_path": "/ws/src/x"}, False),
        ("Edit(//etc/**)", "Edit", {"file_path": "/etc/passwd"}, True),  # absolute rule
        ("Edit(//etc/**)", "Edit", {"file_path": "/ws/etc/passwd"}, False),
        ("Edit(src/**)", "Edit", {}, False),
        ("Edit(src/**)", "Edit", {"file_path": ""}, False),
    ],
)
def test_file_rules(rule: str, tool: str, tool_input: dict[str, object], expected: bool) -> None:
    assert compile_matcher(rule).matches(tool, tool_input, root="/ws") is expected


def test_absolute_path_without_root_does_not_match() -> None:
    assert not compile_matcher("Edit(src/**)").matches("Edit", {"file_path": "/ws/src/x"})


def test_home_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/dev")
    rule = compile_matcher("Read(~/.ssh/**)")
    assert rule.matches("Read", {"file_path": "/home/dev/.ssh/id_ed25519"}, root="/ws")
    assert not rule.matches("Read", {"file_path": "/home/other/.ssh/id"}, root="/ws")


def test_root_is_normalized() -> None:
    rule = compile_matcher("Edit(src/**)")
    assert rule.matches("Edit", {"file_path": "/ws/src/x.py"}, root="/ws/")
    assert rule.matches("Edit", {"file_path": "/ws/./src/../src/x.py"}, root="/ws")


@pytest.mark.parametrize("tool", sorted(FILE_TOOLS))
def test_every_file_tool_accepts_a_path_rule(tool: str) -> None:
    rule = compile_matcher(f"{tool}(src/**)")
    assert rule.matches(tool, {"file_path": "/ws/src/a"}, root="/ws")
    assert not rule.matches(tool, {"file_path": "/ws/lib/a"}, root="/ws")


# --- rules vs regexes ---------------------------------------------------------------------------


def test_regex_groups_are_not_rules() -> None:
    # The tool part names no shell or file tool, so these stay regexes.
    assert compile_matcher("mcp__github__(create|delete)").matches("mcp__github__create_issue")
    assert compile_matcher("Notebook(Edit)").matches("NotebookEdit")
    assert compile_matcher("(Edit|Write)").matches("Write")
    assert compile_matcher(".*(Edit)").matches("MultiEdit")


def test_regex_ending_in_a_group_is_a_regex() -> None:
    rule = compile_matcher("^(Edit|Write)$|Bash(git *)")
    assert rule.matches("Edit")
    assert rule.matches("Bashgit ")  # the whole pattern is one regex
    assert not rule.matches("Read")
    assert compile_matcher("Bash(?:Output)?").matches("BashOutput")


def test_rule_with_regex_tool_part() -> None:
    # The tool part of a rule follows the tool-name rules, regexes (without groups) included.
    rule = compile_matcher("^Write$|Multi.*Edit(src/**)")
    assert rule.matches("Write", {"file_path": "/ws/src/a"}, root="/ws")
    assert rule.matches("MultiEdit", {"file_path": "/ws/src/a"}, root="/ws")
    assert not rule.matches("Write", {"file_path": "/ws/lib/a"}, root="/ws")
    assert not rule.matches("Read", {"file_path": "/ws/src/a"}, root="/ws")


def test_pathspec_is_imported_only_when_a_path_rule_is_evaluated() -> None:
    code = (
        "import sys\n"
        "from ledger._governance.matchers import compile_matcher\n"
        "rule = compile_matcher('Edit(src/**)')\n"
        "assert not rule.matches('Bash', {'command': 'ls'})\n"
        "assert compile_matcher('Bash(git *)').matches('Bash', {'command': 'git log'})\n"
        "assert 'pathspec' not in sys.modules, 'imported too early'\n"
        "assert rule.matches('Edit', {'file_path': '/w/src/x'}, root='/w')\n"
        "assert 'pathspec' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
