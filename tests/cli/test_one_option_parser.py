"""``hook``, ``append`` and ``blame`` are parsed twice: by a Typer-free fast path on every call,
and by the Typer app for ``--help`` and completion. Both come from one declaration per command
(``OPTIONS`` in cli/_hook.py, cli/_append.py, cli/_blame.py); these tests hold them equal, so an
option added to one parser and not the other fails here."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from cli import _append, _blame, _hook
from cli._app import app


def _typer_options(name: str) -> dict[str, tuple[bool, str | None, Any]]:
    """flag -> (is a flag, help, default) of the Typer command ``name``."""
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    return {
        param.opts[0]: (param.is_flag, param.help, param.default)
        for param in command.params
        if param.param_type_name == "option" and param.opts[0] != "--help"
    }


def _declared(options: dict[str, tuple[str | None, str]]) -> dict[str, tuple[bool, str]]:
    return {flag: (metavar is None, help_text) for flag, (metavar, help_text) in options.items()}


def test_hook_options_are_the_declared_ones() -> None:
    typer_options = _typer_options("hook")
    assert {flag: (False, help_text) for flag, help_text in _hook.OPTIONS.items()} == {
        flag: (is_flag, help_text) for flag, (is_flag, help_text, _) in typer_options.items()
    }


def test_append_options_are_the_declared_ones() -> None:
    typer_options = _typer_options("append")
    assert _declared(_append.OPTIONS) == {
        flag: (is_flag, help_text) for flag, (is_flag, help_text, _) in typer_options.items()
    }
    # ... with the fast path's defaults.
    defaults = _append.parse_args([])
    assert typer_options["--kind"][2] == defaults.kind
    assert typer_options["--json"][2] is defaults.as_json is False


def test_blame_options_are_the_declared_ones() -> None:
    typer_options = _typer_options("blame")
    assert _declared(_blame.OPTIONS) == {
        flag: (is_flag, help_text) for flag, (is_flag, help_text, _) in typer_options.items()
    }
    argparse_options = {
        action.option_strings[0]: (action.nargs == 0, action.help)
        for action in _blame.parser()._actions
        if action.option_strings and action.option_strings[0] not in ("-h", "--help")
    }
    assert argparse_options == _declared(_blame.OPTIONS)


@pytest.mark.parametrize("flag", list(_append.OPTIONS))
def test_append_fast_path_reads_every_declared_option(flag: str) -> None:
    metavar, _ = _append.OPTIONS[flag]
    parsed = _append.parse_args([flag] if metavar is None else [flag, "x"])
    assert parsed != _append.parse_args([])


@pytest.mark.parametrize("flag", list(_blame.OPTIONS))
def test_blame_fast_path_reads_every_declared_option(flag: str) -> None:
    metavar, _ = _blame.OPTIONS[flag]
    args = ["src/a.py", flag] if metavar is None else ["src/a.py", flag, "7"]
    parsed = _blame.fast_parse(args, environ={})
    assert parsed is not None
    assert parsed != _blame.fast_parse(["src/a.py"], environ={})


@pytest.mark.parametrize("flag", list(_hook.OPTIONS))
def test_hook_fast_path_reads_every_declared_option(flag: str) -> None:
    client, event, root = _hook._parse(["claude", flag, "x"])
    assert client == "claude"
    assert (event, root) == (("x", None) if flag == "--event" else (None, "x"))


def test_an_undeclared_option_is_refused_by_the_fast_paths() -> None:
    with pytest.raises(_append.UsageError, match="unexpected argument"):
        _append.parse_args(["--kinds", "x"])
    assert _blame.fast_parse(["src/a.py", "--porcelainx"], environ={}) is None
    with pytest.raises(ValueError, match="unexpected argument"):
        _hook._parse(["claude", "--events", "x"])
