"""`langgraph.config` -> agent_runtime.config."""

from agent_runtime.config import get_config, get_store, get_stream_writer
from langgraph import _shim

__all__ = ["get_config", "get_store", "get_stream_writer"]
__getattr__ = _shim.module_getattr(__name__)
