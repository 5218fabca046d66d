"""``ledger hook <client>``: the command agent clients run on every hook event.

A hot path: no Typer, no pydantic. Reads the client's JSON on stdin, governs and records it,
and answers in the client's protocol. It never crashes with a traceback: any failure becomes the
client's fail-closed answer for tool-gating events (deny with ``HOOK_ERROR``) and a
non-blocking exit 0 for everything else, and is recorded when the ledger is writable.

It imports only what an interpreter started without ``site`` has loaded (``posix``, not ``os``;
no ``from __future__``): the installed hook command runs it that way (``cli/_thin.py``).
"""

import gc
import posix
import sys

#: ``ledger hook``'s options (flag -> help), their one declaration: :func:`_parse` reads them, and
#: the Typer command (``cli/_app.py``, for ``--help`` and completion) is declared from them.
OPTIONS = {
    "--event": "The event this hook is registered for (fail closed on unparseable input).",
    "--root": "Workspace root (default: nearest parent holding .orchestration/).",
}


def _usage() -> str:
    if sys.flags.no_site and "site" not in sys.modules:
        _add_site()  # started by cli/_thin.py: ledger's dependencies are in site-packages
    from ledger import CLIENT_NAMES  # noqa: PLC0415 - the registry; only on a usage error

    return f"usage: ledger hook {{{'|'.join(CLIENT_NAMES)}}} [--event NAME] [--root DIR]"


def _parse(args: list[str]) -> tuple[str, str | None, str | None]:
    if not args:
        raise ValueError(_usage())
    client, rest = args[0], args[1:]
    options: dict[str, str] = {}
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        if name not in OPTIONS:
            raise ValueError(f"unexpected argument {name!r}; {_usage()}")
        if not eq:
            if not rest:
                raise ValueError(f"{name} needs a value; {_usage()}")
            value = rest.pop(0)
        options[name[2:]] = value
    return client, options.get("event"), options.get("root")


def main(args: list[str], *, own_process: bool = False, without_site: bool = False) -> int:
    """Entry point of the hook fast path: the resident decider answers when it can
    (``cli/_decider.py``), else this process decides, exactly as the decider would.

    Args:
        own_process: this process exists only for this hook call (the console script), so the
            garbage collector's work can be skipped where it only costs time (below).
        without_site: the interpreter started without ``site`` (``cli/_thin.py``): deciding
            here first adds the environment's site-packages, where ledger's dependencies are.
    """
    try:
        client, expected, root = _parse(args)
    except ValueError as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 2
    from cli._decider import MAX_PAYLOAD_BYTES, answer  # noqa: PLC0415 -- stdlib only

    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    except OSError:
        raw = b""  # an unreadable stdin is an unparseable payload: the fail-closed answer
    answered = answer(client, expected, root, raw)
    if answered is not None:
        code, out_bytes, err_bytes = answered
        out, err = hook_streams(
            out_bytes.decode("utf-8", "replace"), err_bytes.decode("utf-8", "replace")
        )
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.stdout.flush()
        sys.stderr.flush()
        if own_process:
            # Nothing of ledger was imported and the answer is out: the interpreter's teardown
            # (module and object finalisation, 1-2 ms of a ~14 ms call) has nothing to do.
            posix._exit(code)
        return code
    if without_site:
        _add_site()
    return _decide_here(client, expected, root, raw, own_process=own_process)


def _add_site() -> None:
    """What ``-S`` left out, before ledger is imported here: the environment's site-packages
    and ``.pth`` files (an editable install's path among them), exactly as a start with
    ``site`` adds them (``-I`` still keeps ``PYTHON*`` variables and the user's site out)."""
    import site  # noqa: PLC0415

    site.main()


def _decide_here(
    client: str, expected: str | None, root: str | None, raw: bytes, *, own_process: bool
) -> int:
    """Today's one-shot path: import ledger, govern, record, answer."""
    if own_process:
        # Importing the hook path creates ~17k long-lived container objects (modules,
        # classes, functions) and triggers ~40 collections that walk them and free almost
        # nothing; the interpreter's exit walks them all once more. Collect nothing while
        # importing, then freeze what was imported out of the collector's view (10-20% of the
        # call, bench/bench_hook.py). The call itself runs with the collector on.
        gc.disable()
    from ledger import run_hook  # noqa: PLC0415

    if own_process:
        gc.freeze()
        gc.enable()

    response = run_hook(client, raw, expected_event=expected, root=root)
    out, err = hook_streams(response.stdout, response.stderr)
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.stdout.flush()
    if own_process:
        gc.freeze()  # the process ends now: spare the exit's full collection (nothing to free)
    return response.exit_code


def hook_streams(stdout: str, stderr: str) -> tuple[str, str]:
    """What a hook call prints (each stream newline-terminated), whether this process or the
    decider decided: both paths print the same bytes."""
    out = stdout if not stdout or stdout.endswith("\n") else stdout + "\n"
    err = stderr.rstrip("\n") + "\n" if stderr else ""
    return out, err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
