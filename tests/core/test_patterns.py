"""lazy_compile answers as re.compile does, and compiles only when first used."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._startup.patterns import lazy_compile

PATTERNS = [
    r"[0-9a-f]{64}",
    r"(?P<tool>\*|[^()]*[A-Za-z0-9_])\((?P<arg>(?!\?).*)\)",
    r"(\d{1,6})([dhm])",
    r"\[\d+\]",
]


@settings(max_examples=200, deadline=None)
@given(
    pattern=st.sampled_from(PATTERNS),
    text=st.text(alphabet="0123456789abcdefdhm()[]*x_ ", max_size=80),
)
def test_every_method_answers_as_the_compiled_pattern(pattern: str, text: str) -> None:
    lazy, compiled = lazy_compile(pattern), re.compile(pattern)
    for name in ("match", "fullmatch", "search"):
        ours, theirs = getattr(lazy, name)(text), getattr(compiled, name)(text)
        assert (ours and ours.groups(), ours and ours.span()) == (
            theirs and theirs.groups(),
            theirs and theirs.span(),
        )
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("<>", text) == compiled.sub("<>", text)
    assert lazy.subn("<>", text) == compiled.subn("<>", text)
    assert lazy.split(text) == compiled.split(text)
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (
        compiled.pattern,
        compiled.flags,
        compiled.groups,
        compiled.groupindex,
    )


def test_bytes_patterns_and_flags_are_kept() -> None:
    lazy = lazy_compile(rb"^@@ -(\d+) @@", re.MULTILINE)
    assert lazy.findall(b"x\n@@ -12 @@\n@@ -3 @@") == [b"12", b"3"]
    assert lazy.flags & re.MULTILINE


def test_nothing_is_compiled_before_the_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[object] = []
    original = re.compile

    def counted(*args: Any) -> re.Pattern[Any]:
        compiled.append(args)
        return original(*args)

    monkeypatch.setattr(re, "compile", counted)
    lazy = lazy_compile(r"never-used-(\d+)")
    assert compiled == []
    assert lazy.fullmatch("never-used-7") is not None
    assert lazy.search("x never-used-8") is not None  # the second use compiles nothing more
    assert compiled == [(r"never-used-(\d+)", 0)]


def test_a_bad_pattern_fails_where_it_is_used() -> None:
    lazy = lazy_compile(r"(unclosed")
    with pytest.raises(re.error):
        lazy.match("x")
