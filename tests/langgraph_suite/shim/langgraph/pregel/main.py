"""`langgraph.pregel.main`: the v3 stream's transformer normalization (agent_runtime.stream.graph_api)."""

from agent_runtime.stream.graph_api import (
    normalize_stream_transformer_factories as _normalize_stream_transformer_factories,
)
from langgraph import _shim

__all__ = ["_normalize_stream_transformer_factories"]
__getattr__ = _shim.module_getattr(__name__)
