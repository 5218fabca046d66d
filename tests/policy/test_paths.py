"""Path normalization and scope checks: escapes, symlinks, the ledger directory, glob caching."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ledger._errors import ConfigError, InputError, PolicyError
from ledger._governance.analysis.paths import ScopeSpec, check_write_scope, normalize_path

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with the ledger directory, some sources, and a directory outside it."""
    root = tmp_path / "ws"
    (root / ".orchestration").mkdir(parents=True)
    (root / ".orchestration" / "agent_trace.jsonl").write_text("")
    (root / "src" / "auth").mkdir(parents=True)
    (root / "src" / "auth" / "login.py").write_text("")
    (root / "src" / "billing").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("")
    (tmp_path / "ws-other").mkdir()
    return root


# --- normalize_path ---------------------------------------------------------------------------


def test_relative_path_inside(ws: Path) -> None:
    norm = normalize_path("src/auth/login.py", root=str(ws))
    assert norm.relative == "src/auth/login.py"
    assert norm.absolute == str(ws.resolve() / "src/auth/login.py")
    assert norm.inside_workspace
    assert not norm.in_orchestration


def test_new_file_inside(ws: Path) -> None:
    norm = normalize_path("src/new/deep/file.py", root=str(ws))
    assert norm.relative == "src/new/deep/file.py"
    assert norm.inside_workspace


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "src/../../outside/secret.txt", "./../ws-other/x", "..", "../ws"],
)
def test_dotdot_escapes_are_outside(ws: Path, path: str) -> None:
    norm = normalize_path(path, root=str(ws))
    if path == "../ws":
        assert norm.relative == "."  # back into the root itself
        return
    assert norm.relative is None
    assert not norm.inside_workspace
    assert not norm.in_orchestration


def test_dotdot_that_stays_inside(ws: Path) -> None:
    assert normalize_path("src/auth/../billing/x.py", root=str(ws)).relative == "src/billing/x.py"


def test_absolute_inside_and_outside(ws: Path, tmp_path: Path) -> None:
    inside = normalize_path(str(ws / "src" / "a.py"), root=str(ws))
    assert inside.relative == "src/a.py"
    outside = normalize_path(str(tmp_path / "outside" / "secret.txt"), root=str(ws))
    assert outside.relative is None
    assert outside.absolute == str((tmp_path / "outside" / "secret.txt").resolve())
    assert normalize_path("/etc/passwd", root=str(ws)).relative is None


def test_sibling_with_common_prefix_is_outside(ws: Path, tmp_path: Path) -> None:
    # "/x/ws-other" starts with the string "/x/ws" but is not under it.
    norm = normalize_path(str(tmp_path / "ws-other" / "x"), root=str(ws))
    assert norm.relative is None


def test_root_itself(ws: Path) -> None:
    for path in (".", str(ws), "./", "src/.."):
        norm = normalize_path(path, root=str(ws))
        assert norm.relative == "."
        assert norm.inside_workspace


def test_symlink_file_pointing_outside_is_outside(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "innocent.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    norm = normalize_path("src/innocent.txt", root=str(ws))
    assert norm.relative is None
    assert norm.absolute == str((tmp_path / "outside" / "secret.txt").resolve())


def test_dangling_symlink_pointing_outside_is_outside(ws: Path, tmp_path: Path) -> None:
    # Writing through a dangling link creates its target.
    (ws / "src" / "dangling").symlink_to(tmp_path / "outside" / "not-yet.txt")
    assert normalize_path("src/dangling", root=str(ws)).relative is None


def test_symlinked_directory_is_followed_for_new_files(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "vendor").symlink_to(tmp_path / "outside", target_is_directory=True)
    norm = normalize_path("src/vendor/does/not/exist.py", root=str(ws))
    assert norm.relative is None
    assert norm.absolute == str((tmp_path / "outside" / "does/not/exist.py").resolve())


def test_symlinked_directory_inside_resolves_to_real_path(ws: Path) -> None:
    (ws / "lib").symlink_to(ws / "src" / "auth", target_is_directory=True)
    assert normalize_path("lib/new.py", root=str(ws)).relative == "src/auth/new.py"


def test_symlink_into_orchestration_is_caught(ws: Path) -> None:
    (ws / "notes").symlink_to(ws / ".orchestration", target_is_directory=True)
    norm = normalize_path("notes/agent_trace.jsonl", root=str(ws))
    assert norm.relative == ".orchestration/agent_trace.jsonl"
    assert norm.in_orchestration


def test_symlinked_root_is_resolved(ws: Path, tmp_path: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(ws, target_is_directory=True)
    norm = normalize_path(str(link / "src" / "x.py"), root=str(link))
    assert norm.relative == "src/x.py"
    # ... and a path through the real root is the same workspace.
    assert normalize_path(str(ws / "src" / "x.py"), root=str(link)).relative == "src/x.py"


def test_symlink_loop_does_not_crash(ws: Path) -> None:
    (ws / "loop").symlink_to(ws / "loop")
    norm = normalize_path("loop/x", root=str(ws))
    assert isinstance(norm.inside_workspace, bool)


@pytest.mark.parametrize(
    "path",
    [
        ".orchestration",
        ".orchestration/",
        ".orchestration/agent_trace.jsonl",
        "./.orchestration/../.orchestration/x",
        "src/../.orchestration/keys/private.pem",
        "src/auth/../../.orchestration/active_intents.yaml",
        ".ORCHESTRATION/agent_trace.jsonl",  # same directory on case-insensitive filesystems
    ],
)
def test_orchestration_paths(ws: Path, path: str) -> None:
    norm = normalize_path(path, root=str(ws))
    assert norm.inside_workspace
    assert norm.in_orchestration


def test_orchestration_absolute(ws: Path) -> None:
    norm = normalize_path(str(ws / ".orchestration" / "agent_trace.jsonl"), root=str(ws))
    assert norm.in_orchestration


@pytest.mark.parametrize("path", [".orchestration-old/x", "src/.orchestration/x", "orchestration"])
def test_not_orchestration(ws: Path, path: str) -> None:
    assert not normalize_path(path, root=str(ws)).in_orchestration


def test_cwd_relative_and_absolute(ws: Path) -> None:
    assert normalize_path("login.py", root=str(ws), cwd="src/auth").relative == "src/auth/login.py"
    assert normalize_path("../x", root=str(ws), cwd=str(ws / "src")).relative == "x"
    assert normalize_path("../../..", root=str(ws), cwd="src/auth").relative is None


def test_tilde_is_expanded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(ws / "src"))
    assert normalize_path("~/auth/x.py", root=str(ws)).relative == "src/auth/x.py"
    monkeypatch.setenv("HOME", "/nonexistent-home")
    assert normalize_path("~/x", root=str(ws)).relative is None


def test_tilde_means_the_callers_home_not_this_processs(ws: Path) -> None:
    # An embedding that passes its own environment: `~` is its $HOME, as the agent's shell's.
    assert normalize_path("~/auth/x.py", root=str(ws), home=str(ws / "src")).relative == (
        "src/auth/x.py"
    )
    assert normalize_path("~", root=str(ws), home=str(ws)).relative == "."


def test_case_sensitive_workspace(ws: Path) -> None:
    norm = normalize_path("SRC/Auth/x.py", root=str(ws))
    assert norm.relative == "SRC/Auth/x.py"


@pytest.mark.parametrize("bad", ["", "a\x00b", "\x00"])
def test_bad_paths_raise_input_error(ws: Path, bad: str) -> None:
    with pytest.raises(InputError):
        normalize_path(bad, root=str(ws))
    with pytest.raises(InputError):
        normalize_path("x", root=str(ws), cwd=bad)
    with pytest.raises(InputError):
        check_write_scope([bad], root=str(ws), scope=ScopeSpec.compile(["*"]))


def test_empty_root_raises(ws: Path) -> None:
    with pytest.raises(InputError):
        normalize_path("x", root="")


# --- ScopeSpec ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("globs", "path", "expected"),
    [
        (["src/auth/"], "src/auth/login.py", True),
        (["src/auth/"], "src/auth/deep/x/y.py", True),
        (["src/auth/"], "src/auth/", True),
        (["src/auth/"], "src/auth", False),  # a file named auth is not the directory
        (["src/auth/"], "src/authz/x.py", False),
        (["src/auth/"], "src/billing/x.py", False),
        (["src/**/*.ts"], "src/a/b/c.ts", True),
        (["src/**/*.ts"], "src/c.ts", True),
        (["src/**/*.ts"], "lib/c.ts", False),
        (["*.md"], "docs/deep/readme.md", True),  # no slash: any depth
        (["/top.md"], "docs/top.md", False),  # leading slash: anchored
        (["/top.md"], "top.md", True),
        (["src/", "!src/generated/"], "src/generated/x.py", False),
        (["src/", "!src/generated/"], "src/x.py", True),
        (["docs/**"], "docs/", True),
        ([], "anything", False),
        (["# comment", ""], "comment", False),
    ],
)
def test_scope_matches(globs: list[str], path: str, expected: bool) -> None:
    spec = ScopeSpec.compile(globs)
    assert spec.matches(path) is expected
    assert ScopeSpec.from_cache(spec.to_cache()).matches(path) is expected


def test_scope_leading_dot_slash_is_ignored() -> None:
    spec = ScopeSpec.compile(["src/"])
    assert spec.matches("./src/x.py")
    assert spec.matches("/src/x.py")


def test_scope_cache_is_json_and_round_trips() -> None:
    spec = ScopeSpec.compile(["src/auth/", "!src/auth/vendor/", "tests/**/test_*.py"])
    cache = json.loads(json.dumps(spec.to_cache()))
    rebuilt = ScopeSpec.from_cache(cache)
    assert rebuilt == spec
    assert hash(rebuilt) == hash(spec)
    assert rebuilt.globs is None
    assert spec.globs == ("src/auth/", "!src/auth/vendor/", "tests/**/test_*.py")
    assert cache[0].startswith("ledger-scope-cache/1 ")
    assert [entry[0] for entry in cache[1:]] == ["+", "-", "+"]


@pytest.mark.parametrize(
    "bad",
    [
        [],
        ["not-a-header"],
        [42],
        ["ledger-scope-cache/0 ps_d last-direct"],
        ["ledger-scope-cache/1 ps_d"],
        ["ledger-scope-cache/1 ps_d sideways"],
        ["ledger-scope-cache/1 ps_d last-direct", "x^abc"],
        ["ledger-scope-cache/1 ps_d last-direct", "+"],
        ["ledger-scope-cache/1 ps_d last-direct", "+("],
        ["ledger-scope-cache/1 ps_d last-direct", 7],
    ],
)
def test_scope_cache_rejects_malformed(bad: list[object]) -> None:
    with pytest.raises(ConfigError):
        ScopeSpec.from_cache(bad)


def test_scope_invalid_glob_raises_policy_error() -> None:
    with pytest.raises(PolicyError, match="invalid scope glob"):
        ScopeSpec.compile(["!"])
    with pytest.raises(PolicyError):
        ScopeSpec.compile("src/")  # a bare string is not a list of globs


def test_from_cache_does_not_import_pathspec() -> None:
    cache = ScopeSpec.compile(["src/auth/", "*.md"]).to_cache()
    code = (
        "import json, sys\n"
        "from ledger._governance.analysis.paths import ScopeSpec\n"
        f"spec = ScopeSpec.from_cache(json.loads({json.dumps(json.dumps(cache))}))\n"
        "assert spec.matches('src/auth/x.py') and spec.matches('a/b.md')\n"
        "assert not spec.matches('src/x.py')\n"
        "assert 'pathspec' not in sys.modules, 'pathspec was imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


# Globs and paths built from pieces that exercise every wildmatch feature: *, **, ?, classes,
# anchoring, trailing slashes, negation, dotfiles.
_GLOB_PIECES = ["src", "auth", "a", "b.py", "*.py", "*", "**", "x?", "[ab]", "[!a]*", ".hidden",
                "c.ts", "a*b", "\\*"]  # fmt: skip
_PATH_PIECES = ["src", "auth", "a", "b", "b.py", "c.ts", "x1", "xa", ".hidden", "ab", "aXb", "*"]

globs_st = st.lists(
    st.builds(
        lambda neg, lead, parts, trail: ("!" if neg else "") + ("/" if lead else "")
        + "/".join(parts) + ("/" if trail else ""),
        st.booleans(), st.booleans(),
        st.lists(st.sampled_from(_GLOB_PIECES), min_size=1, max_size=4), st.booleans(),
    ),
    max_size=5,
)  # fmt: skip
paths_st = st.builds(
    lambda parts, trail: "/".join(parts) + ("/" if trail else ""),
    st.lists(st.sampled_from(_PATH_PIECES), min_size=1, max_size=5),
    st.booleans(),
)


# A small alphabet makes patterns collide often, which is where precedence rules matter.
small_globs_st = st.lists(
    st.builds(
        lambda neg, parts, trail: ("!" if neg else "") + "/".join(parts) + ("/" if trail else ""),
        st.booleans(), st.lists(st.sampled_from(["a", "b", "*", "**"]), min_size=1, max_size=3),
        st.booleans(),
    ),
    max_size=4,
)  # fmt: skip
small_paths_st = st.builds(
    lambda parts, trail: "/".join(parts) + ("/" if trail else ""),
    st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=4),
    st.booleans(),
)


def test_precedence_edge_case_matches_pathspec() -> None:
    # A negated file listed before an including directory: pathspec 0.12 and 1.x disagree
    # here, and the cache must follow whichever is installed.
    globs = ["!src/x.py", "src/"]
    expected = pathspec.GitIgnoreSpec.from_lines(globs).match_file("src/x.py")
    spec = ScopeSpec.compile(globs)
    assert spec.matches("src/x.py") is expected
    assert ScopeSpec.from_cache(spec.to_cache()).matches("src/x.py") is expected


def test_forward_mode_follows_pathspec_0_12() -> None:
    # pathspec 0.12's GitIgnoreSpec._match_file: an including directory match always wins.
    cache = ScopeSpec.compile(["!src/x.py", "src/"]).to_cache()
    header = cache[0].rsplit(" ", 1)[0]
    forward = ScopeSpec.from_cache([header + " forward", *cache[1:]])
    assert forward.matches("src/x.py")
    assert forward != ScopeSpec.from_cache([header + " last-direct", *cache[1:]])
    assert forward.matches("src/y.txt")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.tuples(globs_st, st.lists(paths_st, min_size=1, max_size=20))
    | st.tuples(small_globs_st, st.lists(small_paths_st, min_size=1, max_size=20))
)
def test_cached_spec_agrees_with_pathspec(case: tuple[list[str], list[str]]) -> None:
    globs, paths = case
    try:
        reference = pathspec.GitIgnoreSpec.from_lines(globs)
    except ValueError:
        with pytest.raises(PolicyError):
            ScopeSpec.compile(globs)
        assume(False)
    spec = ScopeSpec.compile(globs)
    cached = ScopeSpec.from_cache(json.loads(json.dumps(spec.to_cache())))
    for path in paths:
        expected = reference.match_file(path)
        assert spec.matches(path) is expected, (globs, path)
        assert cached.matches(path) is expected, (globs, path)


# --- check_write_scope --------------------------------------------------------------------------


def test_check_write_scope_verdicts(ws: Path, tmp_path: Path) -> None:
    scope = ScopeSpec.compile(["src/auth/"])
    check = check_write_scope(
        [
            "src/auth/login.py",
            "src/billing/invoice.py",
            ".orchestration/agent_trace.jsonl",
            "./.orchestration/../.orchestration/x",
            "../outside/secret.txt",
            str(tmp_path / "outside" / "secret.txt"),
            str(ws / "src" / "auth" / "new.py"),
            "src/auth/../billing/x.py",
        ],
        root=str(ws),
        scope=scope,
    )
    assert [v.verdict for v in check.verdicts] == [
        "ok",
        "out_of_scope",
        "orchestration",
        "orchestration",
        "outside_workspace",
        "outside_workspace",
        "ok",
        "out_of_scope",
    ]
    assert [v.relative for v in check.verdicts][:3] == [
        "src/auth/login.py",
        "src/billing/invoice.py",
        ".orchestration/agent_trace.jsonl",
    ]
    assert not check.ok
    assert [v.path for v in check.denied] == [
        "src/billing/invoice.py",
        ".orchestration/agent_trace.jsonl",
        "./.orchestration/../.orchestration/x",
        "../outside/secret.txt",
        str(tmp_path / "outside" / "secret.txt"),
        "src/auth/../billing/x.py",
    ]


def test_orchestration_beats_scope(ws: Path) -> None:
    # Even a scope that covers everything never opens the ledger directory.
    check = check_write_scope(
        [".orchestration/agent_trace.jsonl"], root=str(ws), scope=ScopeSpec.compile(["*", "**"])
    )
    assert check.verdicts[0].verdict == "orchestration"


def test_workspace_root_counts_as_orchestration(ws: Path) -> None:
    # rm -rf . (or mv . elsewhere) takes .orchestration/ with it.
    check = check_write_scope([".", str(ws)], root=str(ws), scope=ScopeSpec.compile(["**"]))
    assert [v.verdict for v in check.verdicts] == ["orchestration", "orchestration"]


def test_directory_targets(ws: Path) -> None:
    scope = ScopeSpec.compile(["src/auth/"])
    check = check_write_scope(["src/auth", "src", "src/auth/"], root=str(ws), scope=scope)
    assert [v.verdict for v in check.verdicts] == ["ok", "out_of_scope", "ok"]
    star_scope = ScopeSpec.compile(["src/auth/**"])
    assert check_write_scope(["src/auth"], root=str(ws), scope=star_scope).ok


def test_symlink_escape_in_scope_check(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "auth" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    check = check_write_scope(
        ["src/auth/link/secret.txt"], root=str(ws), scope=ScopeSpec.compile(["src/auth/"])
    )
    assert check.verdicts[0].verdict == "outside_workspace"


def test_cwd_in_scope_check(ws: Path) -> None:
    check = check_write_scope(
        ["login.py", "../billing/x.py"],
        root=str(ws),
        cwd="src/auth",
        scope=ScopeSpec.compile(["src/auth/"]),
    )
    assert [v.verdict for v in check.verdicts] == ["ok", "out_of_scope"]


def test_empty_check_is_ok(ws: Path) -> None:
    check = check_write_scope([], root=str(ws), scope=ScopeSpec.compile([]))
    assert check.ok
    assert check.denied == ()
