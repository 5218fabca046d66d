"""The bash-aware scanner of the shell analysis: quotes, substitutions, heredocs, and the
directory state (``cd``, ``pushd``/``popd``) a compound command moves through.

Why a scanner of our own rather than :mod:`shlex`: see :mod:`ledger._governance.analysis.shell`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from ledger._errors import InputError
from ledger._startup.patterns import lazy_compile

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
_NAME_CHARS = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Characters with no meaning to the scanner, read as one run; "#" inside a word is literal.
_PLAIN_RUN = lazy_compile(r"[^ \t\r\n\\'\"$`|&;<>()]+")
_GLOB_OR_BRACE = lazy_compile(r"[*?\[{]")
# Arithmetic that reads a variable ($x, a bare name, a[i]); digits-with-base (16#ff, 0x1f) do not.
_ARITH_READS = lazy_compile(r"[$`\[]|(?<![0-9#A-Za-z_])[A-Za-z_]")
_PARAM_TRANSFORM = lazy_compile(r"[#!]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:\[[^\]]*\])?@[A-Za-z]")
_PARAM_NAMES = lazy_compile(r"![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[@*]\])")  # ${!prefix*}, ${!a[@]}
# ${a[i]} with a non-literal subscript, ${x:off:len} with a non-numeric offset: arithmetic.
_PARAM_SUBSCRIPT = lazy_compile(r"#?[A-Za-z_][A-Za-z0-9_]*\[(?![0-9]+\]|[@*]\])")
_PARAM_OFFSET = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?:(?![-=?+])[^}]*[A-Za-z_$`]")
_ASSIGNMENT = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


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
        # scan to the end: retrying at every "(" made "((((..." quadratic (decision 0001).
        self.arith_failed = False
        self.cannot: list[str] = []  # constructs no static reading can follow (decision 0001)

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
