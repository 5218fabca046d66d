"""``typing.NamedTuple``, the class form, made without compiling source for each class.

A hook process is new on every tool call, and the modules it imports define about fifty
``NamedTuple`` classes. ``typing`` compiles Python source for each: ``collections.namedtuple``
``eval``-s a ``lambda`` for the class's ``__new__``, and, under ``from __future__ import
annotations``, every field's string annotation becomes a ``typing.ForwardRef``, which compiles it.
Together that was the largest single cost of importing the hook path (about a fifth of it).

This builds the same class as ``typing.NamedTuple`` (a ``tuple`` subclass with the same fields,
defaults, methods, ``repr``, pickling and ``match`` support; ``tests/core/test_namedtuple.py``
compares the two), with two differences that change no behaviour: ``__new__``'s code is made once
per number of fields and renamed for each class (``CodeType.replace``), and annotations stay as
written. Type checkers see ``typing.NamedTuple`` itself. Only the class form is provided.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__all__ = ["NamedTuple"]

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import NamedTuple
else:
    import collections
    from types import CodeType, FunctionType

    #: What a class body may not define (``typing``'s own list) and what it defines that is
    #: not copied onto the class.
    _PROHIBITED = frozenset(
        {
            "__new__",
            "__init__",
            "__slots__",
            "__getnewargs__",
            "_fields",
            "_field_defaults",
            "_make",
            "_replace",
            "_asdict",
            "_source",
        }
    )
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
    #: The C field accessor ``collections.namedtuple`` itself uses (not in the type stubs).
    _tuplegetter = vars(collections)["_tuplegetter"]
    _NEW_CODE: dict[int, CodeType] = {}

    def _new_code(arity: int) -> CodeType:
        """The code of ``namedtuple``'s ``__new__`` for ``arity`` fields, compiled once."""
        code = _NEW_CODE.get(arity)
        if code is None:
            args = "".join(f"_{i}, " for i in range(arity))
            # eval, as namedtuple itself does: a process's first compile() costs ~2.5 ms more.
            template = eval(f"lambda _cls, {args}: _tuple_new(_cls, ({args}))", {})  # noqa: S307 -- a constant built from an integer
            code = _NEW_CODE[arity] = template.__code__
        return code

    def _namespace(
        typename: str, fields: tuple[str, ...], defaults: tuple[object, ...], module: str
    ) -> dict[str, object]:
        """The namespace ``collections.namedtuple(typename, fields, defaults=defaults)`` gives
        its class, but for ``__new__``, built from :func:`_new_code` rather than ``eval``."""
        arg_list = ", ".join(fields) + ("," if len(fields) == 1 else "")
        num_fields = len(fields)
        repr_fmt = "(" + ", ".join(f"{name}=%r" for name in fields) + ")"
        tuple_new = tuple.__new__
        code = _new_code(num_fields).replace(
            co_varnames=("_cls", *fields), co_name="__new__", co_qualname=f"{typename}.__new__"
        )
        new = FunctionType(
            code,
            {"_tuple_new": tuple_new, "__builtins__": {}, "__name__": f"namedtuple_{typename}"},
            "__new__",
            defaults,
        )
        new.__doc__ = f"Create new instance of {typename}({arg_list})"

        def make(cls: type[tuple[Any, ...]], iterable: Iterable[object]) -> tuple[Any, ...]:
            result = tuple_new(cls, iterable)
            if len(result) != num_fields:
                raise TypeError(f"Expected {num_fields} arguments, got {len(result)}")
            return result

        def replace(self: tuple[Any, ...], /, **kwds: object) -> tuple[Any, ...]:
            result: tuple[Any, ...] = self._make(map(kwds.pop, fields, self))
            if kwds:
                raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
            return result

        def repr_(self: tuple[Any, ...]) -> str:
            return self.__class__.__name__ + repr_fmt % self

        def asdict(self: tuple[Any, ...]) -> dict[str, Any]:
            return dict(zip(fields, self, strict=True))

        def getnewargs(self: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(self)

        namespace: dict[str, object] = {
            "__doc__": f"{typename}({arg_list})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": dict(
                zip(fields[num_fields - len(defaults) :], defaults, strict=True)
            ),
            "__new__": new,
            "__match_args__": fields,
            "__module__": module,
        }
        # namedtuple's own method names and docstrings, which introspection shows.
        for name, method, doc in (
            ("_make", make, f"Make a new {typename} object from a sequence or iterable"),
            (
                "_replace",
                replace,
                f"Return a new {typename} object replacing specified fields with new values",
            ),
            ("__repr__", repr_, "Return a nicely formatted representation string"),
            ("_asdict", asdict, "Return a new dict which maps field names to their values."),
            (
                "__getnewargs__",
                getnewargs,
                "Return self as a plain tuple.  Used by copy and pickle.",
            ),
        ):
            method.__name__, method.__qualname__, method.__doc__ = name, f"{typename}.{name}", doc
            namespace[name] = classmethod(method) if name == "_make" else method
        for index, name in enumerate(fields):
            namespace[name] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
        return namespace

    class _NamedTupleMeta(type):
        def __new__(
            cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]
        ) -> type[tuple[Any, ...]]:
            if bases != (NamedTuple,):
                raise TypeError("a ledger NamedTuple inherits from NamedTuple alone")
            annotations = ns.get("__annotations__", {})
            fields = tuple(map(sys.intern, annotations))
            defaults = []
            for name in fields:
                if name.startswith("_"):
                    raise ValueError(f"Field names cannot start with an underscore: {name!r}")
                if name in ns:
                    defaults.append(ns[name])
                elif defaults:
                    raise TypeError(f"Non-default namedtuple field {name} cannot follow a default")
            typename = sys.intern(typename)
            namespace = _namespace(typename, fields, tuple(defaults), ns["__module__"])
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in fields:
                    namespace[key] = value
            result: type[tuple[Any, ...]] = type.__new__(type, typename, (tuple,), namespace)
            result.__annotations__ = result.__new__.__annotations__ = dict(annotations)
            return result

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {"__module__": __name__})
