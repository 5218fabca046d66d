"""Environment assignments and option values, checked against the tables of
:mod:`ledger._governance.analysis.program_values`: what they run, load, configure or write.

A value that is a command line (``PAGER``, ``rsync -e``) is analysed as one and stays quiet only
when it is a reader; options for another program (``LESS``, ``MANOPT``) are walked against that
program's entry; a file written becomes a target like any other; a file of settings, a library
or an engine asks, since what it holds is not on the command line.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from ledger._governance.analysis.program_values import (
    OPTION_VALUES,
    SSH_OPTIONS,
    TRACE_FLAGS,
    environment_role,
)
from ledger._governance.analysis.programs import PROGRAMS, SPECIAL_VARIABLES, walk
from ledger._governance.analysis.shell_core import Kind, _Acc
from ledger._governance.analysis.shell_scan import _State, _Word

__all__ = ["Analyze", "check_environment", "check_option_values"]

Analyze = Callable[[str, _State, _Acc, int], Kind]
"""Analyse a command line given as text into an accumulator; returns what it is."""

_REMOTE_SHELLS = frozenset({"ssh", "rsh"})
_CHECKED_SPECIAL = frozenset({"exec", "remote"})
"""Roles whose value this module reads (``PAGER=cat``), so the variable's name alone does not
make the command unanalysable."""
_QUIET_OPTION_ROLES = frozenset({"value", "read", "text", "operands"})


def check_environment(
    words: list[_Word],
    kind: Kind | None,
    state: _State,
    acc: _Acc,
    *,
    depth: int,
    analyze: Analyze,
    exported: bool = False,
) -> None:
    """Check assignments ``NAME=value`` made for a command of ``kind`` (None: no command, a
    shell variable). A name the table does not know is the project's own setting under a
    runner (which runs the project's code anyway) and for a plain shell variable; for any
    other program, or exported to every later one, it asks."""
    for word in words:
        name, _, value = word.text.partition("=")
        name = name.rstrip("+").split("[", 1)[0]
        role = environment_role(name)
        if name in SPECIAL_VARIABLES and role not in _CHECKED_SPECIAL:
            continue  # already unanalysable
        what = f"{name}="
        if role is None:
            if exported or kind not in (None, "run"):
                acc.unanalysable(f"{what}: a variable the table of environment does not know")
        elif word.dynamic and role != "text":
            acc.unanalysable(f"{what} set to a run-time value")
        else:
            check_value(what, role, _Word(value), state, acc, depth=depth, analyze=analyze)


def check_option_values(
    name: str, args: list[_Word], state: _State, acc: _Acc, *, depth: int, analyze: Analyze
) -> None:
    """Check the values of ``name``'s options listed in :data:`OPTION_VALUES`."""
    table = OPTION_VALUES.get(name)
    if table is None:
        return
    for i, word in enumerate(args):
        text = word.text
        if text == "--":
            return
        option, value = _split_option(text, table)
        if option is None:
            continue
        if value is None:
            if i + 1 >= len(args):
                continue
            value = args[i + 1]
        else:
            value = _Word(value.text, dynamic=word.dynamic)
        what = f"{name} {option}"
        if value.dynamic:
            acc.unanalysable(f"{what} of a run-time value")
            continue
        check_value(what, table[option], value, state, acc, depth=depth, analyze=analyze)


def _split_option(text: str, table: dict[str, str]) -> tuple[str | None, _Word | None]:
    """``--opt=v`` / ``-Xv`` / ``-X`` / ``-opt``: the option of ``table`` it gives, and the
    attached value if any."""
    if text in table:
        return text, None
    if text.startswith("--"):
        option, eq, value = text.partition("=")
        return (option, _Word(value)) if eq and option in table else (None, None)
    if text.startswith("-") and len(text) > 2 and text[:2] in table:
        return text[:2], _Word(text[2:])
    return None, None


def check_value(
    what: str, role: str, value: _Word, state: _State, acc: _Acc, *, depth: int, analyze: Analyze
) -> None:
    """Apply one role of the tables to one value."""
    text = value.text
    if role == "text":
        return
    if role in ("exec", "remote"):
        _command_value(what, role, text, state, acc, depth=depth, analyze=analyze)
    elif role.startswith("options:"):
        program = role.partition(":")[2]
        words = _options_value(what, program, text, acc)
        check_option_values(program, words, state, acc, depth=depth, analyze=analyze)
    elif role == "ssh":
        # ssh_config(5): "Key=value" or "Key value".
        parts = re.split(r"\s*=\s*|\s+", text.strip(), maxsplit=1)
        key, sub = parts[0], parts[1] if len(parts) > 1 else ""
        sub_role = SSH_OPTIONS.get(key.strip().lower())
        if sub_role is None:
            acc.unanalysable(f"{what} {key}: an ssh option the table does not know")
        else:
            check_value(
                f"{what} {key}", sub_role, _Word(sub), state, acc, depth=depth, analyze=analyze
            )
    elif role == "write" or (role == "trace" and text.lower() not in TRACE_FLAGS):
        if text and not text.isdigit():
            acc.create(state, [_Word(text)])
    elif role == "operands":
        acc.flag(f"{what} reads operands from a file the hook cannot read", state, unknown=True)
    elif role != "trace":  # spawn, config, load
        acc.unanalysable(f"{what} {_WHY.get(role, 'is not modelled')}")


_WHY = {
    "spawn": "runs a command",
    "config": "reads settings or options from a file, which can hold commands",
    "load": "loads a library, engine or plugin",
}


def _command_value(
    what: str, role: str, text: str, state: _State, acc: _Acc, *, depth: int, analyze: Analyze
) -> None:
    """A value that is a command line: quiet when it is a reader (``PAGER='less -R'``) or, for
    a remote shell, ``ssh`` whose own options are accounted for."""
    # LESSOPEN and LESSCLOSE start with "|" or "||" (pipe) and may start with "-" [less(1)].
    import shlex  # noqa: PLC0415 -- only for a command given as a value

    line = text.lstrip("|-").strip() if what.startswith("LESS") else text.strip()
    if not line:
        return
    sub = _Acc()
    kind = analyze(line, state.copy(), sub, depth + 1)
    acc.words.extend(sub.words)
    try:
        program = posixpath.basename(shlex.split(line)[0])
    except (ValueError, IndexError):
        program = ""
    remote = role == "remote" and program in _REMOTE_SHELLS
    clean = not (sub.cannot or sub.reasons or sub.targets or sub.refused)
    # A reader of the table itself: `sh -c 'cat'` or `env cat` would hide what runs.
    # A remote shell is given the host and the far end's command line: only ssh or rsh.
    quiet = remote if role == "remote" else kind == "read" and program in PROGRAMS
    if clean and quiet:
        return
    acc.unanalysable(f"{what} runs {line[:60]!r}")
    acc.cannot.update(sub.cannot)
    acc.refused.update(sub.refused)


def _options_value(what: str, program: str, text: str, acc: _Acc) -> list[_Word]:
    """More options for ``program`` (``LESS='-R'``, ``MANOPT='-P cp'``): each one accounted for
    by its entry, and none that writes, runs or configures. Returns them as words, for the
    option values' own check."""
    import shlex  # noqa: PLC0415 -- only for options given as a value

    try:
        words = shlex.split(text)
    except ValueError:
        acc.unanalysable(f"{what} cannot be parsed")
        return []
    for role, _index, _value, option in walk(PROGRAMS[program], words):
        if role not in _QUIET_OPTION_ROLES:
            acc.unanalysable(f"{what} gives {program} {option or 'an operand'} ({role})")
            break
    if any(w.startswith("+") for w in words):
        acc.unanalysable(f"{what} gives {program} a command to run at start")
    return [_Word(w) for w in words]
