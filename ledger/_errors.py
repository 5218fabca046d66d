"""The one error tree of ``ledger``.

Every failure raised by the library is a :class:`LedgerError`. The tree keeps two questions apart,
as securesystemslib does with ``UnverifiedSignatureError`` vs ``VerificationError``:

* :class:`IntegrityError` -- *the evidence is bad*: a record was changed, dropped, reordered,
  forged, or the file ends in a torn line.
* :class:`UnverifiableError` -- *we could not check*: a key is missing, a file is unreadable,
  the workspace does not exist.

:class:`InputError` is the third leaf family: the caller handed us something we refuse to record
(malformed JSON, a float, an oversized body). Nothing is written when it is raised.

The CLI maps each family to one documented exit code in ``cli/_exit.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ledger._evidence.verify import VerifyReport

__all__ = [
    "CanonicalizationError",
    "CheckpointError",
    "ConfigError",
    "EvidenceRefusedError",
    "InputError",
    "IntegrityError",
    "KeyNotFoundError",
    "LedgerError",
    "LockTimeoutError",
    "NotInitializedError",
    "PolicyError",
    "RemoteError",
    "RepairRefusedError",
    "StorageError",
    "TornTailError",
    "UnverifiableError",
    "VerbatimContentError",
    "WorkspaceCopiedError",
    "WorkspaceNotFoundError",
]


class LedgerError(Exception):
    """Root of every error ``ledger`` raises on purpose.

    ``str(error)`` is always one line meant for a user; it never contains key material.
    """


# --- the evidence is bad -------------------------------------------------------------------


class IntegrityError(LedgerError):
    """The ledger (or a checkpoint) does not verify.

    Attributes:
        report: the full :class:`~ledger.VerifyReport` when the error came from verification.
    """

    def __init__(self, message: str, report: VerifyReport | None = None) -> None:
        super().__init__(message)
        self.report = report


class TornTailError(IntegrityError):
    """The ledger ends in a partial line: a crash interrupted an append.

    This is damage, not tampering; ``ledger repair`` moves the torn bytes to quarantine.
    """


class RepairRefusedError(IntegrityError):
    """``repair`` found damage other than a torn tail and will not touch the file."""


class CheckpointError(IntegrityError):
    """A checkpoint is malformed or its signature does not verify."""


# --- we could not check --------------------------------------------------------------------


class EvidenceRefusedError(IntegrityError):
    """Evidence fetched from a remote was rewritten, forked or badly signed, and is not kept.

    Attributes:
        ledger_id: the ledger whose evidence ref was refused.
        seq: the first seq that is bad (changed, missing, or not validly signed).
    """

    def __init__(self, message: str, ledger_id: str, seq: int) -> None:
        super().__init__(message)
        self.ledger_id = ledger_id
        self.seq = seq


class UnverifiableError(LedgerError):
    """Something needed to check or write the evidence is missing or unreadable."""


class KeyNotFoundError(UnverifiableError):
    """No usable signing key, or no pinned public key to verify with."""


class StorageError(UnverifiableError):
    """A file could not be read, written, locked or synced.

    An fsync failure is always fatal: the caller must not retry and carry on (see "fsyncgate").
    """


class LockTimeoutError(StorageError):
    """ledger's lock on its file was not granted before the deadline: another process holds it.

    Never waited out: a client whose hook times out lets the tool call run unrecorded, so the
    call is denied instead, naming the holder when it can be found.
    """


class WorkspaceNotFoundError(UnverifiableError):
    """No ``.orchestration/`` directory was found from the starting directory upwards."""


class WorkspaceCopiedError(UnverifiableError):
    """The workspace holds a copy of a ledger that lives in another workspace (``cp -a``,
    ``rsync -a``, a tar round trip): nothing is written for it (its checkpoints, seal and trust
    pins are the original's) until ``ledger init --fork`` gives the copy a ledger of its own.

    Attributes:
        home: the workspace the ledger lives in.
        ledger_id: the copied ledger's id.
    """

    def __init__(self, root: str, home: str, ledger_id: str) -> None:
        super().__init__(
            f"this workspace ({root}) is a copy of {home}: its ledger {ledger_id} lives there, "
            "so nothing is recorded here and every tool call is denied; run `ledger init "
            "--fork` here to give the copy a ledger of its own (its first record names the "
            "ledger and head it was forked from); the original is not touched"
        )
        self.home = home
        self.ledger_id = ledger_id


class NotInitializedError(UnverifiableError):
    """The workspace exists but ``ledger init`` has not created a ledger in it."""


class ConfigError(UnverifiableError):
    """A workspace configuration file (YAML or JSON) is malformed or invalid."""


class RemoteError(UnverifiableError):
    """A git remote, or an evidence ref on it, cannot be read (``ledger push``/``fetch``)."""


# --- the input is refused --------------------------------------------------------------------


class VerbatimContentError(RemoteError):
    """``ledger push`` refused to publish records that hold content verbatim (written before
    format v3) without the flag that says so."""


class InputError(LedgerError):
    """The caller's input cannot be recorded (malformed, oversized, wrong type)."""


class NotAPersonError(InputError):
    """A command only a person may run (an approval) was run from inside an agent's process
    tree or environment (decision 0013: ``isatty`` is not a person)."""


class CanonicalizationError(InputError):
    """A value has no RFC 8785 canonical form under ledger's rules (floats, huge ints, ...)."""


class PolicyError(LedgerError):
    """A governance policy could not be evaluated (bad configuration or a crashed policy)."""
