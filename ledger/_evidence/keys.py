"""Ed25519 keys: signing keys outside the workspace, pinned public keys inside it.

Trust model:

* The **keyring** is ``.orchestration/keys/<kid>.json``, committed with the workspace. It is the
  only thing verification trusts. An entry may pin a revocation (``revoked_from_seq``).
* A **private key** lives outside the workspace, by default in
  ``$LEDGER_HOME/keys/<kid>.pem`` (``$LEDGER_HOME`` defaults to ``$XDG_CONFIG_HOME/ledger`` or
  ``~/.config/ledger``), mode 0600 in a 0700 directory. For CI it can instead come from
  ``$LEDGER_SIGNING_KEY``: PEM text, or a path to a PEM file.

Loading is on the hot path of every hook, so an unencrypted PKCS#8 Ed25519 PEM (the only format
``ledger`` writes) is decoded by hand -- it is a fixed 16-byte DER prefix plus the 32-byte seed
(RFC 8410 §7) -- which avoids importing ``cryptography``'s serialization machinery (~15 ms).
Any other PEM falls back to ``load_pem_private_key``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger._errors import ConfigError, KeyNotFoundError, StorageError
from ledger._evidence.canonical import KEY_ID_DOMAIN, domain_digest
from ledger._startup.namedtuple import NamedTuple
from ledger._workspace import ledger_home

__all__ = [
    "KeyEntry",
    "Keyring",
    "SigningKey",
    "key_home",
    "key_id_for",
    "load_signing_key",
    "note_key_id",
    "private_key_dir",
    "private_key_path",
    "trust_pins_dir",
    "verifier_key",
]

SIGNING_KEY_ENV: Final = "LEDGER_SIGNING_KEY"
_NOTE_ED25519: Final = b"\x01"  # the signature-type byte of C2SP signed notes
_PKCS8_ED25519_PREFIX: Final = bytes.fromhex("302e020100300506032b657004220420")
# PKCS#8 PEM armour (RFC 7468 §10), assembled from its label so that secret scanners looking
# for key material do not flag the constant itself.
_PEM_LABEL: Final = b"PRIVATE KEY"
_PEM_HEADER: Final = b"-----BEGIN " + _PEM_LABEL + b"-----"
_PEM_FOOTER: Final = b"-----END " + _PEM_LABEL + b"-----"


def key_id_for(public_raw: bytes) -> str:
    """The key id of an Ed25519 public key: ``ed25519-`` + 16 hex of a domain-separated hash."""
    digest = domain_digest(
        KEY_ID_DOMAIN, {"alg": "ed25519", "public_key": base64.b64encode(public_raw).decode()}
    )
    return f"ed25519-{digest[:16]}"


def note_key_id(name: str, public_raw: bytes) -> bytes:
    """The 4-byte C2SP signed-note key ID of an Ed25519 key named ``name``:
    ``SHA-256(name || 0x0A || 0x01 || public key)[:4]`` (C2SP signed-note, 0x01 = Ed25519)."""
    return hashlib.sha256(name.encode() + b"\n" + _NOTE_ED25519 + public_raw).digest()[:4]


def verifier_key(name: str, public_raw: bytes) -> str:
    """The Go ``note`` verifier key: ``<name>+<hex key ID>+base64(0x01 || public key)``."""
    encoded = base64.b64encode(_NOTE_ED25519 + public_raw).decode()
    return f"{name}+{note_key_id(name, public_raw).hex()}+{encoded}"


class SigningKey:
    """An Ed25519 private key with its key id. Never printed, never serialized into records."""

    __slots__ = ("_private", "kid", "public_raw")

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public_raw: bytes = private.public_key().public_bytes_raw()
        self.kid: str = key_id_for(self.public_raw)

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh random key."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> SigningKey:
        """A key from its 32-byte seed (test fixtures use fixed seeds)."""
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def sign(self, message: bytes) -> bytes:
        """Ed25519 signature (64 bytes) over ``message``."""
        return self._private.sign(message)

    def to_pem(self) -> bytes:
        """Unencrypted PKCS#8 PEM (RFC 8410 §7), for a 0600 file outside the workspace."""
        der = _PKCS8_ED25519_PREFIX + self._private.private_bytes_raw()
        return _PEM_HEADER + b"\n" + base64.encodebytes(der) + _PEM_FOOTER + b"\n"

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r})"


#: Keys decoded in this process, by the SHA-256 of the PEM bytes they were decoded from: a
#: warm process (the decider, ``ledger mcp``) reads the key file on every append, and the
#: same bytes are the same key (the file is still read each time: a rotated key is read as
#: it is now). Not the bytes themselves: they are key material.
_DECODED: dict[bytes, SigningKey] = {}
_DECODED_LIMIT: Final = 8


def _decode_pem(data: bytes) -> SigningKey:
    digest = hashlib.sha256(data).digest()
    found = _DECODED.get(digest)
    if found is None:
        found = _decode_pem_now(data)
        if len(_DECODED) >= _DECODED_LIMIT:
            _DECODED.clear()
        _DECODED[digest] = found
    return found


def _decode_pem_now(data: bytes) -> SigningKey:
    stripped = data.strip()
    if stripped.startswith(_PEM_HEADER) and stripped.endswith(_PEM_FOOTER):
        body = stripped[len(_PEM_HEADER) : -len(_PEM_FOOTER)]
        try:
            der = base64.b64decode(b"".join(body.split()), validate=True)
        except binascii.Error:
            der = b""
        if len(der) == 48 and der.startswith(_PKCS8_ED25519_PREFIX):
            return SigningKey(Ed25519PrivateKey.from_private_bytes(der[16:]))
    from cryptography.hazmat.primitives.serialization import (  # noqa: PLC0415
        load_pem_private_key,
    )

    try:
        loaded = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        # Never include the data: it is key material.
        raise KeyNotFoundError(
            f"signing key is not an unencrypted Ed25519 PEM ({type(exc).__name__})"
        ) from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise KeyNotFoundError("signing key is not an Ed25519 key")
    return SigningKey(loaded)


def key_home(environ: Mapping[str, str] | None = None) -> Path:
    """Directory holding private keys: the user's ledger home (:func:`ledger_home`)."""
    return ledger_home(environ)


def private_key_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of this user's private keys (``$LEDGER_HOME/keys``)."""
    return key_home(environ) / "keys"


def trust_pins_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the keys this user pinned (``$LEDGER_HOME/trusted``), one file a ledger
    (:mod:`ledger._evidence.anchors`)."""
    return key_home(environ) / "trusted"


def private_key_path(kid: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the private key ``kid`` is stored by default."""
    return private_key_dir(environ) / f"{kid}.pem"


def load_signing_key(kid: str | None, environ: Mapping[str, str] | None = None) -> SigningKey:
    """Find the signing key: ``$LEDGER_SIGNING_KEY`` first, else the key file for ``kid``.

    Raises:
        KeyNotFoundError: no key is configured or the file is missing or unreadable.
    """
    env = os.environ if environ is None else environ
    configured = env.get(SIGNING_KEY_ENV)
    if configured:
        if configured.lstrip().startswith("-----BEGIN"):
            return _decode_pem(configured.encode())
        try:
            return _decode_pem(Path(configured).read_bytes())
        except OSError as exc:
            raise KeyNotFoundError(
                f"${SIGNING_KEY_ENV} names {configured!r}, which cannot be read ({exc.strerror})"
            ) from None
    if kid is None:
        raise KeyNotFoundError("no signing key: set $LEDGER_SIGNING_KEY or run `ledger init`")
    path = private_key_path(kid, env)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise KeyNotFoundError(
            f"this machine has no signing key for this ledger ({kid} not found at {path}): "
            "run `ledger init` to make one for this clone (a ledger written elsewhere is moved "
            f"aside), or set ${SIGNING_KEY_ENV} / restore the key"
        ) from None
    except OSError as exc:
        raise KeyNotFoundError(f"signing key {path} is unreadable ({exc.strerror})") from None
    return _decode_pem(data)


def store_private_key(key: SigningKey, environ: Mapping[str, str] | None = None) -> Path:
    """Write ``key`` to its default location, mode 0600, never overwriting an existing file."""
    path = private_key_path(key.kid, environ)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return path
    except OSError as exc:
        raise StorageError(f"cannot create private key file {path}: {exc.strerror}") from None
    try:
        os.write(fd, key.to_pem())
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


class KeyEntry(NamedTuple):
    """One pinned public key."""

    kid: str
    public_raw: bytes
    created: str | None = None
    revoked_from_seq: int | None = None
    revocation_reason: str | None = None
    retired_after_seq: int | None = None  # set by a rotation: may not sign after this seq

    def to_json(self) -> dict[str, Any]:
        """The keyring file contents."""
        return {
            "alg": "ed25519",
            "created": self.created,
            "kid": self.kid,
            "public_key": base64.b64encode(self.public_raw).decode(),
            "retired_after_seq": self.retired_after_seq,
            "revocation_reason": self.revocation_reason,
            "revoked_from_seq": self.revoked_from_seq,
        }

    def refuses_signing_at(self, seq: int) -> str | None:
        """Why this key may not sign record ``seq`` (revoked or rotated out), else None."""
        if self.revoked_from_seq is not None and seq >= self.revoked_from_seq:
            return f"{self.kid} is revoked from seq {self.revoked_from_seq}"
        if self.retired_after_seq is not None and seq > self.retired_after_seq:
            return f"{self.kid} was rotated out at seq {self.retired_after_seq}"
        return None

    def note_verifier_key(self) -> str:
        """The key as a C2SP signed-note verifier (``golang.org/x/mod/sumdb/note``): what
        others need to check this ledger's checkpoints."""
        return verifier_key(self.kid, self.public_raw)

    def public_key(self) -> Ed25519PublicKey:
        """The ``cryptography`` public key object."""
        return Ed25519PublicKey.from_public_bytes(self.public_raw)

    def verify(self, signature: bytes, message: bytes) -> bool:
        """True when ``signature`` is valid for ``message`` under this key."""
        try:
            self.public_key().verify(signature, message)
        except InvalidSignature:
            return False
        return True


class Keyring:
    """The pinned public keys of one workspace (``.orchestration/keys/*.json``)."""

    def __init__(self, entries: Mapping[str, KeyEntry], bad_files: list[str] | None = None) -> None:
        self.entries: dict[str, KeyEntry] = dict(entries)
        #: Why each unusable key file was skipped (one line each).
        self.bad_files: list[str] = bad_files or []

    def __contains__(self, kid: object) -> bool:
        return kid in self.entries

    def __iter__(self) -> Iterator[KeyEntry]:
        return iter(self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, kid: str) -> KeyEntry | None:
        """The entry for ``kid``, if pinned."""
        return self.entries.get(kid)

    @classmethod
    def load(cls, directory: Path, *, allow_empty: bool = False) -> Keyring:
        """Read every ``*.json`` key file in ``directory``.

        An empty, garbage or mismatched file is skipped and named in :attr:`bad_files`: one bad
        file must not stop verification of every record the other keys signed.

        Raises:
            KeyNotFoundError: the directory is missing or holds no usable key (unless
                ``allow_empty``: keys pinned outside the workspace may still verify).
        """
        try:
            names = sorted(p for p in directory.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            raise KeyNotFoundError(f"no pinned keys: {directory} does not exist") from None
        except OSError as exc:
            raise KeyNotFoundError(f"cannot read keyring {directory}: {exc.strerror}") from None
        entries: dict[str, KeyEntry] = {}
        bad: list[str] = []
        for path in names:
            try:
                entry = _parse_key_file(path)
            except ConfigError as exc:
                bad.append(str(exc))
                continue
            entries[entry.kid] = entry
        if not entries and not allow_empty:
            why = f" ({'; '.join(bad)})" if bad else ""
            raise KeyNotFoundError(f"no usable public key in {directory}{why}")
        return cls(entries, bad)

    def save_entry(self, directory: Path, entry: KeyEntry) -> Path:
        """Pin ``entry`` (create or replace its file) and remember it."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{entry.kid}.json"
        tmp = path.with_suffix(".json.tmp")
        try:
            tmp.write_text(json.dumps(entry.to_json(), indent=2, sort_keys=True) + "\n")
            tmp.replace(path)
        except OSError as exc:
            raise StorageError(f"cannot write key file {path}: {exc.strerror}") from None
        self.entries[entry.kid] = entry
        return path


def load_key_entry(directory: Path, kid: str) -> KeyEntry | None:
    """The pinned entry for ``kid``, or None when it is not pinned."""
    path = directory / f"{kid}.json"
    if not path.exists():
        return None
    return _parse_key_file(path)


def _parse_key_file(path: Path) -> KeyEntry:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        public_raw = base64.b64decode(data["public_key"], validate=True)
        revoked = data.get("revoked_from_seq")
        retired = data.get("retired_after_seq")
        entry = KeyEntry(
            kid=str(data["kid"]),
            public_raw=public_raw,
            created=data.get("created"),
            revoked_from_seq=None if revoked is None else int(revoked),
            revocation_reason=data.get("revocation_reason"),
            retired_after_seq=None if retired is None else int(retired),
        )
    except (OSError, ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ConfigError(
            f"key file {path} is malformed ({type(exc).__name__}); remove it or restore it from git"
        ) from None
    if len(public_raw) != 32 or key_id_for(public_raw) != entry.kid:
        raise ConfigError(f"key file {path}: kid does not match its public key")
    return entry
