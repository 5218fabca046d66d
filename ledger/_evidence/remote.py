"""Evidence that travels through git itself (decision 0018): ``ledger push``, ``ledger fetch``
and ``ledger verify --remote``.

Each clone publishes its ledger under ``refs/ledger/<ledger id>`` on a git remote, one ref per
ledger, so clones never contend for a ref. The ref points at a commit whose tree holds two
blobs:

* ``agent_trace.jsonl``: the ledger's bytes, every record as written (signed, hash-chained);
* ``checkpoint.note``: a C2SP signed note of exactly those records (``checkpoint.py``).

No private key is ever in it. Each push's commit has the previous push as its parent, and the
push is not forced: the remote itself refuses a push that is not a fast-forward.

``ledger fetch`` copies the remote's refs into a quarantine namespace, verifies each, and only
then moves it to ``refs/ledger-remotes/<remote>/<ledger id>``; the quarantine ref is deleted
either way, so nothing unverified is ever kept under a name anything reads. A ref is verified:

1. its segment verifies as a chain from genesis, against the keys in ``.orchestration/keys/``
   (committed) and the trust pins (``anchors.py``), with the fold ``ledger verify`` uses;
2. its checkpoint is signed by a known key and covers exactly that segment (size and head);
3. it extends what was fetched before: the old commit is an ancestor of the new one and the old
   segment is a byte prefix of the new one (a descendant commit could still carry a rewritten
   history, so ancestry alone is not enough).

git runs only through :func:`ledger._git.git_command`: the remote's URL is read once and named
on the command line with ``--upload-pack``/``--receive-pack``, so no ``remote.*`` key an agent
could plant in ``.git/config`` runs anything.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final, Literal

from ledger._errors import (
    CheckpointError,
    EvidenceRefusedError,
    RemoteError,
    VerbatimContentError,
)
from ledger._evidence.checkpoint import MAX_CHECKPOINT_BYTES, parse_checkpoint
from ledger._evidence.disclosure import (
    DEFAULT_DISCLOSE,
    DISCLOSE_MODES,
    FETCHED_DISCLOSURES_DIR,
    DiscloseMode,
    DisclosureStore,
    bounded_lines,
    chain_commitments,
    disclosed_fields,
    published_disclosures,
    sift_fetched,
    verbatim_records,
)
from ledger._evidence.ledger import Ledger, open_reader
from ledger._evidence.store import LedgerFile
from ledger._evidence.verify import CheckpointTarget, Problem, VerifyReport
from ledger._git import git_command, git_environment, repository_dirs
from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "CHECKPOINT_FILE",
    "DISCLOSE_MODES",
    "DISCLOSURE_REFS",
    "EVIDENCE_REFS",
    "FETCHED_REFS",
    "SEGMENT_FILE",
    "CheckedLedger",
    "DiscloseMode",
    "FetchedLedger",
    "PushResult",
    "fetch_evidence",
    "fetched_ledgers",
    "push_evidence",
    "refetch_command",
    "segment_of",
    "verified_segment",
    "verify_against_remote",
    "verify_fetched_evidence",
]

#: Where each clone publishes its ledger: ``refs/ledger/<ledger id>``.
EVIDENCE_REFS: Final = "refs/ledger/"
#: Where verified evidence fetched from a remote is kept: ``<prefix><remote>/<ledger id>``.
FETCHED_REFS: Final = "refs/ledger-remotes/"
#: Fetched, not yet verified: deleted after every fetch, whatever the outcome.
_INCOMING: Final = "refs/ledger-incoming/"
SEGMENT_FILE: Final = "agent_trace.jsonl"
CHECKPOINT_FILE: Final = "checkpoint.note"
#: Where each clone publishes the disclosures it shares: ``refs/ledger-disclosures/<ledger
#: id>``, one parentless commit (a ``disclosures.jsonl`` blob) made afresh and force-pushed on
#: every push, so what ``ledger forget`` erased is reachable from no ref of the remote after
#: the next push. Outside ``refs/ledger/``, whose refs only ever fast-forward.
DISCLOSURE_REFS: Final = "refs/ledger-disclosures/"
DISCLOSURES_BLOB: Final = "disclosures.jsonl"
#: A disclosures commit's dates: the same content makes the same commit, so a push that
#: changes nothing moves no ref.
_FIXED_DATES: Final = {
    "GIT_AUTHOR_DATE": "946684800 +0000",  # 2000-01-01: git reads a smaller number as no date
    "GIT_COMMITTER_DATE": "946684800 +0000",
}
# Ledger ids are UUIDs; anything else in a ref name is refused before it reaches a path or ref.
_LEDGER_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# The identity of evidence commits: the commit says nothing the signed blobs do not.
_IDENTITY: Final = {
    "GIT_AUTHOR_NAME": "ledger",
    "GIT_AUTHOR_EMAIL": "ledger@localhost",
    "GIT_COMMITTER_NAME": "ledger",
    "GIT_COMMITTER_EMAIL": "ledger@localhost",
}
_COMPARE_CHUNK: Final = 1024 * 1024

PushStatus = Literal["pushed", "current"]
FetchStatus = Literal["new", "updated", "current", "unverified", "skipped"]
"""``unverified``: the records verify as a chain but are signed by keys this clone has not
pinned; nothing of them is kept or used (``FetchedLedger.reason`` says which key to pin).
``skipped``: the ref is malformed (not a ledger id, not ledger's commit shape): a warning, and
the other refs are checked (one such ref on a shared remote stopped every teammate's fetch)."""


class PushResult(NamedTuple):
    """What ``ledger push`` published."""

    remote: str
    ref: str
    commit: str
    records: int
    status: PushStatus
    disclosed: int = 0
    """Disclosures published in ``refs/ledger-disclosures/<ledger id>`` (0: none, the ref
    deleted from the remote if it was there)."""


class FetchedLedger(NamedTuple):
    """One ledger's evidence, fetched and verified."""

    ledger_id: str
    ref: str  # the local ref it is kept under
    commit: str
    records: int
    status: FetchStatus
    reason: str | None = None
    """For ``unverified``: the one line that names the unpinned key and how to pin it."""
    disclosed: int = 0
    """The teammate's published disclosures kept beside it (each opens its commitment)."""
    warnings: tuple[str, ...] = ()
    """One line each: disclosures dropped (doctored, malformed, too large)."""


CheckStatus = Literal["verified", "unverified", "refused"]


class CheckedLedger(NamedTuple):
    """One teammate's evidence, verified again in a clone that only reads."""

    ledger_id: str
    remote: str
    records: int
    status: CheckStatus
    reason: str | None = None
    """For ``unverified`` and ``refused``: the one line that says why."""


#: git holds a blob in memory whole below ``core.bigFileThreshold`` (512 MB by default) when it
#: receives, packs or prints one: a 300 MB one-line segment cost 300 MB. Above the threshold it
#: streams, and keeping what a fetch receives as a pack (``fetch.unpackLimit=1``) lets
#: ``index-pack`` do so too.
_STREAMING: Final = ("-c", "core.bigFileThreshold=8m", "-c", "fetch.unpackLimit=1")
#: The sending side of a fetch from this machine (a ``file://`` or path remote) runs here too,
#: with the remote repository's configuration, not ours: its ``pack-objects`` read a 300 MB
#: loose blob whole (305 MB), so it is told to stream as well (25 MB). A remote elsewhere keeps
#: the plain program (GitHub's ssh runs nothing else); its memory is not this machine's.
_LOCAL_UPLOAD_PACK: Final = "--upload-pack=git -c core.bigFileThreshold=8m upload-pack"


def _upload_pack(url: str) -> str:
    """The ``--upload-pack`` for fetching from ``url``: fixed on the command line, so no
    ``remote.*.uploadpack`` key runs anything."""
    head = url.split("/", 1)[0]
    local = url.startswith("file://") or ("://" not in url and ":" not in head)
    return _LOCAL_UPLOAD_PACK if local else "--upload-pack=git-upload-pack"


class _Git:
    """git on one repository, always through :func:`git_command`."""

    def __init__(self, root: Path, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.env = {**git_environment(environ), **_IDENTITY}

    def run(
        self,
        *args: str,
        data: bytes | None = None,
        transport: bool = False,
        stdout: int | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(  # noqa: S603 -- argv built by git_command, never a shell
                git_command(self.root, *args, env=self.env, transport=transport),
                input=data,
                stdout=subprocess.PIPE if stdout is None else stdout,
                stderr=subprocess.PIPE,
                env=self.env,
                check=False,
            )
        except OSError as exc:
            raise RemoteError(f"cannot run git: {exc.strerror or exc}") from None

    def out(self, *args: str, data: bytes | None = None, transport: bool = False) -> str:
        done = self.run(*args, data=data, transport=transport)
        if done.returncode != 0:
            raise RemoteError(f"git {args[0]} failed: {_last_line(done.stderr)}")
        return done.stdout.decode("utf-8", "replace").strip()

    def remote_url(self, remote: str) -> str:
        if not remote or remote.startswith("-") or "/" in remote or remote in (".", ".."):
            raise RemoteError(f"{remote!r} is not a git remote name")
        done = self.run("config", "--get", f"remote.{remote}.url")
        if done.returncode == 1:
            raise RemoteError(f"no git remote named {remote!r} (`git remote -v` lists them)")
        if done.returncode != 0:
            raise RemoteError(f"cannot read git remote {remote!r}: {_last_line(done.stderr)}")
        return done.stdout.decode("utf-8", "replace").strip()

    def published(self, url: str, ref: str) -> str | None:
        """The commit ``ref`` points at on the remote at ``url``, or ``None`` (no such ref)."""
        listed = self.out("ls-remote", "--upload-pack=git-upload-pack", url, ref, transport=True)
        return listed.split()[0] if listed else None

    def fetch_ref(self, url: str, ref: str, into: str) -> None:
        """Fetch the remote's ``ref`` into the local ref ``into`` (forced: a holding name)."""
        self.out(
            *_STREAMING,
            "fetch",
            "--no-tags",
            "--no-write-fetch-head",
            _upload_pack(url),
            url,
            f"+{ref}:{into}",
            transport=True,
        )

    def rev(self, ref: str) -> str | None:
        done = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def is_ancestor(self, old: str, new: str) -> bool:
        return self.run("merge-base", "--is-ancestor", old, new).returncode == 0

    def refs(self, prefix: str) -> list[tuple[str, str]]:
        listed = self.out("for-each-ref", "--format=%(objectname) %(refname)", prefix)
        return [tuple(line.split(" ", 1)) for line in listed.splitlines() if line]  # type: ignore[misc]

    def set_ref(self, ref: str, commit: str, old: str | None) -> None:
        self.out("update-ref", ref, commit, old or "")

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", ref)

    def tree(self, commit: str) -> dict[str, str]:
        """The blobs at the top of ``commit``'s tree, by name."""
        listed = self.run("ls-tree", "-z", commit)
        found: dict[str, str] = {}
        for entry in listed.stdout.split(b"\0"):
            meta, _, raw_name = entry.partition(b"\t")
            parts = meta.split(b" ")
            if len(parts) == 3 and parts[1] == b"blob":
                found[raw_name.decode("utf-8", "replace")] = parts[2].decode()
        return found

    def blobs(self, commit: str, ref: str) -> dict[str, str]:
        """The blobs of the evidence commit's tree, by name; refuses a tree without both."""
        found = self.tree(commit)
        for wanted in (SEGMENT_FILE, CHECKPOINT_FILE):
            if wanted not in found:
                raise RemoteError(f"evidence ref {ref} is unreadable: it holds no {wanted}")
        return found

    def blob_to_file(self, sha: str, path: Path) -> None:
        with path.open("wb") as handle:
            done = self.run(*_STREAMING, "cat-file", "blob", sha, stdout=handle.fileno())
        if done.returncode != 0:
            raise RemoteError(f"cannot read evidence blob {sha}: {_last_line(done.stderr)}")

    def small_blob(self, sha: str, name: str) -> str:
        size = self.out("cat-file", "-s", sha)
        if not size.isdigit() or int(size) > MAX_CHECKPOINT_BYTES:
            raise RemoteError(f"{name} is over {MAX_CHECKPOINT_BYTES} bytes")
        data = self.run("cat-file", "blob", sha).stdout
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RemoteError(f"{name} is not UTF-8") from None


def _last_line(stderr: bytes) -> str:
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no message"


def _first_difference(old: Path, new: Path) -> int | None:
    """The seq of the first record of ``old`` that ``new`` does not hold byte for byte, or
    ``None`` when ``old`` is a prefix of ``new``."""
    seq = 0
    with old.open("rb") as a, new.open("rb") as b:
        while True:
            left = a.read(_COMPARE_CHUNK)
            if not left:
                return None
            right = b.read(len(left))
            if left != right:
                common = next(
                    (i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                    min(len(left), len(right)),
                )
                return seq + left.count(b"\n", 0, common)
            seq += left.count(b"\n")


def _refused(
    ledger_id: str, seq: int, why: str, outcome: str = "nothing was kept"
) -> EvidenceRefusedError:
    return EvidenceRefusedError(
        f"evidence of ledger {ledger_id} refused at seq {seq}: {why}; {outcome}",
        ledger_id,
        seq,
    )


# --- push --------------------------------------------------------------------------------------


def push_evidence(
    ledger: Ledger,
    remote: str = "origin",
    *,
    environ: Mapping[str, str] | None = None,
    publish_verbatim_content: bool = False,
    disclose: DiscloseMode = "policy",
    policy: Iterable[str] = DEFAULT_DISCLOSE,
) -> PushResult:
    """Publish ``ledger``'s records and a checkpoint of them to ``refs/ledger/<id>`` on
    ``remote``, as a fast-forward of what was pushed before, then the disclosures ``disclose``
    says to ``refs/ledger-disclosures/<id>`` (rewritten every push: :data:`DISCLOSURE_REFS`).
    Format v3 records carry commitments in place of content; the disclosures of a field are
    published only when chosen.

    Args:
        publish_verbatim_content: publish even records from before format v3, whose prompts,
            command lines and file contents are in the chain verbatim.
        disclose: ``none`` (no disclosure; a ref published before is deleted), ``policy`` (the
            fields ``policy`` names: ``hooks.yaml``'s ``disclose:``, by default no prompt and
            no file content) or ``all`` (every disclosure held).

    Raises:
        VerbatimContentError: such records exist and ``publish_verbatim_content`` is False.
        RemoteError: no such remote, not a git repository, or git could not push.
        EvidenceRefusedError: the remote's evidence of this ledger is not a prefix of it (the
            ledger was rewritten after a push, or the remote's evidence was).
    """
    environ = ledger.environ if environ is None else environ
    git = _Git(ledger.workspace.root, environ)
    url = git.remote_url(remote)
    data, checkpoint = ledger.segment()
    verbatim = verbatim_records(data.splitlines())
    if verbatim and not publish_verbatim_content:
        raise VerbatimContentError(
            f"{verbatim} record(s) from before format v3 hold prompts, command lines or file "
            "contents verbatim and would be published for good; push them anyway with "
            "--publish-verbatim-content, or start a new ledger (`ledger doctor` counts them)"
        )
    ref = EVIDENCE_REFS + checkpoint.ledger_id
    local = parent = git.rev(ref)
    published = git.published(url, ref)
    if published is not None and (parent is None or not git.is_ancestor(published, parent)):
        # The remote holds a push this repository has not recorded (another clone of the same
        # workspace, or a lost local ref): build on it, if this ledger extends it.
        incoming = f"{_INCOMING}push/{checkpoint.ledger_id}"
        git.fetch_ref(url, ref, incoming)
        git.delete_ref(incoming)  # the objects stay; the commit is checked just below
        parent = published
    if parent is not None:
        _check_extends(git, parent, data, checkpoint.ledger_id, remote)
    segment = git.out("hash-object", "-w", "--stdin", data=data)
    note = git.out("hash-object", "-w", "--stdin", data=checkpoint.text().encode())
    entries = f"100644 blob {segment}\t{SEGMENT_FILE}\n100644 blob {note}\t{CHECKPOINT_FILE}\n"
    tree = git.out("mktree", data=entries.encode())
    if parent is not None and git.out("rev-parse", f"{parent}^{{tree}}") == tree:
        commit = parent
    else:
        message = f"ledger {checkpoint.ledger_id}: {checkpoint.size} records\n"
        commit = git.out(
            "commit-tree", tree, *(("-p", parent) if parent else ()), data=message.encode()
        )
    if commit != local:
        git.set_ref(ref, commit, local)
    fields = disclosed_fields(disclose, policy)
    if published == commit:
        disclosed = _publish_disclosures(
            ledger, git, url=url, remote=remote, ledger_id=checkpoint.ledger_id, fields=fields
        )
        return PushResult(remote, ref, commit, checkpoint.size, "current", disclosed)
    done = git.run(
        "push",
        "--porcelain",
        "--receive-pack=git-receive-pack",
        url,
        f"{ref}:{ref}",
        transport=True,
    )
    if done.returncode != 0:
        why = _last_line(done.stderr + done.stdout)
        raise RemoteError(f"cannot push {ref} to {remote}: {why}")
    disclosed = _publish_disclosures(
        ledger, git, url=url, remote=remote, ledger_id=checkpoint.ledger_id, fields=fields
    )
    return PushResult(remote, ref, commit, checkpoint.size, "pushed", disclosed)


def _publish_disclosures(
    ledger: Ledger,
    git: _Git,
    *,
    url: str,
    remote: str,
    ledger_id: str,
    fields: tuple[str, ...] | None,
) -> int:
    """Replace ``refs/ledger-disclosures/<ledger id>`` on the remote with one parentless
    commit of the disclosures ``fields`` names (``None``: all; empty: none, and the ref is
    deleted). The commit is built in a scratch repository that is deleted afterwards, so no
    disclosure enters this repository's objects, where an erasure could not reach it."""
    ref = DISCLOSURE_REFS + ledger_id
    published = git.published(url, ref)
    if fields == () and published is None:
        return 0
    with tempfile.TemporaryDirectory(prefix="ledger-disclose-") as folder:
        lines = Path(folder, DISCLOSURES_BLOB)
        with lines.open("wb") as out:
            store = DisclosureStore.beside(ledger.file.path)
            count = 0 if fields == () else published_disclosures(store, fields, out)
        scratch = _Git(Path(folder, "repo"), git.env)
        scratch.env.update(_FIXED_DATES)
        scratch.root.mkdir()
        scratch.out("init", "-q", "--bare")
        if count == 0:
            if published is None:
                return 0
            spec = f":{ref}"  # published before, none now: delete it
        else:
            blob = scratch.out("hash-object", "-w", str(lines))
            tree = scratch.out("mktree", data=f"100644 blob {blob}\t{DISCLOSURES_BLOB}\n".encode())
            message = f"ledger {ledger_id}: {count} disclosures\n".encode()
            commit = scratch.out("commit-tree", tree, data=message)
            if commit == published:
                return count
            spec = f"+{commit}:{ref}"

        def push(spec: str) -> subprocess.CompletedProcess[bytes]:
            return scratch.run(
                "push", "--porcelain", "--receive-pack=git-receive-pack", url, spec, transport=True
            )

        done = push(spec)
        # A remote that refuses non-fast-forwards (`git init --shared` sets
        # receive.denyNonFastForwards) may still take a deletion and a new ref.
        rewrite = done.returncode != 0 and published is not None and spec.startswith("+")
        if rewrite and push(f":{ref}").returncode == 0:
            done = push(spec[1:])
    if done.returncode != 0:
        # --porcelain: "!<TAB>src:dst<TAB>[remote rejected] (why)" says more than the last line
        printed = done.stdout.decode("utf-8", "replace").splitlines()
        why = next(
            (line.rsplit("\t", 1)[-1] for line in printed if line.startswith("!")),
            _last_line(done.stderr),
        )
        raise RemoteError(
            f"the evidence was pushed, but {remote} refused {ref}: {why} (it must take a "
            "rewritten ref: until then what `ledger forget` erased may still be on it)"
        )
    return count


def _check_extends(git: _Git, parent: str, data: bytes, ledger_id: str, remote: str) -> None:
    """Refuse to publish a ledger that no longer holds what was pushed before."""
    with tempfile.TemporaryDirectory(prefix="ledger-push-") as folder:
        before, now = Path(folder, "before"), Path(folder, "now")
        git.blob_to_file(git.blobs(parent, EVIDENCE_REFS + ledger_id)[SEGMENT_FILE], before)
        now.write_bytes(data)
        seq = _first_difference(before, now)
    if seq is not None:
        raise _refused(
            ledger_id,
            seq,
            f"this ledger no longer holds what was pushed to {remote} (rewritten "
            "or truncated after a push; `ledger verify --remote` shows it)",
            "nothing was pushed",
        )


# --- fetch -------------------------------------------------------------------------------------


def fetch_evidence(
    ledger: Ledger,
    remote: str = "origin",
    *,
    jobs: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[FetchedLedger]:
    """Fetch every ``refs/ledger/*`` of ``remote``, verify each, keep the verified ones under
    ``refs/ledger-remotes/<remote>/``. An empty list: the remote holds no evidence.

    Raises:
        RemoteError: no such remote, or a ref that cannot be read (exit 2).
        EvidenceRefusedError: a ref was rewritten, forked or badly signed (the first one; the
            others that verified are kept).
    """
    environ = ledger.environ if environ is None else environ
    git = _Git(ledger.workspace.root, environ)
    incoming = f"{_INCOMING}{remote}/"
    _fetch_all(git, remote, incoming)
    fetched: list[FetchedLedger] = []
    refusals: list[EvidenceRefusedError] = []
    try:
        for commit, name in git.refs(incoming):
            ledger_id = name[len(incoming) :]
            try:
                fetched.append(
                    _verify_fetched(
                        git, ledger, remote, ledger_id=ledger_id, commit=commit, jobs=jobs
                    )
                )
            except EvidenceRefusedError as exc:
                refusals.append(exc)
            except RemoteError as exc:  # malformed: skipped, the others still checked
                shown = "".join(c if c.isprintable() else "?" for c in ledger_id)[:80]
                fetched.append(
                    FetchedLedger(
                        shown,
                        f"{FETCHED_REFS}{remote}/{shown}",
                        commit,
                        0,
                        "skipped",
                        f"warning: skipped {EVIDENCE_REFS}{shown} on {remote}: {exc}",
                    )
                )
    finally:
        for _, name in git.refs(incoming):
            git.delete_ref(name)
    own = (
        ledger.ledger_id if ledger.file.path.is_file() and ledger.file.path.stat().st_size else None
    )
    fetched = _fetch_disclosures(git, remote, fetched, own_id=own)
    if refusals:
        raise refusals[0]
    return fetched


#: The largest disclosures blob a fetch reads (a bound on disk and time; memory is bounded by
#: the longest line, :data:`~ledger._evidence.disclosure.MAX_SHARED_LINE`).
MAX_DISCLOSURES_BYTES: Final = 1024 * 1024 * 1024
_OFFERED: Final = "refs/offered/"


def _fetch_disclosures(
    git: _Git, remote: str, fetched: list[FetchedLedger], *, own_id: str | None
) -> list[FetchedLedger]:
    """Keep, beside each verified teammate ledger, the disclosures its clone published that
    open its commitments, minus what it forgot since (:func:`_keep_disclosures`). What the
    remote no longer carries is dropped here too. The refs are fetched into a scratch
    repository deleted afterwards: no disclosure enters this repository's objects. This
    clone's own ledger is skipped: a copy of its disclosures would outlive a local forget."""
    verified = [
        f for f in fetched if f.status in ("new", "updated", "current") and f.ledger_id != own_id
    ]
    dirs = repository_dirs(git.root)
    if not verified or not dirs:
        return fetched
    kept_dir = dirs[-1] / FETCHED_DISCLOSURES_DIR / remote
    out: dict[str, FetchedLedger] = {}
    with tempfile.TemporaryDirectory(prefix="ledger-fetch-disclosures-") as name:
        folder = Path(name)
        scratch = _Git(folder / "repo", git.env)
        scratch.root.mkdir()
        scratch.out("init", "-q", "--bare")
        url = git.remote_url(remote)
        done = scratch.run(
            *_STREAMING,
            "fetch",
            "--no-tags",
            "--no-write-fetch-head",
            _upload_pack(url),
            url,
            f"+{DISCLOSURE_REFS}*:{_OFFERED}*",
            transport=True,
        )
        if done.returncode != 0:
            why = f"warning: cannot fetch disclosures from {remote}: {_last_line(done.stderr)}"
            return [f._replace(warnings=(why,)) if f in verified else f for f in fetched]
        offered = {ref[len(_OFFERED) :]: commit for commit, ref in scratch.refs(_OFFERED)}
        for item in verified:
            target = kept_dir / f"{item.ledger_id}.jsonl"
            try:
                out[item.ledger_id] = _keep_disclosures(
                    git,
                    scratch,
                    item,
                    commit=offered.get(item.ledger_id),
                    target=target,
                    folder=folder,
                    remote=remote,
                )
            except RemoteError as exc:
                target.unlink(missing_ok=True)
                why = f"warning: dropped {DISCLOSURE_REFS}{item.ledger_id} on {remote}: {exc}"
                out[item.ledger_id] = item._replace(warnings=(why,))
    return [out.get(f.ledger_id, f) if f in verified else f for f in fetched]


def _keep_disclosures(
    git: _Git,
    scratch: _Git,
    item: FetchedLedger,
    *,
    commit: str | None,
    target: Path,
    folder: Path,
    remote: str,
) -> FetchedLedger:
    """Sift one teammate's published disclosures (``commit``; ``None``: it publishes none)
    against its verified chain into ``target`` (0600, replaced atomically), with a tombstone
    for each commitment its chain says was forgotten. The file's first line names the two
    commits it was made from (no reader takes it for a disclosure), so a fetch that brings
    neither anew reads nothing again."""
    header = json.dumps({"disclosures": commit, "evidence": item.commit}, sort_keys=True).encode()
    try:
        with target.open("rb") as kept:
            if kept.readline().rstrip(b"\n") == header:
                # a tombstone, as sift_fetched writes it: {"commitment":"<64>","forgotten":…
                tombstone = b',"forgotten":true,'
                return item._replace(disclosed=sum(line[79:97] != tombstone for line in kept))
    except OSError:
        pass
    published = folder / f"{item.ledger_id}.published"
    if commit is None:
        published.write_bytes(b"")
    else:
        blob = scratch.tree(commit).get(DISCLOSURES_BLOB)
        if blob is None:
            raise RemoteError(f"it holds no {DISCLOSURES_BLOB}")
        size = scratch.out("cat-file", "-s", blob)
        if not size.isdigit() or int(size) > MAX_DISCLOSURES_BYTES:
            raise RemoteError(f"{DISCLOSURES_BLOB} is over {MAX_DISCLOSURES_BYTES} bytes")
        scratch.blob_to_file(blob, published)
    segment = folder / f"{item.ledger_id}.seg"
    git.blob_to_file(git.blobs(item.commit, EVIDENCE_REFS + item.ledger_id)[SEGMENT_FILE], segment)
    with segment.open("rb") as handle:
        in_chain, forgotten = chain_commitments(handle)
    segment.unlink()
    for parent in (target.parent.parent, target.parent):
        parent.mkdir(mode=0o700, exist_ok=True)
        parent.chmod(0o700)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, published.open("rb") as source:
            out.write(header + b"\n")
            sifted = sift_fetched(bounded_lines(source), in_chain, forgotten, out)
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        published.unlink()
    warnings = []
    ref = f"{DISCLOSURE_REFS}{item.ledger_id} on {remote}"
    if sifted.bad:
        seq, field = sifted.bad[0]
        warnings.append(
            f"warning: {len(sifted.bad)} disclosure(s) in {ref} do not open their commitment "
            f"(first: seq {seq}, field {field}): dropped, never shown"
        )
    if sifted.unreadable:
        warnings.append(
            f"warning: {sifted.unreadable} line(s) in {ref} are not disclosures of its records "
            "(malformed, over 16 MiB, or of no record): dropped"
        )
    return item._replace(disclosed=sifted.kept, warnings=tuple(warnings))


def _fetch_all(git: _Git, remote: str, incoming: str) -> None:
    """Fetch every ``refs/ledger/*`` of ``remote`` into the quarantine ``incoming``."""
    url = git.remote_url(remote)
    done = git.run(
        *_STREAMING,
        "fetch",
        "--no-tags",
        "--prune",  # a quarantine ref left by a killed fetch, whose remote ref is gone
        "--no-write-fetch-head",
        _upload_pack(url),
        url,
        f"+{EVIDENCE_REFS}*:{incoming}*",
        transport=True,
    )
    if done.returncode != 0:
        raise RemoteError(f"cannot fetch evidence from {remote}: {_last_line(done.stderr)}")


def _verify_fetched(
    git: _Git,
    ledger: Ledger,
    remote: str,
    *,
    ledger_id: str,
    commit: str,
    jobs: int | None,
    keep: bool = True,
) -> FetchedLedger:
    remote_ref = EVIDENCE_REFS + ledger_id
    if not _LEDGER_ID.fullmatch(ledger_id):
        raise RemoteError(f"evidence ref {remote_ref} on {remote} is unreadable: not a ledger id")
    local_ref = f"{FETCHED_REFS}{remote}/{ledger_id}"
    previous = git.rev(local_ref)
    if previous == commit:  # verified when it was kept, and unchanged since
        records = int(git.out("cat-file", "-p", f"{commit}:{CHECKPOINT_FILE}").split("\n")[1])
        return FetchedLedger(ledger_id, local_ref, commit, records, "current")
    blobs = git.blobs(commit, remote_ref)
    with tempfile.TemporaryDirectory(prefix="ledger-fetch-") as folder:
        segment = Path(folder, SEGMENT_FILE)
        git.blob_to_file(blobs[SEGMENT_FILE], segment)
        text = git.small_blob(blobs[CHECKPOINT_FILE], f"{remote_ref}:{CHECKPOINT_FILE}")
        records, unpinned = _verify_segment(
            ledger, ledger_id, segment, text=text, name=f"{remote}:{remote_ref}", jobs=jobs
        )
        if previous is not None:
            before = Path(folder, "previous")
            git.blob_to_file(git.blobs(previous, local_ref)[SEGMENT_FILE], before)
            seq = _first_difference(before, segment)
            if not git.is_ancestor(previous, commit):
                raise _refused(
                    ledger_id,
                    before.read_bytes().count(b"\n") if seq is None else seq,
                    f"{remote_ref} on {remote} was rewritten (not a fast-forward of the "
                    "evidence fetched before)",
                )
            if seq is not None:
                raise _refused(
                    ledger_id,
                    seq,
                    f"{remote_ref} on {remote} forks from the evidence fetched "
                    "before (a record fetched before is changed or gone)",
                )
    if unpinned:
        # Not tampering that this clone can see: a teammate whose key is not committed here
        # yet. Listed, never kept under a name blame or anything else reads.
        keys = ", ".join(unpinned)
        files = " and ".join(f".orchestration/keys/{kid}.json" for kid in unpinned)
        reason = (
            f"unverified: ledger {ledger_id} is signed by key{'s' if len(unpinned) > 1 else ''} "
            f"{keys}, which {'are' if len(unpinned) > 1 else 'is'} not pinned; pin it: commit "
            f"{files} from the teammate's clone (their `ledger init` wrote it; `git pull` "
            f"brings it once they commit it), then `ledger fetch {remote}`"
        )
        return FetchedLedger(ledger_id, local_ref, commit, records, "unverified", reason)
    if keep:
        git.set_ref(local_ref, commit, previous)
    return FetchedLedger(
        ledger_id, local_ref, commit, records, "new" if previous is None else "updated"
    )


def _verify_segment(
    ledger: Ledger, ledger_id: str, segment: Path, *, text: str, name: str, jobs: int | None
) -> tuple[int, list[str]]:
    """Verify a fetched segment and its checkpoint: ``(records, unpinned keys)``, or a refusal.
    Unpinned keys (non-empty): the records verify as a chain whose only fault is that their
    signers' public keys are not in this clone's keyring (the evidence is unverified, not
    refused)."""
    from ledger._evidence.verify_file import verify_file  # noqa: PLC0415

    try:
        checkpoint = parse_checkpoint(text, name)
    except CheckpointError as exc:
        raise _refused(ledger_id, 0, str(exc)) from None
    keyring, trusted, _ = ledger._verification_keys(ledger_id)
    public = {e.kid: e.public_raw for e in keyring}
    revoked = {e.kid: e.revoked_from_seq for e in keyring if e.revoked_from_seq is not None}
    target: CheckpointTarget | None = None
    bad_checkpoint: str | None = None
    try:
        target = checkpoint.verified_target(keyring, name)
    except CheckpointError as exc:
        bad_checkpoint = str(exc)
    report = verify_file(
        LedgerFile(segment),
        public,
        revoked_from=revoked,
        checkpoints=[target] if target else [],
        trusted=trusted,
        jobs=jobs,
    )
    problem = report.first_problem()
    if problem is not None and problem.code == "unknown-key":
        unpinned = _only_unpinned(segment, public, trusted, revoked)
        if unpinned and report.ledger_id == ledger_id == checkpoint.ledger_id:
            if checkpoint.size != report.records:
                raise _refused(
                    ledger_id,
                    min(checkpoint.size, report.records),
                    f"its checkpoint covers {checkpoint.size} records, the segment holds "
                    f"{report.records}",
                )
            return report.records, unpinned
    if problem is not None:
        hint = (
            " (a teammate's key is pinned by committing its public key file, which their "
            "`ledger init` wrote, to .orchestration/keys/)"
            if problem.code == "unknown-key"
            else ""
        )
        raise _refused(ledger_id, problem.seq, f"{problem.code}: {problem.message}{hint}")
    if report.ledger_id != ledger_id or checkpoint.ledger_id != ledger_id:
        raise _refused(ledger_id, 0, f"{name} holds another ledger ({report.ledger_id})")
    if bad_checkpoint is not None:
        raise _refused(ledger_id, max(checkpoint.size - 1, 0), bad_checkpoint)
    if checkpoint.size != report.records:
        raise _refused(
            ledger_id,
            min(checkpoint.size, report.records),
            f"its checkpoint covers {checkpoint.size} records, the segment holds {report.records}",
        )
    return report.records, []


_SIGNED_BY: Final = re.compile(r"signed by (\S+), which is not pinned")


def _only_unpinned(
    segment: Path,
    keys: Mapping[str, bytes],
    trusted: Mapping[str, int] | None,
    revoked_from: Mapping[str, int],
) -> list[str]:
    """The key ids that signed ``segment`` without being pinned here, when that is all that is
    wrong with it: every record's hash, link, seq and envelope check out, and with the unknown
    signatures set aside the chain's key rules hold (its genesis key is the root, later keys
    are introduced by its own records). Empty: something else is wrong (a refusal).

    Runs only when verification found an unknown key first, so a second, in-process pass over
    the records costs nothing on the usual path."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PublicKey,
    )

    from ledger._evidence.record import check_line  # noqa: PLC0415
    from ledger._evidence.verify import ChainVerifier  # noqa: PLC0415

    public = {kid: Ed25519PublicKey.from_public_bytes(raw) for kid, raw in keys.items()}
    fold = ChainVerifier(trusted=trusted, revoked_from=revoked_from)
    unpinned: dict[str, None] = {}
    with segment.open("rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    if lines[-1]:
        return []  # a torn tail is damage, not an unpinned key
    for line in lines[:-1]:
        facts = check_line(line, public)
        kept = []
        for code, message in facts.problems:
            found = _SIGNED_BY.search(message) if code == "unknown-key" else None
            if found is None:
                kept.append((code, message))
            else:
                unpinned[found.group(1)] = None
        fold.feed(facts._replace(problems=tuple(kept)))
    report = fold.finish()
    return list(unpinned) if report.ok and unpinned else []


# --- what blame reads -------------------------------------------------------------------------


def fetched_ledgers(
    root: Path, environ: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """``(ledger id, remote, commit)`` of every fetched evidence ref
    (``refs/ledger-remotes/<remote>/<ledger id>``); empty outside a git repository.

    A ref here was verified when ``ledger fetch`` kept it, but anyone who can run git in this
    clone can also point it elsewhere: readers verify a commit again (:func:`verified_segment`)
    before they trust what they derive from it, and key what they derive by the commit."""
    git = _Git(root, environ)
    done = git.run("for-each-ref", "--format=%(objectname) %(refname)", FETCHED_REFS)
    if done.returncode != 0:
        return []
    out = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        commit, _, name = line.partition(" ")
        remote, _, ledger_id = name[len(FETCHED_REFS) :].rpartition("/")
        if remote and _LEDGER_ID.fullmatch(ledger_id):
            out.append((ledger_id, remote, commit))
    return out


def refetch_command(remote: str, ledger_id: str) -> str:
    """The way out for a fetched ledger that does not verify here: the copy kept here is
    dropped and fetched again from the remote, which verifies it (and says so when the
    remote's own copy is bad, or signed by a key not pinned here)."""
    return f"git update-ref -d {FETCHED_REFS}{remote}/{ledger_id} && ledger fetch {remote}"


def segment_of(
    root: Path,
    ledger_id: str,
    commit: str,
    folder: Path,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """Write the evidence commit's segment into ``folder``, unverified (for a caller that
    verified this very commit itself); ``None`` when it cannot be read."""
    git = _Git(root, environ)
    try:
        segment = folder / SEGMENT_FILE
        git.blob_to_file(git.blobs(commit, EVIDENCE_REFS + ledger_id)[SEGMENT_FILE], segment)
    except RemoteError:
        return None
    return segment


def verified_segment(ledger: Ledger, ledger_id: str, commit: str, folder: Path) -> Path | None:
    """Write the evidence commit's segment into ``folder`` and verify it (chain, pinned keys,
    checkpoint) as ``ledger fetch`` does: its path, or ``None`` when it does not verify here
    (unreadable, refused, or signed by a key not pinned)."""
    git = _Git(ledger.workspace.root, ledger._environ)
    ref = EVIDENCE_REFS + ledger_id
    try:
        blobs = git.blobs(commit, ref)
        segment = folder / SEGMENT_FILE
        git.blob_to_file(blobs[SEGMENT_FILE], segment)
        text = git.small_blob(blobs[CHECKPOINT_FILE], f"{commit}:{CHECKPOINT_FILE}")
        _, unpinned = _verify_segment(ledger, ledger_id, segment, text=text, name=ref, jobs=None)
    except (RemoteError, EvidenceRefusedError):
        return None
    return None if unpinned else segment


# --- verify in a clone that only reads ---------------------------------------------------------


def verify_fetched_evidence(
    root: str | os.PathLike[str] | None = None,
    remote: str | None = None,
    *,
    jobs: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[CheckedLedger]:
    """``ledger verify`` in a clone with no ledger of its own: the teammates' evidence it
    fetched, verified again against the public keys pinned here (a ref moved by hand, or a key
    file removed since, shows). With ``remote``: what ``remote`` holds now, verified the same
    way and, for a ledger fetched before, as a fast-forward of it (a remote rewritten after
    the fetch is refused); nothing is kept. An empty list: there is nothing to verify.

    Raises:
        WorkspaceNotFoundError: no ``.orchestration/`` was found.
        RemoteError: no such remote, or it cannot be read.
    """
    ledger = open_reader(root, environ=environ)
    git = _Git(ledger.workspace.root, environ)
    if remote is None:
        checked = []
        for ledger_id, kept_from, commit in fetched_ledgers(ledger.workspace.root, environ):
            checked.append(
                _check_kept(git, ledger, ledger_id, remote=kept_from, commit=commit, jobs=jobs)
            )
        return checked
    incoming = f"{_INCOMING}verify/{remote}/"
    _fetch_all(git, remote, incoming)
    checked = []
    try:
        for commit, name in git.refs(incoming):
            ledger_id = name[len(incoming) :]
            try:
                item = _verify_fetched(
                    git, ledger, remote, ledger_id=ledger_id, commit=commit, jobs=jobs, keep=False
                )
            except EvidenceRefusedError as exc:
                checked.append(CheckedLedger(ledger_id, remote, 0, "refused", str(exc)))
                continue
            except RemoteError as exc:  # malformed (as fetch skips it): not checked
                shown = "".join(c if c.isprintable() else "?" for c in ledger_id)[:80]
                why = f"{EVIDENCE_REFS}{shown} on {remote} was not checked: {exc}"
                checked.append(CheckedLedger(shown, remote, 0, "unverified", why))
                continue
            status: CheckStatus = "unverified" if item.status == "unverified" else "verified"
            checked.append(CheckedLedger(ledger_id, remote, item.records, status, item.reason))
    finally:
        for _, name in git.refs(incoming):
            git.delete_ref(name)
    return checked


def _check_kept(
    git: _Git, ledger: Ledger, ledger_id: str, *, remote: str, commit: str, jobs: int | None
) -> CheckedLedger:
    ref = EVIDENCE_REFS + ledger_id
    try:
        blobs = git.blobs(commit, ref)
        with tempfile.TemporaryDirectory(prefix="ledger-verify-") as folder:
            segment = Path(folder, SEGMENT_FILE)
            git.blob_to_file(blobs[SEGMENT_FILE], segment)
            text = git.small_blob(blobs[CHECKPOINT_FILE], f"{commit}:{CHECKPOINT_FILE}")
            records, unpinned = _verify_segment(
                ledger, ledger_id, segment, text=text, name=f"{remote}:{ref}", jobs=jobs
            )
    except (RemoteError, EvidenceRefusedError) as exc:
        # Kept by a fetch, then moved or damaged here: blame verifies it again and skips it.
        why = str(exc).removesuffix("; nothing was kept")
        return CheckedLedger(ledger_id, remote, 0, "refused", f"{why}; blame does not use it")
    if unpinned:
        reason = (
            f"ledger {ledger_id} is signed by {', '.join(unpinned)}, not pinned here; commit "
            f"its .orchestration/keys/ file from the teammate's clone"
        )
        return CheckedLedger(ledger_id, remote, records, "unverified", reason)
    return CheckedLedger(ledger_id, remote, records, "verified")


# --- verify --remote ---------------------------------------------------------------------------


def verify_against_remote(
    ledger: Ledger,
    remote: str = "origin",
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> VerifyReport:
    """Verify ``ledger`` as ``ledger verify`` does, and against what it pushed to ``remote``:
    the pushed segment must be a prefix of the local ledger and the pushed checkpoint's head
    must be in it, so a rewrite or truncation after a push fails.

    Raises:
        RemoteError: no such remote, nothing of this ledger on it, or it cannot be read.
    """
    environ = ledger.environ if environ is None else environ
    git = _Git(ledger.workspace.root, environ)
    url = git.remote_url(remote)
    ledger_id = ledger.ledger_id
    ref = EVIDENCE_REFS + ledger_id
    incoming = f"{_INCOMING}verify/{remote}/{ledger_id}"
    if git.published(url, ref) is None:
        raise RemoteError(
            f"remote {remote} holds no evidence of ledger {ledger_id} (`ledger push {remote}`)"
        )
    git.fetch_ref(url, ref, incoming)
    try:
        blobs = git.blobs(incoming, ref)
        name = f"{remote}:{ref}"
        text = git.small_blob(blobs[CHECKPOINT_FILE], f"{name}:{CHECKPOINT_FILE}")
        report = ledger.verify(checkpoints=[(name, text)], jobs=jobs, progress=progress)
        with tempfile.TemporaryDirectory(prefix="ledger-verify-") as folder:
            pushed = Path(folder, SEGMENT_FILE)
            git.blob_to_file(blobs[SEGMENT_FILE], pushed)
            seq = _first_difference(pushed, ledger.file.path)
    finally:
        git.delete_ref(incoming)
    if seq is not None:
        report.add(
            Problem(
                "remote-diverged",
                seq,
                0,
                f"record seq {seq} pushed to {remote} is not in the local ledger any more "
                "(rewritten or truncated after a push)",
            )
        )
    return report
