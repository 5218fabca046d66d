"""Secret detection before anything is written: a rule table (data) and one scanner.

Every value ledger commits (a prompt, a command line, a file's content, a tool's answer) passes
through :func:`redact` first: each secret in it becomes a typed placeholder such as
``[secret:github-token]``, so its plaintext reaches no file ledger writes (the ledger, the
disclosure store, a cache, an export, a push). Decisions are taken on the raw payload before.

The rules are data in the manner of the gitleaks rule set (a provider's token format, the
keywords that must occur for it to apply): each rule's regex runs only near its keywords, found
with ``str.find`` on the lower-cased text at C speed, so a megabyte with no keyword costs one
``lower()`` and a few dozen ``find`` calls. Provider formats are exact (prefixes, lengths,
alphabets from the providers' own documentation); the generic rules (a secret-named variable
assigned a literal, a password in a URL, a bearer credential) add an entropy floor so that
ordinary code (``token = next_token()``) stays plain. Measured figures: docs/privacy.md.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Final

from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "SCAN_LIMIT",
    "SECRET_RULES",
    "SecretRule",
    "find_secrets",
    "looks_secret_path",
    "redact",
]

SCAN_LIMIT: Final = 16 * 1024 * 1024
"""Bytes scanned per value. Longer values are never disclosed: their commitment is
recorded and the value withheld (a 64 MiB Write cannot hold a hook past its time budget)."""


class SecretRule(NamedTuple):
    """One kind of secret: its placeholder name, the keywords that gate it, its pattern."""

    name: str
    keywords: tuple[bytes, ...]
    """Lower-case literals; the pattern is tried where one of them occurs."""
    pattern: bytes
    """Matched (``re.match``) from ``back`` bytes before the keyword; lookbehinds see the
    bytes before that point, so a token inside a longer word is not taken. Compiled on first
    use (``re``'s own cache): a hook call whose values hold no keyword compiles none."""
    group: int = 0
    """The group that is the secret (a URL keeps its user and host, an assignment its name)."""
    min_entropy: float = 0.0
    """Shannon bits per character the secret must reach (generic rules only)."""
    back: int = 0


def _rule(
    name: str,
    keywords: tuple[str, ...],
    pattern: str,
    *,
    group: int = 0,
    min_entropy: float = 0.0,
    back: int = 0,
) -> SecretRule:
    return SecretRule(
        name,
        tuple(k.encode() for k in keywords),
        pattern.encode(),
        group,
        min_entropy,
        back,
    )


# Boundaries: a token is not the middle of a longer word.
_L: Final = r"(?<![A-Za-z0-9_\-])"
_R: Final = r"(?![A-Za-z0-9_\-])"
# A value that refers to a secret rather than being one: $VAR, ${VAR}, <placeholder>, %s, ***.
_NOT_REFERENCE: Final = r"(?![$<{%*\-]|\.\.\.)"
# What a generic rule's value may hold: printable ASCII short of quotes and separators.
_VALUE: Final = r"[A-Za-z0-9_+/=.~!@#%^&*\-]"

SECRET_RULES: Final[tuple[SecretRule, ...]] = (
    _rule(
        "private-key",
        ("-----begin",),
        r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]{32,16384}?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:\\n|[A-Za-z0-9+/=\s:-]){64,16384})",
    ),
    _rule(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _L + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82,255})" + _R,
    ),
    _rule(
        "gitlab-token",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glft-",
            "glsoat-",
            "glcbt-",
            "glimt-",
            "glagent-",
            "gloas-",
            "gr1348941",
        ),
        _L
        + r"(?:gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-[A-Za-z0-9_.\-]{20,255}"
        + r"|GR1348941[A-Za-z0-9_\-]{20,})"
        + _R,
    ),
    _rule(
        "aws-access-key-id",
        ("akia", "asia", "abia", "acca", "a3t"),
        r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])",
    ),
    _rule(
        "aws-secret-access-key",
        ("aws_secret", "awssecret", "secret_access_key", "secretaccesskey"),
        r"(?i:(?:aws_?)?secret_?(?:access_?)?key)[\"']?\s*(?::|=>|=)\s*"
        r"[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        group=1,
    ),
    _rule("gcp-api-key", ("aiza",), _L + r"AIza[0-9A-Za-z_\-]{35}" + _R),
    _rule("gcp-oauth-secret", ("gocspx-",), _L + r"GOCSPX-[A-Za-z0-9_\-]{28}" + _R),
    _rule("google-oauth-token", ("ya29.",), _L + r"ya29\.[0-9A-Za-z_\-]{20,}" + _R),
    _rule(
        "azure-storage-key",
        ("accountkey=", "sharedaccesskey="),
        r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,88}={0,2})",
        group=1,
    ),
    _rule(
        "azure-client-secret",
        ("q~",),
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        back=4,
    ),
    _rule(
        "azure-sas-token",
        ("sig=",),
        r"(?<=[?&])sig=([A-Za-z0-9%+/]{40,}(?:%3[Dd]|=){0,2})",
        group=1,
    ),
    _rule("slack-token", ("xox",), _L + r"xox(?:[abposr]|e\.xox[bp])-[0-9A-Za-z\-]{10,255}" + _R),
    _rule("slack-app-token", ("xapp-",), _L + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _R),
    _rule(
        "slack-webhook",
        ("hooks.slack.com/",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}",
    ),
    _rule(
        "stripe-key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"),
        _L + r"(?:(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,247}|whsec_[A-Za-z0-9]{24,})" + _R,
    ),
    _rule(
        "anthropic-key",
        ("sk-ant-",),
        _L + r"sk-ant-[a-z]{2,9}\d{0,3}-[A-Za-z0-9_\-]{20,}" + _R,
    ),
    _rule(
        "openai-key",
        ("sk-",),
        _L
        + r"sk-(?!ant-)(?:(?:proj|svcacct|admin|None)-)?(?:[A-Za-z0-9_\-]{20,}T3BlbkFJ"
        + r"[A-Za-z0-9_\-]{20,}|[A-Za-z0-9_\-]{40,})"
        + _R,
    ),
    _rule(
        "jwt",
        ("eyj",),
        _L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _R,
    ),
    _rule("npm-token", ("npm_",), _L + r"npm_[A-Za-z0-9]{36}" + _R),
    _rule("pypi-token", ("pypi-",), _L + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}" + _R),
    _rule("huggingface-token", ("hf_",), _L + r"hf_[A-Za-z]{34}" + _R),
    _rule("sendgrid-key", ("sg.",), _L + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _R),
    _rule("digitalocean-token", ("dop_v1_", "doo_v1_"), _L + r"do[op]_v1_[a-f0-9]{64}" + _R),
    _rule(
        "shopify-token",
        ("shpat_", "shpss_", "shpca_"),
        _L + r"shp(?:at|ss|ca)_[a-fA-F0-9]{32}" + _R,
    ),
    _rule(
        "url-password",
        ("://",),
        # scheme://user:password@host -- the user and host stay, the password goes.
        r"://[^\s/:@'\"`\x80-\xff]{1,128}:"
        + _NOT_REFERENCE
        + r"([^\s/@'\"`\x80-\xff]{1,256})@[A-Za-z0-9.\-\[]",
        group=1,
        min_entropy=0.1,
    ),
    _rule(
        "bearer-token",
        ("bearer ", "authorization"),
        r"(?i:(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)?|bearer)\s+)"
        + _NOT_REFERENCE
        + r"([A-Za-z0-9._~+/\-]{16,}=*)",
        group=1,
        min_entropy=3.0,
    ),
    _rule(
        "secret-assignment",
        ("key", "token", "secret", "credential", "auth"),
        # A secret-named variable assigned a literal: `export X_API_KEY=…`, `"client_secret":
        # "…"`, `token := "…"`. Tried at the keyword: the rest of the name, the operator, the
        # value.
        r"(?i:key|token|secret|credential|auth)[A-Za-z0-9_\-]{0,40}[\"']?[ \t]*(?:=|:=|:|=>)"
        r"[ \t]*(?:[\"'`]|(?!\s))" + _NOT_REFERENCE + "(" + _VALUE + r"{12,256})",
        group=1,
        min_entropy=3.3,
    ),
    _rule(
        "password-assignment",
        ("passw", "pwd"),
        r"(?i:passw(?:or)?d|pwd)[A-Za-z0-9_\-]{0,40}[\"']?[ \t]*(?:=|:=|:|=>)[ \t]*"
        r"(?:[\"'`]|(?!\s))" + _NOT_REFERENCE + r"([^\s\"'`$<{(),;\[\]\x80-\xff]{6,128})",
        group=1,
        min_entropy=2.4,
    ),
)


def _rules_by_keyword() -> dict[bytes, tuple[SecretRule, ...]]:
    """Each keyword's rules, in :data:`SECRET_RULES` order, keywords sorted: one pass over the
    rules (a pass over every rule for each keyword cost every hook process ~1 ms)."""
    found: dict[bytes, list[SecretRule]] = {}
    for rule in SECRET_RULES:
        for keyword in dict.fromkeys(rule.keywords):
            found.setdefault(keyword, []).append(rule)
    return {keyword: tuple(found[keyword]) for keyword in sorted(found)}


_RULES_BY_KEYWORD: Final = _rules_by_keyword()
_KEYWORDS: Final = tuple(_RULES_BY_KEYWORD)
_AUTOMATON_FROM: Final = 32 * 1024
"""Bytes from which one Aho-Corasick pass finds the keywords (below: one ``find`` each)."""


def _entropy(text: bytes) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# Literal values a secret-named variable holds in ordinary code and docs.
_PLAIN_VALUES: Final = (
    rb"(?i)(?:true|false|null|none|nil|undefined|redacted|changeme|password|secret|example"
    rb"|placeholder|x{6,}|\*+|your[_\-]?\w*|dummy\w*|test\w*|fake\w*)"
)
_WORDS: Final = rb"(?:(?:[A-Z][a-z]+)+|[A-Z]+|[a-z]+)(?:[-_. ](?:(?:[A-Z][a-z]+)+|[A-Z]+|[a-z]+))*"
"""Words and identifiers made of words (``fallback_getpass``, ``Proxy-Authorization``)."""
_WORDY: Final = rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
"""A dotted name (``self.key_for``, ``os.environ``)."""
_DIGIT: Final = rb"\d"
_MIXED_CASE: Final = rb"[A-Z].*[a-z]|[a-z].*[A-Z]"


def _plausible(rule: SecretRule, value: bytes, after: bytes) -> bool:
    """A generic rule's candidate (``min_entropy`` > 0) looks like a literal secret rather
    than code, prose or a placeholder; ``after`` is the byte that follows it."""
    if rule.min_entropy == 0.0:
        return True
    if any(re.fullmatch(p, value) for p in (_PLAIN_VALUES, _WORDS, _WORDY)):
        return False
    if after == b"(":
        return False  # a call: `password = getpass2(...)`
    if rule.name in ("secret-assignment", "bearer-token") and not (
        (re.search(_DIGIT, value) and re.search(_MIXED_CASE, value)) or len(value) >= 32
    ):
        return False
    return _entropy(value) >= rule.min_entropy


def _keyword_hits(lower: bytes) -> list[tuple[bytes, int]]:
    """``(keyword, position)`` for every keyword occurrence in ``lower``."""
    if len(lower) >= _AUTOMATON_FROM:
        return [
            (_KEYWORDS[i], at)
            for i, at, _ in _automaton().find_matches_as_indexes(lower, overlapping=True)
        ]
    hits: list[tuple[bytes, int]] = []
    for keyword in _KEYWORDS:
        at = lower.find(keyword)
        while at >= 0:
            hits.append((keyword, at))
            at = lower.find(keyword, at + 1)
    return hits


_AUTOMATON: list[Any] = []


def _automaton() -> Any:  # noqa: ANN401 -- ahocorasick_rs ships no type stubs
    """One Aho-Corasick automaton over the keywords, built on first use (a hook with small
    values never imports it)."""
    if not _AUTOMATON:
        import ahocorasick_rs  # noqa: PLC0415 -- large values only

        _AUTOMATON.append(ahocorasick_rs.BytesAhoCorasick(list(_KEYWORDS)))
    return _AUTOMATON[0]


def find_secrets(data: bytes) -> list[tuple[int, int, str]]:
    """The secrets in UTF-8 ``data``: ``(start, end, rule name)``, sorted, non-overlapping.

    Scans at most :data:`SCAN_LIMIT` bytes (callers withhold longer values).
    """
    if len(data) > SCAN_LIMIT:
        data = data[:SCAN_LIMIT]
    found: list[tuple[int, int, str]] = []
    tried: set[tuple[str, int]] = set()
    for keyword, at in _keyword_hits(data.lower()):
        for rule in _RULES_BY_KEYWORD[keyword]:
            start = max(0, at - rule.back)
            if (rule.name, start) in tried:
                continue
            tried.add((rule.name, start))
            match = re.compile(rule.pattern).match(data, start)
            if match is None:
                continue
            s, e = match.span(rule.group)
            if s < e and _plausible(rule, data[s:e], data[e : e + 1]):
                found.append((s, e, rule.name))
    return _disjoint(found)


def _disjoint(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping finds merged: the earlier (then longer) one names the span."""
    found.sort(key=lambda f: (f[0], -f[1]))
    out: list[tuple[int, int, str]] = []
    for start, end, name in found:
        if out and start < out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end, out[-1][2])
            continue
        out.append((start, end, name))
    return out


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with each secret replaced by ``[secret:<rule>]``, and the rules that fired."""
    data = text.encode("utf-8", "surrogatepass")
    found = find_secrets(data)
    if not found:
        return text, ()
    parts: list[bytes] = []
    last = 0
    for start, end, name in found:
        parts.append(data[last:start])
        parts.append(f"[secret:{name}]".encode())
        last = end
    parts.append(data[last:])
    return b"".join(parts).decode("utf-8", "surrogatepass"), tuple(
        sorted({name for _, _, name in found})
    )


# A pattern of file names (ruff takes the name for a password).
_SECRET_NAMES: Final = (
    r"(?i)(?:^|/)(?:\.env(?:\..*)?|\.envrc|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials"  # noqa: S105
    r"|credentials(?:\.json)?|secrets?\.(?:ya?ml|json|toml)|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"|.*\.(?:pem|key|p12|pfx|jks|keystore|ppk|asc|gpg|kdbx))$"
)


def looks_secret_path(path: str) -> bool:
    """A file name that says it holds secrets (``.env*``, keys, credential stores)."""
    return re.search(_SECRET_NAMES, path.replace("\\", "/")) is not None
