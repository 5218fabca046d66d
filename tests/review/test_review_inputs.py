"""``ledger review`` where the repository is not the workspace, and on the inputs a range can
hold: each odd case is one line or one note, an exit code, and never a traceback."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from ledger._review import build_review, render_review_markdown, render_review_sarif
from tests.blame._world import World, git
from tests.review._support import cli, commit, shallow_review


def _nested(tmp_path: Path) -> tuple[World, Path]:
    """A workspace in ``pkg/ws`` of a repository whose top is ``tmp_path/repo``."""
    top = tmp_path / "repo"
    (top / "pkg").mkdir(parents=True)
    world = World(top / "pkg")
    shutil.rmtree(world.root / ".git")
    git(top, "init", "-q", "-b", "main")
    (top / ".gitignore").write_text("pkg/home/\n", encoding="utf-8")  # the key's home
    (top / "TOP.md").write_text("top\n", encoding="utf-8")
    commit(top, "base")
    return world, top


def test_paths_are_the_repositorys_when_the_workspace_is_a_subfolder(tmp_path: Path) -> None:
    world, top = _nested(tmp_path)
    world.write("s1", "src/app.py", "one\ntwo\n")
    (top / "TOP.md").write_text("top\nchanged outside the workspace\n", encoding="utf-8")
    commit(top)
    trace = world.ws.orchestration / "agent_trace.jsonl"
    trace.write_bytes(trace.read_bytes().replace(b'"session":"s1"', b'"session":"s9"', 1))

    review = build_review("HEAD~1..HEAD", root=world.root, environ=world.ws.env)
    assert review["range"]["prefix"] == "pkg/ws/"
    [file] = review["files"]
    assert file["path"] == "pkg/ws/src/app.py"
    assert (file["lines"]["unverified"], review["totals"]["unverified"]) == (2, 2)
    assert any("1 changed file(s) outside the workspace pkg/ws/" in n for n in review["notes"])

    [result] = render_review_sarif(review)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/ws/src/app.py", "uriBaseId": "%SRCROOT%"}
    assert (top / location["artifactLocation"]["uri"]).is_file()  # resolves from the top
    assert "`pkg/ws/src/app.py`" in render_review_markdown(review)
    text = cli(world.root, world.ws.env, "HEAD~1..HEAD").stdout.decode()
    assert "pkg/ws/src/app.py" in text


def test_scope_is_read_in_the_workspace_when_it_is_a_subfolder(tmp_path: Path) -> None:
    world, top = _nested(tmp_path)
    world.write("s1", "docs/a.md", "a\n")  # INT-001 owns "**" of the workspace
    commit(top)
    data = json.loads(cli(world.root, world.ws.env, "HEAD~1..HEAD", "--json").stdout)
    [intent] = data["intents"]
    assert (intent["in_scope"], intent["out_of_scope"]) == (1, 0)
    [file] = data["files"]
    assert file["path"] == "pkg/ws/docs/a.md"
    assert data["totals"]["agent"] == 1


def test_a_renamed_and_edited_file_reviews_only_its_changed_lines(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.write("s1", "old.py", "a = 1\nb = 2\nc = 3\n")
    commit(world, "base")
    git(world.root, "mv", "old.py", "new.py")
    world.edit("s1", "new.py", "b = 2\n", "b = 20\n")
    commit(world, "rename and edit")
    data = json.loads(cli(world.root, world.ws.env, "HEAD~1..HEAD", "--json").stdout)
    [file] = data["files"]
    assert (file["path"], file["old_path"], file["change"]) == ("new.py", "old.py", "renamed")
    assert (file["added"], file["removed"]) == (1, 1)
    [run] = file["runs"]
    assert (run["start"], run["end"], run["status"], run["tool"]) == (2, 2, "agent", "Edit")


def test_every_odd_change_reads_in_the_terminal_without_a_traceback(tmp_path: Path) -> None:
    world = World(tmp_path)
    (world.root / "gone.txt").write_text("a\nb\n", encoding="utf-8")
    (world.root / "target.txt").write_text("t\n", encoding="utf-8")
    base = commit(world, "base")
    (world.root / "gone.txt").unlink()
    (world.root / "blob.bin").write_bytes(b"\0\1\2\3")
    (world.root / "link").symlink_to("target.txt")
    git(world.root, "add", "-A")
    git(world.root, "update-index", "--add", "--cacheinfo", f"160000,{base},vendor/sub")
    git(world.root, "commit", "-qm", "odd")
    for args in ([], ["--markdown"], ["--sarif"], ["--fail-on", "unverified,unknown>0%"]):
        done = cli(world.root, world.ws.env, "HEAD~1..HEAD", *args)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr.decode()
        [line] = done.stderr.decode().splitlines()
        assert (
            line == "ledger review: no agent lines in HEAD~1..HEAD: nothing agents wrote to review"
        )
    text = cli(world.root, world.ws.env, "HEAD~1..HEAD").stdout.decode()
    for note in (
        "deleted (2 lines removed)",
        "binary file: no lines to review",
        "symbolic link: no lines to review",
        "submodule: its commit changed",
    ):
        assert note in text


def test_a_shallow_clone_lacking_the_merge_base_says_to_fetch_deeper(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    world = World(tmp_path / "w")
    (world.root / "README").write_text("r\n", encoding="utf-8")
    commit(world, "base")
    git(world.root, "checkout", "-q", "-b", "feature")
    world.write("s1", "a.py", "a\n")
    commit(world, "feature")
    git(world.root, "checkout", "-q", "main")
    (world.root / "README").write_text("r\nmain moved on\n", encoding="utf-8")
    commit(world, "main")
    line = shallow_review(
        world.root, tmp_path, "origin/main...origin/feature", "--no-single-branch"
    )
    assert "lacks the merge base" in line
    assert "fetch deeper" in line


def test_a_clone_without_a_ledger_is_told_to_init(tmp_path: Path) -> None:
    world = World(tmp_path)
    (world.root / "README").write_text("r\n", encoding="utf-8")
    commit(world, "base")
    shutil.rmtree(world.ws.orchestration)
    done = cli(world.root, world.ws.env, "HEAD..HEAD")
    assert done.returncode == 2
    assert "ledger init" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()


def _set_scope(world: World, intent: str, scope: str) -> str:
    """Give ``intent`` the owned_scope ``scope``; the new file's SHA-256."""
    intents = world.ws.orchestration / "active_intents.yaml"
    text = intents.read_text(encoding="utf-8")
    head, _, rest = text.partition(f"id: {intent}\n")
    before, _, after = rest.partition("owned_scope: ")
    after = after.split("\n", 1)[1]
    intents.write_text(f"{head}id: {intent}\n{before}owned_scope: {scope}\n{after}", "utf-8")
    return hashlib.sha256(intents.read_bytes()).hexdigest()


def test_scope_is_judged_against_the_intents_file_as_the_line_was_written(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    intents = ".orchestration/active_intents.yaml"
    (world.root / "README").write_text("r\n", encoding="utf-8")
    first = _set_scope(world, "INT-001", '["lib/**", "src/**", "docs/**"]')
    git(world.root, "add", "-f", intents)  # a team commits its intents
    base = commit(world, "base")
    world.write("s1", "lib/a.py", "a = 1\n")  # inside lib/** in the committed file
    # narrowed twice (narrowing needs no person): the middle version is never committed
    never_committed = _set_scope(world, "INT-001", '["src/**", "docs/**"]')
    world.write("s1", "src/b.py", "b = 1\n")  # inside src/**, in a file git never saw
    today = _set_scope(world, "INT-001", '["docs/**"]')
    git(world.root, "add", "-f", intents)
    commit(world, "work; INT-001 narrowed to docs")

    data = json.loads(cli(world.root, world.ws.env, f"{base}..HEAD", "--json").stdout)
    runs = {f["path"]: f["runs"][0] for f in data["files"] if f["runs"]}
    # lib/a.py was inside lib/** when it was written, though today's file says docs/** only
    assert runs["lib/a.py"]["in_scope"] is True
    # src/b.py's file is found nowhere: judged, and named, against today's file (docs/**)
    assert runs["src/b.py"]["in_scope"] is False
    [intent] = [i for i in data["intents"] if i["id"] == "INT-001"]
    assert (intent["in_scope"], intent["out_of_scope"]) == (1, 1)
    assert intent["owned_scope"] == ["docs/**"]  # today's, as declared now
    scopes = {s["intents_sha256"]: s for s in intent["scopes"]}
    assert set(scopes) == {first, never_committed}
    assert scopes[first]["source"] == f"git {base[:12]}:{intents}"
    assert scopes[first]["owned_scope"] == ["lib/**", "src/**", "docs/**"]
    assert scopes[first]["lines"] == 1
    assert scopes[never_committed]["source"] is None
    assert scopes[never_committed]["owned_scope"] == ["docs/**"]
    [note] = [n for n in data["notes"] if "intents file" in n]
    assert never_committed[:12] in note
    assert today[:12] in note
    assert "found neither in this checkout nor in git history" in note
    text = cli(world.root, world.ws.env, f"{base}..HEAD").stdout.decode()
    assert f"git {base[:12]}:{intents}" in text
    assert never_committed[:12] in text
