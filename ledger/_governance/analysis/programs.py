"""The programs the shell classifier knows, as data: options, their values, and what operands are.

A command is quiet only when every word of it is accounted for (decision 0003, "A command model that
fails safe by construction"): a program listed here with an option not listed here is
unanalysable (the policy asks), so an option nobody modelled (``iconv -o``, ``curl --stderr``,
``zstd -o``) can never pass as a read.

Each entry is one string of space-separated option specs, parsed on first use (import builds
no objects: ``python -X importtime`` shows this module at ~0.4 ms):

======================  =======================================================================
``-abc``                short flags ``-a``, ``-b``, ``-c`` without values
``-n:``                 ``-n`` takes a value that names no file (``-n 5``, ``-n5``)
``-o>``                 ``-o`` takes a path it **writes**
``-f<``                 ``-f`` takes a path it **reads**
``-e!``                 ``-e`` takes something it **executes** (a command, a script)
``--name``              a long flag
``--name=``/``>``/``<``/``!``  a long option taking a value, a written, read or executed path
``--name?``, ``-I?``    an option whose value, if any, is attached (``=`` for a long one)
``-O*``, ``--name*``    a flag that writes a file whose name the command line does not give
``-f+``, ``--name+``    a file that lists more operands (``wc --files0-from=F``): they get the
                        operands' role, unseen (a program that writes or runs them asks)
``-e%``, ``--name%``    a format string that may name files it writes (``curl -w '%output{f}'``)
``-K~``, ``--name~``    a file of options or settings (``curl -K``): whatever it holds, unseen
``#``                   ``-NUM`` is accepted (``head -20``)
``@text``               operands are text, not paths (``tr``, ``basename``)
``@1``                  the first operand is text (a pattern, a filter), the rest are paths
``@out``                the second operand, if any, is written (``uniq IN OUT``)
``@stop``               options end at the first operand (POSIX utilities)
``@any``                every word is text, options included (``echo``, ``true``, ``sleep``)
``@exec``               any operand is executed (never quiet)
``@delete``             every operand is deleted or overwritten (``rm``, ``shred``); why: DESTROYS
``@create``             every operand is created, destroying nothing (``touch``, ``mkdir``)
======================  =======================================================================

Operands are otherwise paths the program reads. GNU programs take options after operands;
``--`` ends options; ``--name=value`` and short clusters (``-rn5``) are split as getopt does
[POSIX.1-2017 XBD 12.2 Utility Syntax Guidelines; GNU getopt_long(3)].

The option lists follow the programs' manuals (GNU coreutils 9, grep 3, findutils, ripgrep 14,
fd 9, jq 1.7, curl 8, wget 1.21). An option missing here costs a question to the person, never a
silent pass; add it with its role.
"""

from __future__ import annotations

from typing import Final

from ledger._startup.patterns import lazy_compile

__all__ = [
    "CHDIR_OPTIONS",
    "COMPRESSOR",
    "COMPRESSORS",
    "DECLARERS",
    "DESTROYS",
    "DEVICES",
    "DISK_TOOLS",
    "EDITORS",
    "ENV_DUMPERS",
    "FANOUT",
    "FANOUT_REPLACE",
    "GIT_EXEC_OPTIONS",
    "GIT_GLOBAL_FLAGS",
    "GIT_QUIET",
    "GIT_REF_WRITERS",
    "GIT_TREE_READERS",
    "GIT_TREE_WRITERS",
    "KEYWORDS",
    "KILL_SIGNALS",
    "LATER",
    "LATER_READS",
    "LEDGER_WRITERS",
    "LOCKERS",
    "NO_COMMAND_KEYWORDS",
    "PROGRAMS",
    "RUNNERS",
    "SAFE_SHOPT",
    "SHELLS",
    "SPECIAL_VARIABLES",
    "START_COMMANDS",
    "TAR_RUNS",
    "UNANALYSABLE",
    "VERSIONED_RUNNER",
    "WRAPPERS",
    "WRITERS",
    "Role",
    "operand_role",
    "parse_spec",
    "reads_whatever_it_is_given",
    "split_options",
    "walk",
]

Role = str
"""``"read"``, ``"write"``, ``"exec"``, ``"delete"``, ``"create"``, ``"somewhere"`` (writes a
file the command line does not name), ``"value"``, ``"text"`` or ``"unknown"``."""

_COMMON: Final = "--help --version"

PROGRAMS: Final[dict[str, str]] = {
    # --- coreutils readers ---------------------------------------------------------------
    "ls": "-aAbBcCdDfFgGhHiIklLmnNopqQrRsStuUvwxXZ1 -I: -T: -w: --all --almost-all --author "
    "--escape --block-size= --ignore-backups --color? --colour? --directory --dired "
    "--classify? --file-type --format= --full-time --group-directories-first --no-group "
    "--human-readable --si --dereference-command-line --dereference-command-line-symlink-to-dir "
    "--hide= --hyperlink? --indicator-style= --inode --ignore= --kibibytes --dereference "
    "--numeric-uid-gid --literal --hide-control-chars --show-control-chars --quote-name "
    "--quoting-style= --reverse --recursive --size --sort= --time= --time-style= --tabsize= "
    "--width= --context --zero",
    "cat": "-AbeEnstTuv --show-all --number-nonblank --number --squeeze-blank --show-ends "
    "--show-tabs --show-nonprinting",
    "tac": "-b -r -s: --before --regex --separator=",
    "head": "# -c: -n: -qvz --bytes= --lines= --quiet --silent --verbose --zero-terminated",
    "tail": "# -c: -n: -fFqvz -s: --bytes= --lines= --follow? --retry --pid= --quiet --silent "
    "--sleep-interval= --verbose --zero-terminated --max-unchanged-stats=",
    "wc": "-cmlLw --bytes --chars --lines --max-line-length --words --files0-from+ --total=",
    "nl": "-b: -d: -f: -h: -i: -l: -n: -p -s: -v: -w: --body-numbering= --section-delimiter= "
    "--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= "
    "--number-format= --no-renumber --number-separator= --starting-line-number= "
    "--number-width=",
    "od": "-A: -j: -N: -S: -t: -w: -bcdfilosvx --address-radix= --endian= --skip-bytes= "
    "--read-bytes= --strings? --format= --output-duplicates --width? --traditional",
    "hexdump": "-bcCdovx -e: -f< -n: -s:",
    "strings": "-afw -n: -t: -e: -s: -T: # --all --print-file-name --bytes= --radix= "
    "--encoding= --output-separator= --target= --include-all-whitespace --data",
    "file": "-bcELhiIkNnprsSvz0 -e: -F: -f+ -m< -P: --brief --checking-printout "
    "--exclude= --exclude-quiet= --files-from+ --separator= --mime --mime-type "
    "--mime-encoding --keep-going --list --magic-file< --no-dereference --dereference "
    "--no-buffer --no-pad --print0 --preserve-date --raw --special-files --uncompress "
    "--uncompress-noreport --extension --apple",
    "stat": "-Lft -c: --dereference --file-system --format= --printf= --terse --cached=",
    "du": "-0abcDhHklLmPsSx -B: -d: -t: -X< --null --all --apparent-size --block-size= "
    "--bytes --total --dereference-args --human-readable --inodes --dereference "
    "--count-links --no-dereference --max-depth= --si --summarize --separate-dirs "
    "--threshold= --time? --time-style= --exclude-from< --exclude= --one-file-system "
    "--files0-from+",
    "df": "-ahHiklPTvx -B: -t: -x: -F: --all --block-size= --human-readable --si --inodes "
    "--local --no-sync --sync --output? --portability --total --type= --print-type "
    "--exclude-type=",
    "pwd": "-LP",
    "echo": "@any",
    "true": "@any",
    "false": "@any",
    ":": "@any",
    "which": "-as --all --skip-alias --skip-functions --read-alias --read-functions @text",
    "type": "-afptP @text",
    "whereis": "-bmsulg -B: -M: -S: @text",
    "basename": "-asz -s: --multiple --suffix= --zero @text",
    "dirname": "-z --zero @text",
    "realpath": "-eEmLPqsz --canonicalize-existing --canonicalize-missing --logical "
    "--physical --quiet --relative-to= --relative-base= --strip --no-symlinks --zero",
    "readlink": "-efmnqsvz --canonicalize --canonicalize-existing --canonicalize-missing "
    "--no-newline --quiet --silent --verbose --zero",
    "cut": "-b: -c: -d: -f: -nsz --bytes= --characters= --delimiter= --fields= --complement "
    "--only-delimited --output-delimiter= --zero-terminated",
    "paste": "-d: -sz --delimiters= --serial --zero-terminated",
    "join": "-a: -e: -i -o: -t: -v: -1: -2: -j: --ignore-case --check-order --nocheck-order "
    "--header -z --zero-terminated",
    "tr": "-cCdst --complement --delete --squeeze-repeats --truncate-set1 @text",
    "fold": "-bs -w: # --bytes --spaces --width=",
    "fmt": "-cpstu -w: -g: # --crown-margin --prefix= --split-only --tagged-paragraph "
    "--uniform-spacing --width= --goal=",
    "column": "-tnexJLRrHWdLo: -c: -s: -N: -l: -C: -E: -T: --table --json --separator= "
    "--output-separator= --table-columns= --table-name= --table-wrap= --table-right= "
    "--table-hide= --table-noheadings --output-width= --fillrows --keep-empty-lines",
    "expand": "-i -t: # --initial --tabs=",
    "unexpand": "-a -t: # --all --first-only --tabs=",
    "rev": "-0",
    "seq": "@any",
    "date": "-uR -I? -d: -f< -r< -I: --date= --debug --file< --iso-8601? --resolution "
    "--rfc-email --rfc-3339= --reference< --utc --universal @text",
    "cal": "-1 -3 -jymswvSV -n: -A: -B: --year --months= --monday --sunday --julian @text",
    "uname": "-asnrvmpio --all --kernel-name --nodename --kernel-release --kernel-version "
    "--machine --processor --hardware-platform --operating-system",
    "hostname": "-afisAIdy --fqdn --short --all-ip-addresses --ip-address --domain",
    "whoami": "",
    "id": "-agGnruzZ --group --groups --name --real --user --zero --context @text",
    "groups": "@text",
    "locale": "-ackmv --all-locales --charmaps --category-name --keyword-name @text",
    "nproc": "--all --ignore=",
    "uptime": "-ps --pretty --since",
    "free": "-bkmgthlvw -s: -c: --bytes --kilo --mega --giga --tera --human --si --total "
    "--seconds= --count= --wide --lohi",
    "ps": "-aAdeflFHjLmMNTuwxyZ -o: -p: -u: -U: -g: -G: -C: -t: -q: --sort= --pid= --ppid= "
    "--user= --forest --no-headers --cols= --columns= --format= @text",
    "pgrep": "-lafvxicnoAr -u: -U: -g: -G: -P: -s: -t: -d: --list-name --list-full "
    "--full --inverse --exact --ignore-case --count --newest --oldest --delimiter= @text",
    "pidof": "-sxzwqc -o: @text",
    "lsof": "-nPlt -i: -p: -u: -c: -a +D: @text",
    "tty": "-s --silent --quiet",
    "who": "-abdHlmpqrstTuw --all --boot --dead --heading --login --lookup --mesg --users",
    "sleep": "@any",
    "cmp": "-bls -i: -n: --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent",
    "comm": "-123 -z --check-order --nocheck-order --output-delimiter= --total --zero-terminated",
    "diff": "-abBdeEfiInNpqrsStTuwy -c -C: -D: -F: -I: -l -L: -S: -U: -W: -x: -X< # "
    "--normal --brief --report-identical-files --context? --unified? --ed --rcs "
    "--side-by-side --width= --left-column --suppress-common-lines --show-c-function "
    "--show-function-line= --label= --expand-tabs --initial-tab --tabsize= "
    "--suppress-blank-empty --new-file --unidirectional-new-file --ignore-case "
    "--ignore-tab-expansion --ignore-trailing-space --ignore-space-change "
    "--ignore-all-space --ignore-blank-lines --ignore-matching-lines= --text "
    "--strip-trailing-cr --recursive --exclude= --exclude-from< --starting-file= "
    "--from-file< --to-file< --color? --palette= --minimal --horizon-lines= "
    "--speed-large-files --no-dereference --line-format= --old-line-format= "
    "--new-line-format= --unchanged-line-format= --old-group-format= --new-group-format= "
    "--changed-group-format= --unchanged-group-format= --ifdef= --no-ignore-file-name-case "
    "--ignore-file-name-case",
    "md5sum": "-bctwz --binary --check --tag --text --zero --ignore-missing --quiet --status "
    "--strict --warn",
    "base64": "-diw: --decode --ignore-garbage --wrap=",
    "numfmt": "-d: -z --debug --delimiter= --field= --format= --from= --from-unit= --grouping "
    "--header? --invalid= --padding= --round= --suffix= --to= --to-unit= @text",
    "expr": "@any",
    "factor": "@any",
    # --- operands deleted or overwritten (DESTROYS says why), or created ---------------------
    "rm": "-dfiIrRv --force --interactive? --one-file-system --no-preserve-root "
    "--preserve-root? --recursive --dir --verbose @delete",
    "rimraf": "-G --glob --no-glob --preserve-root --no-preserve-root --tmp= --max-retries= "
    "--retry-delay= --backoff= --impl= @delete",
    "rmdir": "-pv --ignore-fail-on-non-empty --parents --verbose @delete",
    "unlink": "@delete",
    "trash": "-dfirv --trash-dir= --force --recursive --verbose @delete",
    "trash-put": "-dfirv --trash-dir= --force --recursive --verbose @delete",
    "shred": "-fuvxz -n: -s: --force --iterations= --random-source< --size= --remove? "
    "--verbose --exact --zero @delete",
    "truncate": "-co -s: -r< --no-create --io-blocks --reference< --size= @delete",
    "touch": "-acfhm -d: -r< -t: --no-create --date= --no-dereference --reference< --time= @create",
    "mkdir": "-pvZ -m: --parents --verbose --mode= --context? @create",
    # --- builtins and system readers without options that write or run ----------------------
    **dict.fromkeys(
        (
            "printenv",
            "set",
            "exit",
            "return",
            "break",
            "continue",
            "shift",
            "umask",
            "times",
            "caller",
            "logout",
            "help",
            "clear",
            "arch",
            "nproc",
            "yes",
            "ulimit",
            "tput",
            "getent",
            "lsblk",
            "findmnt",
            "lscpu",
            "vmstat",
            "iostat",
            "mpstat",
            "netstat",
            "ping",
            "dig",
            "host",
            "nslookup",
            "nm",
            "objdump",
            "readelf",
            "size",
            "look",
            "tsort",
            "pr",
            "locate",
            "mlocate",
            "whatis",
            "apropos",
            "w",
            "last",
            "bc",
            "wdiff",
        ),
        "@any",
    ),
    "jobs": "-lnprs @text",
    "fg": "@text",
    "bg": "@text",
    "disown": "-ahr @text",
    "dirs": "-clpv @text",
    "unalias": "-a @text",
    "man": "-afkKw -s: -S: -M~ -L: -m: -P: -H! -C~ --pager= --html! --config-file~ --sections= "
    "--manpath~ @text",
    "ag": "-aiQwlLcvGgtuUSszf0 -A: -B: -C: -G: -m: -p< # --ignore= --ignore-dir= --hidden "
    "--literal --case-sensitive --ignore-case --smart-case --word-regexp --files-with-matches "
    "--files-without-matches --count --invert-match --file-search-regex= --unrestricted "
    "--skip-vcs-ignores --search-zip --max-count= --path-to-ignore< --context= "
    "--after= --before= --nocolor --color --noheading --heading --nobreak --numbers "
    "--nonumbers --column --vimgrep --ackmate --follow --depth= --stats --silent "
    "--pager! --nopager --null --print0 @1",
    "bat": "-pnlAPuH -l: -H: -r: -m: --style= --language= --plain --paging= --pager! "
    "--theme= --color= --line-range= --number --show-all --highlight-line= --decorations= "
    "--wrap= --tabs= --list-languages --list-themes --diff --file-name= --map-syntax=",
    "tokei": "-CefhlV -c: -e: -o: -s: -t: --files --hidden --no-ignore --no-ignore-vcs "
    "--exclude= --output= --sort= --type= --compact --languages --columns=",
    # --- searching ------------------------------------------------------------------------
    "grep": "-EFGPiyvwxcLloqsbHhnTZzUraIR -e: -f< -m: -A: -B: -C: -d: -D: # "
    "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file< "
    "--ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp --count "
    "--color? --colour? --files-without-match --files-with-matches --max-count= "
    "--only-matching --quiet --silent --no-messages --byte-offset --with-filename "
    "--no-filename --label= --line-number --initial-tab --null --null-data "
    "--after-context= --before-context= --context= --text --binary-files= --devices= "
    "--directories= --exclude= --exclude-from< --exclude-dir= --include= --recursive "
    "--dereference-recursive --line-buffered --binary --group-separator= "
    "--no-group-separator @1",
    "rg": "-aABbcCEefFgHhiIjLlMmNnopqrsStTuUvVwxz0 -A: -B: -C: -e: -f< -g: -j: -m: -M: -r: "
    "-t: -T: -E: -d: # --after-context= --before-context= --context= --regexp= --file< "
    "--glob= --iglob= --type= --type-not= --type-add= --type-clear= --type-list "
    "--threads= --max-count= --max-columns= --max-columns-preview --max-depth= "
    "--max-filesize= --replace= --encoding= --engine= --color= --colors= --sort= "
    "--sortr= --files --files-with-matches --files-without-match --count --count-matches "
    "--fixed-strings --ignore-case --smart-case --case-sensitive --word-regexp "
    "--line-regexp --line-number --no-line-number --column --no-column --heading "
    "--no-heading --hidden --no-hidden --no-ignore --no-ignore-vcs --no-ignore-dot "
    "--no-ignore-parent --no-ignore-global --no-ignore-exclude --no-ignore-files "
    "--ignore-file< --follow --invert-match --json --no-messages --null --null-data "
    "--only-matching --passthru --pcre2 --no-pcre2 --multiline --multiline-dotall "
    "--pretty --quiet --stats --text --trim --unrestricted --vimgrep --with-filename "
    "--no-filename --binary --no-binary --search-zip --no-config --debug --trace "
    "--crlf --field-match-separator= --field-context-separator= --path-separator= "
    "--context-separator= --no-context-separator --byte-offset --one-file-system "
    "--include-zero --no-require-git --auto-hybrid-regex --unicode --no-unicode "
    "--line-buffered --block-buffered --mmap --no-mmap --dfa-size-limit= "
    "--regex-size-limit= --ignore-file-case-insensitive --max-depth= --maxdepth= "
    "--generate= --pre! --pre-glob= @1",
    "fd": "-HIuspFagLlaj0tqd -e: -E: -t: -d: -j: -c: -S: -o: --hidden --no-ignore "
    "--no-ignore-vcs --unrestricted --case-sensitive --ignore-case --glob --regex "
    "--fixed-strings --absolute-path --list-details --follow --full-path --print0 "
    "--max-depth= --min-depth= --exact-depth= --prune --type= --extension= --exclude= "
    "--size= --changed-within= --changed-before= --owner= --color= --threads= "
    "--max-results= --max-one-result --quiet --show-errors --base-directory< "
    "--path-separator= --search-path< --strip-cwd-prefix? --one-file-system "
    "--ignore-file< --no-ignore-parent --format= -x! -X! --exec! --exec-batch! @1",
    "jq": "-nrRjascCSeMj0 --null-input --raw-input --slurp --compact-output --tab "
    "--indent= --color-output --monochrome-output --ascii-output --unbuffered "
    "--sort-keys --raw-output --raw-output0 --join-output --exit-status --arg: "
    "--argjson: --slurpfile: --rawfile: --args --jsonargs --seq --stream "
    "--stream-errors -f< --from-file< -L< --library-path< @1",
    "tree": "-adlfxLiPIqNQpugshDFvtrcCnAS -L: -P: -I: -H: -T: --noreport --dirsfirst "
    "--filelimit= --charset= --du --prune --gitignore --matchdirs --ignore-case "
    "--timefmt= --sort= -o> -R",
    "sort": "-bdfgiMhnRrVcCmsuz -k: -t: -S: -T: -o> --ignore-leading-blanks "
    "--dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting "
    "--month-sort --human-numeric-sort --numeric-sort --random-sort --reverse "
    "--version-sort --sort= --check? --merge --key= --field-separator= --buffer-size= "
    "--temporary-directory= --output> --stable --unique --zero-terminated --parallel= "
    "--debug --files0-from+ --random-source< --batch-size= --compress-program!",
    "shuf": "-erz -i: -n: -o> --echo --input-range= --head-count= --output> "
    "--random-source< --repeat --zero-terminated",
    "uniq": "-cdDiuz -f: -s: -w: # --count --repeated --all-repeated? --group? "
    "--ignore-case --unique --zero-terminated --skip-fields= --skip-chars= "
    "--check-chars= @out",
    "less": "-aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWXz -~ -b: -h: -j: -k~ -p: -P: -t: -T< -x: -y: "
    "-z: -#: -o> -O> --quit-at-eof --QUIT-AT-EOF --quit-if-one-screen --ignore-case "
    "--IGNORE-CASE --LONG-PROMPT --RAW-CONTROL-CHARS --raw-control-chars --chop-long-lines "
    "--no-init --line-numbers --LINE-NUMBERS --squeeze-blank-lines --status-column "
    "--mouse --tabs= --pattern= --prompt= --tag= --log-file> --LOG-FILE> --use-color "
    "--incsearch --header= --wordwrap",
    "more": "-dlfpcsu -n: #",
    "iconv": "-cls -f: -t: -o> --from-code= --to-code= --list --silent --output> --verbose",
    "xxd": "-aEiprsCu -b -c: -g: -l: -o: -s: -n: --autoskip --bits --cols= --EBCDIC "
    "--groupsize= --include --len= --name= --offset= --postscript --plain --revert "
    "--seek= --uppercase @out",
    # --- network clients: every option that writes, logs or runs is modelled ----------------
    "curl": "-fsSLIiGkvNqgZ0123456 -o> -O* -J* -D> -c> -b: -d: -H: -X: -u: -A: -e: -m: -x: "
    "-w% -T< -F: -C: -r: -K~ -E: -U: -Y: -y: -z: -Q: -P: --output> --output-dir> "
    "--remote-name* --remote-name-all* --remote-header-name* --create-dirs --dump-header> "
    "--cookie-jar> --cookie: --data: --data-raw: --data-binary: --data-urlencode: "
    "--data-ascii: --json: --header: --request: --user: --user-agent: --referer: "
    "--max-time= --connect-timeout= --proxy: --write-out% --upload-file< --form: "
    "--form-string: --continue-at: --range: --config~ --cert: --key: --cacert: "
    "--compressed --fail --fail-with-body --silent --show-error --location "
    "--location-trusted --head --include --get --insecure --verbose --no-buffer "
    "--http1.1 --http2 --http3 --ipv4 --ipv6 --retry= --retry-delay= --retry-max-time= "
    "--retry-all-errors --max-redirs= --url: --stderr> --trace> --trace-ascii> "
    "--trace-config= --trace-time --trace-ids --libcurl> --etag-save> --etag-compare< "
    "--hsts> --alt-svc> --netrc --netrc-file< --netrc-optional --progress-bar "
    "--no-progress-meter --oauth2-bearer: --basic --digest --negotiate --ntlm --anyauth "
    "--resolve: --connect-to: --unix-socket< --abstract-unix-socket: --tlsv1.2 --tlsv1.3 "
    "--globoff --path-as-is",
    "wget": "-qvdnbcNrkKpmSEHF -O> -o> -a> -P> -t: -T: -w: -l: -U: -A: -R: -D: -I: -X: "
    "-i< -e! --output-document> --output-file> --append-output> --directory-prefix> "
    "--quiet --verbose --no-verbose --debug --tries= --timeout= --wait= --level= "
    "--user-agent= --accept= --reject= --domains= --spider --server-response "
    "--no-check-certificate --header= --user= --password= --post-data= --method= "
    "--body-data= --continue --timestamping --recursive --no-parent --mirror "
    "--page-requisites --convert-links --input-file< --execute! --show-progress "
    "--progress= --no-clobber --content-disposition --https-only --max-redirect=",
}

# The checksum family shares md5sum's options; compressors' cat forms read only.
for _name in ("sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"):
    PROGRAMS[_name] = PROGRAMS["md5sum"]
for _name in ("egrep", "fgrep", "zgrep"):
    PROGRAMS[_name] = PROGRAMS["grep"]
for _name in ("zcat", "bzcat", "xzcat", "zstdcat"):
    PROGRAMS[_name] = "-fqv --force --quiet --verbose"
PROGRAMS["base32"] = PROGRAMS["base64"]
PROGRAMS["batcat"] = PROGRAMS["bat"]
PROGRAMS["colordiff"] = PROGRAMS["diff"]
PROGRAMS["fdfind"] = PROGRAMS["fd"]
PROGRAMS["ll"] = PROGRAMS["la"] = PROGRAMS["dir"] = PROGRAMS["vdir"] = PROGRAMS["ls"]
PROGRAMS["cksum"] = PROGRAMS["sum"] = (
    "-a: -rs --algorithm= --base64 --check --length= --raw --tag --untagged --zero"
)
del _name

COMPRESSOR: Final = (
    "-cdfhklLnNqrStvVz0123456789 -o> -S: -T: -M: -D< -b: -B: # --stdout --to-stdout "
    "--decompress --uncompress --compress --force --keep --list --no-name --name --quiet "
    "--recursive --suffix= --test --verbose --fast? --best --rsyncable --synchronous "
    "--threads= --memlimit= --memory= --long? --ultra --rm --output> --format= --check= "
    "--no-progress --progress --sparse --no-sparse --content-size --no-check --single-thread "
    "--extreme --block-size= --dict< --adapt? --exclude-compressed --train --patch-from<"
)
"""Options of the gzip/bzip2/xz/zstd family (their operands are replaced, which the shell
classifier models as a write)."""

DESTROYS: Final = {
    "rm": "rm removes files",
    "rimraf": "rm removes files",
    "rmdir": "rmdir removes directories",
    "unlink": "unlink removes a file",
    "trash": "trash moves files to the trash",
    "trash-put": "trash moves files to the trash",
    "shred": "shred overwrites files",
    "truncate": "truncate resizes files",
}
"""Why a program's ``@delete`` operands are destroyed, for the person asked."""

WRITERS: Final[dict[str, str]] = {
    "cp": "-abdfHiklLnPpRrsStTuvxZ -S: -t> --archive --attributes-only --backup? "
    "--copy-contents --debug --force --interactive --link --dereference --no-clobber "
    "--no-dereference --preserve? --no-preserve= --parents --recursive --reflink? "
    "--remove-destination --sparse= --strip-trailing-slashes --suffix= --symbolic-link "
    "--target-directory> --no-target-directory --update? --verbose --one-file-system "
    "--context? --keep-directory-symlink",
    "install": "-bCcDdpsTvZ -g: -m: -o: -S: -t> --backup? --compare --directory --group= "
    "--mode= --owner= --preserve-timestamps --strip --strip-program! --suffix= "
    "--target-directory> --no-target-directory --verbose --preserve-context --context? --debug",
    "tee": "-aip --append --ignore-interrupts --output-error?",
    "sponge": "-a",
}
"""Writers whose operands a handler in the shell classifier models (the destination, the files
created); their options are accounted for here, since a write that destroys nothing is quiet
(``install --strip-program=PROG`` runs PROG)."""

TAR_RUNS: Final = frozenset({
    "--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
    "--new-volume-script", "--rsh-command", "--rmt-command", "-F", "--index-file",
    "--listed-incremental", "-g", "--backup-script",
})  # fmt: skip
"""tar options that run a program or write a file besides the archive [GNU tar manual 3.4]."""


# --- the shell analysis's name tables ----------------------------------------------------

# Writes to these are not file writes [POSIX "Special device files"; bash(1) REDIRECTION].
DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox-sh"})
KEYWORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac",
     "coproc", "time"}
)  # fmt: skip
NO_COMMAND_KEYWORDS = frozenset({"for", "select", "case", "function", "in"})


# Variables whose value changes which program runs, what runs before every command, where
# git or cd write, or how globs match [bash(1) Shell Variables; git(1) ENVIRONMENT].
SPECIAL_VARIABLES: Final = frozenset({
    "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS",
    "BASHOPTS", "GLOBIGNORE", "CDPATH", "HOME", "XDG_CONFIG_HOME", "LEDGER_HOME",
    "LEDGER_SIGNING_KEY", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_EDITOR",
    "GIT_PAGER", "GIT_ASKPASS", "GIT_EXEC_PATH", "GIT_INDEX_FILE", "PAGER", "EDITOR", "VISUAL",
    "NODE_OPTIONS", "PYTHONSTARTUP", "PERL5OPT", "RUBYOPT", "BASH_XTRACEFD", "HISTFILE",
    "EXECIGNORE", "FUNCNEST", "BASH_LOADABLES_PATH", "INPUTRC",
})  # fmt: skip


# Options that run a program somewhere else: its operands are relative to there.
CHDIR_OPTIONS: Final = {
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


# Commands that print the whole environment [bash(1) set, declare -p, export -p; env(1);
# proc(5) /proc/[pid]/environ].
ENV_DUMPERS: Final = frozenset({"env", "printenv", "set", "declare", "typeset", "export"})


LEDGER_WRITERS: Final = frozenset(
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


DISK_TOOLS = frozenset({"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "sgdisk", "parted"})


# Wrappers: (short options that take a value, long options that take a value).
WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
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


KILL_SIGNALS = frozenset({"9", "KILL", "SIGKILL"})


# What runs later: a command that outlives the tool call (in the background, detached, at a
# time, on a schedule, in a session or service that survives it) acts after the hook has
# answered and the post-call record is written, so nothing the call shows bounds it. Never
# quiet [bash(1) "&", nohup(1), setsid(1), at(1), crontab(1), systemd-run(1), tmux(1),
# screen(1), daemonize(1), start-stop-daemon(8)].
LATER: Final = {
    "nohup": "nohup runs a command that outlives the call",
    "setsid": "setsid runs a command detached from the call",
    "disown": "disown lets a background job outlive the call",
    "bg": "bg resumes a job in the background",
    "at": "at runs commands later",
    "batch": "batch runs commands later",
    "crontab": "crontab schedules commands",
    "systemd-run": "systemd-run starts a service that outlives the call",
    "systemctl": "systemctl starts services that outlive the call",
    "launchctl": "launchctl starts services that outlive the call",
    "tmux": "tmux runs commands in a session that outlives the call",
    "screen": "screen runs commands in a session that outlives the call",
    "dtach": "dtach runs a command detached from the call",
    "abduco": "abduco runs a command detached from the call",
    "daemonize": "daemonize runs a command as a daemon",
    "start-stop-daemon": "start-stop-daemon runs a command as a daemon",
    "daemon": "daemon runs a command as a daemon",
    "pm2": "pm2 runs processes that outlive the call",
    "forever": "forever runs processes that outlive the call",
    "supervisorctl": "supervisorctl starts processes that outlive the call",
}
# The first argument of a LATER program that only reads (lists, shows status) [the same pages].
LATER_READS: Final = {
    "crontab": frozenset({"-l"}),
    "at": frozenset({"-l", "-V"}),
    "systemctl": frozenset({"status", "list-units", "list-unit-files", "list-timers", "show",
                            "is-active", "is-enabled", "is-failed", "cat", "--version"}),
    "launchctl": frozenset({"list", "print", "version", "help"}),
    "tmux": frozenset({"ls", "list-sessions", "list-windows", "list-panes", "list-clients",
                       "has-session", "has", "-V", "info", "show-options", "capture-pane"}),
    "screen": frozenset({"-ls", "-list", "-v", "--version"}),
    "pm2": frozenset({"ls", "list", "l", "status", "jlist", "prettylist", "describe", "show",
                      "info", "logs", "monit", "--version", "-v"}),
    "forever": frozenset({"list", "logs", "--version"}),
    "supervisorctl": frozenset({"status", "avail", "version", "help"}),
}  # fmt: skip

# Pagers whose `+COMMAND` operand runs one of their commands at start [less(1), more(1)].
START_COMMANDS: Final = frozenset({"less", "more", "most"})

# Lockers: (short options with a value, long options with a value). The first operand is the
# file locked (a number: a descriptor opened elsewhere); the rest is the command run under the
# lock. Holding ledger's own lock stalls every hook call, and a client whose hook times out
# lets the call run unrecorded [flock(1), lockf(1), lckdo(1), setlock(8), dotlockfile(1)].
LOCKERS: Final = {
    "flock": ("wEc", ("--timeout", "--conflict-exit-code", "--command")),
    "lockf": ("t", ()),
    "lckdo": ("", ()),
    "setlock": ("", ()),
    "with-lock-ex": ("", ()),
    "dotlockfile": ("r", ("--retry",)),
    "lockfile": ("rl", ()),
    "shlock": ("fp", ()),
}


# Programs that run a command once per operand, like xargs: GNU parallel (and moreutils'
# `parallel`, which shares its name and options), rush and xe. Operands come after a separator
# (`:::`; moreutils' `--`; xe's `-a ... --`, `-A SEP`), when the line shows them, or from the
# input or a file (`::::`, `-a FILE`, `rush -i`, `xe -f`), when it does not. Each entry is a
# PROGRAMS spec of the options: `+` marks a file of operands, `>` a file written; an option
# not listed asks (`parallel -S` runs on other hosts, `--filter`/`--rpl` run Perl, `--bg` and
# `--tmux` run later, `-J` reads a profile of options) [parallel(1), rush README, xe(1)].
FANOUT: Final[dict[str, str]] = {
    "parallel": "-j: -P: -n: -N: -L: -s: -d: -E: -I: -C: -U: -a+ -l? -e? -i? -kXmqrtuvp0 "
    "--jobs= --max-procs= --max-args= --max-lines= --max-chars= --delimiter= --eof? "
    "--replace? --extensionreplace= --er= --basenamereplace= --bnr= --dirnamereplace= --dnr= "
    "--basenameextensionreplace= --bner= --seqreplace= --slotreplace= --colsep= --arg-file+ "
    "--arg-sep= --arg-file-sep= --keep-order --xargs --null --quote --no-run-if-empty "
    "--verbose --dry-run --halt= --halt-on-error= --eta --bar --progress --joblog> "
    "--results> --res> --ungroup --group --line-buffer --lb --linebuffer --tag --tagstring= "
    "--header= --timeout= --retries= --delay= --shuf --will-cite --citation --load= "
    "--memfree= --nice= --plain --silent --block= --block-size= --pipe --spreadstdin "
    "--recstart= --recend= --regexp --round-robin --round --no-notice --plus --trim= "
    "--max-replace-args= --total-jobs= --interactive --number-of-cpus --number-of-cores "
    "--number-of-sockets --number-of-threads --minversion= --group-by= --color --show-limits",
    "rush": "-j: -n: -D: -d: -J: -T: -t: -r: -v: -i+ -o> -C> -kce --jobs= --nrecords= "
    "--record-delimiter= --field-delimiter= --records-join-sep= --trim= --timeout= "
    "--retries= --retry-interval= --assign= --infile+ --out-file> --succeed-cmd-file> "
    "--keep-order --continue --stop-on-error --dry-run --verbose --eta",
    "xe": "-I: -N: -j: -A: -f+ -s! -0FLRnqva",
}

# The options that name a replacement string other than `{}` (`-I X`, `--er`, ...).
FANOUT_REPLACE: Final = frozenset({
    "-I", "-i", "-U", "--replace", "--extensionreplace", "--er", "--basenamereplace", "--bnr",
    "--dirnamereplace", "--dnr", "--basenameextensionreplace", "--bner", "--seqreplace",
    "--slotreplace",
})  # fmt: skip


# Options that make a git subcommand run a program [git-grep(1) -O, git-difftool(1) -x,
# git-fetch(1) --upload-pack, git-push(1) --receive-pack/--exec, git-rebase(1) --exec,
# git-init(1) --template (its hooks run later), git-archive(1) --exec]: refused outright.
GIT_EXEC_OPTIONS: Final = {
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
GIT_TREE_WRITERS: Final = {
    "merge": "git merge rewrites the work tree",
    "pull": "git pull rewrites the work tree",
    "cherry-pick": "git cherry-pick rewrites the work tree",
    "revert": "git revert rewrites the work tree",
    "am": "git am rewrites the work tree",
    "sparse-checkout": "git sparse-checkout adds and deletes files of the work tree",
    "bisect": "git bisect checks out other commits",
    "merge-file": "git merge-file rewrites a file",
}
GIT_TREE_READERS: Final = frozenset({
    ("bisect", "log"), ("bisect", "visualize"), ("bisect", "view"), ("sparse-checkout", "list"),
})  # fmt: skip
# Everyday subcommands that only read, or change only refs, objects and the index; a subcommand
# in none of these tables is unanalysable (it may also be an alias: `git x`).
GIT_QUIET: Final = frozenset({
    "status", "diff", "log", "show", "blame", "annotate", "grep", "rev-parse", "ls-files",
    "ls-tree", "cat-file", "describe", "remote", "tag", "shortlog", "merge-base", "rev-list",
    "name-rev", "for-each-ref", "show-ref", "symbolic-ref", "var", "help", "version",
    "count-objects", "fsck", "verify-commit", "verify-tag", "whatchanged", "range-diff",
    "cherry", "check-ignore", "check-attr", "check-ref-format", "diff-tree", "diff-files",
    "diff-index", "fetch", "add", "commit", "ls-remote", "hash-object", "write-tree",
    "commit-tree", "mktree", "notes", "stage", "show-branch", "get-tar-commit-id",
    "interpret-trailers", "column", "patch-id", "config", "difftool", "submodule",
})  # fmt: skip


# Subcommands that create, move, delete or push refs by the names (and refspecs) they are
# given [git-update-ref(1), git-symbolic-ref(1), git-push(1), git-fetch(1), git-branch(1),
# git-tag(1), git-replace(1), git-remote(1) --mirror, git-config(1) remote.*.fetch].
GIT_REF_WRITERS: Final = frozenset({
    "update-ref", "symbolic-ref", "push", "fetch", "pull", "branch", "tag", "replace", "remote",
    "config", "send-pack", "http-push", "pack-refs", "notes", "checkout", "switch", "worktree",
})  # fmt: skip


GIT_GLOBAL_FLAGS: Final = frozenset({
    "-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects",
    "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
    "--no-optional-locks", "--version", "--help",
})  # fmt: skip


COMPRESSORS: Final = frozenset({
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd",
    "zstdmt", "lz4", "unlz4", "lzip", "compress", "uncompress", "pigz", "unpigz", "pbzip2",
    "lbzip2", "brotli", "lzop",
})  # fmt: skip


EDITORS: Final = frozenset({
    "vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "red", "emacs", "emacsclient", "nano",
    "pico", "micro", "joe", "kak", "hx", "helix", "mg", "jed", "ne", "vis", "gvim", "evim",
})  # fmt: skip


DECLARERS: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
SAFE_SHOPT: Final = frozenset(
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


# Programs that only read (or whose every writing and executing option is modelled) are
# entries of PROGRAMS above: unknown options there ask.

# Test runners, builds, interpreters, package managers, project tools: what they write is not
# on the command line (nothing static can say), so they are quiet -- everyday work -- and the
# client's sandbox is what bounds them (README "Trust model"). Their words still reach: any
# protected path they are handed is refused.
RUNNERS: Final = frozenset({
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
VERSIONED_RUNNER: Final = lazy_compile(
    r"(python|pip|pypy|ruby|php|node|gcc|g\+\+|clang|clang\+\+|perl|lua|java|go)[0-9][0-9.\-]*"
)

# Builtins no static reading can follow: they run code later, elsewhere, or under other names.
UNANALYSABLE: Final = {
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
    "vipe": "vipe runs an editor",
}


_MARKS: Final = ":<>!?=*+%~"
_ROLE_OF_MARK: Final = {
    ":": "value",
    "=": "value",
    "<": "read",
    ">": "write",
    "!": "exec",
    "*": "somewhere",
    "+": "operands",
    "%": "format",
    "~": "config",
}

# Parsed specs, built on first use: (short options -> role or None for a flag, long options ->
# role / None / "?" for an optional attached value, flags like "@text").
_Parsed = tuple[dict[str, str | None], dict[str, str | None], frozenset[str]]
_CACHE: dict[str, _Parsed] = {}


def parse_spec(spec: str) -> _Parsed:
    """Parse one :data:`PROGRAMS` entry (memoized)."""
    found = _CACHE.get(spec)
    if found is not None:
        return found
    shorts: dict[str, str | None] = {}
    longs: dict[str, str | None] = {}
    marks: set[str] = set()
    for item in (spec + " " + _COMMON).split():
        if item.startswith("@") or item == "#":
            marks.add(item)
        elif item.startswith("--"):
            mark = item[-1] if item[-1] in _MARKS else ""
            name = item[:-1] if mark else item
            longs[name] = "?" if mark == "?" else _ROLE_OF_MARK.get(mark)
        elif item.startswith(("-", "+")):
            mark = item[-1] if item[-1] in _MARKS and len(item) > 2 else ""
            letters = item[1:-1] if mark else item[1:]
            for letter in letters:
                shorts[letter] = None
            if mark:  # "-abo:": a and b are flags, o takes the value
                shorts[letters[-1]] = "?" if mark == "?" else _ROLE_OF_MARK[mark]
        else:
            raise ValueError(f"bad option spec {item!r}")
    found = _CACHE[spec] = (shorts, longs, frozenset(marks))
    return found


_Event = tuple[Role, int, str | None, str]


def walk(spec: str, args: list[str]) -> list[_Event]:
    """Account for every word of ``args`` against ``spec``.

    Returns one ``(role, index, value, option)`` per path, value or unknown word: ``index`` is
    the word in ``args`` the role applies to, ``value`` the attached text when the value was
    part of the option word (``-ofile``, ``--out=file``; else None), ``option`` the option that
    gave the role (``""`` for an operand). Harmless flags produce nothing; an option the spec
    does not list produces ``("unknown", index, None, option)``.
    """
    shorts, longs, marks = parse_spec(spec)
    if "@any" in marks:
        return [("text", i, None, "") for i in range(len(args))]
    out: list[_Event] = []
    operands: list[int] = []
    i = 0
    options_done = False
    while i < len(args):
        text = args[i]
        if options_done or text == "-" or not text.startswith("-") or len(text) < 2:
            operands.append(i)
            options_done = options_done or "@stop" in marks
        elif text == "--":
            options_done = True
        elif text.startswith("--"):
            i = _long(longs, args, i, out)
        elif not ("#" in marks and text[1:].isdigit()):
            i = _short(shorts, args, i, out)
        i += 1
    out.extend(_operands(marks, operands, out))
    return out


def _long(longs: dict[str, str | None], args: list[str], i: int, out: list[_Event]) -> int:
    """One ``--name[=value]`` word (and its value word); returns the index of the last used."""
    name, eq, value = args[i].partition("=")
    if name not in longs:
        out.append(("unknown", i, None, name))
        return i
    role = longs[name]
    if role == "somewhere":
        out.append((role, i, None, name))
    elif role == "?":
        if eq:
            out.append(("value", i, value, name))
    elif role is None:
        if eq:
            out.append(("unknown", i, None, name))  # a flag given a value
    elif eq:
        out.append((role, i, value, name))
    elif i + 1 < len(args):
        out.append((role, i + 1, None, name))
        return i + 1
    else:
        out.append(("unknown", i, None, name))  # its value is missing
    return i


def _short(shorts: dict[str, str | None], args: list[str], i: int, out: list[_Event]) -> int:
    """One cluster of short options (``-rn5``, ``-ofile``, ``-o file``)."""
    text = args[i]
    pos = 1
    while pos < len(text):
        letter = text[pos]
        pos += 1
        if letter not in shorts:
            out.append(("unknown", i, None, "-" + letter))
            return i
        role = shorts[letter]
        if role is None:
            continue
        if role == "somewhere":  # a flag that writes a file it names itself (curl -O)
            out.append((role, i, None, "-" + letter))
            continue
        if pos < len(text):
            out.append(("value" if role == "?" else role, i, text[pos:], "-" + letter))
        elif role == "?":
            pass  # an optional value, given attached only (-Iseconds)
        elif i + 1 < len(args):
            out.append((role, i + 1, None, "-" + letter))
            return i + 1
        else:
            out.append(("unknown", i, None, "-" + letter))
        return i
    return i


_QUIET_ROLES: Final = frozenset({None, "?", "value", "read", "text", "operands"})


def operand_role(spec: str) -> Role:
    """What the program does with an operand it is given beyond the first: read, text, write,
    exec, delete or create."""
    marks = parse_spec(spec)[2]
    for mark, role in (("@any", "text"), ("@exec", "exec"), ("@delete", "delete"),
                       ("@create", "create"), ("@text", "text"), ("@out", "write")):  # fmt: skip
        if mark in marks:
            return role
    return "read"


def reads_whatever_it_is_given(spec: str, args: list[str]) -> bool:
    """Whether words appended to ``args`` that no one can see (``xargs``, a file of operands)
    can only make the program read: each would be an operand it reads, or, unless options have
    ended (``--``, ``@stop`` after an operand), any option it has, and none of them writes,
    runs, configures or deletes."""
    shorts, longs, marks = parse_spec(spec)
    if "@any" in marks:
        return True
    if operand_role(spec) not in ("read", "text"):
        return False
    ended = "--" in args or ("@stop" in marks and any(not a.startswith("-") for a in args))
    return ended or all(role in _QUIET_ROLES for role in (*shorts.values(), *longs.values()))


def split_options(spec: str, args: list[str], *, interspersed: bool) -> tuple[list[int], int]:
    """The indexes of the words that are options or their values, and where the operands
    start: at the first operand or ``--`` (``len(args)`` when none); with ``interspersed``
    (Go's and GNU's parsers), options after operands are options too, up to ``--``."""
    shorts, longs, _marks = parse_spec(spec)
    options: list[int] = []
    first = len(args)
    i = 0
    while i < len(args):
        text = args[i]
        if text in {"--", "-"} or not text.startswith("-"):
            if text == "--" or not interspersed:
                return options, min(first, i)
            first = min(first, i)
            i += 1
            continue
        options.append(i)
        if text.startswith("--"):
            role = longs.get(text.partition("=")[0])
            takes = role not in (None, "?", "somewhere") and "=" not in text
        else:
            takes = False
            for pos, letter in enumerate(text[1:], start=1):
                role = shorts.get(letter)
                if role is None or role == "somewhere":
                    continue
                takes = role != "?" and pos == len(text) - 1
                break
        if takes and i + 1 < len(args):
            options.append(i + 1)
            i += 1
        i += 1
    return options, first


def _operands(marks: frozenset[str], operands: list[int], events: list[_Event]) -> list[_Event]:
    """What each operand is: read by default; text, written or executed as the marks say."""
    text_first = "@1" in marks and not any(
        option in ("-e", "--regexp", "-f", "--file") for _r, _i, _v, option in events
    )
    writes_last = "@out" in marks and len(operands) >= 2
    out: list[_Event] = []
    for n, index in enumerate(operands):
        if "@exec" in marks:
            role = "exec"
        elif "@delete" in marks:
            role = "delete"
        elif "@create" in marks:
            role = "create"
        elif "@text" in marks or (text_first and n == 0):
            role = "text"
        elif writes_last and n == 1:
            role = "write"
        else:
            role = "read"
        out.append((role, index, None, ""))
    return out
