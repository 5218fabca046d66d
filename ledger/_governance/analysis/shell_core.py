"""What every room of the shell analysis shares: the result (:class:`CommandClass`), the
accumulator a walk fills, one command line handed to a handler, GNU-style option parsing and
the walk of a program's entry in :data:`~ledger._governance.analysis.programs.PROGRAMS`.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from ledger._governance.analysis.programs import (
    DESTROYS,
    DEVICES,
    operand_role,
    walk,
)
from ledger._governance.analysis.shell_scan import _State, _Word
from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile

Risk = Literal["SAFE", "DESTRUCTIVE"]


class CommandClass(NamedTuple):
    """What a shell command would do, as far as the command line tells.

    Attributes:
        risk: ``"DESTRUCTIVE"`` or ``"SAFE"``.
        reasons: why it is destructive, one short phrase per kind (``"rm removes files"``).
        targets: paths it would write, delete or move, as written (possibly relative, possibly
            a glob or containing ``$VAR``), in order of appearance, without duplicates. A SAFE
            command may have targets too: files and directories it only creates or appends to
            (``touch``, ``mkdir``, ``>>``) or overwrites (``overwrites``); they are writes, for
            the intent, scope and protected-path checks.
        unknown_targets: True when a destructive command's targets are not all known
            statically; never True for a SAFE command.
        unanalysable: why (part of) the command cannot be read statically at all: a function
            definition, ``trap``, ``eval`` of a run-time value, an unrecognised program...
            Such a command is never passed silently (decision 0001, Layer 1).
        words: every word of the command after quote removal (ANSI-C strings decoded),
            heredoc bodies included, for the protected-path checks.
        reach_words: the words that may end up naming a file something writes: those of every
            command that is not a recognised reader, or all words when anything is unknown.
        ledger_commands: the ``ledger`` subcommands the command runs, however ``ledger`` is
            spelled (``led''ger``, ``\\ledger``, ``command ledger``), e.g. ``("append",)``.
        too_large: the command exceeds :data:`MAX_COMMAND_CHARS` and was not analysed.
        reads: paths the command may read, resolved against the directory each part runs in
            (``cd``, ``pushd``, ``env -C``, ``git -C``, ``make -C``...): every argument of
            every command, since any program may open what it is given. The policy refuses
            those that are, or lead through symlinks to, ledger's private trust state.
        reads_environment: the command prints the whole environment (``env``, ``printenv``,
            ``set``, ``declare -p``, ``export -p``, ``/proc/*/environ``): a signing key held
            there (``$LEDGER_SIGNING_KEY``) would be read.
        refused: why the command must be refused outright: it sets or uses configuration
            that runs a program (``git config alias.x '!sh'``, ``git grep -O``,
            ``git -c core.fsmonitor=...``).
        overwrites: of a SAFE command's targets, those written whole (``> f``, ``cp a f``,
            ``-o f``): the command destroys content, and is DESTRUCTIVE, only if one of them
            already holds some, which the policy checks on disk; ``overwrite_reasons`` say
            what writes them.
        reads_anywhere: relative paths read from a directory not known statically
            (``cd "$X" && cat keys/k.pem``): the policy refuses those that could be inside the
            private trust state from some directory.
    """

    risk: Risk
    reasons: tuple[str, ...]
    targets: tuple[str, ...]
    unknown_targets: bool
    unanalysable: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    reach_words: tuple[str, ...] = ()
    ledger_commands: tuple[str, ...] = ()
    too_large: bool = False
    reads: tuple[str, ...] = ()
    reads_environment: bool = False
    refused: tuple[str, ...] = ()
    overwrites: tuple[str, ...] = ()
    overwrite_reasons: tuple[str, ...] = ()
    reads_anywhere: tuple[str, ...] = ()

    @property
    def destructive(self) -> bool:
        """Whether :attr:`risk` is ``"DESTRUCTIVE"``."""
        return self.risk == "DESTRUCTIVE"


# Writes to /dev/fd/N are not file writes either (DEVICES in programs.py).
_DEV_FD = r"/dev/fd/[0-9]+"


class _Acc:
    """Accumulates reasons, targets and words while walking a command."""

    __slots__ = (
        "cannot",
        "environment",
        "ledger",
        "overwrites",
        "reach",
        "reads",
        "reads_anywhere",
        "reasons",
        "refused",
        "soft",
        "targets",
        "unknown",
        "words",
    )

    def __init__(self) -> None:
        self.reads: dict[str, None] = {}
        self.reads_anywhere: dict[str, None] = {}
        self.soft: dict[str, None] = {}  # reasons of writes that overwrite only what exists
        self.overwrites: dict[str, None] = {}
        self.refused: dict[str, None] = {}
        self.environment = False
        self.reasons: dict[str, None] = {}
        self.targets: dict[str, None] = {}
        self.unknown = False
        self.cannot: dict[str, None] = {}
        self.words: list[str] = []
        self.reach: list[str] = []
        self.ledger: dict[str, None] = {}

    def flag(
        self,
        reason: str,
        state: _State,
        targets: Iterable[_Word] = (),
        *,
        unknown: bool = False,
    ) -> None:
        self.reasons.setdefault(reason, None)
        if unknown:
            self.unknown = True
        self.create(state, targets)

    def overwrite(self, reason: str, state: _State, targets: Iterable[_Word]) -> None:
        """Record paths written whole: destructive only where they already hold something,
        which the policy checks on disk (``echo x > new.ts`` is a write like the Write tool's).
        A target not known statically is destructive here and now."""
        unknown, prefix_unknown = self.unknown, state.prefix_unknown
        self.unknown = False
        texts = self.create(state, targets)
        if self.unknown or prefix_unknown or not texts:
            self.reasons.setdefault(reason, None)
            self.unknown = True
            return
        self.unknown = unknown
        self.soft.setdefault(reason, None)
        for text in texts:
            self.overwrites.setdefault(text, None)

    def create(self, state: _State, targets: Iterable[_Word]) -> list[str]:
        """Record paths written; alone (without :meth:`flag`), paths only created."""
        texts: list[str] = []
        for word in targets:
            if word.dynamic:
                self.unknown = True
            text = word.text
            if not text.startswith(("/", "~")):
                if state.prefix_unknown:
                    self.unknown = True
                elif state.prefix is not None:
                    text = state.prefix if text == "." else posixpath.join(state.prefix, text)
            self.targets.setdefault(text, None)
            texts.append(text)
        return texts

    def unanalysable(self, why: str) -> None:
        self.cannot.setdefault(why, None)

    def refuse(self, why: str) -> None:
        self.refused.setdefault(why, None)

    def read(self, state: _State, words: Iterable[_Word]) -> None:
        """Record the paths ``words`` may name, resolved against ``state``'s directory."""
        for word in words:
            text = word.text
            if text.startswith("-"):
                text = text.partition("=")[2]  # --file=PATH; a bare flag names nothing
            if not text or text.startswith(("/", "~")):
                if text:
                    self.reads.setdefault(text, None)
                continue
            if state.prefix_unknown:
                # `cd "$X" && cat keys/k.pem`: relative to a directory we cannot know.
                self.reads_anywhere.setdefault(text, None)
                continue
            if state.prefix is not None:
                text = posixpath.join(state.prefix, text)
            self.reads.setdefault(text, None)

    def mark(self) -> tuple[int, int, bool, int]:
        return len(self.reasons), len(self.targets), self.unknown, len(self.cannot)

    def result(self) -> CommandClass:
        for target in self.targets:
            if _is_evidence_ref_file(target):
                self.refuse(f"{target} is git's store of the evidence refs (refs/ledger*)")
        words = tuple(self.words)
        if any("/proc/" in w and "environ" in w for w in words):
            self.environment = True  # cat /proc/self/environ, < /proc/$$/environ
        # Anything unknown may receive any word (``ls .orch* | xargs rm``): all of them reach.
        reach = words if (self.unknown or self.cannot) else tuple(self.reach)
        destructive = bool(self.reasons)
        return CommandClass(
            "DESTRUCTIVE" if destructive else "SAFE",
            # Once destructive, overwrites are just more of what is destroyed.
            tuple({**self.reasons, **self.soft}) if destructive else (),
            tuple(self.targets),
            self.unknown and destructive,
            unanalysable=tuple(self.cannot),
            words=words,
            reach_words=reach,
            ledger_commands=tuple(self.ledger),
            reads=tuple(self.reads),
            reads_environment=self.environment,
            refused=tuple(self.refused),
            overwrites=() if destructive else tuple(self.overwrites),
            overwrite_reasons=() if destructive else tuple(self.soft),
            reads_anywhere=tuple(self.reads_anywhere),
        )


# git's files for the evidence refs: loose refs under refs/ledger*, and packed-refs, which can
# hold them too [gitrepository-layout(5)].
_EVIDENCE_REF_FILE = lazy_compile(r"(^|/)\.git/(.*/)?(refs/ledger[^/]*(/|$)|packed-refs$)")
_EVIDENCE_REF_SAMPLES = (
    (".git", "refs", "ledger"),
    (".git", "refs", "ledger-incoming"),
    (".git", "refs", "ledger-remotes"),
    (".git", "packed-refs"),
)


def _is_evidence_ref_file(target: str) -> bool:
    text = posixpath.normpath(target).casefold()
    if _EVIDENCE_REF_FILE.search(text):
        return True
    if not any(c in text for c in "*?["):
        return False
    # A glob: matched segment by segment (a `*` never crosses a `/`) from the .git it names.
    tail = ".git/" + text.rsplit("/.git/", 1)[1] if "/.git/" in text else text
    parts = tail.split("/")
    return any(
        len(parts) == len(sample) and all(map(fnmatch.fnmatchcase, sample, parts))
        for sample in _EVIDENCE_REF_SAMPLES
    )


def _is_fd(text: str) -> bool:
    return text.isdigit() or text == "-" or (text[:-1].isdigit() and text.endswith("-"))


def _is_device(text: str) -> bool:
    return text in DEVICES or re.fullmatch(_DEV_FD, text) is not None


# --- option parsing --------------------------------------------------------------------------


class _Opts:
    """Options and operands of one command line (GNU getopt style).

    A plain class, not a NamedTuple: each NamedTuple costs ~0.25 ms to create at import.
    """

    __slots__ = ("flags", "operands")

    def __init__(self, flags: dict[str, list[_Word | None]], operands: list[_Word]) -> None:
        self.flags = flags  # "-f" / "--force" -> values (None for an option without one)
        self.operands = operands


def _parse_opts(
    args: Sequence[_Word],
    short_with_arg: str = "",
    long_with_arg: Iterable[str] = (),
    *,
    stop_at_operand: bool = False,
) -> _Opts:
    """Split ``args`` into options and operands.

    Short options cluster (``-rf``); a short option listed in ``short_with_arg`` takes the rest
    of its cluster or the next word as its value. ``--name=value`` is split; a long option in
    ``long_with_arg`` takes the next word. ``--`` ends options; GNU tools accept options after
    operands, so parsing continues past operands unless ``stop_at_operand``.
    """
    long_args = frozenset(long_with_arg)
    flags: dict[str, list[_Word | None]] = {}
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if text == "--":
            operands.extend(args[i:])
            break
        if text.startswith("--") and len(text) > 2:
            name, eq, value = text.partition("=")
            if eq:
                flags.setdefault(name, []).append(_Word(value, dynamic=word.dynamic))
            elif name in long_args and i < len(args):
                flags.setdefault(name, []).append(args[i])
                i += 1
            else:
                flags.setdefault(name, []).append(None)
            continue
        if text.startswith("-") and len(text) > 1:
            for pos, letter in enumerate(text[1:], start=2):
                if letter in short_with_arg:
                    rest = text[pos:]
                    if rest:
                        flags.setdefault("-" + letter, []).append(_Word(rest, dynamic=word.dynamic))
                    elif i < len(args):
                        flags.setdefault("-" + letter, []).append(args[i])
                        i += 1
                    else:
                        flags.setdefault("-" + letter, []).append(None)
                    break
                flags.setdefault("-" + letter, []).append(None)
            continue
        operands.append(word)
        if stop_at_operand:
            operands.extend(args[i:])
            break
    return _Opts(flags, operands)


def _values(opts: _Opts, *names: str) -> list[_Word]:
    return [v for name in names for v in opts.flags.get(name, ()) if v is not None]


def _has(opts: _Opts, *names: str) -> bool:
    return any(name in opts.flags for name in names)


def _not_device(words: Iterable[_Word]) -> list[_Word]:
    return [w for w in words if not _is_device(w.text)]


# --- per-command analysis ---------------------------------------------------------------------

Kind = Literal["read", "run", "write", "unknown"]
"""What one simple command is, for the protected-path checks: a recognised reader (its words
name files it only reads), an opaque runner (tests, builds, interpreters: quiet, but whatever it
names it may write), a writer we model, or something we cannot read."""


class _Cmd:
    """One command line handed to a per-command handler."""

    __slots__ = ("acc", "args", "depth", "name", "piped", "state")

    def __init__(
        self, name: str, args: list[_Word], *, state: _State, acc: _Acc, depth: int, piped: bool
    ) -> None:
        self.name = name  # basename of argv[0]
        self.args = args  # argv[1:]
        self.state = state
        self.acc = acc
        self.depth = depth
        self.piped = piped


def _table(name: str, spec: str, args: list[_Word], state: _State, acc: _Acc) -> Kind:
    """Walk ``args`` against the program's entry in :data:`PROGRAMS`: every word is accounted
    for, or the command is unanalysable."""
    kind: Kind = "read"
    destroyed: list[_Word] = []
    for role, index, value, option in walk(spec, [w.text for w in args]):
        source = args[index]
        word = source if value is None else _Word(value, dynamic=source.dynamic)
        if role == "delete":
            destroyed.append(word)
        elif role == "create":
            # Creating a file or directory overwrites nothing: not destructive, but the paths
            # are written (touch .orchestration/keys/x.json breaks verify).
            acc.create(state, [word])
            kind = "write"
        elif role == "unknown":
            acc.unanalysable(f"{name} {option}: option not modelled")
            kind = "unknown"
        elif role == "exec":
            acc.unanalysable(f"{name} {option or word.text} runs a command")
            kind = "unknown"
        elif role == "somewhere":
            acc.flag(f"{name} {option} writes a file it names itself", state, unknown=True)
            kind = "write"
        elif role == "write" and word.text != "-" and not _is_device(word.text):
            acc.overwrite(f"{name} {option or 'operand'} overwrites a file", state, [word])
            kind = "write"
        elif role == "read":
            acc.read(state, [word])
        elif role == "operands":
            acc.read(state, [word])
            if operand_role(spec) not in ("read", "text"):
                why = f"{name} {option} reads more operands from a file the hook cannot read"
                acc.flag(why, state, unknown=True)
                kind = "write"
        elif role == "config":
            acc.unanalysable(f"{name} {option} reads options or settings from a file")
            kind = "unknown"
        elif role == "format":
            kind = _format_writes(name, option, word, state, acc) or kind
    if name in DESTROYS:
        acc.flag(DESTROYS[name], state, destroyed)  # rm with no operand is still rm
        kind = "write"
    return kind


# curl's ``-w`` writes to the file ``%output{FILE}`` names (``%output{>>FILE}`` appends)
# [curl(1) --write-out]; ``@FILE`` reads the format from a file.
_OUTPUT_FORMAT = lazy_compile(r"%output\{(>>)?([^}]*)\}")


def _format_writes(name: str, option: str, word: _Word, state: _State, acc: _Acc) -> Kind | None:
    """A format string that names the files it writes: each one a write, checked like any."""
    if word.text.startswith("@") or word.dynamic:
        acc.unanalysable(f"{name} {option} reads its format from a file or a run-time value")
        return "unknown"
    kind: Kind | None = None
    for append, path in _OUTPUT_FORMAT.findall(word.text):
        target = _Word(path)
        if append:
            acc.create(state, [target])
        else:
            acc.overwrite(f"{name} {option} %output overwrites a file", state, [target])
        kind = "write"
    return kind


def _account(name: str, spec: str, args: list[_Word], acc: _Acc) -> None:
    """Only account for the options of a writer whose operands its handler models."""
    for role, _index, _value, option in walk(spec, [w.text for w in args]):
        if role == "unknown":
            acc.unanalysable(f"{name} {option}: option not modelled")
        elif role == "exec":
            acc.unanalysable(f"{name} {option} runs a command")


def _option_value(args: list[_Word], i: int, attached: str | None) -> _Word | None:
    """The value of the option ``args[i]``: attached (``--opt=v``) or the next word."""
    if attached is not None:
        return _Word(attached, dynamic=args[i].dynamic)
    return args[i + 1] if i + 1 < len(args) else None


def _merge(acc: _Acc, sub: _Acc, *, unknown: bool = False) -> None:
    for reason in sub.reasons:
        acc.reasons.setdefault(reason, None)
    for target in sub.targets:
        acc.targets.setdefault(target, None)
    acc.unknown = acc.unknown or sub.unknown or unknown
    acc.cannot.update(sub.cannot)
    acc.ledger.update(sub.ledger)
    acc.words.extend(sub.words)
    acc.reach.extend(sub.reach)


def _is_remote(text: str) -> bool:
    """``[user@]host:path`` or ``rsync://``: the far end is not on this machine."""
    head = text.split("/", 1)[0]
    return ":" in head or text.startswith("rsync://")
