"""What a run streams: events of (namespace, stream mode, payload), shaped as LangGraph's by
engine/events.py; the namespace is () for the graph streamed, ("<node>:<task id>", ...) for a subgraph's."""

from __future__ import annotations

from typing import Any

Event = tuple[tuple[str, ...], str, Any]
