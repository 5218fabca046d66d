"""Mutation classes: structure-preserving refactors vs changes to the public surface."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._governance.analysis.mutation import MutationClass, classify_mutation

BASE = textwrap.dedent(
    '''
    """Module docstring."""

    import os

    LIMIT = 10
    _cache: dict[str, int] = {}


    def greet(name: str, *, loud: bool = False) -> str:
        """Say hello."""
        message = f"hello {name}"
        return message.upper() if loud else message


    def _helper(x):
        return x * 2


    class Greeter(Base):
        """A greeter."""

        kind: str = "plain"

        def __init__(self, prefix: str) -> None:
            self.prefix = prefix

        def greet(self, name: str) -> str:
            return self.prefix + name

        def _internal(self):
            return 1

        @property
        def size(self) -> int:
            return 1


    class _Private:
        def visible(self, a):
            return a
    '''
)


def edit(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new)


@pytest.mark.parametrize(
    "new",
    [
        BASE,
        BASE.replace("    ", "\t"),  # re-indented
        edit('"""Say hello."""', '"""Say hello, politely."""'),  # docstring
        edit("import os\n", "import os  # for later\n# a comment\n"),  # comments
        edit('message = f"hello {name}"', 'msg = f"hello {name}"').replace(
            "return message.upper() if loud else message", "return msg.upper() if loud else msg"
        ),  # renamed a local
        edit("return self.prefix + name", "return f'{self.prefix}{name}'"),  # body
        edit("def _helper(x):\n    return x * 2", "def _helper(x, y=3):\n    return x * y"),
        edit("def _internal(self):", "def _internal(self, extra):"),  # private method
        edit("    def visible(self, a):", "    def visible(self, b):"),  # in a private class
        edit("LIMIT = 10", "LIMIT = 20"),  # a public value, not a signature
        edit("_cache: dict[str, int] = {}", "_cache: dict[str, str] = {}"),
        edit(
            "def greet(name: str, *, loud: bool = False) -> str:",
            "def greet(\n    name: str,\n    *,\n    loud: bool = False,\n) -> str:",
        ),
        edit("import os\n", "import os\nimport sys\n"),  # imports are not compared
        BASE + "\n\ndef _new_private():\n    pass\n",
    ],
)
def test_python_refactors(new: str) -> None:
    result = classify_mutation("pkg/mod.py", BASE, new)
    assert result.kind == "AST_REFACTOR", result
    assert result.changed_symbols == ()


@pytest.mark.parametrize(
    ("new", "symbols"),
    [
        (edit("def greet(name: str, *,", "def greet(name: str, greeting: str, *,"), ["greet"]),
        (edit("loud: bool = False", "loud: bool = True"), ["greet"]),  # default
        (edit("loud: bool = False", "loud: int = False"), ["greet"]),  # annotation
        (edit("loud: bool = False) -> str:", "loud: bool = False) -> bytes:"), ["greet"]),
        (edit("def greet(name: str, *,", "def greet(who: str, *,"), ["greet"]),  # param name
        (edit("def greet(name: str, *,", "def greet(name: str, /, *,"), ["greet"]),  # kind
        (edit("def greet(name", "async def greet(name"), ["greet"]),
        (edit("\ndef greet(", "\n@cache\ndef greet("), ["greet"]),  # decorator
        (edit("class Greeter(Base):", "class Greeter(Base, Mixin):"), ["Greeter"]),
        (edit("class Greeter(Base):", "class Greeter(Base, metaclass=Meta):"), ["Greeter"]),
        (
            edit("def __init__(self, prefix: str)", "def __init__(self, prefix: str, sep: str)"),
            ["Greeter.__init__"],
        ),
        (
            edit(
                "def greet(self, name: str) -> str:", "def greet(self, name: str, n: int) -> str:"
            ),
            ["Greeter.greet"],
        ),
        (edit("    @property\n    def size", "    def size"), ["Greeter.size"]),
        (edit('kind: str = "plain"', "kind: int = 0"), ["Greeter.kind"]),
        (edit("LIMIT = 10", "MAX_LIMIT = 10"), ["LIMIT", "MAX_LIMIT"]),  # renamed constant
        (BASE + "\n\ndef farewell(name):\n    pass\n", ["farewell"]),  # added
        (BASE + "\n\nclass Extra:\n    pass\n", ["Extra"]),
        (BASE.replace("def _helper(x):", "def helper(x):"), ["helper"]),  # made public
        (BASE + "\nA, (B, *C) = 1, (2, 3)\n", ["A", "B", "C"]),
        (BASE + "\nif TYPE_CHECKING:\n    def typed(x: int) -> int: ...\n", ["typed"]),
    ],
)
def test_python_intent_evolution(new: str, symbols: list[str]) -> None:
    result = classify_mutation("pkg/mod.py", BASE, new)
    assert result.kind == "INTENT_EVOLUTION", result
    assert list(result.changed_symbols) == symbols
    for symbol in symbols:
        assert symbol in result.reason


def test_removed_public_function() -> None:
    new = edit(
        "def greet(name: str, *, loud: bool = False) -> str:\n"
        '    """Say hello."""\n'
        '    message = f"hello {name}"\n'
        "    return message.upper() if loud else message\n",
        "",
    )
    result = classify_mutation("m.py", BASE, new)
    assert result.kind == "INTENT_EVOLUTION"
    assert result.changed_symbols == ("greet",)
    assert "removed: greet" in result.reason


def test_overloads_compare_as_a_set() -> None:
    old = "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
    swapped = "@overload\ndef f(x: str) -> str: ...\n@overload\ndef f(x: int) -> int: ...\n"
    assert classify_mutation("a.pyi", old, swapped).kind == "AST_REFACTOR"
    added = old + "@overload\ndef f(x: bytes) -> bytes: ...\n"
    assert classify_mutation("a.pyi", old, added).changed_symbols == ("f",)


def test_new_file_is_intent_evolution() -> None:
    result = classify_mutation("pkg/new.py", None, "")
    assert result == MutationClass("INTENT_EVOLUTION", "new file", ())
    assert classify_mutation("README.md", None, "# hi").kind == "INTENT_EVOLUTION"


def test_unparseable_python_falls_back_to_the_heuristic() -> None:
    broken = "def greet(name):\n    return (\n"
    fixed_body = "def greet(name):\n    return name\n"
    result = classify_mutation("m.py", broken, fixed_body)
    assert result.kind == "AST_REFACTOR"
    assert "did not parse" in result.reason
    changed = classify_mutation("m.py", broken, "def greet(name, extra):\n    return name\n")
    assert changed.kind == "INTENT_EVOLUTION"
    assert changed.changed_symbols == ("greet",)
    assert "did not parse" in changed.reason


def test_uppercase_suffix_is_python() -> None:
    result = classify_mutation("M.PY", "def f(a): pass", "def f(b): pass")
    assert result.kind == "INTENT_EVOLUTION"
    assert "public Python" in result.reason


# --- other languages (heuristic) ----------------------------------------------------------------

TS = """\
import { x } from "./x";

export interface User {
  id: string;
}

export function login(user: User, password: string): boolean {
  const ok = check(user, password);
  return ok;
}

function _hash(p: string) {
  return p;
}

export default class Session {
  constructor(private user: User) {}
}
"""


@pytest.mark.parametrize(
    "new",
    [
        TS,
        TS.replace("const ok = check(user, password);", "const ok: boolean = check(user, p);"),
        TS.replace(
            "export function login(user: User, password: string): boolean {",
            "export function login( user : User,password:string ) : boolean{",
        ),
        TS.replace("function _hash(p: string) {", "function _hash(p: string, salt: string) {"),
        TS.replace("  return p;", "  // hashed\n  return p + p;"),
    ],
)
def test_typescript_refactors(new: str) -> None:
    result = classify_mutation("src/auth.ts", TS, new)
    assert result.kind == "AST_REFACTOR", result
    assert "heuristic" in result.reason


@pytest.mark.parametrize(
    ("new", "symbols"),
    [
        (
            TS.replace("password: string): boolean", "password: string, otp: string): boolean"),
            ["login"],
        ),
        (TS + "\nexport const VERSION = 2;\n", ["VERSION"]),
        (TS.replace("export interface User {", "export interface Account {"), ["Account", "User"]),
        (TS.replace("export default class Session {", "export class Session {"), ["Session"]),
    ],
)
def test_typescript_intent_evolution(new: str, symbols: list[str]) -> None:
    result = classify_mutation("src/auth.ts", TS, new)
    assert result.kind == "INTENT_EVOLUTION", result
    assert list(result.changed_symbols) == symbols


@pytest.mark.parametrize(
    ("path", "old", "new", "kind"),
    [
        (
            "lib.rs",
            "pub fn run(x: u32) -> u32 {\n    x\n}\n",
            "pub fn run(x: u32) -> u32 {\n    x + 1\n}\n",
            "AST_REFACTOR",
        ),
        (
            "lib.rs",
            "pub fn run(x: u32) -> u32 {\n    x\n}\n",
            "pub fn run(x: u64) -> u64 {\n    x\n}\n",
            "INTENT_EVOLUTION",
        ),
        (
            "main.go",
            "func Serve(addr string) error {\n\treturn nil\n}\n",
            "func Serve(addr string) error {\n\tlog()\n\treturn nil\n}\n",
            "AST_REFACTOR",
        ),
        (
            "main.go",
            "func Serve(addr string) error {\n\treturn nil\n}\n",
            "func Serve(addr string, tls bool) error {\n\treturn nil\n}\n",
            "INTENT_EVOLUTION",
        ),
        # Known limit: a one-line method compares its body too (the line is the declaration).
        (
            "A.java",
            "public class A {\n  public int f(int x) { return x; }\n}\n",
            "public class A {\n  public int f(int x) { return x * 2; }\n}\n",
            "INTENT_EVOLUTION",
        ),
        (
            "A.java",
            "public class A {\n  public int f(int x) {\n    return x;\n  }\n}\n",
            "public class A {\n  public int f(int x) {\n    return x * 2;\n  }\n}\n",
            "AST_REFACTOR",
        ),
        ("README.md", "# Title\n\nSome text.\n", "# Title\n\nOther text.\n", "AST_REFACTOR"),
        ("x.rb", "def run(a)\n  a\nend\n", "def run(a, b)\n  a\nend\n", "INTENT_EVOLUTION"),
    ],
)
def test_other_languages(path: str, old: str, new: str, kind: str) -> None:
    assert classify_mutation(path, old, new).kind == kind


# --- properties -----------------------------------------------------------------------------------

identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: s not in {"if", "in", "is", "or", "as", "def", "for", "not", "and", "del", "try",
                        "else", "elif", "from", "pass", "with", "class", "while", "yield",
                        "async", "await", "break", "raise", "global", "lambda", "return",
                        "import", "assert", "except", "finally", "continue", "nonlocal"}
)  # fmt: skip


@st.composite
def modules(draw: st.DrawFn) -> str:
    """A module of public and private functions with random parameters and bodies."""
    lines: list[str] = []
    for name in draw(st.lists(identifiers, min_size=1, max_size=5, unique=True)):
        params = draw(st.lists(identifiers, max_size=3, unique=True))
        prefix = "_" if draw(st.booleans()) else ""
        body = draw(st.sampled_from(["pass", "return 1", "x = 2\n    return x"]))
        lines.append(f"def {prefix}{name}({', '.join(params)}):\n    {body}\n")
    return "\n".join(lines)


@settings(max_examples=100, deadline=None)
@given(source=modules())
def test_reformatting_is_a_refactor(source: str) -> None:
    reformatted = ast.unparse(ast.parse(source))  # drops formatting, keeps structure
    assert classify_mutation("m.py", source, source).kind == "AST_REFACTOR"
    assert classify_mutation("m.py", source, reformatted).kind == "AST_REFACTOR"


@settings(max_examples=100, deadline=None)
@given(source=modules(), name=identifiers)
def test_adding_a_public_function_is_evolution(source: str, name: str) -> None:
    fresh = f"zz_{name}"
    result = classify_mutation("m.py", source, source + f"\ndef {fresh}(a):\n    pass\n")
    assert result.kind == "INTENT_EVOLUTION"
    assert fresh in result.changed_symbols
