"""Two clones sharing a bare remote: agents write in clone A (the real hook path), a person
commits and pushes, ``ledger push``; clone B pulls and ``ledger fetch``es, and blames."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ledger._evidence.ledger import Ledger
from ledger._evidence.remote import push_evidence
from ledger._hooks.service import GovernedWorkspace, fetch_evidence_reading
from ledger._projections.explain import BlameReport, blame_file
from tests.blame._world import World, git


class Clones:
    """Clone A (a :class:`World`: agents and a person), a bare remote, clone B (a teammate)."""

    def __init__(self, tmp_path: Path, a: World | None = None, *, reading: bool = False) -> None:
        if a is None:
            (tmp_path / "a").mkdir()
            a = World(tmp_path / "a")
        self.a = a
        self.bare = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.bare)], check=True)
        git(self.a.root, "remote", "add", "origin", str(self.bare))
        self.b_root = tmp_path / "b"
        self.b_home = tmp_path / "b-home"
        self.b_env = {"LEDGER_HOME": str(self.b_home)}
        self.cloned = False
        self.reading = reading  # B only reads: no `ledger init`, no key of its own

    @property
    def a_ledger(self) -> Ledger:
        return Ledger.open(self.a.root, environ=self.a.ws.env)

    def push(self, *, force: bool = False) -> bool:
        """The person pushes the code (``--force`` after a rewrite), then ``ledger push``."""
        try:
            git(self.a.root, "push", "-q", *(["--force"] if force else []), "origin", "HEAD:main")
        except subprocess.CalledProcessError:
            return False  # not a fast-forward (an amend, a rebase): the caller forces it
        push_evidence(self.a_ledger)
        return True

    def pull(self) -> None:
        """B follows the remote's branch (a force-push included), then ``ledger fetch``."""
        if not self.cloned:
            subprocess.run(
                ["git", "clone", "-q", "-b", "main", str(self.bare), str(self.b_root)],
                check=True,
                capture_output=True,
            )
            if not self.reading:
                Ledger.init(self.b_root, environ=self.b_env)
            # A's public key, as A's clone commits it (.orchestration/keys/).
            (self.b_root / ".orchestration" / "keys").mkdir(parents=True, exist_ok=True)
            for key_file in (self.a.root / ".orchestration" / "keys").iterdir():
                shutil.copy(key_file, self.b_root / ".orchestration" / "keys" / key_file.name)
            self.cloned = True
        else:
            git(self.b_root, "fetch", "-q", "origin")
            git(self.b_root, "reset", "-q", "--hard", "origin/main")
        if self.reading:
            fetch_evidence_reading(self.b_root, "origin", environ=self.b_env)
        else:
            GovernedWorkspace(self.b_root, environ=self.b_env).fetch_evidence("origin", jobs=1)

    def text_b(self, relative: str) -> str | None:
        path = self.b_root / relative
        return path.read_text(encoding="utf-8") if path.exists() else None

    def blame_b(self, relative: str) -> BlameReport:
        return blame_file(str(self.b_root / relative), root=self.b_root, environ=self.b_env)
