"""The git model of the shell analysis: which subcommands only read, which write the work tree,
which paths they write, and the options and configuration that make git run a program.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re

from ledger._git import GIT_EXEC_KEYS
from ledger._governance.analysis.programs import (
    GIT_EXEC_OPTIONS,
    GIT_GLOBAL_FLAGS,
    GIT_QUIET,
    GIT_REF_WRITERS,
    GIT_TREE_READERS,
    GIT_TREE_WRITERS,
)
from ledger._governance.analysis.shell_core import (
    _Acc,
    _Cmd,
    _has,
    _is_remote,
    _not_device,
    _option_value,
    _parse_opts,
    _values,
)
from ledger._governance.analysis.shell_scan import _State, _Word

_GIT_PATHLIKE = r"(\.\.?|\.{0,2}/.*|~.*|.*[*?\[].*|.*\.[A-Za-z][A-Za-z0-9]*)"


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
        elif text in GIT_GLOBAL_FLAGS:
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
    for option in GIT_EXEC_OPTIONS.get(sub, ()):
        if any(_git_option(w.text, option) for w in rest):
            acc.refuse(f"git {sub} {option} runs a program")
    if sub == "clone":
        for j, word in enumerate(rest):
            option, eq, value = word.text.partition("=")
            if option in ("-c", "--config"):
                config = _option_value(rest, j, value if eq else None)
                if config is not None:
                    _git_config_value(config, acc)
    _ledger_refs(sub, rest, acc)
    analyzer = _GIT_SUBCOMMANDS.get(sub)
    if analyzer is not None:
        analyzer(rest, git_state, acc)
    elif sub in GIT_TREE_WRITERS:
        if any(w.text in ("--abort", "--quit", "--skip", "-h") for w in rest) or (
            rest[:1] and (sub, rest[0].text) in GIT_TREE_READERS
        ):
            return
        acc.flag(GIT_TREE_WRITERS[sub], git_state, [_Word(".")])
    elif sub not in GIT_QUIET:
        acc.unanalysable(f"git {sub} is not modelled (it may be an alias)")


# Names that stand for the evidence refs (refs/ledger/<id>, refs/ledger-incoming/...,
# refs/ledger-remotes/...): only `ledger push` and `ledger fetch` write them, after their checks.
_LEDGER_REF_SAMPLES = ("refs/ledger/x", "refs/ledger-incoming/x", "refs/ledger-remotes/r/x")


def _names_ledger_refs(text: str) -> bool:
    """Whether a word (a ref, a refspec ``+src:dst``, a glob ``refs/*``) may name an
    evidence ref."""
    folded = text.casefold()
    if "refs/ledger" in folded:
        return True
    for side in folded.lstrip("+^").split(":"):
        if "*" in side and any(fnmatch.fnmatchcase(ref, side) for ref in _LEDGER_REF_SAMPLES):
            return True
    return False


def _ledger_refs(sub: str, rest: list[_Word], acc: _Acc) -> None:
    """The shell may not create, move, delete or push ``refs/ledger*``: a forged or malformed
    one is what every teammate's ``ledger fetch`` would then read."""
    if sub not in GIT_REF_WRITERS:
        return
    texts = [w.text for w in rest]
    mirror = any(t == "--mirror" or t.startswith("--mirror=") for t in texts)
    if any(w.dynamic and ("refs" in w.text or ":" in w.text) for w in rest):
        acc.unanalysable(f"git {sub} of a ref named at run time")
    if any(_names_ledger_refs(t) for t in texts):
        acc.refuse(f"git {sub} writes an evidence ref (refs/ledger*), which only ledger push and "
                   "ledger fetch write")  # fmt: skip
    elif sub in ("push", "remote") and mirror:
        acc.refuse(f"git {sub} --mirror pushes or fetches every ref, the evidence refs included")
    elif sub == "update-ref" and "--stdin" in texts:
        acc.unanalysable("git update-ref --stdin writes refs its input names")


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
    elif key.lower().startswith("extensions."):
        # extensions.worktreeConfig makes git read each worktree's config.worktree too, where
        # a core.fsmonitor runs; the others change how git reads the repository at all.
        acc.refuse(f"git -c {key} changes which configuration git reads")


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
