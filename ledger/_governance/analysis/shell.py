"""Static analysis of shell commands run through an agent's shell tool.

Claude Code's ``Bash``/``PowerShell``, Cursor's ``beforeShellExecution``, Gemini CLI's
``run_shell_command`` and Codex's ``shell`` all hand the hook one command string
(``tool_input.command``, docs/architecture.md). Claude Code runs it with ``bash`` (or
``sh -c`` for hooks themselves, §1.1), so we read it with POSIX/bash rules.

:func:`classify_command` answers two questions for the policy engine:

* is the command DESTRUCTIVE (it deletes, moves, overwrites, re-permissions files, or rewrites
  git history) or SAFE, and why;
* which paths would it write (``targets``), as written in the command, so the engine can run them
  through :func:`ledger._governance.analysis.paths.check_write_scope`; ``unknown_targets`` says
  some could not be known statically (``rm $(cat list)``, ``xargs rm``, ``rm "$DIR"``, ``eval
  "$X"``); which of them are only overwritten (``overwrites``: destructive only over existing
  content, which the policy checks on disk);
* which paths it may read (``reads``), whether it prints the environment, and what must be
  refused outright (``refused``: git configuration that runs a program).

Every program it knows is an entry of the table in :mod:`ledger._governance.analysis.programs`
(options and what each option and operand means); a word the table cannot account for makes the
command unanalysable. Handlers remain only for structural cases (``find -exec``, ``xargs``,
wrappers, ``bash -c``, ``sed``/``awk`` scripts, git, archivers, the coreutils writers).

The analysis is deliberately conservative: anything it cannot read (unbalanced quotes, a command
name computed at run time, ``eval`` of a variable, a shell reading commands from a pipe) is
DESTRUCTIVE with unknown targets. It is not a sandbox: a program can still write files it is not
told about (``python -c``, ``make``, ``npm run``); those are SAFE here, because nothing in the
command line says otherwise.

Tokenizing. A small bash-aware scanner is used rather than :mod:`shlex`, even with
``punctuation_chars``: shlex returns the *quoted* word ``';'`` or ``'>'`` (and the escaped
``\\;`` that ``find -exec`` needs) as the same token as the operator, so ``grep '>' f`` would
look like a redirection, and it does not know ``$( ... )``, backticks, ``${ ... }`` or heredocs,
all of which decide what runs. The scanner keeps, for every word, whether it was quoted and
whether it contains a run-time expansion, and returns the text of each command substitution so
it can be analyzed recursively. Any other redirection (``<``, ``<<``, ``<<<``, ``<&``) reads.
tree-sitter-bash was weighed against it and not adopted (README "Shell commands"): ~13.5 ms to
import and build a parser against 5.2 ms for this module and its table, no faster per command
(3.8 vs 4.8 us), and its tree drops what the policy needs (``${x@P}`` is a plain expansion).

Paths and ``cd``. Targets are reported as written, relative to the command's starting
directory. After a ``cd DIR`` in the same command (``cd .. && rm -rf main``), later relative
targets and reads are reported joined to ``DIR`` (and to ``cwd`` when given), so ``cd`` cannot be
used to move a target out of the workspace unseen; ``pushd``/``popd`` keep a real stack, a
subshell's ``cd`` ends with it, and ``env -C``, ``git -C``, ``make -C`` (``_CHDIR_OPTIONS``) move
only their own command. A ``cd`` to a run-time value marks the following relative targets
unknown.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Literal, NamedTuple

from ledger._errors import InputError
from ledger._git import GIT_EXEC_KEYS
from ledger._governance.analysis.programs import (
    COMPRESSOR,
    DESTROYS,
    PROGRAMS,
    TAR_RUNS,
    WRITERS,
    walk,
)

__all__ = [
    "CommandClass",
    "IntentCommand",
    "Risk",
    "classify_command",
    "parse_intent_command",
]

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
            Such a command is never passed silently (issue 8, Layer 1).
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


# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------

# Control and redirection operators, longest first so greedy matching is right [bash(1)
# DEFINITIONS "control operator", REDIRECTION].
_OPERATORS = (
    ";;&", "&>>", "<<<", "<<-",
    "&&", "||", ";;", ";&", "|&", ">>", ">|", ">&", "<&", "<>", "<<", "&>",
    ">", "<", "|", "&", ";", "(", ")",
)  # fmt: skip
_OPERATOR_CHARS = frozenset("|&;<>()")
_SEPARATORS = frozenset({"\n", ";", "&&", "||", "|", "|&", "&", ";;", ";&", ";;&"})
_PIPES = frozenset({"|", "|&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_WORD_PAREN = frozenset("=!@*+?")  # a=( array ), !( extglob ): "(" continues the word
_NAME_CHARS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Characters with no meaning to the scanner, read as one run; "#" inside a word is literal.
_PLAIN_RUN = re.compile(r"[^ \t\r\n\\'\"$`|&;<>()]+")
_GLOB_OR_BRACE = re.compile(r"[*?\[{]")
# Arithmetic that reads a variable ($x, a bare name, a[i]); digits-with-base (16#ff, 0x1f) do not.
_ARITH_READS = re.compile(r"[$`\[]|(?<![0-9#A-Za-z_])[A-Za-z_]")
_PARAM_TRANSFORM = re.compile(r"[#!]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:\[[^\]]*\])?@[A-Za-z]")
_PARAM_NAMES = re.compile(r"![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[@*]\])")  # ${!prefix*}, ${!a[@]}
# ${a[i]} with a non-literal subscript, ${x:off:len} with a non-numeric offset: arithmetic.
_PARAM_SUBSCRIPT = re.compile(r"#?[A-Za-z_][A-Za-z0-9_]*\[(?![0-9]+\]|[@*]\])")
_PARAM_OFFSET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?:(?![-=?+])[^}]*[A-Za-z_$`]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# Regexes used only by rarer commands are kept as strings and compiled on first use through
# re's own cache: compiling them all at import would cost the hook process ~1 ms for nothing.


class _Word:
    """One shell word after quote removal.

    ``text`` keeps expansions verbatim (``$HOME/x``, ``$(cat list)``); ``dynamic`` says the word
    contains one, i.e. its run-time value is not ``text``.
    """

    __slots__ = ("dynamic", "glob", "quoted", "substitutions", "text")

    def __init__(self, text: str = "", *, quoted: bool = False, dynamic: bool = False) -> None:
        self.text = text
        self.quoted = quoted
        self.dynamic = dynamic
        self.glob = False  # an unquoted * ? [ or {a,b}: bash expands it against the tree
        self.substitutions: list[str] = []

    def __repr__(self) -> str:
        return f"_Word({self.text!r}{', dynamic' if self.dynamic else ''})"


_Token = _Word | str  # a str token is an operator (or "\n")


def _fail(message: str) -> InputError:
    """Build the error the scanner raises; classify_command turns it into DESTRUCTIVE."""
    return InputError(message)


def _skip_single(text: str, i: int) -> int:
    """Return the index after the ``'`` closing the single-quoted string opened before ``i``."""
    j = text.find("'", i)
    if j < 0:
        raise _fail("unbalanced single quote")
    return j + 1


def _skip_double(text: str, i: int) -> int:
    """Return the index after the ``"`` closing the string opened before ``i``."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        elif c == "$" and text.startswith("$(", i):
            i = _find_close_paren(text, i + 2) + 1
        elif c == "`":
            i = _find_backtick(text, i + 1) + 1
        else:
            i += 1
    raise _fail("unbalanced double quote")


def _find_backtick(text: str, i: int) -> int:
    """Return the index of the backtick closing the substitution opened before ``i``."""
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i
        else:
            i += 1
    raise _fail("unbalanced backtick")


def _find_close(text: str, i: int, opener: str, closer: str, what: str) -> int:
    """Return the index of the ``closer`` matching an ``opener`` just before ``i``.

    Quote-, escape-, backtick- and nesting-aware, so ``$(echo ")")`` closes at the right place
    and a ``$(...)`` inside ``${...}`` is skipped whole.
    """
    depth = 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            i = _skip_single(text, i + 1)
            continue
        if c == '"':
            i = _skip_double(text, i + 1)
            continue
        if c == "`":
            i = _find_backtick(text, i + 1) + 1
            continue
        if opener != "(" and text.startswith("$(", i):
            i = _find_close_paren(text, i + 2) + 1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _fail(f"unbalanced {what}")


def _find_close_paren(text: str, i: int) -> int:
    """Return the index of the ``)`` closing a ``(`` opened just before ``i``."""
    return _find_close(text, i, "(", ")", "parenthesis")


def _find_close_brace(text: str, i: int) -> int:
    """Return the index of the ``}`` closing a ``${`` opened just before ``i``."""
    return _find_close(text, i, "{", "}", "${")


def _substitutions_in(text: str) -> list[str]:
    """Find the command substitutions executed when ``text`` is expanded like a heredoc body.

    Used for unquoted heredoc bodies and ``${...}``/``$((...))`` contents, where quotes are not
    special but ``$( )`` and backticks still run commands.
    """
    found: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif text.startswith("$((", i) and text[_find_close_paren(text, i + 2) - 1] == ")":
            end = _find_close_paren(text, i + 2)
            found.extend(_substitutions_in(text[i + 3 : end - 1]))
            i = end + 1
        elif text.startswith("$(", i):
            end = _find_close_paren(text, i + 2)
            found.append(text[i + 2 : end])
            i = end + 1
        elif c == "`":
            end = _find_backtick(text, i + 1)
            found.append(_unescape_backtick(text[i + 1 : end]))
            i = end + 1
        else:
            i += 1
    return found


def _unescape_backtick(inner: str) -> str:
    r"""Undo the escaping bash applies inside backticks (``\``` ``\\`` ``\$``)."""
    return re.sub(r"\\([`\\$])", r"\1", inner)


class _Scanner:
    """Split a command string into words and operators (bash rules, no expansion)."""

    __slots__ = (
        "arith_failed", "bodies", "cannot", "extra_substitutions", "heredoc_op", "i", "n",
        "pending_heredocs",
        "text", "tokens", "word",
    )  # fmt: skip

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.n = len(text)
        self.tokens: list[_Token] = []
        self.word: _Word | None = None  # the word being built
        # Substitutions found in heredoc bodies: they run, but belong to no word.
        self.extra_substitutions: list[str] = []
        self.pending_heredocs: list[tuple[str, bool, bool]] = []  # (delim, strip_tabs, literal)
        self.heredoc_op: str | None = None  # "<<" or "<<-" waiting for its delimiter word
        self.bodies: list[str] = []  # heredoc bodies: data, or code for `bash`/`python -`
        # Once one "((" failed to close, later ones are read as subshells without another
        # scan to the end: retrying at every "(" made "((((..." quadratic (issue 8).
        self.arith_failed = False
        self.cannot: list[str] = []  # constructs no static reading can follow (issue 8)

    def scan(self) -> list[_Token]:
        """Return all tokens; raises InputError on unbalanced quoting."""
        text = self.text
        while self.i < self.n:
            c = text[self.i]
            if c in " \t\r":
                self._flush()
                self.i += 1
            elif c == "\n":
                self._newline()
            elif c == "#" and self.word is None:
                # A comment runs to the end of the line [bash(1) COMMENTS].
                end = text.find("\n", self.i)
                self.i = self.n if end < 0 else end
            elif c in "\\'\"$`":
                self._quoting(c)
            elif c in _OPERATOR_CHARS:
                self._operator(c)
            else:
                # A run of ordinary characters at once: appending one character at a time
                # copies the word each time (attribute strings are never resized in place).
                run = _PLAIN_RUN.match(text, self.i)
                end = run.end() if run else self.i + 1
                chunk = text[self.i : end]
                word = self._current()
                word.text += chunk
                if _GLOB_OR_BRACE.search(chunk):
                    word.glob = True
                self.i = end
        self._flush()
        # A heredoc whose command is on the last line has no body: nothing left to read.
        return self.tokens

    def _current(self) -> _Word:
        if self.word is None:
            self.word = _Word()
        return self.word

    def _flush(self) -> None:
        word = self.word
        if word is None:
            return
        if self.heredoc_op is not None:
            self.pending_heredocs.append((word.text, self.heredoc_op == "<<-", word.quoted))
            self.heredoc_op = None
        self.tokens.append(word)
        self.word = None

    def _newline(self) -> None:
        self._flush()
        self.tokens.append("\n")
        self.i += 1
        for delimiter, strip_tabs, literal in self.pending_heredocs:
            self._heredoc_body(delimiter, strip_tabs=strip_tabs, literal=literal)
        self.pending_heredocs.clear()

    def _quoting(self, c: str) -> None:
        """Handle a backslash, quote, ``$`` or backtick inside (or starting) a word."""
        text = self.text
        if c == "\\" and text.startswith("\n", self.i + 1):
            self.i += 2  # line continuation
            return
        word = self._current()
        if c == "\\":
            word.text += text[self.i + 1 : self.i + 2]
            word.quoted = True
            self.i += 2
        elif c == "'":
            end = _skip_single(text, self.i + 1)
            word.text += text[self.i + 1 : end - 1]
            word.quoted = True
            self.i = end
        elif c == '"':
            word.quoted = True
            self._double(word)
        elif c == "$":
            self._dollar(word, in_double=False)
        else:
            self._backtick(word)

    def _operator(self, c: str) -> None:
        """Handle a character of ``|&;<>()``: usually an operator, sometimes part of a word."""
        text = self.text
        word = self.word
        if c in "<>" and text.startswith("(", self.i + 1):
            # Process substitution <(cmd) / >(cmd): runs cmd, the word is a /dev/fd path.
            word = self._current()
            end = _find_close_paren(text, self.i + 2)
            word.substitutions.append(text[self.i + 2 : end])
            word.text += text[self.i : end + 1]
            word.dynamic = True
            self.i = end + 1
            return
        if c == "(" and word is not None and not word.quoted and word.text[-1:] in _WORD_PAREN:
            # Array assignment a=(x y) or extglob !(x): part of the word, not a subshell.
            end = _find_close_paren(text, self.i + 1)
            word.substitutions.extend(_substitutions_in(text[self.i + 1 : end]))
            word.text += text[self.i : end + 1]
            self.i = end + 1
            return
        if (
            c == "("
            and word is None
            and not self.arith_failed
            and text.startswith("((", self.i)
            and self._at_command_start()
        ):
            self._arith_command()
            return
        if c in "<>" and word is not None and not word.quoted and word.text.isdigit():
            self.word = None  # "2>file": the digits name a file descriptor
        else:
            self._flush()
        op = next(o for o in _OPERATORS if text.startswith(o, self.i))
        self.tokens.append(op)
        self.i += len(op)
        if op in ("<<", "<<-"):
            self.heredoc_op = op

    def _at_command_start(self) -> bool:
        return not self.tokens or (isinstance(self.tokens[-1], str) and self.tokens[-1] != ")")

    def _arith_command(self) -> None:
        """Read ``(( expr ))``: an arithmetic command, not two subshells."""
        try:
            end = _find_close_paren(self.text, self.i + 1)  # the outer ")"
        except InputError:
            end = -1
            self.arith_failed = True
        if end < 0 or self.text[end - 1] != ")":
            # Not "(( ... ))": really nested subshells.
            self.tokens.append("(")
            self.i += 1
            return
        inner = self.text[self.i + 2 : end - 1]
        self._arithmetic(inner)
        word = _Word(f"(({inner}))", dynamic=True)
        word.substitutions.extend(_substitutions_in(inner))
        self.tokens.append(word)
        self.i = end + 1

    def _double(self, word: _Word) -> None:
        """Read a double-quoted string starting at the opening quote."""
        text = self.text
        self.i += 1
        while self.i < self.n:
            c = text[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                nxt = text[self.i + 1 : self.i + 2]
                if nxt == "\n":
                    self.i += 2
                    continue
                # Inside "...", backslash escapes only $ ` " \ [bash(1) QUOTING].
                word.text += nxt if nxt in ('"', "\\", "$", "`") else "\\" + nxt
                self.i += 2
            elif c == "$":
                self._dollar(word, in_double=True)
            elif c == "`":
                self._backtick(word)
            else:
                word.text += c
                self.i += 1
        raise _fail("unbalanced double quote")

    def _dollar(self, word: _Word, *, in_double: bool) -> None:
        """Read an expansion starting at ``$``."""
        text = self.text
        i = self.i
        if text.startswith("$((", i) and text[_find_close_paren(text, i + 2) - 1] == ")":
            # $(( expr )): arithmetic. Only when it closes with "))": "$((cmd) )" is a command
            # substitution of a subshell, and bash runs it [bash(1) Arithmetic Expansion].
            end = _find_close_paren(text, i + 2)
            self._arithmetic(text[i + 3 : end - 1])
            word.substitutions.extend(_substitutions_in(text[i + 3 : end - 1]))
            word.text += text[i : end + 1]
            word.dynamic = True
            self.i = end + 1
        elif text.startswith("$(", i):
            end = _find_close_paren(text, i + 2)
            word.substitutions.append(text[i + 2 : end])
            word.text += text[i : end + 1]
            word.dynamic = True
            self.i = end + 1
        elif text.startswith("${", i):
            end = _find_close_brace(text, i + 2)
            self._parameter(text[i + 2 : end])
            word.substitutions.extend(_substitutions_in(text[i + 2 : end]))
            word.text += text[i : end + 1]
            word.dynamic = True
            self.i = end + 1
        elif not in_double and text.startswith("$'", i):
            # ANSI-C quoting: a literal string with C escapes [bash(1) QUOTING].
            j = i + 2
            while j < self.n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= self.n:
                raise _fail("unbalanced $' quote")
            word.text += _ansi_c(text[i + 2 : j])
            word.quoted = True
            self.i = j + 1
        elif not in_double and text.startswith('$"', i):
            self.i += 1  # locale translation: same as "..."
            word.quoted = True
            self._double(word)
        else:
            name = _NAME_CHARS.match(text, i + 1)
            if name:
                end = name.end()
            elif i + 1 < self.n and text[i + 1] in "@*#?$!-0123456789":
                end = i + 2
            else:
                word.text += "$"  # a lone dollar is literal
                self.i += 1
                return
            word.text += text[i:end]
            word.dynamic = True
            self.i = end

    def _arithmetic(self, expression: str) -> None:
        """Note an arithmetic expression that reads variables: bash evaluates a variable's value
        as an expression in turn, so ``x='a[$(cmd)]'; echo $((x))`` runs ``cmd``."""
        if _ARITH_READS.search(expression):
            self.cannot.append("arithmetic with expansions")

    def _parameter(self, inner: str) -> None:
        """Note ``${...}`` forms that evaluate code or names chosen at run time."""
        if _PARAM_TRANSFORM.match(inner):
            self.cannot.append("${x@P}-style transformation")  # prompt/escape expansion
        elif inner.startswith("!") and not _PARAM_NAMES.fullmatch(inner):
            self.cannot.append("indirect expansion ${!x}")
        elif _PARAM_SUBSCRIPT.match(inner) or _PARAM_OFFSET.match(inner):
            self.cannot.append("arithmetic with expansions")

    def _backtick(self, word: _Word) -> None:
        end = _find_backtick(self.text, self.i + 1)
        inner = self.text[self.i + 1 : end]
        word.substitutions.append(_unescape_backtick(inner))
        word.text += self.text[self.i : end + 1]
        word.dynamic = True
        self.i = end + 1

    def _heredoc_body(self, delimiter: str, *, strip_tabs: bool, literal: bool) -> None:
        """Skip a heredoc body after the newline that ends its command line.

        An unquoted delimiter means the body is expanded, so ``$( )`` in it runs.
        """
        lines_start = self.i
        while self.i < self.n:
            end = self.text.find("\n", self.i)
            line_end = self.n if end < 0 else end
            line = self.text[self.i : line_end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                body = self.text[lines_start : self.i]
                self.bodies.append(body)
                self.i = min(line_end + 1, self.n)
                if not literal:
                    self.extra_substitutions.extend(_substitutions_in(body))
                return
            self.i = line_end + 1
        # No terminator: bash reads to end of input (with a warning).
        self.bodies.append(self.text[lines_start:])
        if not literal:
            self.extra_substitutions.extend(_substitutions_in(self.text[lines_start:]))
        self.i = self.n


_ANSI_C_SIMPLE: Final = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_C_ESCAPE: Final = (
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}"
    r"|c.|.)"
)


def _ansi_c_one(match: re.Match[str]) -> str:
    code = match.group(1)
    head = code[0]
    if head in "xuU" and len(code) > 1:
        value = int(code[1:], 16)
        return chr(value) if value <= 0x10FFFF else "\ufffd"
    if head.isdigit():
        return chr(int(code, 8) & 0xFF)
    if head == "c" and len(code) == 2:
        return chr(ord(code[1].upper()) & 0x1F)  # control character \cX
    return _ANSI_C_SIMPLE.get(code, "\\" + code)


def _ansi_c(body: str) -> str:
    """Decode a ``$'...'`` string as bash does: ``\\x2e`` is ``.`` [bash(1) QUOTING]."""
    return re.sub(_ANSI_C_ESCAPE, _ansi_c_one, body)


def _tokenize(command: str) -> tuple[list[_Token], list[str]]:
    """Return the tokens of ``command`` and the substitutions found in heredoc bodies.

    Raises:
        InputError: on unbalanced quotes, parentheses, braces or backticks.
    """
    scanner = _tokenize_all(command)
    return scanner.tokens, scanner.extra_substitutions


def _tokenize_all(command: str) -> _Scanner:
    """Scan ``command``: tokens, heredoc substitutions and bodies, unanalysable constructs."""
    scanner = _Scanner(command)
    scanner.scan()
    return scanner


# --------------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------------

_MAX_DEPTH = 12  # nested bash -c / eval / $( ) / wrapper levels before we give up

# Writes to these are not file writes [POSIX "Special device files"; bash(1) REDIRECTION].
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_DEV_FD = r"/dev/fd/[0-9]+"

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox-sh"})
_KEYWORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac",
     "coproc", "time"}
)  # fmt: skip
_NO_COMMAND_KEYWORDS = frozenset({"for", "select", "case", "function", "in"})


class _State:
    """Directory state of the shell while reading a compound command."""

    __slots__ = ("cwd", "prefix", "prefix_unknown", "stack")

    def __init__(self, cwd: str | None, prefix: str | None, *, prefix_unknown: bool) -> None:
        self.cwd = cwd
        self.prefix = prefix
        self.prefix_unknown = prefix_unknown
        self.stack: list[tuple[str | None, bool]] = []  # pushd's directory stack

    def copy(self) -> _State:
        state = _State(self.cwd, self.prefix, prefix_unknown=self.prefix_unknown)
        state.stack = list(self.stack)
        return state

    def pushd(self, target: _Word | None) -> None:
        """``pushd DIR`` remembers where we are, then goes to DIR; other forms rotate the
        stack (``pushd``, ``pushd +1``), which we follow no further."""
        self.stack.append((self.prefix, self.prefix_unknown))
        if target is None or target.text.startswith(("+", "-")):
            self.prefix_unknown = True
            return
        self.cd(target)

    def popd(self) -> None:
        if not self.stack:
            self.prefix_unknown = True
            return
        self.prefix, self.prefix_unknown = self.stack.pop()

    def cd(self, target: _Word | None) -> None:
        """Apply ``cd target`` (None: ``cd`` alone, i.e. ``$HOME``)."""
        if target is None:
            self.prefix, self.prefix_unknown = "~", False
            return
        text = target.text
        if target.dynamic:
            # cd "$HOME/x" is as known as cd ~/x (an assignment to HOME is unanalysable).
            text = re.sub(r"^\$(HOME|\{HOME\})(?=/|$)", "~", text)
            if re.search(r"[$`]", text) or text == target.text:
                self.prefix_unknown = True
                return
            target = _Word(text)
        if target.text in ("-", ""):
            self.prefix_unknown = True
            return
        if target.text.startswith(("/", "~")):
            self.prefix, self.prefix_unknown = target.text, False
            return
        base = self.prefix if self.prefix is not None else self.cwd
        self.prefix = posixpath.join(base, target.text) if base else target.text


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


MAX_COMMAND_CHARS: Final = 64 * 1024
"""Commands longer than this are not analysed (and the policy denies them): analysis time is
linear, but a hook must answer well inside the clients' timeouts (Gemini's is 60 s)."""


def classify_command(command: str, cwd: str | None = None) -> CommandClass:
    """Classify a shell command as SAFE or DESTRUCTIVE and list the paths it would write.

    Compound commands are split on ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines; the
    analysis looks through ``sudo``, ``env``, ``nohup``, ``timeout``, ``xargs``, ``command``,
    ``exec``, ``bash -c``/``sh -c``, ``eval``, subshells, ``$( )``, backticks and process
    substitutions, ``find -delete``/``-exec``, and output redirections. See the module
    docstring for how ``cd`` and ``cwd`` shape the reported targets.

    Args:
        command: the command string (``tool_input.command``).
        cwd: the directory the command starts in; used only to anchor a relative ``cd``.

    Returns:
        The :class:`CommandClass`. A command that cannot be parsed (unbalanced quotes) is
        DESTRUCTIVE with unknown targets.

    Example:
        >>> classify_command("bash -c 'rm -rf src'").targets
        ('src',)
        >>> classify_command("echo hi > /dev/null").risk
        'SAFE'
    """
    if len(command) > MAX_COMMAND_CHARS:
        why = f"command longer than {MAX_COMMAND_CHARS} characters"
        return CommandClass("DESTRUCTIVE", (why,), (), True, (why,), too_large=True)
    acc = _Acc()
    _analyze_text(command, _State(cwd, None, prefix_unknown=False), acc, depth=0)
    return acc.result()


def _analyze_text(text: str, state: _State, acc: _Acc, *, depth: int) -> None:
    """Tokenize ``text`` and analyze every simple command in it."""
    if depth > _MAX_DEPTH:
        acc.flag("command nesting too deep to analyze", state, unknown=True)
        acc.unanalysable("command nesting too deep")
        return
    try:
        scanner = _tokenize_all(text)
    except InputError as exc:
        acc.flag(f"command cannot be parsed ({exc})", state, unknown=True)
        acc.unanalysable(f"command cannot be parsed ({exc})")
        acc.words.append(text)
        return
    for why in scanner.cannot:
        acc.unanalysable(why)
    # A heredoc body is data for `cat`, but code for `bash`, `python -` or `ed`: it reaches.
    acc.words.extend(scanner.bodies)
    acc.reach.extend(scanner.bodies)
    for inner in scanner.extra_substitutions:
        _analyze_text(inner, state.copy(), acc, depth=depth + 1)
    _analyze_tokens(scanner.tokens, state, acc, depth=depth)


def _analyze_tokens(tokens: Sequence[_Token], state: _State, acc: _Acc, *, depth: int) -> None:
    """Walk tokens, splitting them into simple commands and tracking subshells and ``cd``."""
    stack: list[_State] = []
    current: list[_Token] = []
    in_pipeline = False
    for index, tok in enumerate(tokens):
        if isinstance(tok, _Word):
            current.append(tok)
            continue
        if tok in _SEPARATORS or tok in {"(", ")"}:
            words_before = sum(isinstance(t, _Word) for t in current)
            if tok == "(" and words_before and _next_is(tokens, index, ")"):
                # "name() { ...; }": a function definition. It can shadow any command name
                # (`ls() { rm -rf x; }; ls`), so the line cannot be read statically; the body
                # is still analyzed as it comes, for its targets and words.
                acc.unanalysable("function definition")
                acc.words.extend(t.text for t in current if isinstance(t, _Word))
                acc.reach.extend(t.text for t in current if isinstance(t, _Word))
                current = []
                continue
            piped = in_pipeline or tok in _PIPES
            background = tok == "&"
            _analyze_simple(current, state, acc, depth=depth, piped=piped, background=background)
            current = []
            in_pipeline = tok in _PIPES
            if tok == "(":
                stack.append(state)
                state = state.copy()
            elif tok == ")" and stack:
                state = stack.pop()
            continue
        current.append(tok)  # a redirection operator
    _analyze_simple(current, state, acc, depth=depth, piped=in_pipeline, background=False)
    if stack:
        # An unclosed "(": bash would refuse the line, but we cannot tell what was meant.
        # (A stray ")" is tolerated: case patterns "a)" produce one.)
        acc.flag("command cannot be parsed (unbalanced parenthesis)", state, unknown=True)
        acc.unanalysable("unbalanced parenthesis")


def _next_is(tokens: Sequence[_Token], index: int, op: str) -> bool:
    return index + 1 < len(tokens) and tokens[index + 1] == op


def _analyze_simple(  # noqa: PLR0915 -- one pass over the tokens; split, the state scatters
    tokens: list[_Token],
    state: _State,
    acc: _Acc,
    *,
    depth: int,
    piped: bool,
    background: bool,
) -> None:
    """Analyze one simple command: redirections, substitutions, then its argv."""
    if not tokens:
        return
    words: list[_Word] = []
    in_test = False  # between "[[" and "]]", < and > compare strings
    leading = True  # only keywords so far: a "[[" here opens a test
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if isinstance(tok, _Word):
            bare = not tok.quoted
            if leading and bare and tok.text == "[[":
                in_test = True
            elif in_test and bare and tok.text == "]]":
                in_test = False
            elif in_test and (tok.dynamic or tok.substitutions):
                # [[ $x -eq 1 ]] evaluates x's value as arithmetic, which can run commands.
                acc.unanalysable("[[ ]] with expansions")
            leading = bare and tok.text in _KEYWORDS
            words.append(tok)
            i += 1
            continue
        if in_test and tok in ("<", ">"):
            words.append(_Word(tok))  # string comparison inside [[ ]], not a redirection
            i += 1
            continue
        leading = False
        target = tokens[i + 1] if i + 1 < len(tokens) else None
        if not isinstance(target, _Word):
            acc.flag(f"redirection {tok!r} has no target", state, unknown=True)
            i += 1
            continue
        _substitutions(target, state, acc, depth=depth)
        acc.words.append(target.text)
        if tok in ("<", "<>", "<&") and not _is_fd(target.text):
            acc.read(state, [target])  # cd ~/.config/ledger && cat < keys/k.pem
        writes = tok in _WRITE_REDIRECTS or (tok == ">&" and not _is_fd(target.text))
        if writes and not _is_device(target.text):
            if tok in (">>", "&>>"):
                acc.create(state, [target])  # appending destroys nothing
            else:
                acc.overwrite("output redirection overwrites a file", state, [target])
        i += 2
    for word in words:
        _substitutions(word, state, acc, depth=depth)
    texts = [w.text for w in words]
    acc.words.extend(texts)
    # Shell keywords (if/then/while/!/{ ...) and then assignments (X=1 cmd) come before the
    # command word; "{ X=1 rm x; }" and "! X=1 rm x" are both valid.
    argv = words
    while argv and (
        (not argv[0].quoted and argv[0].text in _KEYWORDS) or _ASSIGNMENT.match(argv[0].text)
    ):
        if not argv[0].quoted and argv[0].text == "coproc":
            acc.unanalysable("coproc")
        elif _ASSIGNMENT.match(argv[0].text):
            _assignment(argv[0], acc)
        # The bash keyword "time [-p]" times a whole pipeline, compound commands included.
        skip = 2 if argv[0].text == "time" and argv[1:2] and argv[1].text == "-p" else 1
        argv = argv[skip:]
    if not argv or (not argv[0].quoted and argv[0].text in _NO_COMMAND_KEYWORDS):
        if argv and argv[0].text == "function":
            acc.unanalysable("function definition")
            acc.reach.extend(texts)
        return
    if argv[0].text.startswith("((") and not argv[0].quoted:
        return  # (( arithmetic )): evaluates, runs nothing (its substitutions were analyzed)
    if argv[0].text == "[[" and not argv[0].quoted:
        return  # [[ test ]]: compares, runs nothing (expansions in it were noted above)
    if argv[0].text in ("cd", "pushd", "popd"):
        # A subshell's, a pipeline's or a background job's cd changes nothing after it.
        if not piped and not background:
            operands = [w for w in argv[1:] if not w.text.startswith("-") or w.text == "-"]
            if argv[0].text == "cd":
                state.cd(operands[0] if operands else None)
            elif argv[0].text == "pushd":
                state.pushd(operands[0] if operands else None)
            else:
                state.popd()
        return
    kind = _analyze_argv(argv, state, acc, depth=depth, piped=piped)
    if kind != "read":
        acc.reach.extend(texts)


def _assignment(word: _Word, acc: _Acc) -> None:
    """``NAME=value``: the value may name a file later (it reaches); some names change what
    every later command means."""
    acc.reach.append(word.text)
    name = word.text.split("=", 1)[0].rstrip("+").split("[", 1)[0]
    if name in _SPECIAL_VARIABLES or name.startswith(("BASH_FUNC_", "GIT_CONFIG")):
        acc.unanalysable(f"assignment to {name}")
    if re.search(_SUBSCRIPT_CODE, word.text.split("=", 1)[0]):
        acc.unanalysable("arithmetic with expansions")


# Variables whose value changes which program runs, what runs before every command, where
# git or cd write, or how globs match [bash(1) Shell Variables; git(1) ENVIRONMENT].
_SPECIAL_VARIABLES: Final = frozenset({
    "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS",
    "BASHOPTS", "GLOBIGNORE", "CDPATH", "HOME", "XDG_CONFIG_HOME", "LEDGER_HOME",
    "LEDGER_SIGNING_KEY", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_EDITOR",
    "GIT_PAGER", "GIT_ASKPASS", "GIT_EXEC_PATH", "GIT_INDEX_FILE", "PAGER", "EDITOR", "VISUAL",
    "NODE_OPTIONS", "PYTHONSTARTUP", "PERL5OPT", "RUBYOPT", "BASH_XTRACEFD", "HISTFILE",
    "EXECIGNORE", "FUNCNEST", "BASH_LOADABLES_PATH", "INPUTRC",
})  # fmt: skip
# A subscript holding code: read 'a[$(cmd)]' evaluates it as arithmetic.
_SUBSCRIPT_CODE: Final = r"\[[^\]]*[$`(]"


def _substitutions(word: _Word, state: _State, acc: _Acc, *, depth: int) -> None:
    for inner in word.substitutions:
        # A substitution runs in a subshell: its cd does not leak out.
        _analyze_text(inner, state.copy(), acc, depth=depth + 1)


def _is_fd(text: str) -> bool:
    return text.isdigit() or text == "-" or (text[:-1].isdigit() and text.endswith("-"))


def _is_device(text: str) -> bool:
    return text in _DEVICES or re.fullmatch(_DEV_FD, text) is not None


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


def _analyze_argv(argv: list[_Word], state: _State, acc: _Acc, *, depth: int, piped: bool) -> Kind:
    """Dispatch on the command name, unwrapping wrappers (sudo, env, xargs, bash -c ...)."""
    head = argv[0]
    if head.dynamic:
        acc.flag("command name is computed at run time", state, unknown=True)
        acc.unanalysable("command name computed at run time")
        return "unknown"
    if depth > _MAX_DEPTH:
        acc.flag("command nesting too deep to analyze", state, unknown=True)
        acc.unanalysable("command nesting too deep")
        return "unknown"
    name = posixpath.basename(head.text)
    args = argv[1:]
    acc.read(_chdir(name, args, state), args)
    if _dumps_environment(name, args):
        acc.environment = True
    if name == "ledger":
        _ledger(args, state, acc)
        return "run"
    spec = PROGRAMS.get(name)
    if spec is not None:
        return _table(name, spec, args, state, acc)
    handler = _HANDLERS.get(name)
    if handler is not None:
        if name in WRITERS:
            _account(name, WRITERS[name], args, acc)
        before = acc.mark()
        kind = handler(_Cmd(name, args, state=state, acc=acc, depth=depth, piped=piped))
        if kind is not None:
            return kind
        return "read" if acc.mark() == before else "write"
    if name.startswith("mkfs") or name in _DISK_TOOLS:
        opts = _parse_opts(args, "tLbcCEgGIlmNOrTUv")
        acc.flag(f"{name} formats or repartitions a device", state, opts.operands[-1:])
        return "write"
    if name in _UNANALYSABLE:
        acc.unanalysable(_UNANALYSABLE[name])
        return "unknown"
    if name in _RUNNERS or "/" in head.text or _VERSIONED_RUNNER.fullmatch(name):
        # Tests, builds, interpreters, project scripts: what they write is not on the command
        # line. Quiet, but their words reach (`black .orchestration/` is refused).
        _ledger_in_words(args, state, acc)
        return "run"
    acc.unanalysable(f"unrecognised program {name!r}")
    return "unknown"


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
    if name in DESTROYS:
        acc.flag(DESTROYS[name], state, destroyed)  # rm with no operand is still rm
        kind = "write"
    return kind


def _account(name: str, spec: str, args: list[_Word], acc: _Acc) -> None:
    """Only account for the options of a writer whose operands its handler models."""
    for role, _index, _value, option in walk(spec, [w.text for w in args]):
        if role == "unknown":
            acc.unanalysable(f"{name} {option}: option not modelled")
        elif role == "exec":
            acc.unanalysable(f"{name} {option} runs a command")


# Options that run a program somewhere else: its operands are relative to there.
_CHDIR_OPTIONS: Final = {
    "make": ("-C", "--directory"),
    "gmake": ("-C", "--directory"),
    "tar": ("-C", "--directory"),
    "npm": ("--prefix",),
    "pnpm": ("-C", "--dir"),
    "yarn": ("--cwd",),
    "go": ("-C",),
    "uv": ("--directory",),
    "poetry": ("-C", "--directory"),
    "cargo": ("-C",),
    "cmake": ("-S", "-B"),
    "ninja": ("-C",),
    "just": ("-d", "--working-directory"),
}


def _chdir(name: str, args: list[_Word], state: _State) -> _State:
    """The directory ``name args`` works in (``make -C dir``), for reading its operands."""
    options = _CHDIR_OPTIONS.get(name)
    if options is None:
        return state
    moved = state
    for i, word in enumerate(args):
        option, eq, value = word.text.partition("=")
        if option not in options:
            continue
        target = _option_value(args, i, value if eq else None)
        if target is not None:
            moved = moved.copy()
            moved.cd(target)
    return moved


def _option_value(args: list[_Word], i: int, attached: str | None) -> _Word | None:
    """The value of the option ``args[i]``: attached (``--opt=v``) or the next word."""
    if attached is not None:
        return _Word(attached, dynamic=args[i].dynamic)
    return args[i + 1] if i + 1 < len(args) else None


# Commands that print the whole environment [bash(1) set, declare -p, export -p; env(1);
# proc(5) /proc/[pid]/environ].
_ENV_DUMPERS: Final = frozenset({"env", "printenv", "set", "declare", "typeset", "export"})


def _dumps_environment(name: str, args: list[_Word]) -> bool:
    if name == "ps":
        # BSD-style "e" prints each process's environment (ps eww, ps auxe) [ps(1)].
        return any(not w.text.startswith("-") and "e" in w.text for w in args[:1])
    if name not in _ENV_DUMPERS:
        return False
    if name == "env":
        # env with only options/assignments and no command prints the environment.
        return all(w.text.startswith("-") or _ASSIGNMENT.match(w.text) for w in args)
    if name in ("printenv", "set"):
        return not args or all(w.text.startswith("-") for w in args)
    return not args or all(w.text.startswith(("-", "+")) for w in args)


def _ledger(args: list[_Word], state: _State, acc: _Acc) -> None:
    """Record the subcommand of a ``ledger`` run (``intent select``, ``append``...);
    ``ledger query --out PATH`` writes PATH."""
    for i, word in enumerate(args):
        option, eq, value = word.text.partition("=")
        if option in ("--out", "-o"):
            out = _option_value(args, i, value if eq else None)
            if out is not None:
                acc.overwrite("ledger query --out overwrites a file", state, [out])
    subs = [w.text for w in args if not w.text.startswith("-")][:2]
    if not subs:
        acc.ledger.setdefault("", None)
    elif subs[0] in ("intent", "key"):
        acc.ledger.setdefault(" ".join(subs), None)
    else:
        acc.ledger.setdefault(subs[0], None)


def _ledger_in_words(args: list[_Word], state: _State, acc: _Acc) -> None:
    """``uv run ledger append``, ``npx ledger key``: a runner's argument that is ledger."""
    for index, word in enumerate(args):
        launched = index == 0 or args[index - 1].text in ("run", "exec", "x", "dlx", "-m", "--")
        if launched and (
            posixpath.basename(word.text) == "ledger" or word.text in ("cli._entry", "cli")
        ):
            _ledger(args[index + 1 :], state, acc)
            return
    for word in args:
        # Inline code (python -c, node -e) that runs ledger's writing commands: coarse.
        pieces = [p for p in re.split(r"[\s;&|()<>`$'\",\[\]{}=]+", word.text) if p]
        for index, piece in enumerate(pieces[:-1]):
            if posixpath.basename(piece) == "ledger" and pieces[index + 1] in _LEDGER_WRITERS:
                _ledger([_Word(p) for p in pieces[index + 1 :]], state, acc)
                return


_LEDGER_WRITERS: Final = frozenset(
    {
        "append",
        "key",
        "repair",
        "init",
        "checkpoint",
        "install",
        "uninstall",
        "intent",
        "demo",
        "hook",
        "tamper",
        "serve",
        "push",
        "fetch",
        "mcp",
    }
)


_DISK_TOOLS = frozenset({"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "sgdisk", "parted"})


def _mv(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "tS", ("--target-directory", "--suffix"))
    # Both ends of a move change: the source disappears, the destination is (over)written.
    acc.flag(
        "mv moves files (source and destination)",
        state,
        [*opts.operands, *_values(opts, "-t", "--target-directory")],
    )


def _cp(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    if name == "install":
        opts = _parse_opts(
            args,
            "gmoSt",
            ("--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"),
        )
        if _has(opts, "-d", "--directory"):
            acc.flag("install creates directories", state, opts.operands)
            return
    else:
        opts = _parse_opts(args, "tS", ("--target-directory", "--suffix"))
    dest = _values(opts, "-t", "--target-directory")
    if not dest and len(opts.operands) >= 2:
        dest = opts.operands[-1:]  # cp SRC... DEST: only the destination is written
    dest = _not_device(dest)
    if dest:
        acc.overwrite(f"{name} overwrites its destination", state, dest)
    if _has(opts, "-l", "--link", "-s", "--symbolic-link") and len(opts.operands) >= 2:
        # cp -l makes hard links: the sources become writable through the copies.
        acc.flag("cp -l links its sources (both names count)", state, opts.operands[:-1])


def _ln(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "St", ("--suffix", "--target-directory"))
    dest = _values(opts, "-t", "--target-directory")
    if not dest and len(opts.operands) >= 2:
        dest = opts.operands[-1:]
    elif not dest and opts.operands:
        # "ln -s /a/b" creates ./b
        only = opts.operands[0]
        dest = [_Word(posixpath.basename(only.text.rstrip("/")), dynamic=only.dynamic)]
    forced = _has(opts, "-f", "--force")
    reason = "ln -f replaces existing files" if forced else "ln creates links"
    acc.flag(reason, state, dest)
    if not _has(opts, "-s", "--symbolic") and len(opts.operands) >= 2:
        # A hard link shares the inode: writing the new name writes the source.
        acc.flag(
            "ln creates a hard link (both names count)",
            state,
            opts.operands[:-1] if not _values(opts, "-t", "--target-directory") else opts.operands,
        )


def _dd(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    outputs = [_Word(w.text[3:], dynamic=w.dynamic) for w in args if w.text.startswith("of=")]
    outputs = _not_device(outputs)
    if outputs:
        acc.overwrite("dd writes its output file", state, outputs)


_CHMOD_MODE = r"-[rwxXstugo]+"


def _chmod(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    # chmod -w file: "-w" is a mode, not an option [chmod(1)].
    if name == "chmod":
        args = [_Word("+" + w.text[1:]) if re.fullmatch(_CHMOD_MODE, w.text) else w for w in args]
    opts = _parse_opts(args)
    operands = opts.operands
    if not any(flag.startswith("--reference") for flag in opts.flags):
        operands = operands[1:]  # the mode / owner / group
    reason = {
        "chmod": "chmod changes file permissions",
        "chown": "chown changes file ownership",
        "chgrp": "chgrp changes file group ownership",
    }[name]
    acc.flag(reason, state, operands)


def _tee(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args)
    targets = _not_device(opts.operands)
    if name == "tee" and _has(opts, "-a", "--append"):
        acc.create(state, targets)
    elif targets:
        acc.overwrite(f"{name} overwrites files", state, targets)
    elif name == "sponge":
        acc.flag("sponge writes files", state, targets)


def _sed(cmd: _Cmd) -> None:  # noqa: PLR0915 -- GNU and BSD option forms in one getopt walk
    args, state, acc = cmd.args, cmd.state, cmd.acc
    in_place = False
    scripts: list[_Word] = []
    script_file = False
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if text == "--":
            operands.extend(args[i:])
            break
        if text.startswith("--"):
            option, eq, value = text.partition("=")
            if option == "--in-place":
                in_place = True
            elif option in ("--expression", "--file", "--line-length"):
                given: _Word | None = _Word(value, dynamic=word.dynamic) if eq else None
                if not eq and i < len(args):
                    given = args[i]
                    i += 1
                if option == "--file":
                    script_file = True
                elif option == "--expression" and given is not None:
                    scripts.append(given)
            continue
        if text.startswith("-") and len(text) > 1:
            for pos, letter in enumerate(text[1:], start=2):
                if letter == "i":
                    # GNU: -i[SUFFIX] takes the rest of the cluster. BSD/macOS: -i SUFFIX, where
                    # SUFFIX is often '' -- consume an empty or dot-suffix next word.
                    in_place = True
                    if (
                        pos == len(text)
                        and i < len(args)
                        and re.fullmatch(r"(\.[\w.~-]*)?", args[i].text)
                    ):
                        i += 1
                    break
                if letter in "efl":
                    value_word = _Word(text[pos:], dynamic=word.dynamic) if text[pos:] else None
                    if value_word is None and i < len(args):
                        value_word = args[i]
                        i += 1
                    if letter == "e" and value_word is not None:
                        scripts.append(value_word)
                    script_file = script_file or letter == "f"
                    break
            continue
        operands.append(word)
    if not scripts and not script_file and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        found = None if script.dynamic else _sed_script(script.text)
        if found is None:
            acc.flag(
                "sed runs a script that cannot be read (it may write files)", state, unknown=True
            )
            continue
        writes, runs = found
        if runs:
            acc.flag("sed e runs commands", state, unknown=True)
            acc.unanalysable("sed e command")
        if writes:
            acc.flag("sed w writes files", state, _not_device(_Word(w) for w in writes))
    if script_file:
        acc.flag("sed -f runs a script file (it may write files)", state, unknown=True)
    if in_place:
        acc.flag("sed -i edits files in place", state, operands)


def _sed_skip(script: str, i: int, delimiter: str) -> int:
    """Index after the unescaped ``delimiter`` closing a regex or replacement, or -1."""
    n = len(script)
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
        elif c == delimiter:
            return i + 1
        elif c == "\n" and delimiter != "\n":
            return -1
        else:
            i += 1
    return -1


def _sed_line_end(script: str, i: int, stops: str = "\n") -> int:
    ends = [j for j in (script.find(c, i) for c in stops) if j >= 0]
    return min(ends) if ends else len(script)


def _sed_script(script: str) -> tuple[list[str], bool] | None:
    """The files a sed script writes (``w``, ``W``, ``s///w``) and whether it runs commands
    (``e``, ``s///e``) [GNU sed manual, "sed scripts"]; None when it cannot be read."""
    writes: list[str] = []
    runs = False
    i = 0
    n = len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!,+~" or c.isdigit() or c == "$":
            i += 1
        elif c == "#":
            i = _sed_line_end(script, i)
        elif c in "/\\":
            start = i + 1 if c == "/" else i + 2
            if c == "\\" and i + 1 >= n:
                return None
            i = _sed_skip(script, start, "/" if c == "/" else script[i + 1])
            if i < 0:
                return None
            while i < n and script[i] in "IM":
                i += 1
        elif c in ":btTv":
            i = _sed_line_end(script, i, "\n;")
        elif c in "aic":
            i = _sed_line_end(script, i)
        elif c in "rRwW":
            end = _sed_line_end(script, i)
            name = script[i + 1 : end].strip()
            if c in "wW" and name:
                writes.append(name)
            i = end
        elif c == "e":
            runs = True
            i = _sed_line_end(script, i, "\n;")
        elif c in "sy":
            if i + 1 >= n:
                return None
            delimiter = script[i + 1]
            i = _sed_skip(script, i + 2, delimiter)
            if i >= 0:
                i = _sed_skip(script, i, delimiter)
            if i < 0:
                return None
            while i < n and c == "s" and (script[i] in "gpiImMe" or script[i].isdigit()):
                runs = runs or script[i] == "e"
                i += 1
            if c == "s" and i < n and script[i] == "w":
                end = _sed_line_end(script, i)
                writes.append(script[i + 1 : end].strip())
                i = end
        elif c in "lLqQ=dDgGhHnNpPxzF":
            i += 1
        else:
            return None
    return writes, runs


def _awk(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "fvFiE", ("--file", "--assign", "--field-separator", "--include",
                                       "--exec"))  # fmt: skip
    from_file = _has(opts, "-f", "--file", "-E", "--exec")
    operands = opts.operands
    if not from_file and operands:
        program, operands = operands[0], operands[1:]
        found = None if program.dynamic else _awk_program(program.text)
        if found is None:
            acc.flag("awk runs a program that writes files or runs commands", state, unknown=True)
            acc.unanalysable("awk program that runs commands")
        elif found:
            acc.flag("awk print > writes files", state, _not_device(_Word(w) for w in found))
    elif from_file:
        acc.flag("awk -f runs a program file (it may write files)", state, unknown=True)
    # gawk -i inplace (the "inplace" extension) rewrites its input files [gawk(1)].
    if any(w.text in ("inplace", "inplace.awk") for w in _values(opts, "-i", "--include")):
        files = [w for w in operands if not _ASSIGNMENT.match(w.text)]  # var=value operands
        acc.flag("awk -i inplace edits files in place", state, files)


_AWK_STRING = r'"(?:[^"\\]|\\.)*"'
_AWK_REDIRECT = r'\bprintf?\b[^;{}\n]*?(>>?|\|&?)\s*("\x00(\d+)"|[^;}\s)]+)'


def _awk_program(program: str) -> list[str] | None:
    """Files an awk program writes with ``print > "file"``; None when it runs commands
    (``system()``, pipes, ``getline`` from a command) or writes to a computed name."""
    strings: list[str] = []

    def keep(match: re.Match[str]) -> str:
        strings.append(match.group(0)[1:-1])
        return f'"\x00{len(strings) - 1}"'

    text = re.sub(_AWK_STRING, keep, program)
    if re.search(r"\bsystem\s*\(|\|\s*&?\s*getline|\bprocinfo\b|@load", text):
        return None
    writes: list[str] = []
    for match in re.finditer(_AWK_REDIRECT, text):
        if match.group(1).startswith("|") or match.group(3) is None:
            return None
        writes.append(strings[int(match.group(3))])
    return writes


def _perl(cmd: _Cmd) -> Kind:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    in_place = False
    has_script = False
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if text == "--":
            operands.extend(args[i:])
            break
        if text.startswith("-") and len(text) > 1:
            for pos, letter in enumerate(text[1:], start=2):
                if letter == "i":
                    in_place = True  # -i[extension]: the rest of the cluster is the extension
                    break
                if letter in "eE":
                    has_script = True
                    if pos == len(text):
                        i += 1
                    break
                if letter in "IMmxlC0d":
                    if letter in "IMm" and pos == len(text):
                        i += 1
                    break
            continue
        operands.append(word)
    if in_place:
        files = operands if has_script else operands[1:]
        acc.flag("perl -i edits files in place", state, files)
    return "run"  # a perl program can write any file


def _find(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth, piped = cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped
    i = 0
    # Leading options -H -L -P -D opts -Olevel come before the starting points [find(1)].
    while i < len(args) and (
        args[i].text in ("-H", "-L", "-P", "-D") or args[i].text.startswith("-O")
    ):
        i += 2 if args[i].text == "-D" else 1
    roots: list[_Word] = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")", ",")):
        roots.append(args[i])
        i += 1
    if not roots:
        roots = [_Word(".")]
    kind: Kind | None = None
    while i < len(args):
        text = args[i].text
        i += 1
        if text == "-delete":
            acc.flag("find -delete removes files", state, roots)
        elif text in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            if i < len(args):
                acc.flag(f"find {text} writes a file", state, _not_device([args[i]]))
            i += 2 if text == "-fprintf" else 1
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[_Word] = []
            while i < len(args) and args[i].text not in (";", "+"):
                inner.append(args[i])
                i += 1
            i += 1
            found = _find_exec(inner, roots, state, acc, depth=depth, piped=piped)
            if found in ("run", "unknown"):
                kind = found
    return kind


def _find_exec(
    inner: list[_Word],
    roots: list[_Word],
    state: _State,
    acc: _Acc,
    *,
    depth: int,
    piped: bool,
) -> Kind | None:
    """Analyze ``find -exec CMD ;`` with ``{}`` standing for the files under the roots."""
    expanded: list[_Word] = []
    for word in inner:
        if word.text == "{}":
            expanded.extend(roots)
        elif "{}" in word.text:
            # "{}.bak" lives next to each found file, i.e. still under the roots, but which
            # name exactly is only known at run time.
            expanded.extend(_Word(r.text, dynamic=True) for r in roots)
        else:
            expanded.append(word)
    if expanded:
        return _analyze_argv(expanded, state, acc, depth=depth + 1, piped=piped)
    return None


def _xargs(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth, piped = cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        i += 1
        if text.startswith("--"):
            if "=" not in text and text in (
                "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs",
                "--max-chars", "--process-slot-var",
            ):  # fmt: skip
                i += 1
            continue
        letter = text[1]
        if letter in "aILPdEns" and len(text) == 2:
            i += 1  # option argument in the next word
    inner = args[i:]
    if not inner:
        return None  # xargs alone runs echo
    sub = _Acc()
    kind = _analyze_argv(inner, state, sub, depth=depth + 1, piped=piped)
    # The real operands arrive on stdin: whatever the static part says, more targets exist.
    _merge(acc, sub, unknown=bool(sub.reasons or sub.targets))
    return kind


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


# Wrappers: (short options that take a value, long options that take a value).
_WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sudo": ("ugCDhpRrTtU", ("--user", "--group", "--close-from", "--chdir", "--host",
                              "--prompt", "--chroot", "--role", "--command-timeout", "--type",
                              "--other-user")),
    "doas": ("uC", ()),
    "nohup": ("", ()),
    "nice": ("n", ("--adjustment",)),
    "ionice": ("cnpPu", ("--class", "--classdata", "--pid", "--pgid", "--uid")),
    "time": ("fo", ("--format", "--output")),
    "stdbuf": ("ioe", ("--input", "--output", "--error")),
    "setsid": ("", ()),
    "chronic": ("", ()),
    "unbuffer": ("", ()),
    "caffeinate": ("wt", ()),
    "command": ("", ()),
    "builtin": ("", ()),
    "exec": ("a", ()),
    "busybox": ("", ()),
    "toybox": ("", ()),
    "chroot": ("", ("--userspec", "--groups")),
}  # fmt: skip


def _wrapper(cmd: _Cmd) -> Kind | None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    depth, piped = cmd.depth, cmd.piped
    short, long_ = _WRAPPERS[name]
    if name == "command" and args and args[0].text in ("-v", "-V"):
        return None  # command -v: a lookup, runs nothing
    if name == "nice" and args and re.fullmatch(r"-[0-9]+", args[0].text):
        args = args[1:]  # old-style "nice -10 cmd"
    if name == "sudo" and any(w.text in ("-e", "--edit") for w in args):
        opts = _parse_opts(args, short, long_)
        acc.flag("sudoedit edits files", state, opts.operands)
        return None
    opts = _parse_opts(args, short, long_, stop_at_operand=True)
    inner = opts.operands
    if name == "time":
        outputs = _not_device(_values(opts, "-o", "--output"))
        if outputs:
            acc.flag("time -o writes a file", state, outputs)
    if name in ("sudo", "doas"):
        # "sudo VAR=value cmd" sets the variable for cmd [sudo(8) DESCRIPTION].
        while inner and _ASSIGNMENT.match(inner[0].text):
            inner = inner[1:]
    if name == "chroot":
        inner = inner[1:]  # the new root
    if inner:
        return _analyze_argv(inner, state, acc, depth=depth + 1, piped=piped)
    return None


def _timeout(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth, piped = cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped
    opts = _parse_opts(args, "sk", ("--signal", "--kill-after"), stop_at_operand=True)
    inner = opts.operands[1:]  # the duration comes first
    if inner:
        return _analyze_argv(inner, state, acc, depth=depth + 1, piped=piped)
    return None


def _env(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth, piped = cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped
    opts = _parse_opts(args, "uCS", ("--unset", "--chdir", "--split-string"), stop_at_operand=True)
    inner = list(opts.operands)
    while inner and _ASSIGNMENT.match(inner[0].text):
        _assignment(inner[0], acc)
        inner = inner[1:]
    inner_state = state
    chdir = _values(opts, "-C", "--chdir")
    if chdir:
        inner_state = state.copy()
        inner_state.cd(chdir[-1])
    split = _values(opts, "-S", "--split-string")
    if split:
        # env -S 'cmd args' splits the string into the command line [env(1)].
        text = " ".join([split[-1].text, *(_requote(w) for w in inner)])
        if split[-1].dynamic:
            acc.flag("env -S runs a command built at run time", state, unknown=True)
            acc.unanalysable("env -S of a run-time value")
        _analyze_text(text, inner_state.copy(), acc, depth=depth + 1)
        return None
    if inner:
        return _analyze_argv(inner, inner_state, acc, depth=depth + 1, piped=piped)
    return None


def _requote(word: _Word) -> str:
    """Quote a word's text so that re-parsing gives the same word (dynamic parts stay live)."""
    if word.dynamic:
        return '"' + word.text.replace('"', '\\"') + '"'
    return "'" + word.text.replace("'", "'\\''") + "'"


def _shell(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth = cmd.args, cmd.state, cmd.acc, cmd.depth
    if any(w.text in ("--version", "--help") for w in args):
        return None
    has_c = False
    i = 0
    while i < len(args):
        text = args[i].text
        if text in {"--", "-"}:
            i += 1
            break
        if text.startswith("--"):
            i += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            i += 1
            has_c = has_c or "c" in text[1:]
            if "o" in text[1:] or "O" in text[1:]:
                i += 1  # -o option / -O shopt take a name
            continue
        break
    rest = args[i:]
    if has_c:
        if not rest:
            return None
        script = rest[0]
        if script.dynamic:
            acc.flag("shell -c runs a command built at run time", state, unknown=True)
            acc.unanalysable("shell -c of a run-time value")
        _analyze_text(script.text, state.copy(), acc, depth=depth + 1)
        return None
    if not rest or rest[0].dynamic or rest[0].text in ("/dev/stdin", "-"):
        acc.flag("shell reads commands from its input", state, unknown=True)
        acc.unanalysable("shell reads commands from its input")
        return "unknown"
    return "run"  # "bash script.sh" runs a file we do not read


def _su(cmd: _Cmd) -> None:
    args, state, acc, depth = cmd.args, cmd.state, cmd.acc, cmd.depth
    opts = _parse_opts(args, "cgGs", ("--command", "--group", "--supp-group", "--shell"))
    for script in _values(opts, "-c", "--command"):
        if script.dynamic:
            acc.flag("su -c runs a command built at run time", state, unknown=True)
            acc.unanalysable("su -c of a run-time value")
        _analyze_text(script.text, state.copy(), acc, depth=depth + 1)


def _eval(cmd: _Cmd) -> None:
    name, args, state, acc, depth = cmd.name, cmd.args, cmd.state, cmd.acc, cmd.depth
    if any(w.dynamic for w in args):
        acc.flag(f"{name} runs a command built at run time", state, unknown=True)
        acc.unanalysable(f"{name} of a run-time value")
    if name == "watch":
        opts = _parse_opts(
            args, "ndq", ("--interval", "--differences", "--equexit"), stop_at_operand=True
        )
        args = opts.operands
    # eval and watch join their arguments with spaces and run the result as shell code.
    _analyze_text(" ".join(w.text for w in args), state.copy(), acc, depth=depth + 1)


def _flock(cmd: _Cmd) -> Kind | None:
    args, state, acc, depth, piped = cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped
    opts = _parse_opts(
        args, "wEc", ("--timeout", "--conflict-exit-code", "--command"), stop_at_operand=True
    )
    scripts = _values(opts, "-c", "--command")
    inner = opts.operands[1:]  # the lock file comes first
    if len(inner) >= 2 and inner[0].text in ("-c", "--command"):
        scripts.append(inner[1])  # flock FILE -c COMMAND
        inner = []
    for script in scripts:
        if script.dynamic:
            acc.flag("flock -c runs a command built at run time", state, unknown=True)
            acc.unanalysable("flock -c of a run-time value")
        _analyze_text(script.text, state.copy(), acc, depth=depth + 1)
    if inner:
        return _analyze_argv(inner, state, acc, depth=depth + 1, piped=piped)
    return None


_KILL_SIGNALS = frozenset({"9", "KILL", "SIGKILL"})


def _kill(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    forced = False
    for index, word in enumerate(args):
        text = word.text
        if text.startswith("-") and text[1:] in _KILL_SIGNALS:
            forced = True
        elif text in ("-s", "-n", "--signal") and index + 1 < len(args):
            forced = forced or args[index + 1].text.upper() in _KILL_SIGNALS
        elif text.startswith("--signal=") and text[9:].upper() in _KILL_SIGNALS:
            forced = True
    if forced:
        acc.flag(f"{name} -9 force-kills processes", state)


def _scp(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    if name == "scp":
        opts = _parse_opts(args, "cFiJloPSX")
        reason = "scp writes its destination"
    else:
        opts = _parse_opts(
            args,
            "efBMT",
            (
                "--rsh",
                "--filter",
                "--exclude",
                "--include",
                "--temp-dir",
                "--backup-dir",
                "--partial-dir",
            ),
        )
        deleting = any(f.startswith("--delete") for f in opts.flags)
        reason = (
            "rsync --delete removes files at the destination"
            if deleting
            else "rsync writes its destination"
        )
        if _has(opts, "--remove-source-files"):
            acc.flag(
                "rsync --remove-source-files deletes its sources",
                state,
                [w for w in opts.operands[:-1] if not _is_remote(w.text)],
            )
    if len(opts.operands) < 2:
        return
    dest = opts.operands[-1]
    if not _is_remote(dest.text):
        acc.flag(reason, state, [dest])


def _is_remote(text: str) -> bool:
    """``[user@]host:path`` or ``rsync://``: the far end is not on this machine."""
    head = text.split("/", 1)[0]
    return ":" in head or text.startswith("rsync://")


def _tar(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    if name == "unzip":
        opts = _parse_opts(args, "dxP")
        if _has(opts, "-l", "-t", "-v", "-Z", "-p", "-z"):
            return
        dest = _values(opts, "-d") or [_Word(".")]
        acc.flag("unzip extracts files (may overwrite)", state, dest)
        return
    for word in args:
        option = word.text.partition("=")[0]
        if option in TAR_RUNS or (
            not word.text.startswith("--") and word.text.startswith("-") and "I" in word.text[1:2]
        ):
            acc.unanalysable(f"tar {option} runs a program")
    words = list(args)
    if words and not words[0].text.startswith("-"):
        words[0] = _Word("-" + words[0].text, dynamic=words[0].dynamic)  # old style "tar xzf"
        # Old-style letters take their values from the following words, in order.
        letters = [c for c in words[0].text[1:] if c in "fCTXbgHKLNV"]
        values = words[1 : 1 + len(letters)]
        rebuilt: list[_Word] = []
        for letter in words[0].text[1:]:
            if letter in "fCTXbgHKLNV" and values:
                rebuilt.extend([_Word("-" + letter), values.pop(0)])
            else:
                rebuilt.append(_Word("-" + letter))
        words = rebuilt + words[1 + len(letters) :]
    opts = _parse_opts(
        words, "fCTXbgHKLNV", ("--file", "--directory", "--files-from", "--exclude-from")
    )
    if _has(opts, "-x", "--extract", "--get"):
        dest = _values(opts, "-C", "--directory") or [_Word(".")]
        acc.flag("tar -x extracts files (may overwrite)", state, dest)
    elif _has(opts, "-c", "--create", "-r", "--append", "-u", "--update"):
        archive = [w for w in _values(opts, "-f", "--file") if w.text != "-"]
        if archive:
            acc.flag("tar writes an archive file", state, _not_device(archive))


def _patch(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(
        args, "iopdrDBYzFVg",
        ("--input", "--output", "--directory", "--strip", "--reject-file"),
    )  # fmt: skip
    if _has(opts, "--dry-run"):
        return
    outputs = _values(opts, "-o", "--output")
    if outputs:
        acc.flag("patch writes its output file", state, _not_device(outputs))
        return
    # "patch FILE" patches FILE; otherwise the files come from the diff headers.
    acc.flag(
        "patch writes the files named in a diff",
        state,
        opts.operands[:1],
        unknown=not opts.operands,
    )


# --- git ---------------------------------------------------------------------------------------

_GIT_PATHLIKE = r"(\.\.?|\.{0,2}/.*|~.*|.*[*?\[].*|.*\.[A-Za-z][A-Za-z0-9]*)"

# Options that make a git subcommand run a program [git-grep(1) -O, git-difftool(1) -x,
# git-fetch(1) --upload-pack, git-push(1) --receive-pack/--exec, git-rebase(1) --exec,
# git-init(1) --template (its hooks run later), git-archive(1) --exec]: refused outright.
_GIT_EXEC_OPTIONS: Final = {
    "grep": ("-O", "--open-files-in-pager"),
    "difftool": ("-x", "--extcmd", "-t", "--tool", "-g", "--gui"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "clone": ("-u", "--upload-pack", "--template"),
    "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
    "rebase": ("-x", "--exec"),
    "init": ("--template",),
    "submodule": ("foreach",),
    "bisect": ("run",),
}
# Subcommands that rewrite files of the work tree beyond what their pathspec names: the whole
# tree is written (so the protected and scope checks see the workspace root) [git-merge(1),
# git-sparse-checkout(1), ...]. "checkout"/"switch"/"reset"/"stash"/"read-tree"/"restore"
# have their own readers below.
_GIT_TREE_WRITERS: Final = {
    "merge": "git merge rewrites the work tree",
    "pull": "git pull rewrites the work tree",
    "cherry-pick": "git cherry-pick rewrites the work tree",
    "revert": "git revert rewrites the work tree",
    "am": "git am rewrites the work tree",
    "sparse-checkout": "git sparse-checkout adds and deletes files of the work tree",
    "bisect": "git bisect checks out other commits",
    "merge-file": "git merge-file rewrites a file",
}
_GIT_TREE_READERS: Final = frozenset({
    ("bisect", "log"), ("bisect", "visualize"), ("bisect", "view"), ("sparse-checkout", "list"),
})  # fmt: skip
# Everyday subcommands that only read, or change only refs, objects and the index; a subcommand
# in none of these tables is unanalysable (it may also be an alias: `git x`).
_GIT_QUIET: Final = frozenset({
    "status", "diff", "log", "show", "blame", "annotate", "grep", "rev-parse", "ls-files",
    "ls-tree", "cat-file", "describe", "remote", "tag", "shortlog", "merge-base", "rev-list",
    "name-rev", "for-each-ref", "show-ref", "symbolic-ref", "var", "help", "version",
    "count-objects", "fsck", "verify-commit", "verify-tag", "whatchanged", "range-diff",
    "cherry", "check-ignore", "check-attr", "check-ref-format", "diff-tree", "diff-files",
    "diff-index", "fetch", "add", "commit", "ls-remote", "hash-object", "write-tree",
    "commit-tree", "mktree", "notes", "stage", "show-branch", "get-tar-commit-id",
    "interpret-trailers", "column", "patch-id", "config", "difftool", "submodule",
})  # fmt: skip


_GIT_GLOBAL_FLAGS: Final = frozenset({
    "-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects",
    "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
    "--no-optional-locks", "--version", "--help",
})  # fmt: skip


def _git(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    git_state = state
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-C" and i + 1 < len(args):
            git_state = git_state.copy()
            git_state.cd(args[i + 1])
            i += 2
        elif text == "-c" and i + 1 < len(args):
            _git_config_value(args[i + 1], acc)
            i += 2
        elif text.startswith("--work-tree") and (i + 1 < len(args) or "=" in text):
            # Working-tree paths are relative to --work-tree, as they are to -C.
            value = text.partition("=")[2] if "=" in text else args[i + 1].text
            git_state = git_state.copy()
            git_state.cd(
                _Word(value, dynamic=args[i].dynamic or ("=" not in text and args[i + 1].dynamic))
            )
            i += 1 if "=" in text else 2
        elif text.startswith(("--exec-path", "--config-env", "--git-dir", "--super-prefix")):
            # Another git, configuration from the environment, another repository's config
            # (its hooks and fsmonitor run): nothing here can say what runs.
            acc.refuse(f"git {text.partition('=')[0]} runs another repository's configuration")
            i += 1 if "=" in text else 2
        elif text == "--namespace":
            i += 2
        elif text in _GIT_GLOBAL_FLAGS:
            i += 1
        elif text.startswith("-"):
            acc.unanalysable(f"git option {text!r} not modelled")
            i += 1
        else:
            break
    if i >= len(args):
        return
    sub = args[i].text
    rest = args[i + 1 :]
    acc.read(git_state, rest)
    for option in _GIT_EXEC_OPTIONS.get(sub, ()):
        if any(_git_option(w.text, option) for w in rest):
            acc.refuse(f"git {sub} {option} runs a program")
    if sub == "clone":
        for j, word in enumerate(rest):
            option, eq, value = word.text.partition("=")
            if option in ("-c", "--config"):
                config = _option_value(rest, j, value if eq else None)
                if config is not None:
                    _git_config_value(config, acc)
    analyzer = _GIT_SUBCOMMANDS.get(sub)
    if analyzer is not None:
        analyzer(rest, git_state, acc)
    elif sub in _GIT_TREE_WRITERS:
        if any(w.text in ("--abort", "--quit", "--skip", "-h") for w in rest) or (
            rest[:1] and (sub, rest[0].text) in _GIT_TREE_READERS
        ):
            return
        acc.flag(_GIT_TREE_WRITERS[sub], git_state, [_Word(".")])
    elif sub not in _GIT_QUIET:
        acc.unanalysable(f"git {sub} is not modelled (it may be an alias)")


def _git_option(text: str, option: str) -> bool:
    """Whether word ``text`` gives ``option`` (``--opt``, ``--opt=v``, ``-x``, ``-nx``, ``-xv``)."""
    if option.startswith("--"):
        return text == option or text.startswith(option + "=")
    if not option.startswith("-"):
        return text == option  # a sub-subcommand: "submodule foreach", "bisect run"
    return text.startswith("-") and not text.startswith("--") and option[1] in text[1:]


def _git_config_value(word: _Word, acc: _Acc) -> None:
    """``git -c key=value`` / ``clone --config key=value``: a key that runs something is refused."""
    key, _, value = word.text.partition("=")
    if word.dynamic or re.fullmatch(GIT_EXEC_KEYS, key.lower()) or value.startswith("!"):
        acc.refuse(f"git -c {key} sets configuration that runs a program")


def _git_config(args: list[_Word], state: _State, acc: _Acc) -> None:
    """``git config``: reading is quiet; setting a key that runs a program, or writing another
    file (``-f``), is refused; anything else not modelled asks [git-config(1)]."""
    reading = False
    operands: list[_Word] = []
    for word in args:
        text = word.text
        if text.startswith(("-f", "--file", "--blob")) or text in ("--edit", "-e"):
            acc.refuse(f"git config {text.partition('=')[0]} writes another configuration file")
            return
        if text in ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list",
                    "--show-origin", "--show-scope", "--name-only", "--null", "-z", "--bool",
                    "--int", "--type=bool", "--type=int", "--default", "get", "list"):  # fmt: skip
            reading = True
        elif text in ("--local", "--global", "--worktree", "--add", "--unset", "--unset-all",
                      "--replace-all", "set", "unset", "--includes", "--no-includes"):  # fmt: skip
            pass
        elif text.startswith("-"):
            acc.unanalysable(f"git config option {text!r} not modelled")
        else:
            operands.append(word)
    if reading or len(operands) < 2:
        return
    key = operands[0]
    _git_config_value(_Word(key.text + "=" + operands[1].text, dynamic=key.dynamic), acc)


def _git_reset(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "", ("--pathspec-from-file",))
    if _has(opts, "--hard", "--merge", "--keep"):
        acc.flag("git reset --hard discards uncommitted changes", state, [_Word(".")])


def _git_clean(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "e", ("--exclude",))
    if _has(opts, "-n", "--dry-run"):
        return
    # Without -f git refuses by default, but clean.requireForce=false lifts that: flag anyway.
    acc.flag("git clean -f deletes untracked files", state, opts.operands or [_Word(".")])


def _git_checkout(args: list[_Word], state: _State, acc: _Acc) -> None:
    texts = [w.text for w in args]
    opts = _parse_opts(args, "bB", ("--orphan", "--conflict", "--pathspec-from-file"))
    paths: list[_Word]
    if "--" in texts:
        cut = texts.index("--")
        paths = args[cut + 1 :]
    elif len(opts.operands) >= 2:
        paths = opts.operands[1:]  # <tree-ish> <paths>...
    elif len(opts.operands) == 1 and re.fullmatch(_GIT_PATHLIKE, opts.operands[0].text):
        paths = opts.operands
    else:
        paths = []
    if _has(opts, "--pathspec-from-file"):
        acc.flag("git checkout overwrites files in the working tree", state, paths, unknown=True)
    elif paths:
        acc.flag("git checkout overwrites files in the working tree", state, paths)
    elif _has(opts, "-f", "--force") and not _has(opts, "-b", "-B", "--orphan"):
        acc.flag("git checkout -f discards uncommitted changes", state, [_Word(".")])
    elif opts.operands and not _has(opts, "--orphan"):
        # Another commit's files replace the work tree's, .orchestration/ included.
        acc.flag("git checkout of another commit rewrites the work tree", state, [_Word(".")])


def _git_restore(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "s", ("--source", "--pathspec-from-file"))
    if _has(opts, "-S", "--staged") and not _has(opts, "-W", "--worktree"):
        return  # only the index changes
    acc.flag(
        "git restore overwrites files in the working tree",
        state,
        opts.operands,
        unknown=_has(opts, "--pathspec-from-file") or not opts.operands,
    )


def _git_switch(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "cC", ("--create", "--force-create", "--orphan"))
    if _has(opts, "-f", "--force", "--discard-changes"):
        acc.flag("git switch --discard-changes discards uncommitted changes", state, [_Word(".")])
    elif opts.operands and not _has(opts, "--orphan"):
        acc.flag("git switch to another commit rewrites the work tree", state, [_Word(".")])


def _git_push(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "o", ("--push-option", "--repo", "--receive-pack", "--exec"))
    forced = _has(opts, "-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror")
    # "+refspec" forces that ref [git-push(1) <refspec>].
    forced = forced or any(w.text.startswith("+") for w in opts.operands[1:])
    if forced:
        acc.flag("git push --force rewrites remote history", state)
    deleting = _has(opts, "-d", "--delete", "--prune") or any(
        w.text.startswith(":") and len(w.text) > 1 for w in opts.operands[1:]
    )
    if deleting:
        acc.flag("git push --delete removes remote refs", state)


def _git_branch(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "", ("--set-upstream-to", "--track"))
    deleting = _has(opts, "-d", "--delete")
    forced = _has(opts, "-f", "--force")
    if _has(opts, "-D") or (deleting and forced):
        acc.flag("git branch -D deletes unmerged branches", state)
    elif _has(opts, "-M", "-C") or (forced and not deleting):
        acc.flag("git branch -f overwrites an existing branch", state)


def _git_rebase(args: list[_Word], state: _State, acc: _Acc) -> None:
    if any(w.text in ("--abort", "--quit", "--show-current-patch") for w in args):
        return
    # Rebasing replays commits onto the work tree: .orchestration/ included.
    acc.flag("git rebase rewrites history and the work tree", state, [_Word(".")])


def _git_stash(args: list[_Word], state: _State, acc: _Acc) -> None:
    sub = args[0].text if args and not args[0].text.startswith("-") else "push"
    if sub in ("drop", "clear"):
        acc.flag(f"git stash {sub} deletes stashed changes", state)
    elif sub in ("pop", "apply", "branch"):
        acc.flag(f"git stash {sub} rewrites files from a stash", state, [_Word(".")])
    elif sub in ("push", "save"):
        # Stashing reverts the working tree: the ledger's uncommitted records go with it.
        rest = args[1:] if args and args[0].text == sub else args
        opts = _parse_opts(rest, "m", ("--message", "--pathspec-from-file"))
        paths = [] if sub == "save" else opts.operands
        acc.flag(
            "git stash reverts files in the working tree",
            state,
            paths or [_Word(".")],
            unknown=_has(opts, "--pathspec-from-file"),
        )


def _git_checkout_index(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "", ("--prefix", "--stage"))
    paths = [_Word(".")] if _has(opts, "-a", "--all") else opts.operands
    prefix = _values(opts, "--prefix")
    acc.flag(
        "git checkout-index overwrites files in the working tree",
        state,
        [*paths, *prefix],
        unknown=_has(opts, "--stdin") or bool(prefix),
    )


def _git_read_tree(args: list[_Word], state: _State, acc: _Acc) -> None:
    if any(w.text in ("-u", "--reset") for w in args):
        acc.flag("git read-tree -u overwrites files in the working tree", state, [_Word(".")])


def _git_output(args: list[_Word], state: _State, acc: _Acc) -> None:
    """diff/log/show/format-patch/archive/bundle: options that write a file."""
    opts = _parse_opts(args, "o", ("--output", "--output-directory"))
    outputs = _not_device(_values(opts, "-o", "--output", "--output-directory"))
    if outputs:
        acc.overwrite("git writes an output file", state, outputs)


def _git_bundle(args: list[_Word], state: _State, acc: _Acc) -> None:
    """``git bundle create FILE``: writes FILE."""
    if args and args[0].text == "create" and len(args) > 1:
        acc.overwrite("git bundle create writes a file", state, _not_device(args[1:2]))


def _git_marks(args: list[_Word], state: _State, acc: _Acc) -> None:
    """``fast-import``/``fast-export --export-marks=FILE`` writes FILE; fast-import writes
    whatever refs its input says."""
    for word in args:
        name, eq, value = word.text.partition("=")
        if eq and name in ("--export-marks", "--import-marks-if-exists", "--export-pack-edges"):
            acc.flag(f"git {name} writes a file", state, [_Word(value, dynamic=word.dynamic)])
    acc.unanalysable("git fast-import writes refs its input names")


def _git_create(args: list[_Word], state: _State, acc: _Acc) -> None:
    """init/clone/worktree add: create a directory (checked like any write)."""
    opts = _parse_opts(
        args,
        "bocj",
        (
            "--branch",
            "--origin",
            "--config",
            "--depth",
            "--reference",
            "--separate-git-dir",
            "--template",
        ),
    )
    operands = list(opts.operands)
    if operands and operands[0].text in ("list", "prune", "lock", "unlock", "repair"):
        return  # git worktree list/prune/...: no new directory
    if operands and operands[0].text in ("remove", "move"):
        verb = operands[0].text
        acc.flag(f"git worktree {verb} deletes or moves a work tree", state, operands[1:])
        return
    operands = [w for w in operands if w.text != "add"]
    if len(operands) == 1 and _is_remote(operands[0].text):
        # git clone URL makes a directory named after the repository [git-clone(1)].
        name = posixpath.basename(operands[0].text.rstrip("/").split(":")[-1])
        name = name.removesuffix(".git") or "."
        operands = [_Word(name, dynamic=operands[0].dynamic)]
    acc.create(state, operands[-1:] if operands else [])


def _git_filter(args: list[_Word], state: _State, acc: _Acc) -> None:
    del args
    acc.flag("git filter-branch rewrites history", state)


def _git_rm(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "", ("--pathspec-from-file",))
    if _has(opts, "--cached", "-n", "--dry-run"):
        return
    acc.flag(
        "git rm deletes files", state, opts.operands, unknown=_has(opts, "--pathspec-from-file")
    )


def _git_mv(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args)
    if not _has(opts, "-n", "--dry-run"):
        acc.flag("git mv moves files (source and destination)", state, opts.operands)


def _git_apply(args: list[_Word], state: _State, acc: _Acc) -> None:
    opts = _parse_opts(args, "pC", ("--directory", "--exclude", "--include", "--whitespace"))
    only_report = _has(opts, "--check", "--stat", "--numstat", "--summary") and not _has(
        opts, "--apply"
    )
    if only_report or _has(opts, "--cached"):
        return
    acc.flag("git apply writes the files named in a patch", state, unknown=True)


def _git_reflog(args: list[_Word], state: _State, acc: _Acc) -> None:
    if args and args[0].text in ("expire", "delete"):
        acc.flag("git reflog expire destroys recovery points", state)


def _git_update_ref(args: list[_Word], state: _State, acc: _Acc) -> None:
    if any(w.text in ("-d", "--delete") for w in args):
        acc.flag("git update-ref -d deletes a ref", state)


_GIT_SUBCOMMANDS = {
    "config": _git_config,
    "bundle": _git_bundle,
    "fast-import": _git_marks,
    "fast-export": _git_marks,
    "reset": _git_reset,
    "clean": _git_clean,
    "checkout": _git_checkout,
    "restore": _git_restore,
    "switch": _git_switch,
    "push": _git_push,
    "branch": _git_branch,
    "rebase": _git_rebase,
    "stash": _git_stash,
    "filter-branch": _git_filter,
    "filter-repo": _git_filter,
    "rm": _git_rm,
    "mv": _git_mv,
    "apply": _git_apply,
    "reflog": _git_reflog,
    "update-ref": _git_update_ref,
    "checkout-index": _git_checkout_index,
    "read-tree": _git_read_tree,
    "diff": _git_output,
    "log": _git_output,
    "show": _git_output,
    "format-patch": _git_output,
    "archive": _git_output,
    "init": _git_create,
    "clone": _git_create,
    "worktree": _git_create,
}

# --- writers the first version did not model (issue 8, "Escapes that must be closed") --------


def _split(cmd: _Cmd) -> Kind | None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    if name == "csplit":
        opts = _parse_opts(args, "fbn", ("--prefix", "--suffix-format", "--digits"))
        prefixes = _values(opts, "-f", "--prefix") or [_Word("xx")]
    else:
        opts = _parse_opts(args, "abClnt", ("--suffix-length", "--bytes", "--line-bytes",
                                            "--lines", "--number", "--separator",
                                            "--additional-suffix", "--filter"))  # fmt: skip
        if _has(opts, "--filter"):
            acc.unanalysable("split --filter runs a command")
            return "unknown"
        prefixes = opts.operands[1:2] or [_Word("x")]
    acc.flag(
        f"{name} writes files named after a prefix",
        state,
        [_Word(p.text + "*", dynamic=p.dynamic) for p in prefixes],
    )
    return None


_COMPRESSORS: Final = frozenset({
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd",
    "zstdmt", "lz4", "unlz4", "lzip", "compress", "uncompress", "pigz", "unpigz", "pbzip2",
    "lbzip2", "brotli", "lzop",
})  # fmt: skip


def _compress(cmd: _Cmd) -> Kind | None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    # Every option accounted for (COMPRESSOR in programs.py): -o writes wherever it points,
    # even with -c (zstd -c -o FILE writes FILE).
    before = acc.mark()
    if _table(name, COMPRESSOR, args, state, acc) == "unknown":
        return "unknown"
    if acc.mark() != before:
        return None
    opts = _parse_opts(args, "oSbqTMD", ("--suffix", "--output", "--threads", "--memlimit"))
    if _has(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"):
        return "read"
    operands = [w for w in opts.operands if w.text != "-"]
    if operands:
        # gzip FILE replaces FILE with FILE.gz: both names change.
        acc.flag(f"{name} replaces files with (de)compressed copies", state, operands)
    return None


def _archive(cmd: _Cmd) -> Kind | None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    if name == "zip":
        opts = _parse_opts(args, "bnxiPZOstT", ("--temp-path", "--suffixes", "--exclude",
                                                "--include", "--password", "--output-file",
                                                "--unzip-command"))  # fmt: skip
        if _has(opts, "-TT", "--unzip-command") or any(w.text.startswith("-TT") for w in args):
            acc.unanalysable("zip -TT runs a command")
            return "unknown"
        archive = _values(opts, "-O", "--output-file") or opts.operands[:1]
        moved = opts.operands[1:] if _has(opts, "-m", "--move") else []
        acc.flag(
            "zip writes an archive" + (" and deletes the files it adds" if moved else ""),
            state,
            [*_not_device(archive), *moved],
        )
        return None
    letters = args[0].text.lstrip("-") if args else ""
    rest = args[1:]
    if name == "ar":
        if "x" in letters:
            acc.flag("ar x extracts files (may overwrite)", state, [_Word(".")])
        elif (letters and letters[0] in "rqdmsu") or any(c in letters for c in "rqdm"):
            acc.flag("ar writes an archive", state, rest[:1])
        return None
    if name == "cpio":
        opts = _parse_opts(args, "FIOEHRDC", ("--file", "--directory"))
        if _has(opts, "-i", "--extract"):
            acc.flag("cpio -i extracts files (may overwrite)", state, [_Word(".")], unknown=True)
        elif _has(opts, "-p", "--pass-through"):
            acc.flag("cpio -p copies files into a directory", state, opts.operands[:1])
        elif _has(opts, "-o", "--create"):
            acc.flag(
                "cpio -o writes an archive", state, _not_device(_values(opts, "-F", "-O", "--file"))
            )
        return None
    # 7z: a/u/d rewrite the archive, x/e extract (into -o<dir> or the current directory).
    opts = _parse_opts(rest)
    if letters in ("a", "u", "d", "rn"):
        acc.flag(f"{name} {letters} writes an archive", state, opts.operands[:1])
    elif letters in ("x", "e"):
        outputs = [_Word(f.text[2:], dynamic=f.dynamic) for f in rest if f.text.startswith("-o")]
        acc.flag(f"{name} {letters} extracts files (may overwrite)", state, outputs or [_Word(".")])
    return None


def _mkfifo(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "mZ", ("--mode", "--context"))
    made = opts.operands if name == "mkfifo" else opts.operands[:1]
    acc.flag(f"{name} creates special files (a FIFO blocks whoever opens it)", state, made)


def _link(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    # A hard link shares the inode: writing either name writes both, so both ends count.
    acc.flag("link creates a hard link (both names count)", state, _parse_opts(args).operands)


_EDITORS: Final = frozenset({
    "vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "red", "emacs", "emacsclient", "nano",
    "pico", "micro", "joe", "kak", "hx", "helix", "mg", "jed", "ne", "vis", "gvim", "evim",
})  # fmt: skip


def _editor(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "cSsuiTWwrtqdoOp", ("--cmd", "--eval", "--load", "--file",
                                                 "--funcall", "--script"))  # fmt: skip
    files = [w for w in opts.operands if not w.text.startswith("+")]
    # ex/vim -es and ed read commands (:w other) from arguments or stdin: any file may change.
    acc.flag(
        f"{name} edits files (and can be scripted to write others)", state, files, unknown=True
    )


def _yq(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(
        args,
        "opIeMnsf",
        (
            "--output-format",
            "--input-format",
            "--indent",
            "--front-matter",
            "--expression",
            "--split-exp",
        ),
    )
    if _has(opts, "-i", "--inplace"):
        files = opts.operands[1:] if len(opts.operands) > 1 else opts.operands
        acc.flag("yq -i edits files in place", state, files)
    if _has(opts, "-s", "--split-exp"):
        acc.flag("yq -s writes files named by an expression", state, unknown=True)


def _history(cmd: _Cmd) -> None:
    args, state, acc = cmd.args, cmd.state, cmd.acc
    opts = _parse_opts(args, "d")
    if _has(opts, "-w", "-a") and opts.operands:
        acc.flag("history -w writes a file", state, opts.operands)
    if _has(opts, "-s"):
        acc.unanalysable("history -s adds commands that fc can run")


def _source(cmd: _Cmd) -> Kind:
    args, acc = cmd.args, cmd.acc
    if (
        not args
        or args[0].dynamic
        or args[0].text in ("/dev/stdin", "-")
        or _is_device(args[0].text)
        or args[0].substitutions
    ):
        acc.unanalysable("source of a run-time value")
        return "unknown"
    return "run"  # `. .venv/bin/activate`: a script we do not read


_DECLARERS: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
_SAFE_SHOPT: Final = frozenset(
    {
        "extglob",
        "globstar",
        "nullglob",
        "failglob",
        "pipefail",
        "inherit_errexit",
        "lastpipe",
        "checkwinsize",
        "histappend",
    }
)


def _builtin_names(cmd: _Cmd) -> Kind | None:
    """Builtins that set variables by name: code hides in subscripts and attributes."""
    name, args, acc = cmd.name, cmd.args, cmd.acc
    texts = [w.text for w in args]
    if any(re.search(_SUBSCRIPT_CODE, t.split("=", 1)[0]) for t in texts):
        acc.unanalysable("arithmetic with expansions")
        return "unknown"
    if name in _DECLARERS:
        for text in texts:
            if text.startswith(("-", "+")) and ("i" in text or "n" in text):
                # declare -i evaluates assignments as arithmetic; -n makes a nameref.
                acc.unanalysable(f"{name} {text}")
                return "unknown"
        for word in args:
            if _ASSIGNMENT.match(word.text):
                _assignment(word, acc)
            elif not word.text.startswith(("-", "+")) and word.text in _SPECIAL_VARIABLES:
                acc.unanalysable(f"{name} {word.text}")
        return None
    if name in ("mapfile", "readarray") and any(t.startswith("-") and "C" in t for t in texts):
        acc.unanalysable("mapfile -C runs a callback")
        return "unknown"
    if name == "let" and any(_ARITH_READS.search(t.split("=", 1)[-1]) for t in texts):
        acc.unanalysable("arithmetic with expansions")
        return "unknown"
    if name == "shopt" and "-s" in texts:
        unsafe = [t for t in texts if not t.startswith("-") and t not in _SAFE_SHOPT]
        if unsafe or any(w.dynamic for w in args):
            acc.unanalysable(f"shopt -s {' '.join(unsafe) or '(run-time value)'}")
            return "unknown"
    if name == "hash" and any(t.startswith("-") and "p" in t for t in texts):
        acc.unanalysable("hash -p maps a command name to another program")
        return "unknown"
    if name in ("test", "[") and "-v" in texts:
        acc.unanalysable("test -v")
        return "unknown"
    return None


# --- what every other program is ----------------------------------------------------------------

# Programs that only read (or whose every writing and executing option is modelled) are
# entries of the table in programs.py: unknown options there ask.

# Test runners, builds, interpreters, package managers, project tools: what they write is not
# on the command line (nothing static can say), so they are quiet -- everyday work -- and the
# client's sandbox is what bounds them (README "Trust model"). Their words still reach: any
# protected path they are handed is refused.
_RUNNERS: Final = frozenset({
    "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby",
    "php", "java", "javac", "kotlin", "kotlinc", "scala", "go", "gofmt", "cargo", "rustc",
    "rustup", "rustfmt", "make", "gmake", "cmake", "ctest", "ninja", "meson", "bazel",
    "bazelisk", "buck", "buck2", "gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "dotnet",
    "msbuild", "swift", "swiftc", "xcodebuild", "xcrun", "clang", "clang++", "gcc", "g++", "cc",
    "c++", "ld", "as", "npm", "npx", "pnpm", "pnpx", "yarn", "corepack", "pip", "pip3", "pipx",
    "uv", "uvx", "poetry", "pdm", "hatch", "rye", "conda", "mamba", "micromamba", "pytest",
    "py.test", "tox", "nox", "coverage", "mypy", "pyright", "ruff", "black", "isort", "flake8",
    "pylint", "bandit", "pre-commit", "jest", "vitest", "mocha", "ava", "tap", "playwright",
    "cypress", "tsc", "tsx", "ts-node", "esbuild", "vite", "webpack", "rollup", "parcel", "next",
    "nuxt", "eslint", "prettier", "stylelint", "biome", "rubocop", "rake", "bundle", "bundler",
    "rails", "rspec", "gem", "composer", "phpunit", "artisan", "mix", "elixir", "iex", "erl",
    "rebar3", "ghc", "ghci", "cabal", "stack", "dune", "opam", "zig", "nim", "crystal", "dart",
    "flutter", "R", "Rscript", "julia", "lua", "luajit", "terraform", "tofu", "pulumi",
    "docker", "docker-compose", "podman", "kubectl", "helm", "kind", "minikube", "gh", "glab",
    "aws", "gcloud", "az", "heroku", "vercel", "netlify", "firebase", "wrangler", "sqlite3",
    "psql", "mysql", "redis-cli", "mongosh", "just", "task", "direnv", "asdf", "mise", "jupyter",
    "ipython", "sphinx-build", "mkdocs", "hugo", "jekyll", "bats", "shellcheck", "shfmt",
    "hadolint", "golangci-lint", "staticcheck", "valgrind", "gdb", "lldb", "strace", "ltrace",
    "perf", "hyperfine", "ab", "wrk", "k6", "locust", "ssh", "http", "https", "xh", "pnpm-dlx",
    "nodemon", "pm2", "turbo", "nx", "lerna", "changeset", "semantic-release", "storybook",
    "sass", "tailwindcss", "postcss", "babel", "swc", "terser", "uglifyjs", "clang-format",
    "clang-tidy", "cppcheck", "autopep8", "yapf", "pydocstyle", "vulture", "radon", "pip-audit",
    "safety", "twine", "maturin", "flit", "setup.py", "manage.py", "alembic", "django-admin",
    "flask", "uvicorn", "gunicorn", "hypercorn", "celery", "streamlit", "gradio", "dvc",
    "ansible", "ansible-playbook", "vagrant", "packer", "pkg-config",
    "autoreconf", "autoconf", "automake", "libtool", "configure", "doxygen",
    "protoc", "buf", "sqlc", "grpcurl", "openapi-generator", "swagger-codegen", "graphql-codegen",
    "pandoc", "latexmk", "pdflatex", "xelatex", "lualatex", "typst", "openssl", "gpg",
})  # fmt: skip
# python3.12, pip3.11, node18, gcc-13, clang++-17, ruby3.2, php8.2 ...
_VERSIONED_RUNNER: Final = re.compile(
    r"(python|pip|pypy|ruby|php|node|gcc|g\+\+|clang|clang\+\+|perl|lua|java|go)[0-9][0-9.\-]*"
)

# Builtins no static reading can follow: they run code later, elsewhere, or under other names.
_UNANALYSABLE: Final = {
    "trap": "trap runs code on a signal",
    "alias": "alias",
    "fc": "fc re-runs commands from history",
    "enable": "enable loads builtins",
    "bind": "bind -x runs code on a key",
    "complete": "complete -C runs a command",
    "compgen": "compgen runs functions and commands",
    "coproc": "coproc",
    "script": "script runs a shell",
    "expect": "expect runs a script",
    "parallel": "parallel runs commands built at run time",
    "vipe": "vipe runs an editor",
}


_Handler = Callable[[_Cmd], "Kind | None"]

_HANDLERS: dict[str, _Handler] = {
    "mv": _mv,
    "cp": _cp,
    "install": _cp,
    "ln": _ln,
    "dd": _dd,
    "chmod": _chmod,
    "chown": _chmod,
    "chgrp": _chmod,
    "tee": _tee,
    "sponge": _tee,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "awk": _awk,
    "gawk": _awk,
    "find": _find,
    "xargs": _xargs,
    "timeout": _timeout,
    "gtimeout": _timeout,
    "env": _env,
    "su": _su,
    "eval": _eval,
    "watch": _eval,
    "flock": _flock,
    "kill": _kill,
    "pkill": _kill,
    "killall": _kill,
    "scp": _scp,
    "rsync": _scp,
    "tar": _tar,
    "unzip": _tar,
    "patch": _patch,
    "git": _git,
    "split": _split,
    "csplit": _split,
    "zip": _archive,
    "7z": _archive,
    "7za": _archive,
    "7zr": _archive,
    "ar": _archive,
    "cpio": _archive,
    "mkfifo": _mkfifo,
    "mknod": _mkfifo,
    "link": _link,
    "yq": _yq,
    "history": _history,
    "source": _source,
    ".": _source,
    **dict.fromkeys(_COMPRESSORS, _compress),
    **dict.fromkeys(_EDITORS, _editor),
    **dict.fromkeys(
        (
            "declare",
            "typeset",
            "local",
            "export",
            "readonly",
            "read",
            "mapfile",
            "readarray",
            "unset",
            "let",
            "printf",
            "getopts",
            "wait",
            "shopt",
            "hash",
            "test",
            "[",
        ),
        _builtin_names,
    ),
    **dict.fromkeys(_WRAPPERS, _wrapper),
    **dict.fromkeys(_SHELLS, _shell),
}


# --------------------------------------------------------------------------------------------
# ledger intent commands
# --------------------------------------------------------------------------------------------

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
