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
subshell's ``cd`` ends with it, and ``env -C``, ``git -C``, ``make -C`` (``CHDIR_OPTIONS`` in
:mod:`.programs`) move only their own command. A ``cd`` to a run-time value marks the following
relative targets unknown.

The analysis is spread over rooms: :mod:`.shell_scan` (the bash-aware scanner and the directory
state), :mod:`.shell_core` (the result, the accumulator, option parsing), :mod:`.shell_writers`
(the writers it models), :mod:`.shell_git` (git), :mod:`.intent_command` (``ledger intent``
commands) and :mod:`.programs` (every name table). This module walks the tokens and dispatches
each simple command to its handler.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Final

from ledger._errors import InputError
from ledger._governance.analysis.intent_command import IntentCommand, parse_intent_command
from ledger._governance.analysis.program_values import environment_role
from ledger._governance.analysis.programs import (
    CHDIR_OPTIONS,
    COMPRESSORS,
    DECLARERS,
    DISK_TOOLS,
    EDITORS,
    ENV_DUMPERS,
    FANOUT,
    FANOUT_REPLACE,
    KEYWORDS,
    LATER,
    LATER_READS,
    LEDGER_WRITERS,
    LOCKERS,
    NO_COMMAND_KEYWORDS,
    PROGRAMS,
    RUNNERS,
    SAFE_SHOPT,
    SHELLS,
    SPECIAL_VARIABLES,
    START_COMMANDS,
    UNANALYSABLE,
    VERSIONED_RUNNER,
    WRAPPERS,
    WRITERS,
    reads_whatever_it_is_given,
    split_options,
    walk,
)
from ledger._governance.analysis.shell_core import (
    CommandClass,
    Kind,
    Risk,
    _Acc,
    _account,
    _Cmd,
    _is_device,
    _is_fd,
    _merge,
    _not_device,
    _option_value,
    _parse_opts,
    _table,
    _values,
)
from ledger._governance.analysis.shell_git import _git
from ledger._governance.analysis.shell_scan import (
    _ARITH_READS,
    _ASSIGNMENT,
    _PIPES,
    _SEPARATORS,
    _WRITE_REDIRECTS,
    _State,
    _Token,
    _tokenize_all,
    _Word,
)
from ledger._governance.analysis.shell_values import check_environment, check_option_values
from ledger._governance.analysis.shell_writers import (
    _archive,
    _awk,
    _chmod,
    _compress,
    _cp,
    _dd,
    _editor,
    _history,
    _kill,
    _link,
    _ln,
    _mkfifo,
    _mv,
    _patch,
    _perl,
    _scp,
    _sed,
    _split,
    _tar,
    _tee,
    _yq,
)
from ledger._startup.patterns import lazy_compile

__all__ = [
    "MAX_COMMAND_CHARS",
    "CommandClass",
    "IntentCommand",
    "Risk",
    "classify_command",
    "parse_intent_command",
]


_MAX_DEPTH = 12  # nested bash -c / eval / $( ) / wrapper levels before we give up


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
    for body in scanner.bodies:
        _inline_ledger_api(body, acc)
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
            if background:
                # What runs in the background acts after the hook has answered: a subshell
                # `(sleep 4; ...) &` as much as a simple command.
                acc.unanalysable("& runs a command in the background, after the call")
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
            leading = bare and tok.text in KEYWORDS
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
    assigned: list[_Word] = []
    while argv and (
        (not argv[0].quoted and argv[0].text in KEYWORDS) or _ASSIGNMENT.match(argv[0].text)
    ):
        if not argv[0].quoted and argv[0].text == "coproc":
            acc.unanalysable("coproc")
        elif _ASSIGNMENT.match(argv[0].text):
            _assignment(argv[0], acc)
            assigned.append(argv[0])
        # The bash keyword "time [-p]" times a whole pipeline, compound commands included.
        skip = 2 if argv[0].text == "time" and argv[1:2] and argv[1].text == "-p" else 1
        argv = argv[skip:]
    if not argv or (not argv[0].quoted and argv[0].text in NO_COMMAND_KEYWORDS):
        check_environment(assigned, None, state, acc, depth=depth, analyze=_command_kind)
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
    check_environment(assigned, kind, state, acc, depth=depth, analyze=_command_kind)
    if kind != "read":
        acc.reach.extend(texts)


def _command_kind(text: str, state: _State, acc: _Acc, depth: int) -> Kind:
    """Analyse a command line given as a value (``PAGER='less -R'``, ``rsync -e 'ssh -p 22'``)
    into ``acc``: a single simple command says what it is; anything else is unknown."""
    try:
        scanner = _tokenize_all(text)
    except InputError:
        acc.unanalysable("a command value that cannot be parsed")
        return "unknown"
    words = [t for t in scanner.tokens if isinstance(t, _Word)]
    if len(words) != len(scanner.tokens) or not words or scanner.bodies or scanner.cannot:
        _analyze_text(text, state, acc, depth=depth)
        return "unknown"
    for word in words:
        _substitutions(word, state, acc, depth=depth)
    acc.words.extend(w.text for w in words)
    if _ASSIGNMENT.match(words[0].text):
        return "unknown"
    return _analyze_argv(words, state, acc, depth=depth, piped=False)


def _assignment(word: _Word, acc: _Acc) -> None:
    """``NAME=value``: the value may name a file later (it reaches); some names change what
    every later command means."""
    acc.reach.append(word.text)
    name = word.text.split("=", 1)[0].rstrip("+").split("[", 1)[0]
    # A pager or an editor given as a command line is read by check_environment instead.
    checked = environment_role(name) in ("exec", "remote") and not word.dynamic
    if (name in SPECIAL_VARIABLES and not checked) or name.startswith(("BASH_FUNC_", "GIT_CONFIG")):
        acc.unanalysable(f"assignment to {name}")
    if re.search(_SUBSCRIPT_CODE, word.text.split("=", 1)[0]):
        acc.unanalysable("arithmetic with expansions")


# A subscript holding code: read 'a[$(cmd)]' evaluates it as arithmetic.
_SUBSCRIPT_CODE: Final = r"\[[^\]]*[$`(]"

# `less +G`, `more +/pattern`: a line, the end, a search. Any other +COMMAND (`less '+!sh'`,
# `+|cmd`, `+s file`, `+v`) runs a shell, pipes, saves or edits [less(1) COMMANDS].
_QUIET_START: Final = r"\+(\d+[%pP]?|[GgFRr]|/[^!|]*|\?[^!|]*)"


def _substitutions(word: _Word, state: _State, acc: _Acc, *, depth: int) -> None:
    for inner in word.substitutions:
        # A substitution runs in a subshell: its cd does not leak out.
        _analyze_text(inner, state.copy(), acc, depth=depth + 1)


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
    check_option_values(name, args, state, acc, depth=depth, analyze=_command_kind)
    if name in START_COMMANDS and any(
        w.text.startswith("+") and not re.fullmatch(_QUIET_START, w.text) for w in args
    ):
        acc.unanalysable(f"{name} +COMMAND runs a command of {name}'s at start")
    if _dumps_environment(name, args):
        acc.environment = True
    if name == "ledger":
        _ledger(args, state, acc)
        return "run"
    if name in LATER:
        modelled = name in _HANDLERS or name in PROGRAMS or name in RUNNERS
        if args and args[0].text in LATER_READS.get(name, ()):
            if not modelled:
                return "read"  # crontab -l, tmux ls: a listing
        else:
            acc.unanalysable(LATER[name])
            if not modelled:
                return "unknown"
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
    if name.startswith("mkfs") or name in DISK_TOOLS:
        opts = _parse_opts(args, "tLbcCEgGIlmNOrTUv")
        acc.flag(f"{name} formats or repartitions a device", state, opts.operands[-1:])
        return "write"
    if name in UNANALYSABLE:
        acc.unanalysable(UNANALYSABLE[name])
        return "unknown"
    if name in RUNNERS or "/" in head.text or VERSIONED_RUNNER.fullmatch(name):
        # Tests, builds, interpreters, project scripts: what they write is not on the command
        # line. Quiet, but their words reach (`black .orchestration/` is refused).
        _ledger_in_words(args, state, acc)
        return "run"
    acc.unanalysable(f"unrecognised program {name!r}")
    return "unknown"


def _chdir(name: str, args: list[_Word], state: _State) -> _State:
    """The directory ``name args`` works in (``make -C dir``), for reading its operands."""
    options = CHDIR_OPTIONS.get(name)
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


def _dumps_environment(name: str, args: list[_Word]) -> bool:
    if name == "ps":
        # BSD-style "e" prints each process's environment (ps eww, ps auxe) [ps(1)].
        return any(not w.text.startswith("-") and "e" in w.text for w in args[:1])
    if name not in ENV_DUMPERS:
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
        _inline_ledger_api(word.text, acc)
    for word in args:
        # Inline code (python -c, node -e) that runs ledger's writing commands: coarse.
        pieces = [p for p in re.split(r"[\s;&|()<>`$'\",\[\]{}=]+", word.text) if p]
        for index, piece in enumerate(pieces[:-1]):
            if posixpath.basename(piece) == "ledger" and pieces[index + 1] in LEDGER_WRITERS:
                _ledger([_Word(p) for p in pieces[index + 1 :]], state, acc)
                return


def _inline_ledger_api(code: str, acc: _Acc) -> None:
    """Inline Python (``python -c``, a heredoc) that writes through ledger's library: refused,
    as ``ledger append`` is (the library's own checks are a second layer)."""
    if "ledger" not in code or "import" not in code:
        return
    from ledger._governance.analysis.python_api import ledger_api_writes  # noqa: PLC0415 -- ast only for such code

    calls = ledger_api_writes(code)
    if calls == ("unparsable",):
        acc.unanalysable("inline code that mentions ledger and does not parse as Python")
    elif calls:
        acc.refuse(f"inline Python writes through ledger's library ({', '.join(calls)})")


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
    unseen = any(w.text == "-files0-from" for w in args[i:])
    if unseen:
        # The starting points come from a file: what -exec and -delete act on is unseen.
        roots = [_Word("*", dynamic=True)]
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
            if unseen and inner and not _unseen_operands(inner, "find", state, acc):
                found = "unknown"  # -files0-from: what the command is given is unseen
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
    if not _unseen_operands(inner, "xargs", state, acc):
        return "unknown"
    return kind


def _unseen_operands(argv: list[_Word], why: str, state: _State, acc: _Acc) -> bool:
    """``argv`` is given operands no one can see (``xargs``, a file of names): quiet only for a
    program that reads whatever it is given (``grep``, ``wc``, ``cat``); anything that may
    write, run or delete with them is destructive with unknown targets, so every word reaches
    the protected-path checks. Returns whether it stays quiet."""
    name = posixpath.basename(argv[0].text)
    spec = PROGRAMS.get(name)
    if (
        spec is not None
        and not argv[0].dynamic
        and name not in LATER
        and reads_whatever_it_is_given(spec, [w.text for w in argv[1:]])
    ):
        return True
    acc.flag(f"{why}: {name} is given operands the hook cannot read", state, unknown=True)
    return False


# Replacement strings of GNU parallel ({}, {.}, {/}, {//}, {/.}, {#}, {%}, {2}, {+/} ...) and
# rush ({:}, {^suffix}, {@regexp}, {key} of -v key=value): each stands for an operand.
_REPLACEMENT: Final = lazy_compile(r"\{[^{}\s,=]*\}")
_ARG_SEPARATORS: Final = {":::": "words", ":::+": "words", "::::": "files", "::::+": "files"}
_UNSEEN: Final = "__ledger_unseen_operand__"
_MAX_OPERANDS: Final = 64  # operands shown on the line, each analysed in its command


def _fanout(cmd: _Cmd) -> Kind | None:
    """GNU or moreutils ``parallel``, ``rush``, ``xe``: a command run once per operand. Shown
    operands (``::: a b``, moreutils' ``-- a b``, ``xe -a cmd -- a b``) are analysed in the
    command, one by one; operands from the input or a file are unseen, as for ``xargs``."""
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    spec = FANOUT[name]
    texts = [w.text for w in args]
    if any("{=" in t for t in texts):
        acc.flag(f"{name} {{= =}} runs Perl code on its operands", state, unknown=True)
        acc.unanalysable(f"{name} {{= =}} runs Perl code")
        return "unknown"
    indexes, first = split_options(spec, texts, interspersed=name == "rush")
    options = [args[i] for i in indexes]
    kind = _table(name, spec, options, state, acc)
    taken = set(indexes)
    rest = [args[i] for i in range(first, len(args)) if i not in taken]
    flags = {w.text.partition("=")[0]: w for w in options}
    fan = _Fan(name, cmd, shell=name == "rush" or (name == "parallel" and "-q" not in flags))
    if "--quote" in flags:
        fan.shell = False
    unseen, separators, xe_separator = fan.read_options(spec, options)
    unseen = unseen or name == "rush"  # rush reads its input always
    if name == "xe":
        if "-s" in flags or "-p" in flags:
            acc.flag(f"{name} runs a script on its operands", state, unknown=True)
            return "unknown"
        if "-a" not in flags and "-A" not in flags:
            return fan.run(rest, None)
        separators = {xe_separator: "words"}
    elif rest and rest[0].text == "--":
        rest = rest[1:]
    at = next((i for i, w in enumerate(rest) if w.text in separators), None)
    if at is None:
        if name == "parallel" and any(w.text == "--" for w in rest):
            # moreutils: `parallel [CMD] -- ARGS` (each ARG a command when CMD is empty); read
            # as GNU's too (`--` is then a word of the command, the operands its input).
            split = next(i for i, w in enumerate(rest) if w.text == "--")
            gnu = fan.run(rest, None)
            fan.shell = False
            found = fan.run(rest[:split], rest[split + 1 :])
            return "read" if found == gnu == kind == "read" else "run"
        return fan.run(rest, None)  # no separator: the operands are the input's lines
    shown: list[_Word] = []
    source = ""
    for word in rest[at:]:
        if word.text in separators:
            source = separators[word.text]
        elif source == "files":
            unseen = True  # :::: FILE: the operands are the file's lines
        else:
            shown.append(word)
    found = fan.run(rest[:at], None if unseen else shown)
    return "read" if found == kind == "read" else found


class _Fan:
    """One command a fan-out program runs per operand: how it is run (through a shell, or as
    words), and the strings in it that stand for an operand."""

    __slots__ = ("cmd", "name", "replacements", "shell")

    def __init__(self, name: str, cmd: _Cmd, *, shell: bool) -> None:
        self.name = name
        self.cmd = cmd
        self.shell = shell
        self.replacements: list[str] = []

    def read_options(self, spec: str, options: list[_Word]) -> tuple[bool, dict[str, str], str]:
        """Whether an option names a file of operands (``-a FILE``), the separators of shown
        operands and of files of them (``:::``, ``::::``, or ``--arg-sep``'s), and xe's (``--``
        or ``-A``'s); the replacement strings options name are kept."""
        unseen = False
        separators = dict(_ARG_SEPARATORS)
        xe_separator = "--"
        for role, index, value, option in walk(spec, [w.text for w in options]):
            given = value if value is not None else options[index].text
            if role == "operands":
                unseen = True
            elif option in FANOUT_REPLACE and role == "value":
                self.replacements.append(given)
            elif option == "-A":
                xe_separator = given
            elif option in ("--arg-sep", "--arg-file-sep"):
                source = "files" if option == "--arg-file-sep" else "words"
                separators = {k: v for k, v in separators.items() if v != source}
                separators[given] = source
        return unseen, separators, xe_separator

    def run(self, template: list[_Word], operands: list[_Word] | None) -> Kind:
        """Run ``template`` once per operand: each shown one substituted (``operands``), or
        unseen ones (``None``) checked as ``xargs`` checks its command. An empty template runs
        each operand as a command line."""
        name, state, acc, depth = self.name, self.cmd.state, self.cmd.acc, self.cmd.depth + 1
        if operands is not None and (
            len(operands) > _MAX_OPERANDS or any(w.dynamic or w.substitutions for w in operands)
        ):
            operands = None  # a run-time value may be any number of words, options included
        if not template:
            if operands is None:
                acc.flag(f"{name} runs the command lines it reads", state, unknown=True)
                acc.unanalysable(f"{name} runs the command lines it reads from its input")
                return "unknown"
            kinds = [_command_kind(w.text, state.copy(), acc, depth) for w in operands]
            return "read" if all(k == "read" for k in kinds) else "run"
        text = " ".join(w.text if self.shell else _requote(w) for w in template)
        if operands is not None:
            lines = [self.substitute(text, _requote(w)) for w in operands or [_Word("")]]
            kinds = [_command_kind(line, state.copy(), acc, depth) for line in lines]
            return "read" if all(k == "read" for k in kinds) else "run"
        return self.unseen(self.substitute(text, _UNSEEN))

    def unseen(self, line: str) -> Kind:
        """``line``, whose operands no one can see, as ``xargs`` would run it."""
        name, state, acc, depth = self.name, self.cmd.state, self.cmd.acc, self.cmd.depth + 1
        try:
            scanner = _tokenize_all(line)
        except InputError:
            scanner = None
        words = [] if scanner is None else [t for t in scanner.tokens if isinstance(t, _Word)]
        argv = [
            _Word(w.text.replace(_UNSEEN, "*"), dynamic=True) if _UNSEEN in w.text else w
            for w in words
            if w.text != _UNSEEN
        ]
        if (
            scanner is None
            or len(words) != len(scanner.tokens)
            or scanner.bodies
            or scanner.cannot
            or any(w.substitutions for w in words)
            or not argv
            or _UNSEEN in words[0].text
        ):
            _analyze_text(line.replace(_UNSEEN, '"$_"'), state.copy(), acc, depth=depth)
            why = f"{name} runs a command line on operands the hook cannot read"
            acc.flag(why, state, unknown=True)
            return "unknown"
        sub = _Acc()
        kind = _analyze_argv(argv, state, sub, depth=depth, piped=self.cmd.piped)
        _merge(acc, sub, unknown=bool(sub.reasons or sub.targets))
        acc.words.extend(w.text for w in argv)
        if not _unseen_operands(argv, name, state, acc):
            return "unknown"
        return kind

    def substitute(self, text: str, operand: str) -> str:
        """``text`` with every replacement string standing for ``operand``; appended when it
        has none (as parallel and xargs append)."""
        out = _REPLACEMENT.sub(lambda _m: operand, text) if "{" in text else text
        for custom in self.replacements:
            if custom:
                out = out.replace(custom, operand)
        return out if out != text else f"{text} {operand}"


def _wrapper(cmd: _Cmd) -> Kind | None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    depth, piped = cmd.depth, cmd.piped
    short, long_ = WRAPPERS[name]
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
    assigned: list[_Word] = []
    if name in ("sudo", "doas"):
        # "sudo VAR=value cmd" sets the variable for cmd [sudo(8) DESCRIPTION].
        while inner and _ASSIGNMENT.match(inner[0].text):
            _assignment(inner[0], acc)
            assigned.append(inner[0])
            inner = inner[1:]
    if name == "chroot":
        inner = inner[1:]  # the new root
    kind = _analyze_argv(inner, state, acc, depth=depth + 1, piped=piped) if inner else None
    check_environment(assigned, kind, state, acc, depth=depth, analyze=_command_kind)
    return kind


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
    assigned: list[_Word] = []
    while inner and _ASSIGNMENT.match(inner[0].text):
        _assignment(inner[0], acc)
        assigned.append(inner[0])
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
        check_environment(assigned, "unknown", state, acc, depth=depth, analyze=_command_kind)
        return None
    kind = _analyze_argv(inner, inner_state, acc, depth=depth + 1, piped=piped) if inner else None
    check_environment(assigned, kind, state, acc, depth=depth, analyze=_command_kind)
    return kind


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
    name, args, state, acc, depth, piped = (
        cmd.name, cmd.args, cmd.state, cmd.acc, cmd.depth, cmd.piped,
    )  # fmt: skip
    short, long_ = LOCKERS[name]
    opts = _parse_opts(args, short, long_, stop_at_operand=True)
    scripts = _values(opts, "-c", "--command") if name == "flock" else []
    lock = opts.operands[:1]
    if lock and (_is_fd(lock[0].text) or lock[0].dynamic):
        # flock 9: the descriptor was opened elsewhere (exec 9<FILE), so which file is held
        # is not on this command line.
        acc.unanalysable(f"{name} {lock[0].text} locks a file the command line does not name")
    elif lock:
        # The lock file is opened (created if missing) and held: a protected one is refused
        # like any write to it, since holding ledger's lock stalls every hook call.
        acc.create(state, lock)
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


def _builtin_names(cmd: _Cmd) -> Kind | None:
    """Builtins that set variables by name: code hides in subscripts and attributes."""
    name, args, acc = cmd.name, cmd.args, cmd.acc
    texts = [w.text for w in args]
    if any(re.search(_SUBSCRIPT_CODE, t.split("=", 1)[0]) for t in texts):
        acc.unanalysable("arithmetic with expansions")
        return "unknown"
    if name in DECLARERS:
        for text in texts:
            if text.startswith(("-", "+")) and ("i" in text or "n" in text):
                # declare -i evaluates assignments as arithmetic; -n makes a nameref.
                acc.unanalysable(f"{name} {text}")
                return "unknown"
        assigned = [w for w in args if _ASSIGNMENT.match(w.text)]
        for word in args:
            if _ASSIGNMENT.match(word.text):
                _assignment(word, acc)
            elif not word.text.startswith(("-", "+")) and word.text in SPECIAL_VARIABLES:
                acc.unanalysable(f"{name} {word.text}")
        # Exported, a variable reaches every later command: one the table does not know asks.
        exported = name == "export" or any(
            t.startswith("-") and "x" in t for t in texts if not _ASSIGNMENT.match(t)
        )
        check_environment(
            assigned,
            None,
            cmd.state,
            acc,
            depth=cmd.depth,
            analyze=_command_kind,
            exported=exported,
        )
        return None
    if name in ("mapfile", "readarray") and any(t.startswith("-") and "C" in t for t in texts):
        acc.unanalysable("mapfile -C runs a callback")
        return "unknown"
    if name == "let" and any(_ARITH_READS.search(t.split("=", 1)[-1]) for t in texts):
        acc.unanalysable("arithmetic with expansions")
        return "unknown"
    if name == "shopt" and "-s" in texts:
        unsafe = [t for t in texts if not t.startswith("-") and t not in SAFE_SHOPT]
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
    **dict.fromkeys(FANOUT, _fanout),
    "timeout": _timeout,
    "gtimeout": _timeout,
    "env": _env,
    "su": _su,
    "eval": _eval,
    "watch": _eval,
    **dict.fromkeys(LOCKERS, _flock),
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
    **dict.fromkeys(COMPRESSORS, _compress),
    **dict.fromkeys(EDITORS, _editor),
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
    **dict.fromkeys(WRAPPERS, _wrapper),
    **dict.fromkeys(SHELLS, _shell),
}
