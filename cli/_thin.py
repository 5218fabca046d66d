"""What a command client's hook runs: ``<python> -I -S <install>/cli/_thin.py <ledger> hook ...``.

``ledger install`` writes this command for every command client (Codex, Gemini CLI, Cursor,
Cline, Copilot ...). Without ``site`` the interpreter starts in about the time of a bare
``python3 -I -S``: ``site`` (the environment's site-packages and ``.pth`` files) was most of
what the ``ledger`` script's start cost beyond that, and the resident decider's thin client
needs none of it. So this script puts the installation's own folder (two up from here, as the
installer resolved it) on the path just long enough to import the stdlib-only hook entry
(``cli/_hook.py``, ``cli/_decider.py``), and runs it with ``sys.argv[0]`` set to the
``ledger`` script named after it (the decider it starts is that script, with ``site``).

Fails closed as before: when the decider cannot answer, ``cli/_hook.py`` adds ``site`` and
decides in this process, exactly as the ``ledger`` script would; when this script cannot run
at all (a moved installation), it says so in one line and exits 1, which the installed
command's guard turns into a block on tool-gating events.

Kept tiny on purpose: a script run as ``__main__`` is compiled on every start (no bytecode
cache), the modules it imports are not.
"""

import sys


def _run() -> int:
    script, *rest = sys.argv
    if len(rest) < 2 or rest[1] != "hook":
        sys.stderr.write("usage: python -I -S cli/_thin.py <ledger script> hook <client> ...\n")
        return 2
    install = script[: script.rfind("/")]
    install = install[: install.rfind("/")]
    sys.path.insert(0, install)
    try:
        from cli._hook import main  # noqa: PLC0415
    except ImportError as exc:
        sys.stderr.write(f"ledger: cannot load the hook from {install} ({exc})\n")
        return 1
    finally:
        sys.path.remove(install)  # ledger itself is imported through site, as by the script
    sys.argv = rest[:1] + rest[2:]
    return main(rest[2:], own_process=True, without_site=True)


if __name__ == "__main__":
    sys.exit(_run())
