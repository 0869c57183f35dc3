"""`langgraph._internal._runnable`: RunnableCallable (agent_runtime.runnable, langchain-core loaded
on first use) and what kind of callable a node is (agent_runtime.engine.spec)."""

from typing import Any

from agent_runtime.engine.spec import is_async_callable, is_async_generator
from langgraph import _shim

__all__ = ["RunnableCallable", "is_async_callable", "is_async_generator"]


def __getattr__(name: str) -> Any:
    if name == "RunnableCallable":
        from agent_runtime.runnable import RunnableCallable

        return RunnableCallable
    return _shim.module_getattr(__name__)(name)
