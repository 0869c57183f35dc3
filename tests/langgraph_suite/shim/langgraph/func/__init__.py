"""`langgraph.func` -> agent_runtime.func (task / entrypoint), when agent_runtime has it."""

import contextlib

from langgraph import _shim

with contextlib.suppress(ImportError):  # agent_runtime.func not there (yet): the names are Missing stubs
    from agent_runtime.func import entrypoint, task  # type: ignore[import-not-found,unused-ignore]

    __all__ = ["entrypoint", "task"]

__getattr__ = _shim.module_getattr(__name__)
