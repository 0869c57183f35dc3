"""Stream modes fed by LangChain callbacks: `"messages"` (chat model tokens and the messages nodes
return, streaming/messages.py) and `"tools"` (tool call lifecycle, streaming/tools.py). Their handlers
are attached to a run's callbacks (agent_runtime/engine/callbacks.py) only when the mode is streamed."""

from agent_runtime.constants import TAG_HIDDEN, TAG_NOSTREAM

__all__ = ["TAG_HIDDEN", "TAG_NOSTREAM"]
