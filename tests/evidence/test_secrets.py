"""The secret detector: recall on real token formats, false positives on ordinary text.

The recall corpus is built from the providers' documented formats (the prefixes, lengths and
alphabets the gitleaks and detect-secrets rule documentation describe), each token generated
at random and placed in the contexts it turns up in: a bare value, an ``export``, a header, a
JSON or YAML field, a Python assignment. The false-positive corpus is ordinary commands
(``tests/policy/shell_corpus.py``), prompts a person types, and source lines of the standard
library's network and credential modules (where ``password``, ``token`` and ``key`` abound).
"""

from __future__ import annotations

import base64
import ftplib
import getpass
import hmac
import http.client
import imaplib
import inspect
import json
import netrc
import poplib
import random
import smtplib
import ssl
import string
import types
import urllib.request
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from ledger._evidence.secrets import find_secrets, looks_secret_path, redact
from tests.policy.shell_corpus import EVERYDAY

_RNG = random.Random(20261128)  # noqa: S311 -- a reproducible corpus, not a key
_ALNUM = string.ascii_letters + string.digits
_UPPER32 = string.ascii_uppercase + "234567"
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def _r(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _mixed(alphabet: str, n: int) -> str:
    """Random, with at least one digit, one upper and one lower letter (as real tokens are)."""
    while True:
        s = _r(alphabet, n)
        if (
            any(c.isdigit() for c in s)
            and any(c.isupper() for c in s)
            and any(c.islower() for c in s)
        ):
            return s


def _jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = part({"alg": "HS256", "typ": "JWT"})
    payload = part({"sub": _r(_ALNUM, 10), "iat": _RNG.randrange(10**9, 2 * 10**9)})
    return f"{header}.{payload}.{_r(_URLSAFE, 43)}"


def _private_key(kind: str) -> str:
    body = "\n".join(_r(_B64, 64) for _ in range(12))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


# provider -> a generator of one token in its documented format.
_FORMATS: dict[str, Callable[[], str]] = {
    "github-classic": lambda: "ghp_" + _r(_ALNUM, 36),
    "github-oauth": lambda: "gho_" + _r(_ALNUM, 36),
    "github-app": lambda: _RNG.choice(("ghu_", "ghs_", "ghr_")) + _r(_ALNUM, 36),
    "github-fine-grained": lambda: "github_pat_" + _r(_ALNUM, 22) + "_" + _r(_ALNUM, 59),
    "gitlab-pat": lambda: "glpat-" + _r(_URLSAFE, 20),
    "gitlab-other": lambda: _RNG.choice(("gldt-", "glrt-", "glptt-", "glcbt-")) + _r(_URLSAFE, 20),
    "gitlab-runner": lambda: "GR1348941" + _r(_URLSAFE, 20),
    "aws-key-id": lambda: _RNG.choice(("AKIA", "ASIA")) + _r(_UPPER32, 16),
    "gcp-api-key": lambda: "AIza" + _r(_URLSAFE, 35),
    "gcp-oauth-secret": lambda: "GOCSPX-" + _r(_URLSAFE, 28),
    "google-oauth-token": lambda: "ya29." + _r(_URLSAFE, 60),
    "azure-client-secret": lambda: (
        _r(_ALNUM, 3) + _r("0123456789", 1) + "Q~" + _r(_ALNUM + "_~.-", 34)
    ),
    "slack-bot": lambda: (
        "xoxb-" + _r("0123456789", 12) + "-" + _r("0123456789", 12) + "-" + _r(_ALNUM, 24)
    ),
    "slack-user": lambda: (
        "xoxp-" + "-".join(_r("0123456789", 12) for _ in range(3)) + "-" + _r(_HEX, 32)
    ),
    "slack-app": lambda: (
        "xapp-1-A"
        + _r(string.ascii_uppercase + string.digits, 10)
        + "-"
        + _r("0123456789", 13)
        + "-"
        + _r(_HEX, 64)
    ),
    "slack-webhook": lambda: (
        "https://hooks.slack.com/services/T"
        + _r(_UPPER32, 8)
        + "/B"
        + _r(_UPPER32, 8)
        + "/"
        + _r(_ALNUM, 24)
    ),
    "stripe-secret": lambda: _RNG.choice(("sk_live_", "sk_test_", "rk_live_")) + _r(_ALNUM, 24),
    "stripe-webhook": lambda: "whsec_" + _r(_ALNUM, 32),
    "openai-project": lambda: "sk-proj-" + _r(_URLSAFE, 48) + "T3BlbkFJ" + _r(_URLSAFE, 48),
    "openai-legacy": lambda: "sk-" + _r(_ALNUM, 20) + "T3BlbkFJ" + _r(_ALNUM, 20),
    "openai-service": lambda: "sk-svcacct-" + _r(_URLSAFE, 64),
    "anthropic": lambda: "sk-ant-api03-" + _r(_URLSAFE, 93) + "AA",
    "anthropic-admin": lambda: "sk-ant-admin01-" + _r(_URLSAFE, 93) + "AA",
    "jwt": _jwt,
    "npm": lambda: "npm_" + _r(_ALNUM, 36),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + _r(_URLSAFE, 70),
    "huggingface": lambda: "hf_" + _r(string.ascii_letters, 34),
    "sendgrid": lambda: "SG." + _r(_URLSAFE, 22) + "." + _r(_URLSAFE, 43),
    "digitalocean": lambda: "dop_v1_" + _r(_HEX, 64),
    "shopify": lambda: "shpat_" + _r(_HEX, 32),
}

# context -> the text a token turns up in.
_CONTEXTS: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "export": lambda t: f"export SERVICE_TOKEN={t}",
    "quoted-export": lambda t: f'export X_API_KEY="{t}" && ./deploy.sh',
    "header": lambda t: f'curl -s -H "X-Api-Token: {t}" https://api.example.com/v1/items',
    "json": lambda t: json.dumps({"name": "ci", "credential": t}),
    "yaml": lambda t: f"deploy:\n  token: {t}\n",
    "python": lambda t: f'CLIENT = Client(api_key="{t}")',
    "prose": lambda t: f"my key is {t} please use it to call the API",
}


def _generic_secrets() -> list[tuple[str, str]]:
    """Secrets recognised by their context, not their format."""
    out: list[tuple[str, str]] = []
    for _ in range(20):
        password = _mixed(_ALNUM + "!#%^&*", 14)
        out.append((password, f"psql postgres://app:{password}@db.internal:5432/app"))
        out.append((password, f"git clone https://deploy:{password}@git.example.com/team/repo.git"))
        out.append((password, f"mysql -u root --password={password} shop"))
        out.append((password, f'DB_PASSWORD = "{password}"'))
        key = _mixed(_ALNUM, 40)
        out.append((key, f"export X_API_KEY={key}"))
        out.append((key, f"aws_secret_access_key = {key}"))
        out.append((key, f'{{"client_secret": "{key}"}}'))
        out.append((key, f'curl -H "Authorization: Bearer {key}" https://api.example.com'))
        out.append((key, f"AccountKey={_r(_B64, 86)}==;EndpointSuffix=core.windows.net"))
        out.append(
            (key, f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={_r(_ALNUM, 43)}%3D")
        )
    # The azure rows carry their own secret: take it from the text.
    fixed: list[tuple[str, str]] = []
    for secret, text in out:
        if "AccountKey=" in text:
            fixed.append((text.split("AccountKey=")[1].split(";")[0], text))
        elif "sig=" in text:
            fixed.append((text.split("sig=")[1], text))
        else:
            fixed.append((secret, text))
    return fixed


def _recall_corpus() -> list[tuple[str, str]]:
    corpus = [
        (token, context(token))
        for make in _FORMATS.values()
        for context in _CONTEXTS.values()
        for token in (make(), make())
    ]
    for kind in ("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "):
        key = _private_key(kind)
        corpus.append((key, key))
        escaped = json.dumps({"type": "service_account", "private_key": key + "\n"})
        corpus.append((key.split("\n")[3], escaped))  # a GCP service-account file
    return corpus + _generic_secrets()


_PROMPTS: tuple[str, ...] = (
    "Add a retry with backoff to the token refresh in src/auth/session.py",
    "Why does the login form reject my password when it has a space in it?",
    "Rotate the signing key logic so old keys stay valid for a week",
    "Write a test that the API key header is never logged",
    "Rename get_secret to load_secret everywhere and update the docs",
    "Explain what the `key` argument of sorted() does with an example",
    "The JWT middleware returns 401 for expired tokens; make it return 403 for bad signatures",
    "Refactor the password reset flow: the email link should expire after an hour",
    "Use the bearer token from the environment instead of hard-coding it",
    "Add a --password-file option that reads the password from a file",
    "Can you check why `git push` asks for my credentials every time?",
    "Store the OAuth client id in config.yaml and the secret in the vault",
    "Fix the typo in tokenizer.py: 'seperator' should be 'separator'",
    "Make auth optional for the health check endpoint",
    "Set up a .env.example with placeholder values for DATABASE_URL and API_KEY",
    "The Stripe webhook handler should verify the signature before parsing",
    "Move the AWS region and bucket name into settings.py",
    "Summarise the changes in the last three commits",
    "Add type hints to utils/keys.py and run mypy",
    "Why is the cache key different between the two runs?",
    "Please bump the version to 2.4.1 and update the changelog",
    "Write a migration that adds a nullable column password_changed_at",
    "Explain the difference between a public key and a private key in one paragraph",
    "Our GitHub Actions job fails at the checkout step, can you look at the log?",
    "Generate a random token of 32 bytes with the secrets module",
    "What does `ssh-keygen -t ed25519 -C me@example.com` do?",
    "Use keyring.get_password('svc', user) instead of reading the password from disk",
    "Add pagination to GET /api/tokens with a limit of 50",
    "Let's make the session cookie HttpOnly and SameSite=Lax",
    "The deploy script should read SLACK_WEBHOOK_URL from the environment",
    "Replace md5 with sha256 for the file checksums",
    "Document how to authenticate with `gh auth login`",
    "Count the lines of code per module and print a table",
    "Delete the unused function parse_key_value and its tests",
    "Make the password strength meter require 12 characters",
    "Translate the error messages in auth/errors.py to French",
    "Add a docstring to each public function in token_bucket.py",
    "Is it safe to log the first four characters of an API key?",
    "Upgrade cryptography to the latest version and fix deprecations",
    "Run the tests for the auth package and tell me what fails",
)


def _source_lines() -> list[str]:
    modules: tuple[types.ModuleType, ...] = (
        smtplib,
        ftplib,
        imaplib,
        getpass,
        hmac,
        ssl,
        urllib.request,
        http.client,
        poplib,
        netrc,
    )
    lines = [
        line.strip()
        for module in modules
        for line in inspect.getsource(module).splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    return lines


def test_recall_on_real_token_formats_is_at_least_99_percent() -> None:
    corpus = _recall_corpus()
    assert len(corpus) >= 500
    missed = [text for secret, text in corpus if secret in redact(text)[0]]
    assert len(missed) / len(corpus) <= 0.01, missed[:10]


def test_every_provider_format_is_caught_in_every_context() -> None:
    for provider, make in _FORMATS.items():
        for context_name, context in _CONTEXTS.items():
            token = make()
            redacted, rules = redact(context(token))
            assert token not in redacted, (provider, context_name, redacted)
            assert rules


def test_false_positives_on_ordinary_text_are_at_most_half_a_percent() -> None:
    ordinary = [*EVERYDAY, *_PROMPTS, *_source_lines()]
    assert len(ordinary) >= 600
    flagged = [text for text in ordinary if find_secrets(text.encode())]
    assert len(flagged) / len(ordinary) <= 0.005, flagged[:10]
    assert not [c for c in EVERYDAY if find_secrets(c.encode())]
    assert not [p for p in _PROMPTS if find_secrets(p.encode())]


def test_placeholder_is_typed_and_the_rest_of_the_text_stays() -> None:
    token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    assert redact(f"git push https://x:{token}@github.com/o/r")[0] == (
        "git push https://x:[secret:url-password]@github.com/o/r"
    )
    assert redact(f"GITHUB_TOKEN={token} make release") == (
        "GITHUB_TOKEN=[secret:github-token] make release",
        ("github-token",),
    )


def test_references_to_secrets_are_not_secrets() -> None:
    for text in (
        "export API_KEY=$API_KEY",
        'password = os.environ["DB_PASSWORD"]',
        "curl -H 'Authorization: Bearer ${TOKEN}' https://api.example.com",
        "postgres://user:${PGPASSWORD}@localhost/db",
        "token = self.next_token()",
        "api_key: <your-api-key>",
        'secret = "changeme"',
        "-----BEGIN PRIVATE KEY-----",
    ):
        assert find_secrets(text.encode()) == [], text


@given(st.text(max_size=300), st.sampled_from(sorted(_FORMATS)), st.text(max_size=300))
def test_a_token_in_any_text_never_survives_redaction(
    before: str, provider: str, after: str
) -> None:
    token = _FORMATS[provider]()
    text = f"{before} {token} {after}"
    redacted, _ = redact(text)
    assert token not in redacted


@given(st.text(max_size=2000))
def test_redaction_is_idempotent_and_keeps_text_without_secrets(text: str) -> None:
    once, rules = redact(text)
    assert redact(once)[0] == once
    if not rules:
        assert once == text


def test_secret_looking_paths() -> None:
    for path in (
        ".env",
        "app/.env.production",
        "id_ed25519",
        "certs/server.key",
        "a/b.pem",
        ".netrc",
    ):
        assert looks_secret_path(path), path
    for path in ("src/env.py", "keys.py", "README.md", "docs/environment.md", "tokenizer.py"):
        assert not looks_secret_path(path), path
