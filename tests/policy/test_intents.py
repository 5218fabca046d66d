"""The intents file: validation with file:line errors, the JSON cache, the agent context block."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger._errors import ConfigError
from ledger._governance import intents as intents_module
from ledger._governance.intents import (
    INTENT_STATUSES,
    Intent,
    IntentsFile,
    load_intents_cached,
    load_intents_file,
    parse_intents,
    render_intent_context,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / ".orchestration" / "active_intents.yaml"
NAME = "active_intents.yaml"

VALID = textwrap.dedent(
    """\
    intents:
      - id: INT-001
        name: JWT hardening
        status: in_progress
        owned_scope:
          - "src/auth/**"
        constraints:
          - "No literals."
        acceptance_criteria:
          - "Tests pass."
        description: Pin HS256.
      - id: INT-002
        name: Auth tests
        status: planned
        owned_scope: ["tests/auth/**"]
    """
)


def parse(text: str) -> IntentsFile:
    return parse_intents(textwrap.dedent(text), NAME)


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse(text)
    message = str(info.value)
    assert "\n" not in message
    assert "Traceback" not in message
    return message


# --- valid files -----------------------------------------------------------------------------


def test_valid_file_parses_to_immutable_data():
    parsed = parse(VALID)
    assert parsed.source_sha256 == hashlib.sha256(VALID.encode()).hexdigest()
    assert [i.id for i in parsed.intents] == ["INT-001", "INT-002"]
    first = parsed.intents[0]
    assert first == Intent(
        id="INT-001",
        name="JWT hardening",
        status="in_progress",
        owned_scope=("src/auth/**",),
        constraints=("No literals.",),
        acceptance_criteria=("Tests pass.",),
        description="Pin HS256.",
    )
    second = parsed.get("INT-002")
    assert second is not None
    assert (second.constraints, second.acceptance_criteria, second.description) == ((), (), None)
    assert parsed.get("INT-404") is None
    with pytest.raises(AttributeError):
        first.name = "x"  # type: ignore[misc]


def test_template_file_is_valid():
    parsed = load_intents_file(TEMPLATE)
    assert [i.id for i in parsed.intents] == ["INT-001", "INT-002"]
    jwt = parsed.get("INT-001")
    assert jwt is not None
    assert jwt.name == "JWT Authentication Migration"
    assert jwt.status == "in_progress"
    assert jwt.owned_scope == ("src/auth/**", "src/middleware/jwt.ts")
    tests = parsed.get("INT-002")
    assert tests is not None
    assert any(glob.startswith("tests/") for glob in tests.owned_scope)
    assert parsed.source_sha256 == hashlib.sha256(TEMPLATE.read_bytes()).hexdigest()


def test_empty_optional_fields_and_empty_intents_list():
    parsed = parse(
        """\
        intents:
          - id: a.b_c-1
            name: x
            status: done
            owned_scope: ["*"]
            constraints:
            acceptance_criteria: []
            description:
        """
    )
    assert parsed.intents[0].constraints == ()
    assert parsed.intents[0].description is None
    assert parse("intents: []\n").intents == ()


# --- errors carry the right line -------------------------------------------------------------

ERRORS = [
    (
        "owned_scope_empty",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["src/**"]
          - id: INT-002
            name: b
            status: active
            owned_scope: []
        """,
        9,
        "intent INT-002: owned_scope must be a non-empty list of strings",
    ),
    (
        "owned_scope_scalar",
        """\
        intents:
          - id: INT-002
            name: b
            status: active
            owned_scope: "src/**"
        """,
        5,
        "intent INT-002: owned_scope must be a non-empty list of strings, got a string",
    ),
    (
        "owned_scope_entry_not_string",
        """\
        intents:
          - id: INT-002
            name: b
            status: active
            owned_scope:
              - "src/**"
              - 42
        """,
        7,
        "intent INT-002: owned_scope entry must be a string, got int '42' (quote it)",
    ),
    (
        "owned_scope_bad_glob",
        """\
        intents:
          - id: INT-002
            name: b
            status: active
            owned_scope:
              - 'src\\'
        """,
        6,
        "is not a valid gitwildmatch glob",
    ),
    (
        "missing_owned_scope",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]

          - id: INT-003
            name: c
            status: active
        """,
        7,
        "intent INT-003: missing required key 'owned_scope'",
    ),
    (
        "unknown_key",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]
            owner: alice
        """,
        6,
        "intent INT-001: unknown key 'owner'",
    ),
    (
        "bad_status",
        """\
        intents:
          - id: INT-001
            name: a
            status: wip
            owned_scope: ["x"]
        """,
        4,
        "intent INT-001: status 'wip' must be one of PLANNED, ACTIVE, IN_PROGRESS",
    ),
    (
        "bad_id",
        """\
        intents:
          - id: 1-INT
            name: a
            status: active
            owned_scope: ["x"]
        """,
        2,
        "intents[0]: id '1-INT' must match",
    ),
    (
        "numeric_id",
        """\
        intents:
          - id: 7
            name: a
            status: active
            owned_scope: ["x"]
        """,
        2,
        "intents[0]: id must be a string, got int '7' (quote it)",
    ),
    (
        "boolean_name",
        """\
        intents:
          - id: INT-001
            name: yes
            status: active
            owned_scope: ["x"]
        """,
        3,
        "intent INT-001: name must be a string, got bool 'yes' (quote it)",
    ),
    (
        "blank_name",
        """\
        intents:
          - id: INT-001
            name: "  "
            status: active
            owned_scope: ["x"]
        """,
        3,
        "intent INT-001: name must not be empty",
    ),
    (
        "constraints_not_list",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]
            constraints: {a: 1}
        """,
        6,
        "intent INT-001: constraints must be a list of strings, got a mapping",
    ),
    (
        "criteria_entry_list",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]
            acceptance_criteria:
              - ok
              - [nested]
        """,
        8,
        "intent INT-001: acceptance_criteria entry must be a string, got a list",
    ),
    (
        "duplicate_id",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]
          - id: INT-002
            name: b
            status: active
            owned_scope: ["y"]
          - id: INT-001
            name: c
            status: active
            owned_scope: ["z"]
        """,
        10,
        "intent INT-001: duplicate id (first defined on line 2)",
    ),
    (
        "duplicate_key",
        """\
        intents:
          - id: INT-001
            name: a
            name: b
            status: active
            owned_scope: ["x"]
        """,
        4,
        "duplicate key 'name' (first on line 3)",
    ),
    (
        "intent_not_mapping",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x"]
          - just a string
        """,
        6,
        "intents[1]: each intent must be a mapping, got a string",
    ),
    (
        "malformed_yaml_indent",
        """\
        intents:
          - id: INT-001
            name: a
           status: active
            owned_scope: ["x"]
        """,
        4,
        "invalid YAML",
    ),
    (
        "malformed_yaml_unclosed_flow",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope: ["x", "y"
        """,
        6,
        "invalid YAML: while parsing a flow sequence (line 5): ",
    ),
    (
        "unquoted_star_glob_is_an_alias",
        """\
        intents:
          - id: INT-001
            name: a
            status: active
            owned_scope:
              - *.py
        """,
        6,
        "(a glob starting with '*' must be quoted)",
    ),
    (
        "top_level_list",
        "- a\n- b\n",
        1,
        "expected a mapping with an 'active_intents' list, got a list",
    ),
    ("empty_file", "", 1, "empty intents file"),
    ("missing_intents", "version: 1\n", 1, "unknown top-level key 'version'"),
    ("intents_not_list", "\n\nintents: {}\n", 3, "'intents' must be a list, got a mapping"),
    ("tab_indent", "intents:\n\t- id: x\n", 2, "invalid YAML"),
    ("two_documents", "intents: []\n---\nintents: []\n", 2, "invalid YAML"),
]


@pytest.mark.parametrize(
    ("text", "line", "fragment"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors_name_file_line_and_problem(text: str, line: int, fragment: str):
    message = error_of(text)
    assert message.startswith(f"{NAME}:{line}: "), message
    assert fragment in message, message


def test_missing_intents_key():
    assert error_of("{}\n") == f"{NAME}:1: missing top-level key 'active_intents'"


def test_control_character_is_reported_with_its_line():
    message = error_of("intents:\n  - id: x\u0007\n")
    assert message.startswith(f"{NAME}:2: invalid YAML")


def test_file_errors(tmp_path: Path):
    bad = tmp_path / NAME
    bad.write_bytes(b"intents:\n  - id: INT-001\n    name: \xff\n")
    with pytest.raises(ConfigError, match=rf"{NAME}:3: invalid YAML: the file is not valid UTF-8"):
        load_intents_file(bad)
    with pytest.raises(ConfigError, match="cannot read intents file"):
        load_intents_file(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="cannot read intents file"):
        load_intents_cached(tmp_path / "missing.yaml", tmp_path / "cache")


# --- the cache -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _own_ledger_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    # The cache is sealed with the per-user secret, created on first use in the ledger home:
    # this test's own, never the real ~/.config/ledger (the subprocesses inherit it too).
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path_factory.mktemp("ledger-home")))


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / ".orchestration" / NAME
    path.parent.mkdir()
    path.write_text(VALID, encoding="utf-8")
    return path, tmp_path / ".orchestration" / "cache"


def _cache_files(cache: Path) -> list[Path]:
    return sorted(cache.iterdir()) if cache.exists() else []


def test_cache_is_written_and_matches_the_slow_path(workspace: tuple[Path, Path]):
    path, cache = workspace
    first = load_intents_cached(path, cache)
    assert first == load_intents_file(path)
    files = _cache_files(cache)
    assert len(files) == 1  # no temp files left behind
    assert files[0].suffix == ".json"
    doc = json.loads(files[0].read_text())
    assert doc["sha256"] == first.source_sha256
    assert load_intents_cached(path, cache) == first


def test_cache_hit_does_not_import_yaml(workspace: tuple[Path, Path]):
    path, cache = workspace
    load_intents_cached(path, cache)
    code = (
        "import sys; from ledger._governance.intents import load_intents_cached;"
        f"f = load_intents_cached({str(path)!r}, {str(cache)!r});"
        "print(len(f.intents), 'yaml' in sys.modules, 'pathspec' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert run.stdout.split() == ["2", "False", "False"]
    # and the slow path really does need it: with no cache, yaml is imported
    empty = path.parent / "empty-cache"
    code = code.replace(repr(str(cache)), repr(str(empty)))
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert run.stdout.split() == ["2", "True", "True"]


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "empty", "wrong_format", "list", "huge_number", "deep"],
)
def test_corrupt_cache_is_ignored_and_rewritten(workspace: tuple[Path, Path], damage: str):
    path, cache = workspace
    good = load_intents_cached(path, cache)
    (file,) = _cache_files(cache)
    text = file.read_text()
    file.write_text(
        {
            "garbage": "\x00not json",
            "truncated": text[: len(text) // 2],
            "empty": "",
            "wrong_format": text.replace(intents_module._CACHE_FORMAT, "other/9"),
            "list": "[1, 2]",
            "huge_number": text.replace('"size":', '"size":1e999,"x":'),
            "deep": "[" * 100_000,
        }[damage]
    )
    assert load_intents_cached(path, cache) == good
    assert json.loads(file.read_text())["format"] == intents_module._CACHE_FORMAT


def test_tampered_cache_is_never_trusted_over_the_yaml(workspace: tuple[Path, Path]):
    path, cache = workspace
    good = load_intents_cached(path, cache)
    (file,) = _cache_files(cache)
    doc = json.loads(file.read_text())
    doc["intents"][0]["owned_scope"] = ["**"]  # widen the scope, keep everything else
    file.write_text(json.dumps(doc))
    assert load_intents_cached(path, cache) == good
    assert load_intents_cached(path, cache).intents[0].owned_scope == ("src/auth/**",)


def test_structurally_invalid_cache_with_valid_checksum_is_ignored(workspace: tuple[Path, Path]):
    path, cache = workspace
    good = load_intents_cached(path, cache)
    (file,) = _cache_files(cache)
    doc = json.loads(file.read_text())
    doc["intents"][0]["status"] = "hacked"
    doc["checksum"] = intents_module._checksum(doc["intents"])
    file.write_text(json.dumps(doc))
    assert load_intents_cached(path, cache) == good


def test_changed_yaml_with_same_size_and_mtime_is_reparsed(workspace: tuple[Path, Path]):
    path, cache = workspace
    load_intents_cached(path, cache)
    before = path.stat()
    changed = VALID.replace("status: in_progress", "status: blocked____")
    assert len(changed) == len(VALID)
    path.write_text(changed, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    with pytest.raises(ConfigError, match=r":4: intent INT-001: status 'blocked____'"):
        load_intents_cached(path, cache)
    fixed = VALID.replace("status: in_progress", "status: blocked    ")
    path.write_text(fixed, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    intent = load_intents_cached(path, cache).get("INT-001")
    assert intent is not None
    assert intent.status == "blocked"


def test_invalid_yaml_is_reported_even_with_a_cache_dir(workspace: tuple[Path, Path]):
    path, cache = workspace
    path.write_text("intents:\n  - id: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{NAME}:\d+: invalid YAML"):
        load_intents_cached(path, cache)
    assert _cache_files(cache) == []


def test_unwritable_cache_location_still_loads(workspace: tuple[Path, Path]):
    path, _cache = workspace
    blocker = path.parent / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    assert load_intents_cached(path, blocker / "cache") == load_intents_file(path)


def test_two_intents_files_share_a_cache_dir(tmp_path: Path):
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text(VALID)
    two.write_text("intents: []\n")
    cache = tmp_path / "cache"
    assert len(load_intents_cached(one, cache).intents) == 2
    assert load_intents_cached(two, cache).intents == ()
    assert len(load_intents_cached(one, cache).intents) == 2
    assert len(_cache_files(cache)) == 2


# --- context rendering -----------------------------------------------------------------------


def test_render_intent_context_escapes_and_lists_everything():
    intent = Intent(
        id="INT-9",
        name="Fix <script> & co",
        status="active",
        owned_scope=("src/a/**", "!src/a/gen/**"),
        constraints=("use a < b > c",),
        acceptance_criteria=(),
        description="</intent_context><evil>",
    )
    text = render_intent_context(intent, ["edited src/a/x.ts (lines 3-9) & y"])
    assert text.splitlines() == [
        "<intent_context>",
        "  <id>INT-9</id>",
        "  <name>Fix &lt;script&gt; &amp; co</name>",
        "  <status>active</status>",
        "  <description>&lt;/intent_context&gt;&lt;evil&gt;</description>",
        "  <owned_scope>",
        "    <glob>src/a/**</glob>",
        "    <glob>!src/a/gen/**</glob>",
        "  </owned_scope>",
        "  <constraints>",
        "    <constraint>use a &lt; b &gt; c</constraint>",
        "  </constraints>",
        "  <acceptance_criteria/>",
        "  <recent_changes>",
        "    <change>edited src/a/x.ts (lines 3-9) &amp; y</change>",
        "  </recent_changes>",
        "</intent_context>",
    ]
    assert text.count("</intent_context>") == 1


def test_render_intent_context_without_recent_changes():
    intent = parse(VALID).intents[1]
    text = render_intent_context(intent)
    assert "<recent_changes/>" in text
    assert "<description>" not in text


# --- properties ------------------------------------------------------------------------------

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(str.strip)
_intent = st.builds(
    Intent,
    id=st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,8}", fullmatch=True),
    name=_text,
    status=st.sampled_from(INTENT_STATUSES),
    owned_scope=st.lists(
        st.from_regex(r"[a-z]{1,5}(/[a-z*]{1,4}){0,2}", fullmatch=True), min_size=1, max_size=3
    ).map(tuple),
    constraints=st.lists(_text, max_size=3).map(tuple),
    acceptance_criteria=st.lists(_text, max_size=3).map(tuple),
    description=st.none() | _text,
)
_intent_lists = st.lists(_intent, max_size=4, unique_by=lambda intent: intent.id)


def _dump(intents: list[Intent]) -> str:
    docs = []
    for intent in intents:
        doc = intent._asdict()
        for key in ("owned_scope", "constraints", "acceptance_criteria"):
            doc[key] = list(doc[key])
        docs.append(doc)
    return yaml.safe_dump({"intents": docs}, allow_unicode=True, sort_keys=False)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(intents=_intent_lists)
def test_any_valid_file_round_trips_through_yaml_and_the_cache(
    intents: list[Intent], tmp_path: Path
):
    text = _dump(intents)
    assert parse_intents(text, NAME).intents == tuple(intents)
    path = tmp_path / f"{hashlib.sha256(text.encode()).hexdigest()[:12]}.yaml"
    path.write_text(text, encoding="utf-8")
    cache = tmp_path / "cache"
    slow = load_intents_cached(path, cache)
    fast = load_intents_cached(path, cache)
    assert slow == fast == parse_intents(text, NAME)


@settings(max_examples=40, deadline=None)
@given(intents=_intent_lists.filter(bool), data=st.data())
def test_errors_point_at_the_offending_intent(intents: list[Intent], data: st.DataObject):
    """Break one intent's status: the error names that intent and the line of its status."""
    victim = data.draw(st.integers(0, len(intents) - 1))
    lines = _dump(intents).split("\n")
    seen = -1
    for number, line in enumerate(lines, start=1):
        if line.startswith("- id:"):
            seen += 1
        if seen == victim and line.startswith("  status:"):
            lines[number - 1] = "  status: nonsense"
            break
    message = error_of("\n".join(lines))
    assert message.startswith(f"{NAME}:{number}: intent {intents[victim].id}: status 'nonsense'")
