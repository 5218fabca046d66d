"""ledger's NamedTuple builds the same classes as typing.NamedTuple, without compiling source."""

from __future__ import annotations

import copy
import inspect
import keyword
import pickle
import typing
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._startup.namedtuple import NamedTuple

FIELD = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name)
)
VALUE = st.one_of(
    st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3)
)


class Pickled(NamedTuple):
    """A module-level class, so pickle can find it by name."""

    seq: int
    path: str | None = None


def _define(base: Any, names: list[str], defaults: Sequence[object]) -> Any:
    """``class Point(base)`` with ``names`` as fields, the last ``len(defaults)`` defaulted."""

    def norm(self: tuple[object, ...]) -> int:
        return len(self)

    body: dict[str, object] = {
        "__qualname__": "Point",
        "__doc__": "A point.",
        "__annotations__": dict.fromkeys(names, "int | None"),
        "norm": norm,
    }
    body.update(zip(names[len(names) - len(defaults) :], defaults, strict=True))
    return _build(base, "Point", body)


def _build(base: Any, name: str, body: dict[str, object]) -> Any:
    """What a class statement does: the metaclass of the (resolved) base gets the namespace."""
    resolved = base.__mro_entries__((base,)) if hasattr(base, "__mro_entries__") else (base,)
    return type(resolved[0])(name, resolved, {"__module__": __name__, **body})


def _shape(cls: Any) -> dict[str, object]:
    return {
        "name": (cls.__name__, cls.__qualname__, cls.__module__, cls.__doc__),
        "mro": [c.__name__ for c in cls.__mro__],
        "fields": (cls._fields, cls._field_defaults, cls.__match_args__),
        # typing wraps each (string) annotation in a ForwardRef; ledger keeps it as written.
        "signature": [
            (p.name, p.kind, p.default, getattr(p.annotation, "__forward_arg__", p.annotation))
            for p in inspect.signature(cls).parameters.values()
        ],
        "new": (cls.__new__.__qualname__, cls.__new__.__doc__, cls.__new__.__defaults__),
        "methods": [
            (getattr(cls, m).__qualname__, getattr(cls, m).__doc__)
            for m in ("_make", "_replace", "__repr__", "_asdict", "__getnewargs__", "norm")
        ],
        "slots": cls.__slots__,
    }


def _error(call: Any) -> str:
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return f"{type(info.value).__name__}: {info.value}"


@settings(max_examples=150, deadline=None)
@given(
    names=st.lists(FIELD, min_size=1, max_size=12, unique=True),
    data=st.data(),
)
def test_a_class_matches_typing_namedtuple_in_shape_and_behaviour(
    names: list[str], data: st.DataObject
) -> None:
    defaults = data.draw(st.lists(VALUE, max_size=len(names)))
    ours, theirs = _define(NamedTuple, names, defaults), _define(typing.NamedTuple, names, defaults)
    assert _shape(ours) == _shape(theirs)
    values = data.draw(st.lists(VALUE, min_size=len(names), max_size=len(names)))
    a, b = ours(*values), theirs(*values)
    assert (repr(a), tuple(a), a._asdict(), a.norm()) == (repr(b), tuple(b), b._asdict(), b.norm())
    assert a == b == tuple(values)
    assert ours(**dict(zip(names, values, strict=True))) == a
    assert copy.deepcopy(a) == a
    assert type(copy.deepcopy(a)) is ours
    replaced = data.draw(st.dictionaries(st.sampled_from(names), VALUE))
    assert a._replace(**replaced) == b._replace(**replaced)
    assert type(a._replace(**replaced)) is ours
    assert [getattr(a, name) for name in names] == values
    match a:
        case ours(first):
            assert first == values[0]
    required = len(names) - len(defaults)
    # The same errors, word for word.
    assert _error(lambda: ours(*values, None)) == _error(lambda: theirs(*values, None))
    assert _error(lambda: ours(zz_unknown=1)) == _error(lambda: theirs(zz_unknown=1))
    assert _error(lambda: ours._make([])) == _error(lambda: theirs._make([]))
    assert _error(lambda: a._replace(zz_unknown=1)) == _error(lambda: b._replace(zz_unknown=1))
    if required:
        assert _error(ours) == _error(theirs)


def test_an_instance_pickles_and_unpickles_as_its_own_class() -> None:
    record = Pickled(7, "src/a.py")
    assert pickle.loads(pickle.dumps(record)) == record  # noqa: S301 -- bytes made just above
    assert type(pickle.loads(pickle.dumps(Pickled(1)))) is Pickled  # noqa: S301 -- the same


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        ({"__annotations__": {"a": "int", "b": "int"}, "a": 1}, TypeError, "cannot follow"),
        ({"__annotations__": {"_a": "int"}}, ValueError, "underscore"),
        ({"__annotations__": {"a": "int"}, "_replace": None}, AttributeError, "_replace"),
    ],
)
def test_what_typing_refuses_is_refused(
    body: dict[str, object], error: type[Exception], message: str
) -> None:
    for base in (NamedTuple, typing.NamedTuple):
        with pytest.raises(error, match=message):
            _build(base, "Bad", body)
