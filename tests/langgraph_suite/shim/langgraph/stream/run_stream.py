"""`langgraph.stream.run_stream` -> agent_runtime.stream.run_stream."""

from agent_runtime.stream.run_stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from langgraph import _shim

__all__ = ["AsyncGraphRunStream", "AsyncSubgraphRunStream", "GraphRunStream", "SubgraphRunStream"]
__getattr__ = _shim.module_getattr(__name__)
