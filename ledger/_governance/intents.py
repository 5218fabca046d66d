"""The intents file, ``.orchestration/active_intents.yaml``: what each intent may touch.

Format (the design documents' own form; ``intents:`` is accepted as an alias of the root key)::

    active_intents:
        - id: "INT-001"                   # ^[A-Za-z][A-Za-z0-9_.-]*$, unique
          name: "JWT Authentication Migration"
          status: "IN_PROGRESS"           # see INTENT_STATUSES; any case, "-" or "_"
          owned_scope:                    # non-empty list of gitwildmatch globs
              - "src/auth/**"
          constraints: [...]              # optional list of strings
          acceptance_criteria: [...]      # optional list of strings
          description: ...                # optional string

Which statuses let an agent select an intent and write under it is defined once, here
(:data:`WORKABLE_STATUSES`, :func:`intent_refusal`); the hook and ``ledger intent select`` both ask
:func:`intent_refusal`.

:func:`parse_intents` is pure (text in, data out). It walks PyYAML's node tree
(``yaml.compose``) instead of loading plain Python objects, so every error names the file and the
1-based line, e.g. ``active_intents.yaml:7: intent INT-002: owned_scope must be a non-empty list
of strings``, and so duplicate keys, unknown keys and non-string scalars (``name: yes``) are
refused rather than silently coerced.

Hooks call :func:`load_intents_cached`: while the YAML file is unchanged it answers from a small
JSON cache and never imports PyYAML (about 20 ms). The cache is only an optimisation: it is
checked against the file's size, ``mtime_ns`` *and* SHA-256 on every call, a damaged cache is
ignored and rewritten, and a cache that cannot be written is skipped. It is as trustworthy as the
directory holding it, so keep ``cache_dir`` as protected as ``.orchestration/`` itself.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ledger._errors import ConfigError

if TYPE_CHECKING:
    from yaml.nodes import Node

__all__ = [
    "INTENTS_FILE",
    "INTENT_STATUSES",
    "ROOT_KEY",
    "WORKABLE_STATUSES",
    "Intent",
    "IntentsFile",
    "did_you_mean",
    "expansion_problem",
    "intent_refusal",
    "load_intents_cached",
    "load_intents_file",
    "missing_intents_message",
    "normalize_status",
    "parse_intents",
    "render_intent_context",
]

INTENTS_FILE: Final = "active_intents.yaml"
#: The canonical root key (the design documents' form); ``intents`` is accepted as an alias.
ROOT_KEY: Final = "active_intents"
_ROOT_KEYS: Final = (ROOT_KEY, "intents")

#: Every status, in canonical (lower-case) spelling. The file may write them in any case and with
#: ``-`` for ``_`` (``IN_PROGRESS``, ``In-Progress``); ``completed`` reads as ``complete``.
INTENT_STATUSES: Final = (
    "planned",
    "active",
    "in_progress",
    "blocked",
    "complete",
    "done",
    "abandoned",
)
#: The statuses under which an agent may select an intent and write files: work in progress.
#: ``active`` is the older spelling of ``in_progress``.
WORKABLE_STATUSES: Final = frozenset({"in_progress", "active"})
_STATUS_ALIASES: Final = {"completed": "complete", "inprogress": "in_progress"}
# Why each other status refuses selection and writes, and what to do about it.
_REFUSALS: Final = {
    "planned": "is planned, not started: set its status to IN_PROGRESS in "
    f".orchestration/{INTENTS_FILE} to work on it",
    "blocked": "is blocked: resolve what blocks it, then set its status back to IN_PROGRESS in "
    f".orchestration/{INTENTS_FILE}",
    "complete": "is complete: its work is finished; add a new intent for further changes",
    "done": "is done: its work is finished; add a new intent for further changes",
    "abandoned": "was abandoned: add a new intent if the work is wanted after all",
}

_ID_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_REQUIRED_KEYS: Final = ("id", "name", "status", "owned_scope")
_OPTIONAL_KEYS: Final = ("constraints", "acceptance_criteria", "description")
_ALLOWED_KEYS: Final = frozenset(_REQUIRED_KEYS + _OPTIONAL_KEYS)
_STR_TAG: Final = "tag:yaml.org,2002:str"
_NULL_TAG: Final = "tag:yaml.org,2002:null"

_CACHE_FORMAT: Final = "ledger.intents-cache/3"  # /3: the checksum is an HMAC (sealed)
_CACHE_MAX_BYTES: Final = 16 * 1024 * 1024


class Intent(NamedTuple):
    """One intent: a unit of work and the files it owns.

    Attributes:
        id: the intent id, e.g. ``INT-001``.
        name: a short human name.
        status: one of :data:`INTENT_STATUSES` (canonical spelling, whatever the file wrote).
        owned_scope: gitwildmatch globs (relative to the workspace root) the intent may write.
        constraints: rules the agent must follow while working on it.
        acceptance_criteria: what "done" means.
        description: optional longer text.
    """

    id: str
    name: str
    status: str
    owned_scope: tuple[str, ...]
    constraints: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()
    description: str | None = None


class IntentsFile(NamedTuple):
    """A parsed intents file.

    Attributes:
        intents: the intents, in file order.
        source_sha256: hex SHA-256 of the file's bytes (UTF-8 text), for audit records.
        missing: set when there is no intents file: why, and what to do (see
            :func:`missing_intents_message`).
    """

    intents: tuple[Intent, ...]
    source_sha256: str
    missing: str | None = None

    def get(self, intent_id: str) -> Intent | None:
        """The intent with id ``intent_id``, or ``None``."""
        for intent in self.intents:
            if intent.id == intent_id:
                return intent
        return None


# --- parsing -----------------------------------------------------------------------------------


class _Errors:
    """Builds ``file:line: message`` errors for one file."""

    __slots__ = ("filename",)

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def at(self, node: Node | None, message: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else 1
        return ConfigError(f"{self.filename}:{line}: {_one_line(message)}")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _compose(text: str, errors: _Errors) -> Node | None:
    """The YAML node tree of ``text`` (``None`` for an empty document)."""
    import yaml  # noqa: PLC0415 - lazy: the cached hook path must not pay ~20 ms for PyYAML

    loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    try:
        return yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "malformed YAML"
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            problem = f"{exc.context} (line {exc.context_mark.line + 1}): {problem}"
        source = text.split("\n")[line - 1] if line <= text.count("\n") + 1 else ""
        if "*" in source and ("alias" in problem or "alphabetic" in problem):
            problem += " (a glob starting with '*' must be quoted)"
        raise ConfigError(f"{errors.filename}:{line}: invalid YAML: {_one_line(problem)}") from exc
    except yaml.YAMLError as exc:  # ReaderError (a control character) carries no mark
        position = getattr(exc, "position", None)
        line = text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
        reason = getattr(exc, "reason", None) or str(exc)
        raise ConfigError(f"{errors.filename}:{line}: invalid YAML: {_one_line(reason)}") from exc


# Node kinds by their ``id`` class attribute, so that validation needs no yaml.nodes import.
_SCALAR, _SEQUENCE, _MAPPING = "scalar", "sequence", "mapping"


def normalize_status(text: str) -> str | None:
    """The canonical spelling of a status (``"IN_PROGRESS"`` → ``"in_progress"``), or ``None``."""
    key = text.strip().lower().replace("-", "_").replace(" ", "_")
    key = _STATUS_ALIASES.get(key, key)
    return key if key in INTENT_STATUSES else None


def intent_refusal(intent: Intent) -> str | None:
    """Why an agent may not select ``intent`` or write under it (``None``: it may).

    The one rule for both the hook and ``ledger intent select``: only work in progress
    (:data:`WORKABLE_STATUSES`) is open. The message starts after the intent's id, e.g.
    ``"is blocked: resolve what blocks it, ..."``.
    """
    if intent.status in WORKABLE_STATUSES:
        return None
    return _REFUSALS.get(intent.status, f"has status {intent.status!r}, which is not open")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or ``""``."""
    import difflib  # noqa: PLC0415 - only on the error path

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _kind(node: Node) -> str:
    return str(getattr(node, "id", ""))


def _describe(node: Node) -> str:
    """How a node reads in an error message: ``a list``, ``int '42'``, ``bool 'yes'`` ..."""
    kind = _kind(node)
    if kind == _SCALAR:
        tag = node.tag.rsplit(":", 1)[-1]
        return "a string" if node.tag == _STR_TAG else f"{tag} {node.value!r}"
    return {_MAPPING: "a mapping", _SEQUENCE: "a list"}.get(kind, node.tag)


def _is_null(node: Node) -> bool:
    return _kind(node) == _SCALAR and node.tag == _NULL_TAG


def _mapping(node: Node, errors: _Errors, label: str) -> dict[str, tuple[Node, Node]]:
    """``{key: (key node, value node)}`` of a mapping node; non-string and duplicate keys fail."""
    seen: dict[str, tuple[Node, Node]] = {}
    for key_node, value_node in node.value:
        if _kind(key_node) != _SCALAR or key_node.tag != _STR_TAG:
            raise errors.at(key_node, f"{label}keys must be strings, got {_describe(key_node)}")
        key: str = key_node.value
        if key in seen:
            first = seen[key][0].start_mark.line + 1
            raise errors.at(key_node, f"{label}duplicate key {key!r} (first on line {first})")
        seen[key] = (key_node, value_node)
    return seen


def _string(node: Node, errors: _Errors, what: str) -> str:
    """A non-blank string scalar (a plain ``yes``/``42``/``null`` is refused, not coerced)."""
    if _kind(node) != _SCALAR or node.tag != _STR_TAG:
        hint = " (quote it)" if _kind(node) == _SCALAR else ""
        raise errors.at(node, f"{what} must be a string, got {_describe(node)}{hint}")
    value: str = node.value
    if not value.strip():
        raise errors.at(node, f"{what} must not be empty")
    return value


def _string_list(entry: tuple[Node, Node] | None, errors: _Errors, what: str) -> tuple[str, ...]:
    """An optional list of strings; an absent key or ``key:`` with no value is ``()``."""
    if entry is None or _is_null(entry[1]):
        return ()
    node = entry[1]
    if _kind(node) != _SEQUENCE:
        raise errors.at(node, f"{what} must be a list of strings, got {_describe(node)}")
    return tuple(_string(item, errors, f"{what} entry") for item in node.value)


_GlobCheck = Callable[[str], object]


def _glob_check() -> _GlobCheck:
    """pathspec's gitwildmatch pattern class: calling it raises ``ValueError`` on a bad glob."""
    import pathspec  # noqa: PLC0415 - lazy, like yaml: only the slow path validates globs

    factory: _GlobCheck
    try:
        factory = pathspec.util.lookup_pattern("gitignore")  # pathspec >= 1.0
    except KeyError:
        factory = pathspec.util.lookup_pattern("gitwildmatch")  # pathspec 0.12
    return factory


def _scope(node: Node, errors: _Errors, label: str, check: _GlobCheck) -> tuple[str, ...]:
    if _kind(node) != _SEQUENCE or not node.value:
        got = "an empty list" if _kind(node) == _SEQUENCE else _describe(node)
        raise errors.at(node, f"{label}owned_scope must be a non-empty list of strings, got {got}")
    globs: list[str] = []
    for item in node.value:
        glob = _string(item, errors, f"{label}owned_scope entry")
        try:
            check(glob)
        except ValueError as exc:
            raise errors.at(
                item, f"{label}owned_scope entry {glob!r} is not a valid gitwildmatch glob: {exc}"
            ) from exc
        globs.append(glob)
    return tuple(globs)


def _intent(node: Node, index: int, errors: _Errors, check: _GlobCheck) -> Intent:
    label = f"intents[{index}]: "
    if _kind(node) != _MAPPING:
        raise errors.at(node, f"{label}each intent must be a mapping, got {_describe(node)}")
    fields = _mapping(node, errors, label)
    intent_id = ""  # set below whenever "id" is present, which the required-key check enforces
    if "id" in fields:
        id_node = fields["id"][1]
        intent_id = _string(id_node, errors, f"{label}id")
        if not _ID_RE.fullmatch(intent_id):
            raise errors.at(
                id_node, f"{label}id {intent_id!r} must match ^[A-Za-z][A-Za-z0-9_.-]*$"
            )
        label = f"intent {intent_id}: "
    for key, (key_node, _value) in fields.items():
        if key not in _ALLOWED_KEYS:
            allowed = ", ".join(_REQUIRED_KEYS + _OPTIONAL_KEYS)
            raise errors.at(key_node, f"{label}unknown key {key!r} (allowed: {allowed})")
    for key in _REQUIRED_KEYS:
        if key not in fields:
            raise errors.at(node, f"{label}missing required key {key!r}")
    status_node = fields["status"][1]
    written = _string(status_node, errors, f"{label}status")
    status = normalize_status(written)
    if status is None:
        choices = ", ".join(s.upper() for s in INTENT_STATUSES)
        raise errors.at(
            status_node,
            f"{label}status {written!r} must be one of {choices} "
            f"(any case){did_you_mean(written.lower(), INTENT_STATUSES)}",
        )
    description = fields.get("description")
    return Intent(
        id=intent_id,
        name=_string(fields["name"][1], errors, f"{label}name"),
        status=status,
        owned_scope=_scope(fields["owned_scope"][1], errors, label, check),
        constraints=_string_list(fields.get("constraints"), errors, f"{label}constraints"),
        acceptance_criteria=_string_list(
            fields.get("acceptance_criteria"), errors, f"{label}acceptance_criteria"
        ),
        description=(
            None
            if description is None or _is_null(description[1])
            else _string(description[1], errors, f"{label}description")
        ),
    )


def parse_intents(text: str, filename: str) -> IntentsFile:
    """Parse and validate the text of an intents file.

    Args:
        text: the file's content.
        filename: the name used in error messages (as given, e.g. ``active_intents.yaml``).

    Raises:
        ConfigError: malformed YAML or an invalid intents file. The one-line message is
            ``<filename>:<line>: <what is wrong>`` with a 1-based line.
    """
    errors = _Errors(filename)
    root = _compose(text, errors)
    if root is None:
        raise errors.at(None, f"empty intents file; expected a top-level '{ROOT_KEY}:' list")
    if _kind(root) != _MAPPING:
        raise errors.at(
            root, f"expected a mapping with an '{ROOT_KEY}' list, got {_describe(root)}"
        )
    top = _mapping(root, errors, "")
    for key, (key_node, _value) in top.items():
        if key not in _ROOT_KEYS:
            raise errors.at(
                key_node,
                f"unknown top-level key {key!r} (allowed: {ROOT_KEY}, or "
                f"its alias intents){did_you_mean(key, _ROOT_KEYS)}",
            )
    present = [key for key in _ROOT_KEYS if key in top]
    if not present:
        raise errors.at(root, f"missing top-level key '{ROOT_KEY}'")
    if len(present) > 1:
        raise errors.at(
            top["intents"][0], f"'intents' is an alias of '{ROOT_KEY}': use one of them, not both"
        )
    root_key = present[0]
    items = top[root_key][1]
    if _is_null(items):
        items_list: list[Node] = []  # `active_intents:` with nothing under it: no intents yet
    elif _kind(items) != _SEQUENCE:
        raise errors.at(items, f"'{root_key}' must be a list, got {_describe(items)}")
    else:
        items_list = items.value
    check = _glob_check()
    intents: list[Intent] = []
    first_line: dict[str, int] = {}
    for index, node in enumerate(items_list):
        intent = _intent(node, index, errors, check)
        if intent.id in first_line:
            raise errors.at(
                node,
                f"intent {intent.id}: duplicate id (first defined on line {first_line[intent.id]})",
            )
        first_line[intent.id] = node.start_mark.line + 1
        intents.append(intent)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return IntentsFile(tuple(intents), digest)


# --- files and the cache -----------------------------------------------------------------------


def _read(path: Path) -> tuple[bytes, os.stat_result]:
    """The file's bytes and the ``stat`` of the same open file."""
    try:
        with path.open("rb") as handle:
            return handle.read(), os.fstat(handle.fileno())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read intents file: {exc.strerror or exc}") from exc


def _decode(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{filename}:{line}: invalid YAML: the file is not valid UTF-8") from exc


def load_intents_file(path: str | os.PathLike[str]) -> IntentsFile:
    """Read and parse an intents file (always the slow path; hooks use :func:`load_intents_cached`).

    Raises:
        ConfigError: the file is unreadable, not UTF-8, or invalid (see :func:`parse_intents`).
    """
    file = Path(path)
    data, _stat = _read(file)
    return parse_intents(_decode(data, str(path)), str(path))


def missing_intents_message(orchestration: Path) -> str:
    """Why a workspace has no intents file, naming a misnamed one if there is one nearby.

    E.g. ``no .orchestration/active_intents.yaml (found active_intents.yml: rename it to
    active_intents.yaml)``.
    """
    try:
        names = sorted(
            entry.name
            for entry in orchestration.iterdir()
            if "intent" in entry.name.lower() and entry.name != INTENTS_FILE
        )
    except OSError:
        names = []
    where = f"{orchestration.name}/{INTENTS_FILE}"
    if names:
        return f"no {where} (found {', '.join(names)}: rename it to {INTENTS_FILE})"
    return f"no {where}; run `ledger init` to write a template, then add an intent"


def _cache_file(path: Path, cache_dir: Path) -> Path:
    key = hashlib.sha256(str(path.absolute()).encode("utf-8", "surrogatepass")).hexdigest()
    return cache_dir / f"intents-{key[:24]}.json"


def _checksum(intents: object, secret: bytes | None = None) -> str | None:
    """HMAC of the cached intents under the per-user cache secret (outside the workspace): a
    cache an agent wrote (a wider owned_scope for today's file) does not verify and is ignored.
    ``None`` without a secret: then there is no cache, only the YAML.

    Args:
        secret: the secret, when the caller holds it (else read from ``$LEDGER_HOME``).
    """
    if secret is None:
        from ledger._workspace import cache_secret  # noqa: PLC0415 -- the secret file, on a cache path

        secret = cache_secret()
    if secret is None:
        return None
    blob = json.dumps(intents, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(secret, blob.encode("ascii"), hashlib.sha256).hexdigest()


def _strings(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _intent_from_json(item: object) -> Intent | None:
    """An :class:`Intent` from its cached form, or ``None`` if anything is off."""
    if not isinstance(item, dict) or set(item) != set(Intent._fields):
        return None
    intent_id, name, status = item["id"], item["name"], item["status"]
    scope = _strings(item["owned_scope"])
    constraints = _strings(item["constraints"])
    criteria = _strings(item["acceptance_criteria"])
    description = item["description"]
    if (
        not isinstance(intent_id, str)
        or not _ID_RE.fullmatch(intent_id)
        or not isinstance(name, str)
        or status not in INTENT_STATUSES
        or not scope
        or constraints is None
        or criteria is None
        or not (description is None or isinstance(description, str))
    ):
        return None
    return Intent(intent_id, name, status, scope, constraints, criteria, description)


def _read_cache(
    cache: Path, size: int, mtime_ns: int, sha256: str, secret: bytes
) -> IntentsFile | None:
    """The cached parse when it matches the file exactly; ``None`` (never an error) otherwise."""
    try:
        with cache.open("rb") as handle:
            blob = handle.read(_CACHE_MAX_BYTES + 1)
        if len(blob) > _CACHE_MAX_BYTES:
            return None
        doc = json.loads(blob)
    except (OSError, ValueError, RecursionError):
        return None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != _CACHE_FORMAT
        or doc.get("size") != size
        or doc.get("mtime_ns") != mtime_ns
        or doc.get("sha256") != sha256
        or not isinstance(doc.get("intents"), list)
        or doc.get("checksum") is None
        or doc.get("checksum") != _checksum(doc["intents"], secret)
    ):
        return None
    intents = [_intent_from_json(item) for item in doc["intents"]]
    if any(intent is None for intent in intents):
        return None
    ids = [intent.id for intent in intents if intent is not None]
    if len(set(ids)) != len(ids):
        return None
    return IntentsFile(tuple(i for i in intents if i is not None), sha256)


def _write_cache(cache: Path, size: int, mtime_ns: int, parsed: IntentsFile, secret: bytes) -> None:
    """Write the cache atomically (temp file + ``os.replace``); give up quietly on any OSError."""
    import tempfile  # noqa: PLC0415 - lazy: only the slow path writes (tempfile costs ~4 ms)

    intents = [intent._asdict() for intent in parsed.intents]
    for item in intents:
        for key in ("owned_scope", "constraints", "acceptance_criteria"):
            item[key] = list(item[key])
    doc = {
        "format": _CACHE_FORMAT,
        "size": size,
        "mtime_ns": mtime_ns,
        "sha256": parsed.source_sha256,
        "intents": intents,
        "checksum": _checksum(intents, secret),
    }
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=cache.parent, prefix=f".{cache.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            Path(temp).replace(cache)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError:
        return  # a read-only or full disk costs speed, never correctness


def load_intents_cached(
    path: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    secret: bytes | None = None,
) -> IntentsFile:
    """Load an intents file, answering from a JSON cache in ``cache_dir`` while it is unchanged.

    Every call reads the YAML file's bytes and checks the cache against their size,
    ``mtime_ns`` and SHA-256; only a full match is used, and then PyYAML is never imported. A
    missing, stale, corrupt or tampered-with (checksum) cache is ignored and rewritten.

    Args:
        environ: where ``$LEDGER_HOME`` (the cache secret's home) is read from.
        secret: the per-user cache secret, when the caller holds it already.

    Raises:
        ConfigError: the YAML file is unreadable, not UTF-8, or invalid.
    """
    from ledger._workspace import cache_secret  # noqa: PLC0415 -- the secret file, on a cache path

    file = Path(path)
    data, stat = _read(file)
    digest = hashlib.sha256(data).hexdigest()
    cache = _cache_file(file, Path(cache_dir))
    known = _PARSED.get((str(file), digest))
    if known is not None and known[0] == _stamp(cache):
        return known[1]  # these very bytes were parsed here, and their cache is as left then
    key = secret if secret is not None else cache_secret(environ)
    if key is not None:
        cached = _read_cache(cache, stat.st_size, stat.st_mtime_ns, digest, key)
        if cached is not None:
            return _remember(file, digest, cache, cached)
    parsed = parse_intents(_decode(data, str(path)), str(path))
    if key is not None:  # without the secret there is no cache, only the YAML
        _write_cache(cache, stat.st_size, stat.st_mtime_ns, parsed, key)
    return _remember(file, digest, cache, parsed)


#: Intents files parsed in this process, by path and the SHA-256 of their bytes, with the stat
#: their cache file had then: a warm process (the resident decider, ``ledger mcp``) reads the
#: file on every call and parses it again only when its bytes changed (what they parse to
#: depends on nothing else), or its cache file did (to rewrite a damaged one, as any call does).
_PARSED: dict[tuple[str, str], tuple[tuple[int, ...] | None, IntentsFile]] = {}


def _stamp(cache: Path) -> tuple[int, ...] | None:
    try:
        info = cache.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _remember(file: Path, digest: str, cache: Path, parsed: IntentsFile) -> IntentsFile:
    if len(_PARSED) >= 64:
        _PARSED.clear()
    _PARSED[(str(file), digest)] = (_stamp(cache), parsed)
    return parsed


# --- scope expansions ---------------------------------------------------------------------------

#: Paths a glob is tried against: a glob matching any of them would open ``.orchestration/``.
_PROTECTED_PROBES: Final = (
    ".orchestration/agent_trace.jsonl",
    ".orchestration/active_intents.yaml",
    ".orchestration/keys/ed25519-0000000000000000.json",
    ".orchestration/hooks.yaml",
)


def expansion_problem(glob: str) -> str | None:
    """Why ``glob`` may not be granted by ``ledger intent expand`` (``None``: it may).

    Refused: empty or absolute globs, globs with a ``..`` segment (they leave the workspace),
    invalid gitwildmatch globs, and globs that would match anything in ``.orchestration/``
    (agents may never write there, and a grant must not say otherwise).
    """
    text = glob.strip()
    if not text:
        return "an empty glob grants nothing"
    body = text.removeprefix("!")
    if body.startswith(("/", "~")) or (len(body) > 1 and body[1] == ":"):
        return f"{glob!r} is absolute; globs are relative to the workspace root"
    if ".." in body.replace("\\", "/").split("/"):
        return f"{glob!r} leaves the workspace (..)"
    check = _glob_check()
    try:
        pattern: Any = check(text)
    except ValueError as exc:
        return f"{glob!r} is not a valid gitwildmatch glob: {exc}"
    if not text.startswith("!") and any(pattern.match_file(p) for p in _PROTECTED_PROBES):
        return (
            f"{glob!r} would match .orchestration/, which agents may never write; name "
            "narrower globs (e.g. 'src/**')"
        )
    return None


# --- context for the agent ---------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _block(tag: str, item_tag: str, values: Iterable[str]) -> list[str]:
    items = [f"    <{item_tag}>{_escape(value)}</{item_tag}>" for value in values]
    if not items:
        return [f"  <{tag}/>"]
    return [f"  <{tag}>", *items, f"  </{tag}>"]


def render_intent_context(intent: Intent, recent_changes: Sequence[str] = ()) -> str:
    """The ``<intent_context>`` block handed to the agent as additional context.

    Values are escaped (``&``, ``<``, ``>``) so file content cannot close or forge tags.

    Args:
        intent: the selected intent.
        recent_changes: short lines about recent changes under the intent (newest first).
    """
    lines = [
        "<intent_context>",
        f"  <id>{_escape(intent.id)}</id>",
        f"  <name>{_escape(intent.name)}</name>",
        f"  <status>{_escape(intent.status)}</status>",
    ]
    if intent.description:
        lines.append(f"  <description>{_escape(intent.description)}</description>")
    lines += _block("owned_scope", "glob", intent.owned_scope)
    lines += _block("constraints", "constraint", intent.constraints)
    lines += _block("acceptance_criteria", "criterion", intent.acceptance_criteria)
    lines += _block("recent_changes", "change", recent_changes)
    lines.append("</intent_context>")
    return "\n".join(lines)
