"""What every Typer command module shares: the common options and the one way to run an action
(errors mapped to exit codes in one place, ``cli/_exit.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from cli._exit import OK, guarded

__all__ = ["ForceOption", "JsonOption", "RootOption", "run_action"]

RootOption = Annotated[
    str | None,
    typer.Option(
        "--root",
        envvar="LEDGER_ROOT",
        help="Workspace root (default: nearest parent holding .orchestration/).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing output.")]


def run_action(action: Callable[[], int]) -> None:
    """Run a command's action; a non-zero exit code (or a mapped error) ends the command."""
    code = guarded(action)
    if code != OK:
        raise typer.Exit(code)
