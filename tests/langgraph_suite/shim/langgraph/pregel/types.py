"""`langgraph.pregel.types` -> agent_runtime.types (deprecated path: importing it warns, as LangGraph)."""

import warnings

from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.types import PregelTask, StateSnapshot
from langgraph import _shim

warnings.warn(
    "Importing from langgraph.pregel.types is deprecated. Please use 'from langgraph.types import ...' instead.",
    LangGraphDeprecatedSinceV10,
    stacklevel=2,
)

__all__ = ["PregelTask", "StateSnapshot"]
__getattr__ = _shim.module_getattr(__name__)
