"""Memory-only fixtures for LangGraph's tests (replaces LangGraph's conftest.py, conftest_checkpointer.py
and conftest_store.py, which also parametrize over sqlite, postgres and redis).

Parameter ids are LangGraph's ("memory", "in_memory"), so a test has the same id on both targets.
LANGGRAPH_SUITE_TARGET (set by tests/langgraph_suite/run_suite.py) picks what "memory" is:
  langgraph      LangGraph's MemorySaverAssertImmutable (tests/memory_assert.py), as upstream
  agent_runtime  agent_runtime.InMemoryCheckpointer (through the shim's langgraph.checkpoint.memory)
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

TARGET = os.environ.get("LANGGRAPH_SUITE_TARGET", "langgraph")
NO_DOCKER = True  # LangGraph's flag: no postgres / redis services

# pytest-mock is not in our test extra, syrupy is (a venv may predate it): minimal stand-ins (stubs/), used only when absent.
_STUBS = Path(__file__).resolve().parents[2] / "stubs"
if str(_STUBS) not in sys.path:
    sys.path.append(str(_STUBS))

if TARGET == "agent_runtime":
    import langgraph

    assert getattr(langgraph, "_shim", None) is not None, "the langgraph shim is not first on sys.path"

from langgraph.cache.base import BaseCache  # noqa: E402
from langgraph.cache.memory import InMemoryCache  # noqa: E402
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: E402
from langgraph.store.base import BaseStore  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from langgraph.types import Durability  # noqa: E402

if TARGET == "langgraph":
    pytest.register_assert_rewrite("tests.memory_assert")


def _memory_checkpointer() -> Any:
    if TARGET == "langgraph":
        from tests.memory_assert import MemorySaverAssertImmutable

        return MemorySaverAssertImmutable()
    from langgraph.checkpoint.memory import InMemorySaver  # agent_runtime's, through the shim

    return InMemorySaver()


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture()
def deterministic_uuids(mocker):
    side_effect = (
        UUID(f"00000000-0000-4000-8000-{i:012}", version=4) for i in range(10000)
    )
    return mocker.patch("uuid.uuid4", side_effect=side_effect)


@pytest.fixture(params=["sync", "async", "exit"])
def durability(request: pytest.FixtureRequest) -> Durability:
    return request.param


@pytest.fixture(scope="function", params=["memory"])
def cache(request: pytest.FixtureRequest) -> Iterator[BaseCache]:
    yield InMemoryCache()


@pytest.fixture(scope="function", params=["in_memory"])
def sync_store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    yield InMemoryStore()


@pytest.fixture(scope="function", params=["in_memory"])
async def async_store(request: pytest.FixtureRequest) -> AsyncIterator[BaseStore]:
    yield InMemoryStore()


@pytest.fixture(scope="function", params=["memory"])
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver]:
    yield _memory_checkpointer()


@pytest.fixture(scope="function", params=["memory"])
async def async_checkpointer(
    request: pytest.FixtureRequest,
) -> AsyncIterator[BaseCheckpointSaver]:
    yield _memory_checkpointer()


try:
    import pytest_mock  # noqa: F401

    _HAS_PYTEST_MOCK = hasattr(pytest_mock, "MockerFixture") and not getattr(pytest_mock, "_STUB", False)
except ImportError:
    _HAS_PYTEST_MOCK = False

if not _HAS_PYTEST_MOCK:

    @pytest.fixture
    def mocker():
        from pytest_mock import MockerFixture  # the stub

        fixture = MockerFixture()
        yield fixture
        fixture.stopall()


try:
    import syrupy  # noqa: F401

    _HAS_SYRUPY = not getattr(syrupy, "_STUB", False)
except ImportError:
    _HAS_SYRUPY = False

if not _HAS_SYRUPY:

    @pytest.fixture
    def snapshot():
        pytest.skip("snapshot test: syrupy is not installed (pip install -e .[test])")


# A test that hangs (e.g. waiting for an event agent_runtime never sets) fails alone after
# LANGGRAPH_SUITE_TEST_TIMEOUT seconds instead of stalling its whole file (pytest-timeout is not installed).
_TEST_TIMEOUT = int(os.environ.get("LANGGRAPH_SUITE_TEST_TIMEOUT", "60"))


class SuiteTestTimeout(Exception):
    pass


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    import signal
    import threading

    if _TEST_TIMEOUT <= 0 or threading.current_thread() is not threading.main_thread():
        return (yield)

    def on_alarm(signum: int, frame: Any) -> None:
        raise SuiteTestTimeout(f"test ran longer than {_TEST_TIMEOUT} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(_TEST_TIMEOUT)
    try:
        return (yield)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
