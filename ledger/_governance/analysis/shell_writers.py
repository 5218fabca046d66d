"""The writers the shell analysis models: coreutils (``mv``, ``cp``, ``ln``, ``dd``, ``chmod``,
``tee``), ``sed``/``awk``/``perl`` scripts, archivers and compressors, ``scp``, ``patch`` and
the other programs whose operands are written, one handler each.
"""

from __future__ import annotations

import posixpath
import re

from ledger._governance.analysis.programs import (
    COMPRESSOR,
    KILL_SIGNALS,
    TAR_RUNS,
)
from ledger._governance.analysis.shell_core import (
    Kind,
    _Cmd,
    _has,
    _is_remote,
    _not_device,
    _parse_opts,
    _table,
    _values,
)
from ledger._governance.analysis.shell_scan import _ASSIGNMENT, _Word


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


def _kill(cmd: _Cmd) -> None:
    name, args, state, acc = cmd.name, cmd.args, cmd.state, cmd.acc
    forced = False
    for index, word in enumerate(args):
        text = word.text
        if text.startswith("-") and text[1:] in KILL_SIGNALS:
            forced = True
        elif text in ("-s", "-n", "--signal") and index + 1 < len(args):
            forced = forced or args[index + 1].text.upper() in KILL_SIGNALS
        elif text.startswith("--signal=") and text[9:].upper() in KILL_SIGNALS:
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
