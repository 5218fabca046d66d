"""An attribution fuzzer in git-ai's manner: zero wrong attributions.

Every generated line is unique, so a line's text is its identity. An independent model (a dict
``text -> who created it``, kept by this test, not by the code under test) knows who wrote each
line. Operations run through the real hook path (pre and post, in process) and the real disk
and git: agent Write create/update, Edit, MultiEdit-style multi-region Write, shell ``sed -i``
and ``>``, ``mv``, ``git mv``, ``cp``, ``cat a b > c``, a move and an edit in one command,
human edits on disk, commits, ``git checkout`` of an older version, and denied
writes (whose lines a human then types).

Rules checked on every line of every file after every few operations:

* ``agent`` must name the session that really wrote the line (a shell command counts as its
  session, and its lines say tool ``Bash`` and the command; no other line does); a line a
  human wrote or a denied write attempted is never ``agent``;
* ``git`` is only claimed for a line that is unchanged since the commit (its text is in HEAD's
  version of the file, or of the file git says it was renamed from);
* ``unknown`` is a gap: allowed, counted.

A failure prints the seed and the operation log (replay: ``BLAME_FUZZ_SEED=<seed>``).
"""

from __future__ import annotations

import os
import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.blame._world import World, git

SEEDS = [int(s) for s in os.environ.get("BLAME_FUZZ_SEED", "").split(",") if s] or [1, 2, 3]
OPS = int(os.environ.get("BLAME_FUZZ_OPS", "28"))
FILES = ("src/a.py", "src/b.py", "c.txt")


class Fuzz:
    def __init__(self, tmp_path: Path, seed: int, *, git_ops: bool = False) -> None:
        self.rng = random.Random(seed)  # noqa: S311 -- replayable by seed, not a secret
        self.git_ops = git_ops  # tier 2: a person's commits, rebases, stashes, resets too
        self.world = World(tmp_path)
        self.creator: dict[str, str] = {}
        self.by_shell: set[str] = set()  # lines a shell command wrote
        self.counter = 0
        self.log: list[str] = []
        self.gaps: Counter[str] = Counter()
        self.checked = 0
        # Gap figures on the lines an agent wrote (decision 0009): all of them, those whose text the
        # file's line model holds ("known"), and those in a file that arrived by a move or copy.
        self.figures: Counter[str] = Counter()
        self.moved: set[str] = set()
        # Per file, the lines that came back outside every governed call (a `git checkout` of
        # an older version restores lines the records had dropped): not "known" to the model.
        self.outside: dict[str, set[str]] = {}

    # --- lines ------------------------------------------------------------------------------

    def fresh(self, who: str, n: int) -> list[str]:
        """``n`` new lines by ``who`` (``agent:SESSION``, with ``:Bash`` when a shell command
        of that session writes them, or ``human``)."""
        out = []
        for _ in range(n):
            self.counter += 1
            text = f"line {self.counter} {self.rng.randrange(10**6)}"
            self.creator[text] = who.removesuffix(":Bash")
            if who.endswith(":Bash"):
                self.by_shell.add(text)
            out.append(text)
        return out

    def lines(self, relative: str) -> list[str]:
        text = self.world.text(relative)
        return [] if text is None else text.splitlines()

    def mutate(self, old: list[str], who: str) -> list[str]:
        """Insert, replace and delete without reordering (moves are out of scope)."""
        new = list(old)
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(["insert", "replace", "delete"] if new else ["insert"])
            at = self.rng.randrange(len(new) + (1 if kind == "insert" else 0))
            if kind == "insert":
                new[at:at] = self.fresh(who, self.rng.randint(1, 3))
            elif kind == "replace":
                new[at : at + self.rng.randint(1, 2)] = self.fresh(who, self.rng.randint(1, 2))
            else:
                del new[at : at + self.rng.randint(1, 2)]
        return new

    @staticmethod
    def join(lines: list[str]) -> str:
        return "".join(f"{x}\n" for x in lines)

    # --- operations ---------------------------------------------------------------------------

    def op_write(self, session: str, relative: str) -> None:
        old = self.lines(relative)
        new = self.mutate(old, f"agent:{session}") if old else self.fresh(f"agent:{session}", 4)
        self.world.write(session, relative, self.join(new))

    def op_edit(self, session: str, relative: str) -> None:
        old = self.lines(relative)
        if not old:
            return self.op_write(session, relative)
        at = self.rng.randrange(len(old))
        span = old[at : at + self.rng.randint(1, 2)]
        replacement = self.fresh(f"agent:{session}", self.rng.randint(0, 3))
        if not replacement and len(span) == len(old):
            replacement = self.fresh(f"agent:{session}", 1)
        self.world.edit(
            session,
            relative,
            self.join(span),
            self.join(replacement),
            send_original=self.rng.random() < 0.5,
        )
        return None

    def shell(self, session: str, command: str) -> None:
        s = self.world.session(session)
        tid = s.tool_use_id()
        pre = s.pre("Bash", {"command": command}, tool_use_id=tid)
        assert pre.permission != "deny", (command, pre.decision)
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.world.root, check=True, capture_output=True, text=True
        )
        s.post(
            "Bash",
            {"command": command},
            {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False},
            tool_use_id=tid,
        )

    def op_sed(self, session: str, relative: str) -> None:
        old = self.lines(relative)
        if not old:
            return
        target = self.rng.choice(old)
        (new,) = self.fresh(f"agent:{session}:Bash", 1)
        self.shell(session, f"sed -i 's/^{target}$/{new}/' {relative}")

    def op_redirect(self, session: str, relative: str) -> None:
        lines = self.fresh(f"agent:{session}:Bash", 2)
        self.shell(
            session, f"mkdir -p src && printf '%s\\n' '{lines[0]}' '{lines[1]}' > {relative}"
        )

    def op_mv(self, session: str, relative: str) -> None:
        others = [f for f in FILES if f != relative and self.world.text(f) is None]
        if self.world.text(relative) is None or not others:
            return
        self.shell(session, f"mkdir -p src && mv {relative} {others[0]}")
        self.outside[others[0]] = self.outside.pop(relative, set())
        self.moved.discard(relative)
        self.moved.add(others[0])

    def op_cp(self, session: str, relative: str) -> None:
        others = [f for f in FILES if f != relative]
        if self.world.text(relative) is None:
            return
        target = self.rng.choice(others)
        self.shell(session, f"mkdir -p src && cp {relative} {target}")
        self.moved.add(target)
        self.outside[target] = set(self.outside.get(relative, set()))

    def op_cat(self, session: str, relative: str) -> None:
        """Two files concatenated into a third: every line is copied, none is the command's."""
        sources = [f for f in FILES if f != relative and self.world.text(f) is not None]
        if len(sources) < 2:
            return
        first, second = sources
        self.shell(session, f"mkdir -p src && cat {first} {second} > {relative}")
        self.moved.add(relative)
        self.outside[relative] = self.outside.get(first, set()) | self.outside.get(second, set())

    def op_git_mv(self, session: str, relative: str) -> None:
        others = [f for f in FILES if f != relative and self.world.text(f) is None]
        if self.world.text(relative) is None or not others:
            return
        self.shell(
            session, f"mkdir -p src && git add -- {relative} && git mv {relative} {others[0]}"
        )
        self.outside[others[0]] = self.outside.pop(relative, set())
        self.moved.discard(relative)
        self.moved.add(others[0])

    def op_mv_sed(self, session: str, relative: str) -> None:
        """Move and change in one command: the file's inode changes (``sed -i`` writes anew)."""
        others = [f for f in FILES if f != relative and self.world.text(f) is None]
        old = self.lines(relative)
        if not old or not others:
            return
        target = self.rng.choice(old)
        (new,) = self.fresh(f"agent:{session}:Bash", 1)
        self.shell(
            session,
            f"mkdir -p src && mv {relative} {others[0]} "
            f"&& sed -i 's/^{target}$/{new}/' {others[0]}",
        )
        self.outside[others[0]] = self.outside.pop(relative, set())
        self.moved.discard(relative)
        self.moved.add(others[0])

    def op_human(self, relative: str) -> None:
        old = self.lines(relative)
        path = self.world.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.join(self.mutate(old, "human")), encoding="utf-8")

    def op_commit(self) -> None:
        git(self.world.root, "add", "-A")
        git(self.world.root, "commit", "-qm", f"c{self.counter}", "--allow-empty")

    def op_checkout(self, relative: str) -> None:
        try:
            history = git(self.world.root, "log", "--format=%H", "--", relative).split()
        except subprocess.CalledProcessError:  # no commit yet
            return
        if len(history) < 2:
            return
        commit = self.rng.choice(history[1:])
        before = set(self.lines(relative))
        try:
            git(self.world.root, "checkout", commit, "--", relative)
        except subprocess.CalledProcessError:
            return
        self.outside.setdefault(relative, set()).update(set(self.lines(relative)) - before)

    def op_denied(self, relative: str) -> None:
        """A session under a narrow intent tries to write: refused; a human types it in."""
        s = self.world.session("s-denied", "INT-NARROW")
        lines = self.fresh("human", 2)  # the human is who really writes them, later
        new = self.lines(relative) + lines
        tool_input = {"file_path": str(self.world.root / relative), "content": self.join(new)}
        assert s.pre("Write", tool_input).permission == "deny"
        path = self.world.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.join(new), encoding="utf-8")

    # --- tier 2: a person's git operations (decision 0009) --------------------------------

    def _git(self, *args: str) -> bool:
        try:
            git(self.world.root, *args)
        except subprocess.CalledProcessError:
            return False
        return True

    def _commits(self) -> list[str]:
        try:
            return git(self.world.root, "rev-list", "HEAD").split()
        except subprocess.CalledProcessError:  # no commit yet
            return []

    def git_amend(self) -> None:
        if self._commits():
            self._git("add", "-A")
            self._git("commit", "-q", "--amend", "--no-edit", "--allow-empty")

    def git_fixup_rebase(self) -> None:
        """Commit the work as a fixup of the commit before HEAD, and autosquash it in."""
        if len(self._commits()) < 3:
            return
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "--fixup", "HEAD~1")
        if not self._git("-c", "sequence.editor=:", "rebase", "-q", "-i", "--autosquash", "HEAD~3"):
            self._git("rebase", "--abort")

    def git_squash_merge(self) -> None:
        """The work committed on a side branch, squash-merged back."""
        if not self._commits():
            return
        self._git("checkout", "-q", "-b", "side")
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", "side")
        self._git("checkout", "-q", "main")
        self._git("merge", "-q", "--squash", "side")
        self._git("commit", "-q", "--allow-empty", "-m", "squash")
        self._git("branch", "-q", "-D", "side")

    def git_cherry_pick(self) -> None:
        """The work committed, dropped with a hard reset, and cherry-picked back."""
        if not self._commits():
            return
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", "pick")
        self._git("branch", "-f", "pick", "HEAD")
        self._git("reset", "-q", "--hard", "HEAD~1")
        if not self._git("cherry-pick", "--allow-empty", "pick"):
            self._git("cherry-pick", "--abort")
        self._git("branch", "-q", "-D", "pick")

    def git_stash(self) -> None:
        self._git("stash", "push", "-u", "-q")

    def git_stash_pop(self) -> None:
        self._git("stash", "pop", "-q")

    def git_reset(self) -> None:
        commits = self._commits()
        if commits:
            self._git("reset", "-q", "--hard", commits[1] if len(commits) > 1 else "HEAD")

    def git_checkout_tree(self) -> None:
        """Every file as an older commit had it."""
        commits = self._commits()
        if len(commits) > 1:
            self._git("checkout", "-q", self.rng.choice(commits[1:]), "--", ".")

    def git_op(self, name: str) -> None:
        """A person's git operation; lines it brings back are not known to the line model."""
        before = {f: set(self.lines(f)) for f in FILES}
        getattr(self, f"git_{name}")()
        for relative in FILES:
            now = set(self.lines(relative))
            self.outside.setdefault(relative, set()).update(now - before[relative])

    GIT_OPS = (
        "amend",
        "fixup_rebase",
        "squash_merge",
        "cherry_pick",
        "stash",
        "stash_pop",
        "reset",
        "checkout_tree",
    )

    def step(self) -> None:
        relative = self.rng.choice(FILES)
        session = self.rng.choice(["s1", "s2"])
        if self.git_ops and self.rng.random() < 0.25:
            name = self.rng.choice(self.GIT_OPS)
            self.log.append(f"git {name}")
            self.git_op(name)
            return
        name = self.rng.choices(
            [
                "write",
                "edit",
                "sed",
                "redirect",
                "mv",
                "human",
                "commit",
                "checkout",
                "denied",
                "cp",
                "git_mv",
                "mv_sed",
                "cat",
            ],
            [5, 5, 2, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1],
        )[0]
        self.log.append(f"{name} {relative} {session}")
        if name in ("write", "edit", "sed", "redirect", "mv", "cp", "git_mv", "mv_sed", "cat"):
            getattr(self, f"op_{name}")(session, relative)
        elif name in ("human", "checkout", "denied"):
            getattr(self, f"op_{name}")(relative)
        else:
            self.op_commit()

    # --- the check ----------------------------------------------------------------------------

    def head_lines(self, relative: str) -> set[str]:
        try:
            return set(git(self.world.root, "show", f"HEAD:{relative}").splitlines())
        except subprocess.CalledProcessError:
            return set()

    def check(self, seed: int) -> None:
        for relative in FILES:
            if self.world.text(relative) is None:
                self.moved.discard(relative)
                continue
            report = self.world.blame(relative)
            committed = self.head_lines(relative)
            for row in report.lines:
                truth = self.creator.get(row.text, "base")
                self.checked += 1
                if truth.startswith("agent"):
                    gap = row.status == "unknown"
                    buckets = ["agent lines"]
                    if row.text not in self.outside.get(relative, set()):
                        buckets.append("known")
                        if relative in self.moved:
                            buckets.append("moved")
                    for bucket in buckets:
                        self.figures[bucket] += 1
                        self.figures[f"{bucket} gaps"] += gap
                where = (
                    f"seed {seed}, {relative}:{row.line} {row.text!r} truth={truth} "
                    f"got={row.status} {row.facts}\nops:\n  " + "\n  ".join(self.log)
                )
                if row.status == "agent":
                    assert truth == f"agent:{row.facts['session_id']}", where
                    # a shell command's lines are that call's: tool Bash, its command
                    by_shell = row.facts["tool"] == "Bash" and bool(row.facts.get("command"))
                    assert by_shell == (row.text in self.by_shell), where
                elif row.status == "git":
                    # git follows a rename (a staged `git mv` too): the line is in HEAD's
                    # version of the file git names
                    origin = row.facts.get("orig_file") or relative
                    assert row.text in (committed | self.head_lines(origin)), where
                else:
                    assert row.facts.get("reason"), where
                    self.gaps[truth.split(":")[0]] += 1
                    if truth.startswith("agent") and os.environ.get("BLAME_FUZZ_VERBOSE"):
                        print("agent gap:", self.log[-3:], row.facts["reason"])  # noqa: T201 -- BLAME_FUZZ_VERBOSE


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_no_wrong_attribution(tmp_path: Path, seed: int) -> None:
    fuzz = Fuzz(tmp_path, seed)
    for _ in range(OPS):
        fuzz.step()
        if len(fuzz.log) % 4 == 0:
            fuzz.check(seed)
    fuzz.check(seed)
    print(f"seed {seed}: {fuzz.checked} line checks, gaps by truth {dict(fuzz.gaps)}")  # noqa: T201 -- the report


def _rate(figures: Counter[str], bucket: str) -> str:
    total, gaps = figures[bucket], figures[f"{bucket} gaps"]
    return f"{gaps}/{total} = {gaps / total if total else 0:.2%}"


GAP_SEEDS = range(1, 9)
GAP_OPS = 120


@pytest.mark.slow
def test_gaps_stay_within_the_targets(tmp_path: Path) -> None:
    """Issue 16 part 1: over seeded runs of people editing agents' files, moves, copies and
    shell edits, gaps stay within 1% of the agent lines the line model knows and within 2% of
    the agent lines in moved or copied files (0 wrong: the checks of every run)."""
    figures: Counter[str] = Counter()
    for seed in GAP_SEEDS:
        (tmp_path / str(seed)).mkdir()
        fuzz = Fuzz(tmp_path / str(seed), seed)
        for _ in range(GAP_OPS):
            fuzz.step()
            if len(fuzz.log) % 4 == 0:
                fuzz.check(seed)
        figures.update(fuzz.figures)
    report = (
        f"seeds {GAP_SEEDS.start}-{GAP_SEEDS.stop - 1} x {GAP_OPS} ops: gaps on agent lines "
        f"{_rate(figures, 'agent lines')}; on lines the model knows {_rate(figures, 'known')}; "
        f"in moved or copied files {_rate(figures, 'moved')}"
    )
    print(report)  # noqa: T201 -- the figures (pytest -s)
    assert figures["known gaps"] <= 0.01 * figures["known"], report
    assert figures["moved gaps"] <= 0.02 * figures["moved"], report
    assert figures["moved"] > 100, report  # the bucket is exercised


GIT_SEEDS = [int(s) for s in os.environ.get("BLAME_FUZZ_GIT_SEED", "").split(",") if s] or [
    101,
    102,
    103,
    104,
]


@pytest.mark.slow
@pytest.mark.parametrize("seed", GIT_SEEDS)
def test_no_wrong_attribution_through_git_operations(tmp_path: Path, seed: int) -> None:
    """Tier 2 (decision 0009): a person also amends, rebases with a fixup, squash-merges,
    cherry-picks, stashes and pops, resets hard and checks out an older tree between the
    agents' calls. Replay: ``BLAME_FUZZ_GIT_SEED=<seed>``."""
    fuzz = Fuzz(tmp_path, seed, git_ops=True)
    for _ in range(OPS * 3):
        fuzz.step()
        if len(fuzz.log) % 4 == 0:
            fuzz.check(seed)
    fuzz.check(seed)
    assert any(entry.startswith("git ") for entry in fuzz.log)
    print(  # noqa: T201 -- the report
        f"seed {seed} (git operations): {fuzz.checked} line checks; gaps on agent lines "
        f"{_rate(fuzz.figures, 'agent lines')}, on lines the model knows "
        f"{_rate(fuzz.figures, 'known')}"
    )


@pytest.mark.slow
def test_incremental_projection_equals_full_rebuild(tmp_path: Path) -> None:
    """At every split point of a fuzzed ledger: fold, dump through JSON (the cache), load,
    fold the rest; the state equals one fold of everything. Then the same through the cache."""
    import orjson  # noqa: PLC0415

    from ledger._evidence.ledger import Ledger  # noqa: PLC0415
    from ledger._evidence.read import read_records  # noqa: PLC0415
    from ledger._projections import BLAME, ProjectionCache  # noqa: PLC0415
    from ledger._projections.slices import read_slice  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, 99)
    for step in range(24):
        fuzz.step()
        if step % 4 == 0:
            fuzz.check(99)  # blame folds through the cache, incrementally
    ledger = Ledger.open(fuzz.world.root, environ=fuzz.world.ws.env)
    records = [s.data for s in read_records(ledger.file.path)]
    full = BLAME.initial()
    for record in records:
        BLAME.apply(full, record)
    expected = orjson.dumps(BLAME.dump(full), option=orjson.OPT_SORT_KEYS)
    for split in range(len(records) + 1):
        state = BLAME.initial()
        for record in records[:split]:
            BLAME.apply(state, record)
        state = BLAME.load(orjson.loads(orjson.dumps(BLAME.dump(state))))
        for record in records[split:]:
            BLAME.apply(state, record)
        assert orjson.dumps(BLAME.dump(state), option=orjson.OPT_SORT_KEYS) == expected, split
    cache = ProjectionCache(
        ledger.file.path, ledger.workspace.cache_dir, ledger.ledger_id, environ=fuzz.world.ws.env
    )
    cached = cache.state(BLAME)  # folded incrementally by every blame during the run
    assert orjson.dumps(BLAME.dump(cached), option=orjson.OPT_SORT_KEYS) == expected
    # the per-file slices, kept current incrementally too, are the full fold's slices
    for key in BLAME.slice_keys(full) | {"never/written.py"}:
        found = read_slice(
            ledger.file.path,
            ledger.workspace.cache_dir,
            name=BLAME.name,
            version=BLAME.version,
            key=key,
            environ=fuzz.world.ws.env,
        )
        assert found is not None, key
        assert found.seq == full.seq
        assert found.slice == orjson.loads(orjson.dumps(full.file_slice(key))), key


def test_compaction_keeps_answers(tmp_path: Path) -> None:
    """Thousands of rewrites of one file: unreferenced attributions are dropped, and a state
    compacted at any point answers exactly like one that never was."""
    from ledger._projections import BLAME  # noqa: PLC0415

    def post(seq: int, text: str) -> dict[str, object]:
        return {
            "seq": seq,
            "hash": f"{seq:064x}",
            "kind": "hook.post",
            "ts": "t",
            "actor": {"session": f"s{seq % 3}", "client": "claude-code", "model": None},
            "body": {
                "tool": "Write",
                "tool_use_id": f"t{seq}",
                "invocation": f"i{seq}",
                "data": {"intent_id": "INT-001"},
                "attribution": {
                    "source": "content",
                    "files": [
                        {
                            "path": "f.py",
                            "change": "modified",
                            "exact": False,
                            "previous_path": None,
                            "sha256": None,
                            "old_sha256": None,
                            "lines": 1,
                            "mutation_class": None,
                            "hunks": [
                                {
                                    "old_start": None,
                                    "old_lines": None,
                                    "new_start": 1,
                                    "new_lines": 1,
                                    "content_hash": None,
                                    "line_hashes": [f"{seq:012x}"],
                                }
                            ],
                        }
                    ],
                },
            },
        }

    state = BLAME.initial()
    for seq in range(5000):
        BLAME.apply(state, post(seq, str(seq)))
    assert len(state.refs) < 1100  # not 10,000: memory follows the live lines
    (ref,) = state.files["f.py"]["refs"]
    attribution = state.ref(ref)
    assert attribution is not None
    assert attribution["seq"] == 4999
    assert attribution["session_id"] == "s1"


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "later"), [(5, 2), (5, 6), (23, 2), (31, 1), (47, 2), (17, 6)])
def test_slices_answering_past_later_records_equal_the_full_fold(
    tmp_path: Path, seed: int, later: int
) -> None:
    """Slices written at one point, then more fuzzed calls that no blame folds: where a slice
    still answers (the later records leave its file alone), it is the full fold's slice of the
    whole ledger; where they touch the file, it does not answer."""
    import orjson  # noqa: PLC0415

    from ledger._evidence.ledger import Ledger  # noqa: PLC0415
    from ledger._evidence.read import read_records  # noqa: PLC0415
    from ledger._projections import BLAME  # noqa: PLC0415
    from ledger._projections.slices import read_slice  # noqa: PLC0415

    fuzz = Fuzz(tmp_path, seed)
    for _ in range(10):
        fuzz.step()
    fuzz.check(seed)  # blame through the cache: the slices describe the ledger as of now
    for _ in range(later):
        fuzz.step()  # more calls, no blame: the slices fall behind
    ledger = Ledger.open(fuzz.world.root, environ=fuzz.world.ws.env)
    full = BLAME.initial()
    for stored in read_records(ledger.file.path):
        BLAME.apply(full, stored.data)
    for key in BLAME.slice_keys(full) | {"never/written.py", *FILES}:
        found = read_slice(
            ledger.file.path,
            ledger.workspace.cache_dir,
            name=BLAME.name,
            version=BLAME.version,
            key=key,
            environ=fuzz.world.ws.env,
            unchanged_by=BLAME.leaves_slice_unchanged,
        )
        if found is None:
            continue
        assert found.seq == full.seq, key
        assert found.slice == orjson.loads(orjson.dumps(full.file_slice(key))), (seed, key)


# --- tier 3: two clones sharing a remote (decision 0009) --------------------------------------

CLONE_SEEDS = [int(s) for s in os.environ.get("BLAME_FUZZ_CLONE_SEED", "").split(",") if s] or [
    201,
    202,
    203,
    204,
]
CLONE_OPS = int(os.environ.get("BLAME_FUZZ_CLONE_OPS", "60"))


class TwoClones(Fuzz):
    """Tier 3: the agents and a person work in clone A (tier 2's operations: amend, fixup
    rebase, squash merge, cherry-pick ...); now and then the person commits, pushes (forced
    after a rewrite) and runs ``ledger push``; clone B, where no agent runs, pulls (following a
    force-push), ``ledger fetch``es and blames every file; B's person types uncommitted lines."""

    def __init__(self, tmp_path: Path, seed: int) -> None:
        (tmp_path / "a").mkdir()
        super().__init__(tmp_path / "a", seed, git_ops=True)
        from tests.blame._clones import Clones  # noqa: PLC0415

        self.team = Clones(tmp_path / "team", a=self.world)
        self.figures_b: Counter[str] = Counter()

    def publish(self) -> None:
        git(self.world.root, "add", "-A")
        git(self.world.root, "commit", "-qm", f"p{self.counter}", "--allow-empty")
        if not self.team.push():
            self.log.append("push --force")
            assert self.team.push(force=True)
        self.team.pull()

    def b_human(self, relative: str) -> None:
        """B's person types lines (never committed: the next pull resets them)."""
        old = self.team.text_b(relative)
        if old is None:
            return
        path = self.team.b_root / relative
        path.write_text(self.join(self.mutate(old.splitlines(), "human")), encoding="utf-8")

    def known_to_a(self) -> dict[str, set[str]]:
        """Per path, the hashes of the lines A's line model of that path holds as an agent's:
        what the foreign model can know of B's file under the same path."""
        from ledger._evidence.ledger import Ledger  # noqa: PLC0415
        from ledger._projections.explain import blame_state  # noqa: PLC0415

        state = blame_state(Ledger.open(self.world.root, environ=self.world.ws.env))
        known: dict[str, set[str]] = {}
        for path, model in state.files.items():
            agent: set[str] = set()
            other: set[str] = set()
            for digest, ref in zip(model["hashes"], model["refs"], strict=True):
                attribution = state.ref(ref)
                mine = attribution is not None and attribution["status"] == "agent"
                (agent if mine else other).add(digest)
            # A text the model also holds as nobody's (a `cat a b > c` duplicates lines) is
            # not known to be the agent's line there.
            known[path] = agent - other
        return known

    def known_to_a_versions(self) -> dict[str, set[str]]:
        """Per path, the hashes of the lines any version B's blame can align with (the last
        one and the earlier ones the teammate's model keeps) holds as an agent's, less the
        texts the last version holds as nobody's."""
        import json  # noqa: PLC0415

        from ledger._evidence.ledger import Ledger  # noqa: PLC0415
        from ledger._projections.foreign import ForeignFile, _fold  # noqa: PLC0415

        ledger = Ledger.open(self.world.root, environ=self.world.ws.env)
        _, slices = _fold(ledger.file.path)
        known: dict[str, set[str]] = {}
        for path, data in slices.items():
            file = ForeignFile.from_slice(json.loads(data), -1)
            agent: set[str] = set()
            other: set[str] = set()
            for n, model in enumerate(file.models()):
                for digest, ref in zip(model["hashes"], model["refs"], strict=True):
                    attribution = file.view.ref(ref)
                    if attribution is not None and attribution["status"] == "agent":
                        agent.add(digest)
                    elif n == 0:
                        other.add(digest)
            known[path] = agent - other
        return known

    def check_b(self, seed: int) -> None:
        from ledger._governance.attribution import line_hash  # noqa: PLC0415

        a_id = self.team.a_ledger.ledger_id
        known = self.known_to_a()
        known_versions = self.known_to_a_versions()
        for relative in FILES:
            if self.team.text_b(relative) is None:
                continue
            report = self.team.blame_b(relative)
            committed = set(git(self.team.b_root, "show", f"HEAD:{relative}").splitlines())
            for row in report.lines:
                truth = self.creator.get(row.text, "base")
                where = (
                    f"clone B, seed {seed}, {relative}:{row.line} {row.text!r} truth={truth} "
                    f"got={row.status} {row.facts}\nops:\n  " + "\n  ".join(self.log)
                )
                if truth.startswith("agent"):
                    self.figures_b["agent lines"] += 1
                    self.figures_b["agent lines gaps"] += row.status != "agent"
                    if line_hash(row.text) in known.get(relative, set()):
                        self.figures_b["known"] += 1
                        self.figures_b["known gaps"] += row.status != "agent"
                    if line_hash(row.text) in known_versions.get(relative, set()):
                        self.figures_b["versions"] += 1
                        self.figures_b["versions gaps"] += row.status != "agent"
                if row.status == "agent":
                    assert truth == f"agent:{row.facts['session_id']}", where
                    assert row.facts["ledger_id"] == a_id, where
                    by_shell = row.facts["tool"] == "Bash" and bool(row.facts.get("command"))
                    assert by_shell == (row.text in self.by_shell), where
                elif row.status == "git":
                    assert row.text in committed, where
                else:
                    assert row.facts.get("reason"), where

    def run(self, seed: int, ops: int) -> None:
        for _ in range(ops):
            roll = self.rng.random()
            if roll < 0.12:
                self.log.append("publish")
                self.publish()
                self.check_b(seed)
            elif roll < 0.17 and self.team.cloned:
                relative = self.rng.choice(FILES)
                self.log.append(f"b_human {relative}")
                self.b_human(relative)
                self.check_b(seed)
            else:
                self.step()
        self.log.append("publish")
        self.publish()
        self.check_b(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", CLONE_SEEDS)
def test_no_wrong_attribution_in_a_teammates_clone(tmp_path: Path, seed: int) -> None:
    """Tier 3 (decision 0009): every line blamed in clone B agrees with the fuzzer's
    own record of who wrote it in clone A (0 wrong). Replay: ``BLAME_FUZZ_CLONE_SEED=<seed>``
    (``BLAME_FUZZ_CLONE_OPS`` operations)."""
    fuzz = TwoClones(tmp_path, seed)
    fuzz.run(seed, CLONE_OPS)
    print(  # noqa: T201 -- the report (pytest -s)
        f"seed {seed} (two clones): agent lines blamed in B {fuzz.figures_b['agent lines']}, "
        f"gaps {_rate(fuzz.figures_b, 'agent lines')}; on lines the last version of A's model "
        f"knows {_rate(fuzz.figures_b, 'known')}, that a kept version knows "
        f"{_rate(fuzz.figures_b, 'versions')}"
    )
    assert fuzz.figures_b["agent lines"] > 0
