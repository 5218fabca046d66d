"""Progress bars on a terminal (rich) for long exports, reports and checks.

Only the CLI shows them, only when stderr is a terminal; the library reports progress through
plain ``(phase, done, total)`` callbacks and never imports rich.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Progress = Callable[[str, int, int], None]

_LABELS = {
    "verify": "verifying",
    "segment": "copying segment",
    "data": "writing data",
    "report": "building report",
}


@contextmanager
def progress_bars(*, force: bool = False) -> Iterator[Progress | None]:
    """A ``(phase, done, total)`` callback drawing one bar per phase, or None off a terminal."""
    if not (force or sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console  # noqa: PLC0415 -- only on a terminal
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bars:

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bars.add_task(_LABELS.get(phase, phase), total=max(total, 1))
            bars.update(tasks[phase], completed=done, total=max(total, 1))

        yield update
