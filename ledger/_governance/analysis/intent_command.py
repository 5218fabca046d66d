"""``ledger intent`` commands typed in the agent's shell: selecting, clearing and asking to
expand an intent, recognised by :func:`parse_intent_command` for the intent policy.
"""

from __future__ import annotations

import re
from typing import Literal

from ledger._errors import InputError
from ledger._governance.analysis.shell_scan import _tokenize, _Word
from ledger._startup.namedtuple import NamedTuple

__all__ = ["IntentCommand", "parse_intent_command"]


class IntentCommand(NamedTuple):
    """A ``ledger intent ...`` command recognised by :func:`parse_intent_command`.

    Attributes:
        action: ``"select"``, ``"clear"`` or ``"expand"`` (a scope expansion request).
        intent_id: the intent id (``None`` for ``clear``).
        globs: the requested globs (``expand`` only).
        reason: the ``--reason`` text (``expand`` only, optional).
        via: ``"hook"`` (typed in the agent's shell) or ``"mcp"`` (a call of ``ledger mcp``'s
            tool, :mod:`ledger._governance.analysis.ledger_mcp`): recorded as the selection's
            ``via``.
    """

    action: Literal["select", "clear", "expand"]
    intent_id: str | None
    globs: tuple[str, ...]
    reason: str | None
    via: Literal["hook", "mcp"] = "hook"


_INTENT_ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]*"


def parse_intent_command(command: str) -> IntentCommand | None:
    """Recognise an agent's ``ledger intent`` command.

    Accepted forms, as the whole command, optionally preceded by ``cd DIR &&``. ``ledger`` is
    the program found on ``PATH``, however it is quoted (``led''ger``, ``\\ledger``, ``command
    ledger``); a path (``./ledger``, ``/tmp/x/ledger``) is another program, so it is not
    recognised here and its writing subcommands are refused like any other ledger run::

        ledger intent select INT-001
        ledger intent clear
        ledger intent expand INT-001 'src/auth/**' docs/auth.md [--reason "why"]

    Anything else (other operators, redirections, run-time expansions, unknown options) gives
    None, so the command is then governed like any other.

    Args:
        command: the shell command string.

    Returns:
        The :class:`IntentCommand`, or None.
    """
    try:
        tokens, extra = _tokenize(command)
    except InputError:
        return None
    while tokens and tokens[-1] == "\n":
        tokens.pop()
    if extra or any(isinstance(t, _Word) and (t.dynamic or t.substitutions) for t in tokens):
        return None
    if "&&" in tokens:
        cut = tokens.index("&&")
        prefix, tokens = tokens[:cut], tokens[cut + 1 :]
        if not (
            len(prefix) == 2
            and isinstance(prefix[0], _Word)
            and prefix[0].text == "cd"
            and isinstance(prefix[1], _Word)
        ):
            return None
    words = [t for t in tokens if isinstance(t, _Word)]
    if words and words[0].text == "command":
        words = words[1:]  # `command ledger`: the program on PATH, never a function
        tokens = tokens[1:]
    if len(words) != len(tokens) or len(words) < 3:
        return None
    if words[0].text != "ledger" or words[1].text != "intent":
        return None
    action = words[2].text
    rest = [w.text for w in words[3:]]
    if action == "clear":
        return IntentCommand("clear", None, (), None) if not rest else None
    if action == "select":
        if len(rest) == 1 and re.fullmatch(_INTENT_ID, rest[0]):
            return IntentCommand("select", rest[0], (), None)
        return None
    if action != "expand" or not rest or not re.fullmatch(_INTENT_ID, rest[0]):
        return None
    return _parse_expand(rest[0], rest[1:])


def _parse_expand(intent_id: str, args: list[str]) -> IntentCommand | None:
    globs: list[str] = []
    reason: str | None = None
    i = 0
    options_done = False
    while i < len(args):
        text = args[i]
        i += 1
        if not options_done and text == "--":
            options_done = True
        elif not options_done and text == "--reason":
            if i >= len(args) or reason is not None:
                return None
            reason = args[i]
            i += 1
        elif not options_done and text.startswith("--reason="):
            if reason is not None:
                return None
            reason = text[len("--reason=") :]
        elif not options_done and text.startswith("-"):
            return None
        elif text:
            globs.append(text)
        else:
            return None
    if not globs:
        return None
    return IntentCommand("expand", intent_id, tuple(globs), reason)
