"""What environment variables and option values mean, as data: which run a program, configure
one, load code, or name a file written.

A reader becomes an executor through its environment (``LESSOPEN='|x.sh %s' less f``,
``MANOPT='-P cp' man ls``) or through an option's value (``rsync -e 'sh -c …'``, ``ssh -o
ProxyCommand=…``, ``openssl -engine ./lib.so``). The shell analysis looks every assignment and
every such value up here; what the tables do not account for asks.

Roles:

==============  ===============================================================================
``text``        harmless: it changes output, locale, colour or a program's own behaviour
``exec``        a command line run later: quiet only when it is itself a reader (``PAGER=cat``)
``remote``      a command that reaches another machine (``rsync -e ssh``): ``ssh``/``rsh``
                with options the table accounts for, or a reader
``options:P``   more options for program ``P``: each checked against ``P``'s entry in PROGRAMS
``config``      a file of settings or options, or a directory of them, that can hold commands
``load``        a library, engine or plugin loaded into the program
``write``       a file (or directory) written
``trace``       a flag (``1``, ``true``) or, when a path, a file written (``GIT_TRACE``)
``ssh``         an ``ssh -o`` ``Key=value``: the key is looked up in :data:`SSH_OPTIONS`
``spawn``       a command run whatever it is (``ProxyCommand``: its output is the connection)
==============  ===============================================================================

Sources: bash(1) ENVIRONMENT, less(1) ENVIRONMENT VARIABLES and LESSOPEN, man(1), git(1)
ENVIRONMENT VARIABLES, ld.so(8), python(1), perl(1) PERL5OPT/PERL5LIB, ssh_config(5),
rsync(1) -e, scp(1) -S, sftp(1), openssl(1) -engine/-provider/-config, curl(1).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ENVIRONMENT",
    "ENVIRONMENT_PREFIXES",
    "OPTION_VALUES",
    "SSH_OPTIONS",
    "TRACE_FLAGS",
    "environment_role",
]

_TEXT: Final = (
    # locale, terminal, colour, CI markers
    "LANG LANGUAGE TZ TERM COLORTERM NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE COLUMNS "
    "LINES CI DEBUG VERBOSE QUIET TERM_PROGRAM LS_COLORS GREP_COLOR GREP_COLORS TIME_STYLE "
    "QUOTING_STYLE BLOCK_SIZE BLOCKSIZE DF_BLOCK_SIZE DU_BLOCK_SIZE LS_BLOCK_SIZE "
    "POSIXLY_CORRECT SIMPLE_BACKUP_SUFFIX VERSION_CONTROL JQ_COLORS BAT_THEME BAT_STYLE "
    "LESSCHARSET LESSSECURE LESSUTFCHARDEF LESSBINFMT LESSANSIENDCHARS MANWIDTH MANSECT "
    "MANLESS MANROFFOPT TMUX_TMPDIR USER LOGNAME "
    # languages' and tools' own switches that change no program that runs
    "NODE_ENV RUST_LOG RUST_BACKTRACE RUST_LIB_BACKTRACE CARGO_TERM_COLOR CARGO_INCREMENTAL "
    "PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONHASHSEED PYTHONIOENCODING PYTHONUTF8 "
    "PYTHONFAULTHANDLER PYTHONDEVMODE PYTHONTRACEMALLOC PYTHONASYNCIODEBUG PYTHONSAFEPATH "
    "PYTHONNOUSERSITE PYTHONOPTIMIZE PYTHONVERBOSE TQDM_DISABLE GOOS GOARCH CGO_ENABLED "
    "GO111MODULE GOPROXY GOPRIVATE GONOSUMDB GONOPROXY GOSUMDB GOTOOLCHAIN GOMAXPROCS "
    "GOTRACEBACK GODEBUG HUSKY SKIP PRE_COMMIT_ALLOW_NO_CONFIG NPM_CONFIG_LOGLEVEL "
    "NPM_CONFIG_FUND NPM_CONFIG_AUDIT NPM_CONFIG_UPDATE_NOTIFIER NO_UPDATE_NOTIFIER "
    "DISABLE_OPENCOLLECTIVE ADBLOCK YARN_ENABLE_TELEMETRY NEXT_TELEMETRY_DISABLED "
    "DOTNET_CLI_TELEMETRY_OPTOUT DOCKER_BUILDKIT BUILDKIT_PROGRESS COMPOSE_PROJECT_NAME "
    "PIP_DISABLE_PIP_VERSION_CHECK PIP_NO_INPUT PIP_QUIET UV_NO_PROGRESS UV_FROZEN "
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD HYPOTHESIS_PROFILE JEST_WORKER_ID TS_NODE_TRANSPILE_ONLY "
    "SOURCE_DATE_EPOCH HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY http_proxy https_proxy "
    "no_proxy all_proxy SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE "
    "NODE_EXTRA_CA_CERTS PORT HOST "
    # git's that only describe or restrict [git(1) ENVIRONMENT VARIABLES]
    "GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL "
    "GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT GIT_OPTIONAL_LOCKS GIT_FLUSH GIT_MERGE_AUTOEDIT "
    "GIT_MERGE_VERBOSITY GIT_LFS_SKIP_SMUDGE GIT_SSL_NO_VERIFY GIT_DEFAULT_HASH "
    "GIT_NO_REPLACE_OBJECTS GIT_LITERAL_PATHSPECS GIT_GLOB_PATHSPECS GIT_NOGLOB_PATHSPECS "
    "GIT_ICASE_PATHSPECS GIT_REFLOG_ACTION GIT_DIFF_OPTS GIT_CURL_VERBOSE GIT_HTTP_USER_AGENT "
    "GIT_PROTOCOL_FROM_USER GIT_ADVICE GIT_COLOR GIT_CEILING_DIRECTORIES "
    "GIT_DISCOVERY_ACROSS_FILESYSTEM"
)
_EXEC: Final = (
    "PAGER MANPAGER GIT_PAGER SYSTEMD_PAGER BAT_PAGER DELTA_PAGER PSQL_PAGER EDITOR VISUAL "
    "GIT_EDITOR GIT_SEQUENCE_EDITOR SVN_EDITOR HGEDITOR FCEDIT LESSOPEN LESSCLOSE LESSEDIT "
    "BROWSER TERMINAL SHELL SUDO_ASKPASS SSH_ASKPASS GIT_ASKPASS "
    "GIT_EXTERNAL_DIFF GIT_PROXY_COMMAND RSYNC_CONNECT_PROG "
    "FZF_DEFAULT_COMMAND PROMPT_COMMAND"
)
_CONFIG: Final = (
    "LESSKEY LESSKEYIN LESSKEYIN_SYSTEM LESSKEY_SYSTEM MANPATH MANOPT_CONFIG BASH_ENV ENV "
    "ZDOTDIR INPUTRC PYTHONSTARTUP PYTHONHOME PYTHONWARNINGS PYTHONBREAKPOINT "
    "PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB NODE_OPTIONS NODE_PATH "
    "JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS GCONV_PATH LOCPATH NLSPATH "
    "OPENSSL_CONF OPENSSL_ENGINES OPENSSL_MODULES CURL_HOME WGETRC SYSTEMWGETRC "
    "NETRC GNUPGHOME RIPGREP_CONFIG_PATH GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM "
    "GIT_CONFIG_NOSYSTEM GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_EXEC_PATH "
    "GIT_TEMPLATE_DIR GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_ATTR_SOURCE "
    "GIT_REPLACE_REF_BASE GIT_NAMESPACE GIT_COMMON_DIR GIT_DIR GIT_WORK_TREE "
    "GIT_ALLOW_PROTOCOL XDG_CONFIG_HOME XDG_DATA_HOME XDG_CONFIG_DIRS HOME "
    "SSH_AUTH_SOCK SSH_CONFIG NPM_CONFIG_USERCONFIG NPM_CONFIG_GLOBALCONFIG "
    "NPM_CONFIG_SCRIPT_SHELL PIP_CONFIG_FILE"
)
_LOAD: Final = "LD_PRELOAD LD_AUDIT LD_LIBRARY_PATH MALLOC_CONF"
_WRITE: Final = (
    "HISTFILE LESSHISTFILE SSLKEYLOGFILE PYTHONPYCACHEPREFIX BASH_XTRACEFD TMPDIR TMP TEMP "
    "GIT_INDEX_FILE COVERAGE_FILE"
)

ENVIRONMENT: Final[dict[str, str]] = {
    **dict.fromkeys(_TEXT.split(), "text"),
    **dict.fromkeys(_EXEC.split(), "exec"),
    **dict.fromkeys(_CONFIG.split(), "config"),
    **dict.fromkeys(_LOAD.split(), "load"),
    **dict.fromkeys(_WRITE.split(), "write"),
    **dict.fromkeys(("GIT_SSH", "GIT_SSH_COMMAND", "RSYNC_RSH", "CVS_RSH"), "remote"),
    "LESS": "options:less",
    "MANOPT": "options:man",
    "GREP_OPTIONS": "options:grep",
}
"""Every variable the analysis knows, by name."""

ENVIRONMENT_PREFIXES: Final = (
    ("LC_", "text"),
    ("GIT_TRACE", "trace"),
    ("GIT_CONFIG_KEY_", "config"),
    ("GIT_CONFIG_VALUE_", "config"),
    ("BASH_FUNC_", "exec"),
    ("DYLD_", "load"),
    ("LD_", "load"),
)
"""Families of variables, by prefix (the first that matches)."""

TRACE_FLAGS: Final = frozenset({"", "0", "1", "2", "true", "false", "yes", "no", "on", "off"})
"""A ``trace`` variable with one of these values writes to stderr, not to a file."""


def environment_role(name: str) -> str | None:
    """The role of variable ``name``, or None when the table does not account for it."""
    role = ENVIRONMENT.get(name)
    if role is not None:
        return role
    return next((r for prefix, r in ENVIRONMENT_PREFIXES if name.startswith(prefix)), None)


# Option values by program: option -> role. An option given as ``--name=value``, ``-Xvalue``
# or ``-X value``; programs with a PROGRAMS entry carry their roles in the spec instead.
OPTION_VALUES: Final[dict[str, dict[str, str]]] = {
    "ssh": {"-o": "ssh", "-F": "config", "-E": "write", "-I": "load", "-S": "write"},
    "scp": {"-o": "ssh", "-F": "config", "-S": "remote"},
    "sftp": {"-o": "ssh", "-F": "config", "-S": "remote", "-D": "exec", "-b": "config"},
    "rsync": {
        "-e": "remote",
        "--rsh": "remote",
        "--log-file": "write",
        "--write-batch": "write",
        "--only-write-batch": "write",
        "--config": "config",
        "--files-from": "operands",
    },
    "openssl": {
        "-engine": "load",
        "-keygen_engine": "load",
        "-provider": "load",
        "-provider-path": "load",
        "-config": "config",
        "-out": "write",
        "-keyout": "write",
        "-writerand": "write",
    },
    # man's pager is a command line: quiet when it only reads (-P cat, --pager='less -R').
    "man": {"-P": "exec", "--pager": "exec"},
    "gpg": {"--exec-path": "load", "--options": "config", "--homedir": "config"},
    "docker": {"--config": "config", "-H": "config", "--host": "config"},
}

# ssh_config(5) keywords, lower-cased: those that run or load something, read settings, or
# name a file written; the rest listed are settings that change no program.
_SSH_EXEC: Final = (
    "proxycommand localcommand knownhostscommand match xauthlocation remotecommand "
    "permitlocalcommand"
)
_SSH_TEXT: Final = (
    "port user hostname stricthostkeychecking batchmode connecttimeout connectionattempts "
    "serveraliveinterval serveralivecountmax identitiesonly identityfile certificatefile "
    "loglevel compression forwardagent forwardx11 forwardx11trusted controlmaster "
    "controlpersist preferredauthentications passwordauthentication pubkeyauthentication "
    "kbdinteractiveauthentication requesttty addressfamily bindaddress ciphers macs "
    "kexalgorithms hostkeyalgorithms pubkeyacceptedkeytypes pubkeyacceptedalgorithms "
    "tcpkeepalive exitonforwardfailure localforward remoteforward dynamicforward "
    "gatewayports updatehostkeys checkhostip visualhostkey hashknownhosts escapechar "
    "addkeystoagent numberofpasswordprompts verifyhostkeydns clearallforwardings "
    "canonicalizehostname ipqos rekeylimit hostkeyalias sessiontype stdinnull "
    "globalknownhostsfile proxyjump sendenv setenv gssapiauthentication "
    "gssapidelegatecredentials"
)
SSH_OPTIONS: Final[dict[str, str]] = {
    **dict.fromkeys(_SSH_EXEC.split(), "spawn"),
    "include": "config",
    **dict.fromkeys(("pkcs11provider", "securitykeyprovider"), "load"),
    **dict.fromkeys(("controlpath", "userknownhostsfile", "identityagent"), "write"),
    **dict.fromkeys(_SSH_TEXT.split(), "text"),
}
