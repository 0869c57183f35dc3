"""Serialization for persistent checkpointers: pickle, so state values round-trip (pydantic models,
dataclasses, messages, sets, datetimes), read back by an unpickler that rebuilds only data types.

Plain ``pickle.loads`` calls whatever a stored record names: one write to the checkpoint store (a shared
Redis, a copied SQLite file) would run code in every process that resumes the thread. Loading here looks
up a name only when it is

- a value type of the standard library (``set``, ``datetime``, ``Decimal``, ``UUID``, ``deque``, ...);
- a class, already imported, whose instances are data: a pydantic model, a dataclass, an ``Enum``, a
  ``NamedTuple`` or an exception (failed tasks' writes; this runtime's own types are all of these);
- a class registered with :func:`allow_types` (a plain class kept in a graph's state).

Anything else (functions, ``os.system``, ``subprocess.Popen``, a module not yet imported, pydantic-settings'
``BaseSettings``, which reads the environment, files and argv when built) fails the load with
:class:`DisallowedType`. A pydantic model or a dataclass is rebuilt from its fields (``__new__`` and its
state), never called: a record that calls one (running validators or ``__post_init__``) fails the load too.
LangGraph's msgpack serializer keeps a similar allowlist.
"""

from __future__ import annotations

import copyreg
import dataclasses
import enum
import io
import pickle
import sys
import zoneinfo
from collections.abc import Callable
from typing import Any, ClassVar

PROTOCOL = 5

_STDLIB_VALUES = {
    # The plain types too: they come as values of their own (a defaultdict's factory, a type in a state).
    "builtins": {"set", "frozenset", "complex", "bytearray", "range", "slice"}
    | {"list", "dict", "tuple", "int", "float", "str", "bytes", "bool"},
    "collections": {"OrderedDict", "deque", "defaultdict", "Counter"},
    "datetime": {"date", "time", "datetime", "timedelta", "timezone"},
    "decimal": {"Decimal"},
    "fractions": {"Fraction"},
    "uuid": {"UUID", "SafeUUID"},
    "pathlib": {"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath"},
    "ipaddress": {"IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network"},
    "zoneinfo": {"ZoneInfo"},  # written as ZoneInfo(key) by the pickler below
    "copyreg": {"_reconstructor"},  # protocols 0-1 rebuild objects through it; its arguments are checked too
}
_registered: set[type] = set()


class DisallowedType(pickle.UnpicklingError):
    """A checkpoint record names something that is not a data type: it is not loaded."""


def allow_types(*types: type) -> None:
    """Let checkpoints hold instances of these classes (plain classes in a graph's state)."""
    for cls in types:
        if not isinstance(cls, type):
            raise TypeError(f"allow_types takes classes, not {type(cls).__name__}")
        _registered.add(cls)


def is_data_type(cls: type) -> bool:
    """Whether building an instance of ``cls`` from stored fields runs no code but its own."""
    settings = sys.modules.get("pydantic_settings")
    if settings is not None and issubclass(cls, settings.BaseSettings):
        return False  # built from the environment, files and argv (--help exits the process), not from fields
    if cls in _registered or dataclasses.is_dataclass(cls) or issubclass(cls, (enum.Enum, BaseException)):
        return True
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # NamedTuple
        return True
    return _is_pydantic_model(cls)


def _is_pydantic_model(cls: type) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and issubclass(cls, pydantic.BaseModel)


def _rebuilt_only(cls: object) -> bool:
    """Classes a record may rebuild (``__new__``, then its state) but not call: calling one runs its
    validators, ``__init__`` or ``__post_init__``, which pickling them never needs."""
    return (
        isinstance(cls, type)
        and cls not in _registered
        and (dataclasses.is_dataclass(cls) or _is_pydantic_model(cls))
        and not issubclass(cls, (enum.Enum, BaseException))
    )


def _check_call(func: Any, args: tuple[Any, ...]) -> None:
    # copyreg._reconstructor(cls, base, state) calls base.__new__ and base.__init__.
    called = args[1] if func is copyreg._reconstructor and len(args) == 3 else func  # type: ignore[attr-defined]
    if _rebuilt_only(called):
        raise DisallowedType(f"a checkpoint calls {called.__qualname__[:80]!r}; a data type is rebuilt, not called")


class _Unpickler(pickle._Unpickler):
    """pickle's Python unpickler: the C one cannot check what a record calls (loads are several times
    slower)."""

    dispatch: ClassVar[dict[int, Callable[[Any], None]]] = dict(pickle._Unpickler.dispatch)
    stack: list[Any]

    def load_reduce(self) -> None:
        args = self.stack.pop()
        _check_call(self.stack[-1], args)
        self.stack[-1] = self.stack[-1](*args)

    dispatch[pickle.REDUCE[0]] = load_reduce

    def find_class(self, module: str, name: str) -> Any:
        if name in _STDLIB_VALUES.get(module, ()):
            return super().find_class(module, name)
        # Only modules the process already imported: loading a record never imports anything.
        found = _lookup(sys.modules.get(module), name)
        if isinstance(found, type) and is_data_type(found):
            return found
        shown = f"{module[:80]}.{name[:80]}"
        raise DisallowedType(
            f"a checkpoint holds {shown!r}, which is not a data type the checkpointer loads; "
            "register a plain class with agent_runtime.checkpoint.allow_types"
        )


def _lookup(holder: object, dotted: str) -> object:
    # Namespaces are read, not asked: getattr would run a module's __getattr__ (lazy imports) or properties.
    for part in dotted.split("."):
        if holder is None or part.startswith("__") or not hasattr(holder, "__dict__"):
            return None
        holder = vars(holder).get(part)
    return holder


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # ZoneInfo pickles itself through getattr(ZoneInfo, "_unpickle"), which loading refuses.
        if isinstance(obj, zoneinfo.ZoneInfo) and obj.key:
            return zoneinfo.ZoneInfo, (obj.key,)
        return NotImplemented


def dumps(value: Any) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=PROTOCOL).dump(value)
    return out.getvalue()


def loads(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()
