"""`langgraph.graph.message`: the messages state and its reducer (agent_runtime.messages; needs langchain-core)."""

from agent_runtime.messages import REMOVE_ALL_MESSAGES, MessageGraph, MessagesState, add_messages

__all__ = ["REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages"]
