"""``ledger hook <client>``: the command agent clients run on every hook event.

A hot path: no Typer, no pydantic. Reads the client's JSON on stdin, governs and records it,
and answers in the client's protocol. It never crashes with a traceback: any failure becomes the
client's fail-closed answer for tool-gating events (deny with ``HOOK_ERROR``) and a
non-blocking exit 0 for everything else, and is recorded when the ledger is writable.
"""

from __future__ import annotations

import sys


def _usage() -> str:
    from ledger import CLIENT_NAMES  # noqa: PLC0415 - the registry; only on a usage error

    return f"usage: ledger hook {{{'|'.join(CLIENT_NAMES)}}} [--event NAME] [--root DIR]"


def _parse(args: list[str]) -> tuple[str, str | None, str | None]:
    if not args:
        raise ValueError(_usage())
    client, rest = args[0], args[1:]
    options: dict[str, str] = {}
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        if name not in ("--event", "--root"):
            raise ValueError(f"unexpected argument {name!r}; {_usage()}")
        if not eq:
            if not rest:
                raise ValueError(f"{name} needs a value; {_usage()}")
            value = rest.pop(0)
        options[name[2:]] = value
    return client, options.get("event"), options.get("root")


def _record_failure(client: str, message: str, raw: bytes, root: str | None) -> None:
    """Best effort: put the failure itself in the ledger (never a partial line)."""
    try:
        import hashlib  # noqa: PLC0415

        from ledger._evidence.ledger import Ledger  # noqa: PLC0415
        from ledger._hooks.service import locate_root  # noqa: PLC0415

        ledger = Ledger.open(locate_root(None, root))
        from ledger._clients import MAX_PAYLOAD_BYTES  # noqa: PLC0415

        truncated = len(raw) > MAX_PAYLOAD_BYTES  # stdin is read only up to the limit + 1
        ledger.append("hook.error", {
            "client": client, "message": message[:2000],
            "payload_bytes": MAX_PAYLOAD_BYTES if truncated else len(raw),
            "payload_sha256": None if truncated else hashlib.sha256(raw).hexdigest(),
            "payload_truncated": truncated}, actor={"client": client})
    except Exception:  # noqa: BLE001, S110 -- recording the failure must not mask the answer
        pass


def main(args: list[str]) -> int:
    """Entry point of the hook fast path."""
    from ledger._clients import (  # noqa: PLC0415
        MAX_PAYLOAD_BYTES,
        fail_closed_response,
        parse_payload,
        render_response,
    )

    try:
        client, expected, root = _parse(args)
    except ValueError as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 2
    raw = b""
    event = None
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        event = parse_payload(client, raw, expected_event=expected)
        from ledger._hooks.service import handle_event  # noqa: PLC0415

        decision = handle_event(event, root=root)
        response = render_response(client, event, decision)
    except Exception as exc:  # noqa: BLE001 -- every failure gets the client's fail-closed answer
        message = f"{type(exc).__name__}: {exc}" if not _is_ledger_error(exc) else str(exc)
        _record_failure(client, message, raw, root)
        response = fail_closed_response(client, event, message, raw=raw, expected_event=expected)
    if response.stdout:
        sys.stdout.write(response.stdout)
        if not response.stdout.endswith("\n"):
            sys.stdout.write("\n")
    if response.stderr:
        sys.stderr.write(response.stderr.rstrip("\n") + "\n")
    sys.stdout.flush()
    return response.exit_code


def _is_ledger_error(exc: BaseException) -> bool:
    from ledger._errors import LedgerError  # noqa: PLC0415

    return isinstance(exc, LedgerError)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
