"""`langgraph._internal._runnable`: RunnableCallable (agent_runtime.engine.runnable) and what kind of
callable a node is (agent_runtime.engine.spec)."""

from agent_runtime.engine.runnable import RunnableCallable
from agent_runtime.engine.spec import is_async_callable, is_async_generator
from langgraph import _shim

__all__ = ["RunnableCallable", "is_async_callable", "is_async_generator"]
__getattr__ = _shim.module_getattr(__name__)
