"""``ledger key add | pin | verifier``: who the ledger trusts, and how others check checkpoints.

Registered on the ``key`` group of ``cli._app`` by :func:`register`.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Annotated

import typer

from cli._exit import OK
from cli._options import JsonOption, RootOption, run_action
from ledger import InputError, Ledger

_run = run_action


def _public_key(value: str) -> bytes:
    """A public key given as base64 (32 bytes), a Go note verifier key, or a keyring file."""
    path = Path(value)
    if value.endswith(".json") and path.is_file():
        try:
            value = str(json.loads(path.read_text(encoding="utf-8"))["public_key"])
        except (OSError, ValueError, KeyError, TypeError):
            raise InputError(f"{path} is not a ledger key file") from None
    elif value.count("+") >= 2 and not value.startswith("PRIVATE"):
        value = value.split("+", 2)[2]  # <name>+<key id>+base64(0x01 || key); base64 has "+"
    try:
        raw = base64.b64decode(value, validate=True)
    except binascii.Error:
        raise InputError("the public key is not base64") from None
    if len(raw) == 33 and raw[0] == 1:
        raw = raw[1:]
    if len(raw) != 32:
        raise InputError("an Ed25519 public key is 32 bytes")
    return raw


def register(key_app: typer.Typer) -> None:
    """Add the commands to the ``ledger key`` group."""

    @key_app.command("add")
    def key_add(
        public_key: Annotated[
            str,
            typer.Argument(
                help="The teammate's public key: base64, a note verifier key, or a "
                "keys/*.json file."
            ),
        ],
        root: RootOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Trust another key (a teammate, another machine): recorded as key.added, signed by
        the active key."""

        def action() -> int:
            record = Ledger.open(root).add_key(_public_key(public_key))
            if as_json:
                print(json.dumps(record.data, indent=2, sort_keys=True))
            else:
                print(f"added {record.body['key']} at seq {record.seq}")
            return OK

        _run(action)

    @key_app.command("pin")
    def key_pin(
        kid: Annotated[
            str | None,
            typer.Argument(help="Key id to vouch for (default: the genesis record's key)."),
        ] = None,
        from_seq: Annotated[
            int, typer.Option("--from-seq", min=0, help="First seq the key is trusted for.")
        ] = 0,
        root: RootOption = None,
    ) -> None:
        """Vouch for a key outside the workspace ($LEDGER_HOME/trusted/): the trust root that
        an agent rewriting .orchestration/ cannot change."""

        def action() -> int:
            ledger = Ledger.open(root)
            path = ledger.pin_trusted(kid, from_seq=from_seq)
            print(f"pinned {kid or 'the genesis key'} for ledger {ledger.ledger_id} in {path}")
            return OK

        _run(action)

    @key_app.command("verifier")
    def key_verifier(
        kid: Annotated[
            str | None, typer.Argument(help="Key id (default: every key in the keyring).")
        ] = None,
        root: RootOption = None,
    ) -> None:
        """Print C2SP signed-note verifier keys (Go: golang.org/x/mod/sumdb/note), so others
        can check this ledger's checkpoints."""

        def action() -> int:
            entries = [e for e in Ledger.open(root).keyring() if kid in (None, e.kid)]
            if not entries:
                raise InputError(f"{kid} is not in the keyring")
            for entry in entries:
                print(entry.note_verifier_key())
            return OK

        _run(action)
