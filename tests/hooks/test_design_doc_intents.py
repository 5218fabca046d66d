"""The design documents' intents file, byte for byte, through the real ``ledger hook claude``.

Also: which statuses open an intent (one rule, shared by the hook and ``ledger intent select``),
the ``intents:`` alias, and what ``intent list`` says when the file is missing or misnamed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger._errors import ConfigError
from ledger._governance.intents import (
    INTENT_STATUSES,
    WORKABLE_STATUSES,
    Intent,
    intent_refusal,
    normalize_status,
    parse_intents,
)
from ledger._workspace import INTENTS_TEMPLATE

from ._support import clean_env, run_cli

#: Exactly as the design documents write it (root key, quoting, 4-space indents).
DESIGN_DOC_INTENTS = (
    "active_intents:\n"
    '    - id: "INT-001"\n'
    '      name: "JWT Authentication Migration"\n'
    '      status: "IN_PROGRESS"\n'
    "      owned_scope:\n"
    '          - "src/auth/**"\n'
    '          - "src/middleware/jwt.ts"\n'
    "      constraints:\n"
    '          - "Must not use external auth providers"\n'
    "      acceptance_criteria:\n"
    '          - "Unit tests in tests/auth/ pass"\n'
)


def test_design_doc_file_parses_as_written() -> None:
    parsed = parse_intents(DESIGN_DOC_INTENTS, "active_intents.yaml")
    assert parsed.intents == (
        Intent(
            id="INT-001",
            name="JWT Authentication Migration",
            status="in_progress",
            owned_scope=("src/auth/**", "src/middleware/jwt.ts"),
            constraints=("Must not use external auth providers",),
            acceptance_criteria=("Unit tests in tests/auth/ pass",),
        ),
    )


def test_init_template_uses_the_canonical_root_key_and_parses() -> None:
    assert "\nactive_intents: []\n" in INTENTS_TEMPLATE
    assert parse_intents(INTENTS_TEMPLATE, "t.yaml").intents == ()
    # The commented example in the template is the design documents' file.
    example = "\n".join(
        line.removeprefix("# ").split("  #")[0].rstrip()
        for line in INTENTS_TEMPLATE.splitlines()
        if line.startswith("#     ") or line == "# active_intents:"
    )
    assert parse_intents(example, "t.yaml").intents[0].status == "in_progress"


def test_intents_alias_still_works_but_not_together_with_the_canonical_key() -> None:
    alias = DESIGN_DOC_INTENTS.replace("active_intents:", "intents:", 1)
    assert parse_intents(alias, "a.yaml").intents[0].id == "INT-001"
    both = DESIGN_DOC_INTENTS + "intents: []\n"
    with pytest.raises(ConfigError, match="alias of 'active_intents': use one of them"):
        parse_intents(both, "a.yaml")


def test_misspelt_root_key_suggests_the_right_one() -> None:
    text = DESIGN_DOC_INTENTS.replace("active_intents:", "active_intent:", 1)
    with pytest.raises(ConfigError) as info:
        parse_intents(text, "a.yaml")
    assert str(info.value) == (
        "a.yaml:1: unknown top-level key 'active_intent' (allowed: active_intents, or its alias "
        "intents) (did you mean 'active_intents'?)"
    )


def test_misspelt_status_suggests_the_right_one() -> None:
    with pytest.raises(ConfigError, match=r"(did you mean 'in_progress'\?)"):
        parse_intents(DESIGN_DOC_INTENTS.replace("IN_PROGRESS", "IN_PROGRES"), "a.yaml")


@given(st.sampled_from([*INTENT_STATUSES, "completed", "in-progress"]), st.randoms())
def test_statuses_are_accepted_in_any_case(status: str, rng: Any) -> None:
    cased = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in status)
    parsed = parse_intents(DESIGN_DOC_INTENTS.replace("IN_PROGRESS", cased), "a.yaml")
    expected = normalize_status(status)
    assert expected is not None
    assert parsed.intents[0].status == expected


@pytest.mark.parametrize("status", INTENT_STATUSES)
def test_only_in_progress_intents_are_open(status: str) -> None:
    intent = Intent("INT-1", "n", status, ("a/**",))
    refusal = intent_refusal(intent)
    if status in ("in_progress", "active"):
        assert refusal is None
    else:
        assert refusal is not None
        assert status in refusal  # says why, by name
    assert {"in_progress", "active"} == WORKABLE_STATUSES


# --- through the real hook ----------------------------------------------------------------------


class Agent:
    """Claude Code's side of the hook protocol, through the installed ``ledger`` script."""

    def __init__(self, root: Path, env: dict[str, str], session: str = "sess-design-doc") -> None:
        self.root, self.env, self.session, self.n = root, env, session, 0

    def pre(self, tool: str, tool_input: dict[str, Any]) -> tuple[str | None, str]:
        self.n += 1
        payload = {
            "session_id": self.session,
            "transcript_path": f"/tmp/{self.session}.jsonl",
            "cwd": str(self.root),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{self.n:04d}",
        }
        done = run_cli(
            ["hook", "claude", "--event", "PreToolUse"],
            self.env,
            cwd=self.root,
            stdin=json.dumps(payload).encode(),
        )
        assert done.returncode == 0, done.stderr
        specific = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
        text = str(specific.get("permissionDecisionReason", "")) + str(
            specific.get("additionalContext", "")
        )
        return specific.get("permissionDecision"), text

    def write(self, relative: str) -> tuple[str | None, str]:
        return self.pre("Write", {"file_path": str(self.root / relative), "content": "x\n"})

    def select(self, intent_id: str) -> tuple[str | None, str]:
        return self.pre("Bash", {"command": f"ledger intent select {intent_id}"})


@pytest.fixture
def design_doc_workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "app"
    root.mkdir()
    env = clean_env(tmp_path / "home")
    assert run_cli(["init", "--root", str(root)], env).returncode == 0
    (root / ".orchestration" / "active_intents.yaml").write_bytes(DESIGN_DOC_INTENTS.encode())
    return root, env


def test_design_doc_file_from_selection_to_an_in_scope_write(
    design_doc_workspace: tuple[Path, dict[str, str]],
) -> None:
    root, env = design_doc_workspace
    agent = Agent(root, env)
    decision, reason = agent.write("src/auth/token.ts")
    assert decision == "deny"
    assert "INTENT_REQUIRED" in reason
    assert "INT-001 (JWT Authentication Migration)" in reason

    decision, context = agent.select("INT-001")
    assert decision == "allow"
    assert "<name>JWT Authentication Migration</name>" in context
    assert "<constraint>Must not use external auth providers</constraint>" in context

    for relative in ("src/auth/token.ts", "src/middleware/jwt.ts"):
        decision, reason = agent.write(relative)
        assert decision in (None, "allow"), reason
    decision, reason = agent.write("src/billing/invoice.ts")
    assert decision == "deny"
    assert "SCOPE_VIOLATION" in reason

    listed = run_cli(["intent", "list", "--json", "--root", str(root)], env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["sessions"] == ["sess-design-doc"]
    assert row["status"] == "in_progress"


@pytest.mark.parametrize(
    ("status", "why"),
    [
        ("BLOCKED", "is blocked: resolve what blocks it"),
        ("COMPLETE", "is complete: its work is finished"),
        ("done", "is done: its work is finished"),
        ("Planned", "is planned, not started"),
        ("ABANDONED", "was abandoned"),
    ],
)
def test_closed_intents_are_refused_alike_by_hook_and_cli(
    design_doc_workspace: tuple[Path, dict[str, str]], status: str, why: str
) -> None:
    root, env = design_doc_workspace
    intents = root / ".orchestration" / "active_intents.yaml"
    intents.write_text(DESIGN_DOC_INTENTS.replace('"IN_PROGRESS"', f'"{status}"'))
    agent = Agent(root, env)
    decision, reason = agent.select("INT-001")
    assert decision == "deny"
    assert f"intent INT-001 {why}" in reason

    done = run_cli(["intent", "select", "INT-001", "--session", "s1", "--root", str(root)], env)
    assert done.returncode == 3
    assert done.stderr.decode().startswith(f"ledger: error: cannot select intent INT-001: it {why}")


def test_an_intent_closed_after_selection_stops_writes(
    design_doc_workspace: tuple[Path, dict[str, str]],
) -> None:
    root, env = design_doc_workspace
    agent = Agent(root, env)
    assert agent.select("INT-001")[0] == "allow"
    assert agent.write("src/auth/a.ts")[0] in (None, "allow")
    intents = root / ".orchestration" / "active_intents.yaml"
    intents.write_text(DESIGN_DOC_INTENTS.replace('"IN_PROGRESS"', '"BLOCKED"'))
    decision, reason = agent.write("src/auth/a.ts")
    assert decision == "deny"
    assert "intent INT-001 is blocked" in reason


# --- a missing or misnamed file -----------------------------------------------------------------


def test_intent_list_says_when_the_file_is_missing_or_misnamed(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    env = clean_env(tmp_path / "home")
    assert run_cli(["init", "--root", str(root)], env).returncode == 0
    intents = root / ".orchestration" / "active_intents.yaml"

    empty = run_cli(["intent", "list", "--root", str(root)], env)
    assert empty.returncode == 0
    assert "no intents yet" in empty.stdout.decode()

    intents.rename(intents.with_suffix(".yml"))
    misnamed = run_cli(["intent", "list", "--root", str(root)], env)
    assert misnamed.returncode == 2
    assert misnamed.stderr.decode() == (
        "ledger: error: no .orchestration/active_intents.yaml (found active_intents.yml: rename "
        "it to active_intents.yaml)\n"
    )
    agent = Agent(root, env)
    decision, reason = agent.write("src/a.ts")
    assert decision == "deny"
    assert "found active_intents.yml: rename it" in reason

    intents.with_suffix(".yml").unlink()
    missing = run_cli(["intent", "list", "--root", str(root)], env)
    assert missing.returncode == 2
    assert "run `ledger init` to write a template" in missing.stderr.decode()


@pytest.mark.parametrize("glob", ["../elsewhere/**", "**", ".orchestration/keys/*"])
def test_agent_expansion_request_for_an_unsafe_glob_is_denied_not_asked(
    design_doc_workspace: tuple[Path, dict[str, str]],
    glob: str,
) -> None:
    root, env = design_doc_workspace
    agent = Agent(root, env)
    assert agent.select("INT-001")[0] == "allow"
    decision, reason = agent.pre("Bash", {"command": f"ledger intent expand INT-001 '{glob}'"})
    assert decision == "deny"
    assert "SCOPE_VIOLATION" in reason
    assert "cannot expand INT-001" in reason
    decision, reason = agent.pre("Bash", {"command": "ledger intent expand INT-001 'docs/**'"})
    assert decision == "ask"
