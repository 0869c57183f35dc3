"""The loop guard's parts of each message (agent_runtime/guard/parts.py), kept with its other facts.

Parsing a history into steps costs mostly per message: canonical arguments, results masked and hashed,
the error heuristic. Those depend on the message's content alone, so they are taken once per content
(and message format) and shared by every request, session and replica path that meets the message
again: a session's parser that starts over, a session-less request that parses its tail each time,
a client's retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_runtime.guard import MessageParts, message_parts
from agent_runtime.guard.parser import PartsOf
from gateway.history.view import HistoryView


def parts_of(view: HistoryView, format: str) -> PartsOf:
    """A lookup of each message's parts in ``format`` through the request's history view."""

    def parts(message: Mapping[str, Any]) -> MessageParts:
        facts = view.facts(message)
        if facts.guard is None or facts.guard[0] != format:
            facts.guard = (format, message_parts(format, message))
        return facts.guard[1]

    return parts
