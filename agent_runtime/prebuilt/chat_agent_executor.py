"""`langgraph.prebuilt.chat_agent_executor`: the ReAct agent (agent_runtime.prebuilt.react)."""

from agent_runtime.prebuilt.react import AgentState, create_react_agent

__all__ = ["AgentState", "create_react_agent"]
