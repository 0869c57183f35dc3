"""`langgraph.warnings` -> agent_runtime.core.deprecation (LangGraph's deprecation warning categories)."""

from agent_runtime.core.deprecation import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    LangGraphDeprecatedSinceV11,
    LangGraphDeprecationWarning,
)
from langgraph import _shim

__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
]
__getattr__ = _shim.module_getattr(__name__)
