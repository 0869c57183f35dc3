"""Ready-made graphs."""

from agent_runtime.prebuilt.react import create_react_agent, tool_schema

__all__ = ["create_react_agent", "tool_schema"]
