"""Entry point of the ``ledger`` command (``cli/_launcher.py``).

``ledger append`` and ``ledger hook`` run on every agent tool call, ``mcp`` serves a client that
waits for it, and ``log``, ``show``, ``intent list``, ``blame`` and the top-level help are
interactive, so they are dispatched here without importing Typer, Click, Rich or pydantic
(~100 ms together); a running resident decider answers the interactive ones (``_served``).
Every other command goes to the Typer app in ``cli._app``.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``ledger`` with ``argv`` (default: ``sys.argv[1:]``)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return _dispatch(args, own_process=argv is None)
    except BrokenPipeError:  # `ledger log | head`: the reader has all it wanted
        from cli._exit import reader_gone  # noqa: PLC0415

        return reader_gone()


def _dispatch(args: list[str], *, own_process: bool) -> int:
    if args in ([], ["-h"], ["--help"]) and "_LEDGER_COMPLETE" not in os.environ:
        from cli._help import top_help  # noqa: PLC0415

        sys.stdout.write(top_help())
        return 0
    if args[:1] in (["--version"], ["-V"]):
        from ledger import __version__  # noqa: PLC0415

        print(f"ledger {__version__}")
        return 0
    if args and args[0] in ("log", "show"):  # they parse (and print --help) themselves
        served = _served(args[0], args[1:], own_process=own_process)
        if served is not None:
            return served
        from cli import _log  # noqa: PLC0415

        return (_log.log_main if args[0] == "log" else _log.show_main)(args[1:])
    if args[:1] == ["mcp"]:  # a client waits for the server's first answer
        from cli._mcp import main as mcp_main  # noqa: PLC0415

        return mcp_main(args[1:])
    if args[:2] == ["intent", "list"]:
        served = _served("intent list", args[2:], own_process=own_process)
        if served is not None:
            return served
        from cli._intent import list_main  # noqa: PLC0415

        return list_main(args[2:])
    fast = args and args[0] in ("append", "hook", "blame") and not {"--help", "-h"} & set(args)
    if fast and args[0] == "append":
        from cli._append import main as append_main  # noqa: PLC0415

        return append_main(args[1:])
    if fast and args[0] == "blame":
        served = _served("blame", args[1:], own_process=own_process)
        if served is not None:
            return served
        from cli._blame import main as blame_main  # noqa: PLC0415

        return blame_main(args[1:])
    if fast:
        from cli._hook import main as hook_main  # noqa: PLC0415

        return hook_main(args[1:], own_process=own_process)
    from cli._app import run_app  # noqa: PLC0415

    return run_app(args)


def _served(name: str, args: list[str], *, own_process: bool) -> int | None:
    """Print what a running resident decider answers for ``ledger <name> <args>`` (it has
    everything imported: decision 0014), or return None to run the command here."""
    from cli._decider import command  # noqa: PLC0415 -- stdlib only

    try:
        tty = sys.stdout.isatty()
        encodings = {
            str(stream.encoding).lower().replace("-", "") for stream in (sys.stdout, sys.stderr)
        }
    except (AttributeError, ValueError, OSError):  # no stdout, or a closed one
        return None
    if encodings != {"utf8"}:
        return None  # the decider answers in UTF-8; this process would print otherwise
    answered = command(name, args, tty=tty)
    if answered is None:
        return None
    code, out, err = answered
    for stream, data in ((sys.stdout, out), (sys.stderr, err)):
        raw = getattr(stream, "buffer", None)  # a text-only stream (a test's capture) has none
        if raw is not None:
            raw.write(data)
        else:
            stream.write(data.decode("utf-8", "replace"))
    sys.stdout.flush()
    sys.stderr.flush()
    if own_process:
        os._exit(code)  # nothing of ledger was imported: the interpreter's teardown is idle work
    return code


if __name__ == "__main__":
    sys.exit(main())
