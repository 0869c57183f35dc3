"""`langgraph._internal`: LangGraph's private modules; only constants with an agent_runtime value are mapped."""

from langgraph import _shim

__getattr__ = _shim.module_getattr(__name__)
