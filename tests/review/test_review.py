"""``ledger review``: a range's lines by blame status, intents and scope, governance on the way,
evidence, and the outputs and gate a reviewer or a CI job reads."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ledger._evidence.ledger import Ledger
from ledger._projections.explain import blame_file
from ledger._review import (
    COMMENT_LIMIT,
    GROUPINGS,
    build_review,
    parse_fail_on,
    render_review_markdown,
    render_review_sarif,
    review_failures,
)
from ledger._review.schema import SCHEMA_FILE, review_schema
from tests.blame._clones import Clones
from tests.blame._world import World, git
from tests.reserved import as_ledger_itself
from tests.review._support import based_world, cli, commit, review_json, shallow_review

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_review_schema_matches_the_model() -> None:
    committed = json.loads((SCHEMAS / SCHEMA_FILE).read_text(encoding="utf-8"))
    assert committed == review_schema(), "run `python -m ledger._review.schema` and commit"


def _statuses(file: dict[str, Any]) -> dict[int, str]:
    """Line number -> status, from a file's runs."""
    return {n: run["status"] for run in file["runs"] for n in range(run["start"], run["end"] + 1)}


def test_a_range_counts_agent_git_and_unknown_lines_and_names_each_agent_line(
    tmp_path: Path,
) -> None:
    world, _base = based_world(tmp_path)
    world.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    (world.root / "README").write_text("hello\nby a person\n", encoding="utf-8")
    commit(world)
    data = review_json(world.root, world.ws.env, "HEAD~1..HEAD")
    jsonschema.validate(data, review_schema())
    assert data["totals"]["agent"] == 2
    assert data["totals"]["git"] == 1
    assert data["totals"]["unknown"] == 0
    assert data["totals"]["total"] == 3
    assert data["totals"]["shares"] == {"agent": 66.67, "git": 33.33, "unknown": 0.0}
    by_path = {f["path"]: f for f in data["files"]}
    assert by_path["README"]["lines"]["git"] == 1
    [run] = by_path["src/app.py"]["runs"]
    own = Ledger.open(world.root, environ=world.ws.env).ledger_id
    assert run | {"ts": None, "record_hash": None} == {
        "start": 1,
        "end": 2,
        "lines": 2,
        "status": "agent",
        "ledger_id": own,
        "seq": run["seq"],
        "record_hash": None,
        "session_id": "s1",
        "intent_id": "INT-001",
        "client": "claude-code",
        "model": None,
        "tool": "Write",
        "ts": None,
        "in_scope": True,
    }
    [evidence] = data["evidence"]
    assert evidence["verified"] is True
    assert evidence["pinned"] is True
    assert evidence["lines"] == 2


def _random_history(world: World, rng: random.Random, steps: int) -> list[str]:
    """Agents writing and editing, a person editing, commits now and then."""
    commits = [git(world.root, "rev-parse", "HEAD").strip()]
    files = ["a.py", "b.py", "docs/c.md"]
    for step in range(steps):
        path = rng.choice(files)
        text = world.text(path)
        roll = rng.random()
        if roll > 0.9:  # a person adds a file no ledger describes
            (world.root / f"person_{step}.txt").write_text(f"p{step}\nq{step}\n", encoding="utf-8")
        elif text is None or roll < 0.3:
            lines = [f"{path} v{step} line {n}\n" for n in range(rng.randint(1, 6))]
            world.write(rng.choice(["s1", "s2"]), path, "".join(lines))
        elif roll < 0.7:
            old = rng.choice(text.splitlines(keepends=True))
            if text.count(old) == 1:
                world.edit("s2", path, old, old + f"added at {step}\n")
        else:
            lines = text.splitlines(keepends=True)
            lines[rng.randrange(len(lines))] = f"person {step}\n"
            (world.root / path).write_text("".join(lines), encoding="utf-8")
        if rng.random() < 0.6:
            commits.append(commit(world, f"step {step}"))
    commits.append(commit(world, "last"))
    return commits


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_totals_equal_the_sum_of_per_line_blame_over_random_ranges(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)  # noqa: S311 -- replayable by seed, not a secret
    world, _ = based_world(tmp_path)
    commits = _random_history(world, rng, 14)
    for _ in range(3):
        first, last = sorted(rng.sample(range(len(commits)), 2))
        base, head = commits[first], commits[last]
        git(world.root, "checkout", "-q", "--detach", head)
        review = build_review(f"{base}..{head}", root=world.root, environ=world.ws.env)
        summed: Counter[str] = Counter()
        for file in review["files"]:
            if not file["runs"]:
                continue
            blamed = blame_file(
                str(world.root / file["path"]), root=world.root, environ=world.ws.env
            )
            wanted = _statuses(file)
            per_line = {row.line: row.status for row in blamed.lines if row.line in wanted}
            assert per_line == wanted, file["path"]
            summed.update(per_line.values())
        totals = review["totals"]
        assert {s: totals[s] for s in ("agent", "git", "unknown")} == {
            s: summed.get(s, 0) for s in ("agent", "git", "unknown")
        }
        # the comment's and SARIF's review, which asks git fewer questions, counts the same
        quick = build_review(
            f"{base}..{head}", root=world.root, environ=world.ws.env, git_facts=False
        )
        assert quick["totals"] == totals
        assert [f["lines"] for f in quick["files"]] == [f["lines"] for f in review["files"]]
        git(world.root, "checkout", "-q", "main")


def _grant(world: World, intent: str, glob: str) -> None:
    as_ledger_itself(Ledger.open(world.root, environ=world.ws.env)).append(
        "intent.scope_expanded",
        {
            "approval": "person",
            "approved_via": "cli",
            "globs": [glob],
            "intent_id": intent,
            "reason": "the API needs it",
            "session": None,
            "tool_use_id": None,
        },
    )


def test_scope_held_then_counts_an_approved_expansion_and_names_it(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    narrow = world.session("s3", "INT-NARROW")
    denied = narrow.pre("Write", {"file_path": str(world.root / "src/early.py"), "content": "x\n"})
    assert denied.code == "SCOPE_VIOLATION"
    world.write("s3", "docs/guide.md", "guide\n")
    _grant(world, "INT-NARROW", "src/**")
    world.write("s3", "src/api.py", "api = 1\n")
    world.write("s1", "lib/tool.py", "tool = 1\n")
    commit(world)
    # INT-001 later narrowed to docs: its earlier line in lib/ is now outside its scope.
    intents = world.ws.orchestration / "active_intents.yaml"
    intents.write_text(
        intents.read_text(encoding="utf-8").replace(
            'name: Everything\n    status: active\n    owned_scope: ["**"]',
            'name: Everything\n    status: active\n    owned_scope: ["docs/**"]',
        ),
        encoding="utf-8",
    )
    data = review_json(world.root, world.ws.env, "HEAD~1..HEAD")
    intents_by_id = {i["id"]: i for i in data["intents"]}
    narrow_entry = intents_by_id["INT-NARROW"]
    assert (narrow_entry["in_scope"], narrow_entry["out_of_scope"]) == (2, 0)
    [used] = narrow_entry["expansions_used"]
    assert used["glob"] == "src/**"
    assert used["approved_by"].startswith("a person")
    assert isinstance(used["seq"], int)
    assert (intents_by_id["INT-001"]["in_scope"], intents_by_id["INT-001"]["out_of_scope"]) == (
        0,
        1,
    )
    kinds = [(i["type"], i.get("code")) for i in data["governance"]]
    assert ("denial", "SCOPE_VIOLATION") in kinds
    assert ("scope_expansion", None) in kinds
    for item in data["governance"]:
        assert isinstance(item["seq"], int)
        assert item["ledger_id"] == data["evidence"][0]["ledger_id"]
    # the gate and SARIF see the out-of-scope line
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD", "--fail-on", "out-of-scope,tamper")
    assert done.returncode == 1
    [line] = done.stderr.decode().splitlines()
    assert "out-of-scope (1 agent lines" in line
    assert "tamper" not in line
    sarif = render_review_sarif(build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env))
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "ledger/out-of-scope"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "lib/tool.py"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "endLine": 1}


def test_asks_are_listed_with_their_answers(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "docs/old.md", "old\n")
    session = world.sessions["s1"]
    ran = session.tool_use_id()
    command = {"command": "rm docs/old.md"}
    assert session.pre("Bash", command, tool_use_id=ran).permission == "ask"
    (world.root / "docs/old.md").unlink()
    session.post(
        "Bash", command, {"stdout": "", "stderr": "", "interrupted": False}, tool_use_id=ran
    )
    unanswered = session.tool_use_id()
    assert session.pre("Bash", {"command": "rm README"}, tool_use_id=unanswered).permission == "ask"
    world.write("s1", "docs/new.md", "new\n")
    commit(world)
    data = review_json(world.root, world.ws.env, "HEAD~1..HEAD")
    asks = [(i["code"], i["answer"]) for i in data["governance"] if i["type"] == "ask"]
    assert asks == [
        ("DESTRUCTIVE_COMMAND", "approved, ran"),
        ("DESTRUCTIVE_COMMAND", "no answer recorded"),
    ]


def test_a_ledger_that_does_not_verify_never_counts_as_agent(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "app.py", "one\ntwo\n")
    commit(world)
    trace = world.ws.orchestration / "agent_trace.jsonl"
    data = trace.read_bytes()
    forged = data.replace(b'"session":"s1"', b'"session":"s9"', 1)
    assert forged != data
    trace.write_bytes(forged)
    review = build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env)
    assert review["totals"]["agent"] == 0
    assert review["totals"]["unknown"] == review["totals"]["unverified"] == 2
    [evidence] = review["evidence"]
    assert evidence["verified"] is False
    assert "ledger verify" in evidence["fix"]
    [result] = render_review_sarif(review)["runs"][0]["results"]
    assert result["ruleId"] == "ledger/unverified"
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD", "--fail-on", "unverified")
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1
    assert "unverified (2 lines" in done.stderr.decode()


def test_a_clone_that_only_fetched_evidence_reviews_a_teammates_agent_lines(
    tmp_path: Path,
) -> None:
    clones = Clones(tmp_path)
    (clones.a.root / "README").write_text("hello\n", encoding="utf-8")
    commit(clones.a, "base")
    clones.a.write("s1", "src/app.py", "alpha = 1\nbeta = 2\n")
    commit(clones.a)
    assert clones.push()
    clones.pull()
    data = review_json(clones.b_root, clones.b_env, "HEAD~1..HEAD")
    a_id = clones.a_ledger.ledger_id
    assert data["totals"]["agent"] == 2
    [file] = data["files"]
    assert {r["ledger_id"] for r in file["runs"]} == {a_id}
    assert {r["session_id"] for r in file["runs"]} == {"s1"}
    teammate = next(e for e in data["evidence"] if e["ledger_id"] == a_id)
    assert teammate["verified"] is True
    assert teammate["remote"] == "origin"
    assert teammate["newest_checkpoint"]["size"] > 0
    assert teammate["lines"] == 2
    [intent] = data["intents"]
    assert intent["id"] == "INT-001"
    # a clone that never fetched the evidence: every line git, and how to fetch it
    other = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(clones.bare), str(other)], check=True)
    env = {"LEDGER_HOME": str(tmp_path / "c-home")}
    Ledger.init(other, environ=env)
    bare = review_json(other, env, "HEAD~1..HEAD")
    assert (bare["totals"]["agent"], bare["totals"]["git"]) == (0, 2)
    assert any("ledger fetch" in note for note in bare["notes"])
    done = cli(other, env, "HEAD~1..HEAD")
    assert done.returncode == 0
    assert "no agent lines in HEAD~1..HEAD" in done.stderr.decode()


def test_the_default_range_is_the_merge_base_with_the_upstream(tmp_path: Path) -> None:
    clones = Clones(tmp_path)
    (clones.a.root / "README").write_text("hello\n", encoding="utf-8")
    commit(clones.a, "base")
    assert clones.push()
    git(clones.a.root, "branch", "-q", "--set-upstream-to=origin/main")
    clones.a.write("s1", "feature.py", "x = 1\n")
    commit(clones.a, "feature")
    data = review_json(clones.a.root, clones.a.ws.env)
    assert data["range"]["spec"] == "origin/main...HEAD"
    assert data["totals"]["agent"] == 1


def test_renames_binaries_submodules_and_deleted_files_are_one_note_each(tmp_path: Path) -> None:
    world, base = based_world(tmp_path)
    (world.root / "gone.txt").write_text("a\nb\n", encoding="utf-8")
    (world.root / "old_name.txt").write_text("same\n", encoding="utf-8")
    base = commit(world, "more")
    git(world.root, "mv", "old_name.txt", "new_name.txt")
    (world.root / "gone.txt").unlink()
    (world.root / "blob.bin").write_bytes(b"\0\1\2\3")
    git(world.root, "add", "-A")
    git(world.root, "update-index", "--add", "--cacheinfo", f"160000,{base},vendor/sub")
    git(world.root, "commit", "-qm", "odd changes")
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD", "--json")
    assert done.returncode == 0, done.stderr
    files = {f["path"]: f for f in json.loads(done.stdout)["files"]}
    assert files["new_name.txt"]["change"] == "renamed"
    assert files["new_name.txt"]["old_path"] == "old_name.txt"
    assert files["new_name.txt"]["note"] == "renamed, content unchanged"
    assert files["gone.txt"]["note"] == "deleted (2 lines removed)"
    assert files["blob.bin"]["change"] == "binary"
    assert files["vendor/sub"]["change"] == "submodule"
    assert all(f["lines"]["total"] == 0 for f in files.values())


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["nope..HEAD"], 2, "unknown revision 'nope'"),
        (["HEAD..HEAD"], 0, "changes no files"),
        (["--fail-on", "agent>x%"], 2, "unknown --fail-on condition"),
        (["--by", "month"], 2, "--by 'month'"),
        (["--json", "--sarif"], 2, "choose one of"),
        (["--", "-x"], 2, "is not a range"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(
    tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    world, _ = based_world(tmp_path)
    done = cli(world.root, world.ws.env, *args)
    assert done.returncode == code, done.stderr
    assert says in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()
    assert len(done.stderr.decode().strip().splitlines()) <= 2  # the line, and maybe its hint


def test_no_upstream_and_no_remote_says_to_name_a_range(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    done = cli(world.root, world.ws.env)
    assert done.returncode == 2
    assert "ledger review main..HEAD" in done.stderr.decode()


def test_a_shallow_clone_lacking_the_base_says_to_fetch_deeper(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    world, _ = based_world(tmp_path / "w")
    world.write("s1", "a.py", "a\n")
    commit(world)
    line = shallow_review(world.root, tmp_path, "HEAD~1..HEAD")
    assert "shallow clone" in line
    assert "fetch deeper" in line


def test_fail_on_parses_every_condition() -> None:
    assert [str(c) for c in parse_fail_on("unverified, tamper,out-of-scope,hook-error")] == [
        "unverified",
        "tamper",
        "out-of-scope",
        "hook-error",
    ]
    assert [str(c) for c in parse_fail_on("unknown>10%,agent>80.5%")] == [
        "unknown>10%",
        "agent>80.5%",
    ]
    for bad in ("agent>101%", "agent>", "human>5%", "agent<5%"):
        with pytest.raises(ValueError, match="unknown --fail-on condition"):
            parse_fail_on(bad)


def test_shares_gate_on_their_threshold(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "a.py", "1\n2\n3\n")
    (world.root / "README").write_text("hello\nperson\n", encoding="utf-8")
    commit(world)
    review = build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env)
    assert review_failures(review, parse_fail_on("agent>75%")) == []
    assert review_failures(review, parse_fail_on("agent>74%,unknown>0%")) == [
        "agent>74% (agent 75%)"
    ]


@pytest.mark.parametrize("by", GROUPINGS)
def test_history_groups_add_up_to_the_totals(tmp_path: Path, by: str) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "a.py", "1\n2\n")
    world.write("s2", "b.py", "3\n")
    (world.root / "README").write_text("hello\nperson\n", encoding="utf-8")
    commit(world)
    data = review_json(world.root, world.ws.env, "HEAD~1..HEAD", "--by", by)
    groups = data["history"]["groups"]
    for status in ("agent", "git", "unknown"):
        assert sum(g[status] for g in groups) == data["totals"][status]
    keys = {g["key"] for g in groups}
    if by == "intent":
        assert keys == {"INT-001", "(git)"}
    elif by == "author":
        assert keys == {"Ann"}
    elif by == "week":
        assert all(re.fullmatch(r"\d{4}-W\d{2}", k) for k in keys)


def _big_review(tmp_path: Path) -> dict[str, Any]:
    world, _ = based_world(tmp_path)
    world.write("s1", "a.py", "1\n2\n")
    commit(world)
    review = build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env)
    [file] = review["files"]
    runs = [dict(file["runs"][0], start=n, end=n, lines=1) for n in range(1, 40, 2)]
    review["files"] = [
        dict(file, path=f"src/module_{n:05d}/file|{n}.py", runs=runs) for n in range(3000)
    ]
    review["intents"][0]["acceptance_criteria"] = ["x" * 300]
    return review


def test_markdown_stays_under_the_comment_limit_and_never_cuts_a_table(tmp_path: Path) -> None:
    text = render_review_markdown(_big_review(tmp_path))
    assert len(text) < COMMENT_LIMIT
    assert text.startswith("### ledger review")
    assert "left out" in text
    assert text.count("<details>") == text.count("</details>")
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line.startswith("|---"):
            width = lines[at - 1].count(" | ")
            rows = []
            for row in lines[at + 1 :]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            assert rows, "a table with no row"
            for row in rows:
                assert row.endswith(" |")
                assert len(re.findall(r"(?<!\\) \| ", row)) == width, row
    # a summary table comes first
    assert lines.index(next(line for line in lines if line.startswith("| lines"))) < 6


def test_markdown_of_a_small_range_has_every_section(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "a.py", "1\n2\n")
    commit(world)
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD", "--markdown")
    assert done.returncode == 0
    text = done.stdout.decode()
    for title in ("Files (1)", "Agent lines (1)", "Evidence (1)"):
        assert f"<summary>{title}</summary>" in text
    assert "left out" not in text


def test_sarif_is_2_1_0_with_one_rule_per_kind(tmp_path: Path) -> None:
    world, _ = based_world(tmp_path)
    world.write("s1", "a.py", "1\n")
    commit(world)
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD", "--sarif")
    assert done.returncode == 0
    sarif = json.loads(done.stdout)
    assert sarif["version"] == "2.1.0"
    [run] = sarif["runs"]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {
        "ledger/out-of-scope",
        "ledger/unverified",
        "ledger/unknown",
    }
    assert run["results"] == []


def test_review_outside_a_git_repository_is_one_line(tmp_path: Path) -> None:
    world = World(tmp_path)
    shutil.rmtree(world.root / ".git")
    done = cli(world.root, world.ws.env, "HEAD~1..HEAD")
    assert done.returncode == 2
    assert "not in a git repository" in done.stderr.decode()
