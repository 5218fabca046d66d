"""``ledger serve [--status | --stop]``: the resident decider (``ledger/_hooks/decider.py``)."""

from __future__ import annotations

import json
import time

from cli._exit import OK, UNVERIFIABLE


def run(*, status: bool, stop: bool, idle: float, as_json: bool) -> int:
    """Serve in the foreground, or report on / stop the running decider."""
    from ledger import decider_status, serve_decider, stop_decider  # noqa: PLC0415

    if status:
        found = decider_status()
        if as_json:
            print(json.dumps(found._asdict(), indent=2, sort_keys=True))
        elif found.running:
            age = time.time() - (found.started or time.time())
            rss = f", {found.rss_kb / 1024:.1f} MB RSS" if found.rss_kb else ""
            print(
                f"decider: running, pid {found.pid}, ledger {found.version}, up {age:.0f} s, "
                f"{found.requests} calls from {found.workspaces} workspace(s){rss}\n"
                f"socket: {found.socket}"
            )
        else:
            print(f"decider: not running (socket {found.socket}); the next hook call starts it")
        return OK if found.running else UNVERIFIABLE
    if stop:
        stopped = stop_decider()
        print("decider: stopped" if stopped else "decider: none was running")
        return OK
    from cli._blame import served as blame  # noqa: PLC0415
    from cli._intent import served_list  # noqa: PLC0415
    from cli._log import served_log, served_show  # noqa: PLC0415

    # The read-only commands it answers for their callers (cli/_entry.py asks it first).
    commands = {"blame": blame, "log": served_log, "show": served_show, "intent list": served_list}
    if not serve_decider(idle_seconds=idle, commands=commands):
        print("decider: another one already serves this socket")
    return OK
