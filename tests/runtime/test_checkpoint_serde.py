"""Checkpoint loading rebuilds data types only: a record written into the store by someone else (a shared
Redis, a copied SQLite file) cannot run code in the process that resumes the thread."""

from __future__ import annotations

import copyreg
import dataclasses
import datetime as dt
import enum
import os
import pickle
import sqlite3
import subprocess
import sys
import uuid
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple, TypedDict
from zoneinfo import ZoneInfo

import pydantic
import pytest
from langchain_core.messages import HumanMessage

import agent_runtime as ar
from agent_runtime.checkpoint import DisallowedType, allow_types
from agent_runtime.checkpoint.serde import dumps, loads
from tests.redis_target import redis_client, redis_url


class Shell:
    """A record that runs a command when plain pickle loads it."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (self.command,)


class Popen:
    def __reduce__(self) -> tuple[Any, tuple[list[str]]]:
        return subprocess.Popen, (["true"],)


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int


class Pair(NamedTuple):
    left: str
    right: str


class Profile(pydantic.BaseModel):
    name: str
    tags: list[str]


class Plain:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plain) and other.value == self.value


class RegisteredPlain(Plain):
    pass


DATA: dict[str, Any] = {
    "set": {1, 2},
    "frozenset": frozenset({"a"}),
    "complex": 1 + 2j,
    "bytes": b"\x00\x01",
    "bytearray": bytearray(b"xy"),
    "datetime": dt.datetime(2026, 11, 25, 23, 0, tzinfo=dt.UTC),
    "date": dt.date(2026, 1, 1),
    "zoned datetime": dt.datetime(2026, 3, 29, 2, 30, tzinfo=ZoneInfo("Europe/Paris")),
    "delta": dt.timedelta(seconds=5),
    "decimal": Decimal("1.10"),
    "uuid": uuid.UUID(int=7),
    "deque": deque([1, 2]),
    "ordered": OrderedDict(a=1),
    "counter": Counter("aab"),
    "defaultdict": defaultdict(list, {"k": [1]}),
    "a type": int,
    "path": Path("/tmp/x"),
    "enum": Colour.RED,
    "dataclass": Point(1, 2),
    "namedtuple": Pair("a", "b"),
    "pydantic": Profile(name="n", tags=["t"]),
    "exception": ValueError("boom"),
    "runtime types": [ar.Send("node", {"k": 1}), ar.Interrupt("question", "id-1")],
    "message": HumanMessage(content="hi", id="m-1"),
}


@pytest.mark.parametrize("name", sorted(DATA))
def test_data_values_round_trip(name: str) -> None:
    value = DATA[name]
    loaded = loads(dumps(value))
    if isinstance(value, BaseException):
        assert type(loaded) is type(value) and loaded.args == value.args
    else:
        assert loaded == value and type(loaded) is type(value)


@pytest.mark.parametrize(
    "payload",
    [Shell("true"), Popen(), eval, getattr, print, os.system],
    ids=["os.system call", "Popen", "eval", "getattr", "print", "a function as a value"],
)
def test_code_is_not_loaded(payload: Any) -> None:
    with pytest.raises(DisallowedType):
        loads(pickle.dumps(payload, protocol=5))


def test_names_are_looked_up_not_imported() -> None:
    # A module nobody imported is not imported by a load, and dunder attributes are not walked.
    record = b"cantigravity\ngeohash\n."  # GLOBAL antigravity.geohash
    with pytest.raises(DisallowedType):
        loads(record)
    assert "antigravity" not in __import__("sys").modules
    dunder = b"cbuiltins\nobject.__subclasses__\n."
    with pytest.raises(DisallowedType):
        loads(dunder)


def test_plain_classes_need_registering() -> None:
    with pytest.raises(DisallowedType, match="allow_types"):
        loads(dumps(Plain(1)))
    allow_types(RegisteredPlain)
    assert loads(dumps(RegisteredPlain(2))) == RegisteredPlain(2)
    with pytest.raises(TypeError):
        allow_types(print)  # type: ignore[arg-type]


class State(TypedDict, total=False):
    value: Any


@pytest.fixture(params=["sqlite", "redis"])
def poisoned_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ar.BaseCheckpointer, Any]]:
    """A checkpointer plus a function that overwrites every record it stored with ``payload``."""
    if request.param == "sqlite":
        path = tmp_path / "cp.db"
        saver: ar.BaseCheckpointer = ar.SqliteCheckpointer(str(path))

        def poison_sqlite(payload: bytes) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute("UPDATE checkpoints SET body = ?, metadata = ?", (payload, payload))
                conn.execute("UPDATE blobs SET value = ? WHERE value IS NOT NULL", (payload,))

        yield saver, poison_sqlite
        saver.close()  # type: ignore[attr-defined]
        return
    client = redis_client(redis_url(0))
    prefix = f"test-serde-{uuid.uuid4().hex}"

    def poison_redis(payload: bytes) -> None:
        for key in client.scan_iter(match=f"{prefix}:*"):
            if client.type(key) == b"hash":
                fields = [f for f, v in client.hgetall(key).items() if v]
                client.hset(key, mapping=dict.fromkeys(fields, payload))
            elif client.type(key) == b"string":
                client.set(key, payload)

    yield ar.RedisCheckpointer(client, prefix=prefix), poison_redis
    keys = list(client.scan_iter(match=f"{prefix}:*"))
    if keys:
        client.delete(*keys)


def test_a_poisoned_store_cannot_run_code_on_resume(
    poisoned_store: tuple[ar.BaseCheckpointer, Any], tmp_path: Path
) -> None:
    saver, poison = poisoned_store
    graph = ar.StateGraph(State)
    graph.add_node("step", lambda s: {"value": DATA["pydantic"]})
    graph.add_edge(ar.START, "step")
    compiled = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t-1"}}
    compiled.invoke({"value": 0}, config)
    assert compiled.get_state(config).values["value"] == DATA["pydantic"]

    marker = tmp_path / "pwned"
    poison(pickle.dumps(Shell(f"touch {marker}"), protocol=5))
    with pytest.raises(DisallowedType):
        compiled.get_state(config)
    with pytest.raises(DisallowedType):
        compiled.invoke(None, config)
    assert not marker.exists()


def test_lookups_do_not_run_module_getattr(monkeypatch: pytest.MonkeyPatch) -> None:
    # A module's __getattr__ (lazy submodule imports in many libraries) is code: a load must not call it.
    import types

    called: list[str] = []
    lazy = types.ModuleType("lazy_module_for_serde_test")
    lazy.__getattr__ = lambda name: called.append(name) or Point  # type: ignore[method-assign]
    monkeypatch.setitem(__import__("sys").modules, lazy.__name__, lazy)
    with pytest.raises(DisallowedType):
        loads(b"clazy_module_for_serde_test\nPoint\n.")
    assert called == []


FORGED_SETTINGS = """
import pickle
import pydantic_settings
from agent_runtime.checkpoint import DisallowedType
from agent_runtime.checkpoint.serde import loads

class Forged:  # BaseSettings(_cli_parse_args=["--help"]): argparse prints its help and exits the process
    def __reduce__(self):
        return pydantic_settings.BaseSettings, (None,) * 13 + (["--help"],)

try:
    loads(pickle.dumps(Forged(), protocol=5))
except DisallowedType:
    print("refused")
"""


def test_settings_classes_are_not_loaded() -> None:
    # In a process of its own: before the fix, the load itself exited the process.
    done = subprocess.run([sys.executable, "-c", FORGED_SETTINGS], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "refused", done.stdout + done.stderr


class Audited(pydantic.BaseModel):
    """A model whose validation has a side effect (as a settings source or a validator may), built from
    positional arguments as some are (langchain's messages)."""

    path: str

    def __init__(self, path: str) -> None:
        super().__init__(path=path)

    @pydantic.model_validator(mode="after")
    def touch(self) -> Audited:
        Path(self.path).touch()
        return self


@dataclasses.dataclass
class Hooked:
    path: str

    def __post_init__(self) -> None:
        Path(self.path).touch()


class CallsClass:
    def __init__(self, cls: type, path: str) -> None:
        self.cls, self.path = cls, path

    def __reduce__(self) -> tuple[Any, ...]:
        return self.cls, (self.path,)


class Reconstructed:
    """A protocol 0-1 style record: copyreg._reconstructor(cls, base, state) calls base.__init__(obj, state)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return copyreg._reconstructor, (Hooked, Hooked, self.path)  # type: ignore[attr-defined]


@pytest.mark.parametrize("record", ["dataclass called", "pydantic model called", "reconstructor base"])
def test_data_classes_are_rebuilt_not_called(record: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload: Any = {
        "dataclass called": CallsClass(Hooked, str(marker)),
        "pydantic model called": CallsClass(Audited, str(marker)),
        "reconstructor base": Reconstructed(str(marker)),
    }[record]
    with pytest.raises(DisallowedType):
        loads(pickle.dumps(payload, protocol=5))
    assert not marker.exists()
    # Rebuilt from their fields, they still load, without running their hooks.
    assert loads(dumps(Hooked.__new__(Hooked))).__class__ is Hooked
    assert loads(dumps(Audited.model_construct(path=str(marker)))) == Audited.model_construct(path=str(marker))
    assert not marker.exists()
