"""Stream modes fed by LangChain callbacks: `"messages"` (chat model tokens and the messages nodes
return, streaming/messages.py) and `"tools"` (tool call lifecycle, streaming/tools.py). Their handlers
are attached to a run's callbacks (agent_runtime/engine/callbacks.py) only when the mode is streamed."""

import sys

TAG_NOSTREAM = sys.intern("nostream")  # a chat model or tool tagged with it is not streamed
TAG_HIDDEN = sys.intern("langsmith:hidden")  # a run tagged with it is not a node's output

__all__ = ["TAG_HIDDEN", "TAG_NOSTREAM"]
