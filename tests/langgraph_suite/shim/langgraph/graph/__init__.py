"""`langgraph.graph` -> agent_runtime."""

from agent_runtime import END, START, StateGraph
from langgraph import _shim


def __getattr__(name: str) -> object:
    if name in ("MessagesState", "add_messages"):  # langchain-core, loaded on first use (as agent_runtime does)
        from agent_runtime.graph import message

        return getattr(message, name)
    return _shim.module_getattr(__name__)(name)


__all__ = ["END", "START", "MessagesState", "StateGraph", "add_messages"]
