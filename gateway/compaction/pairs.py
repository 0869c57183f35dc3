"""Where a history may be cut without separating a tool call from its result.

A cut at index i drops messages[start:i] and keeps messages[i:]. It is safe when every tool call made
before i is answered before i, and messages[i] carries no tool result. The summary (a user message)
then precedes the kept part; when that starts with a user message too, OpenAI and Gemini accept
consecutive user messages and Anthropic merges them. A call left unanswered (a dangling call) closes
every later cut: nothing after it is ever summarized. Responses call items may follow one another
before their outputs (parallel calls), and a reasoning item stays with the item after it.
"""

from __future__ import annotations

from gateway.compaction.layout import Layout, Message
from gateway.pacing import CHUNK, Steps, finish


def safe_cuts(layout: Layout, messages: list[Message], start: int) -> list[int]:
    """Indices in (start, len(messages)) where the history may be cut, ascending."""
    return finish(safe_cut_steps(layout, messages, start))


def safe_cut_steps(layout: Layout, messages: list[Message], start: int) -> Steps[list[int]]:
    """`safe_cuts` as steps (pausing every CHUNK messages): see compaction/pacing.py."""
    open_calls: set[str] = set()
    dangling = bound = False
    cuts: list[int] = []
    for index, message in enumerate(messages):
        if index % CHUNK == CHUNK - 1:
            yield
        answered = {r.call_id for r in layout.results(message)}
        if open_calls and not answered and not layout.continues_calls(message):
            dangling = True  # a call never answered: unsafe to cut anywhere after it
        open_calls -= answered
        is_boundary = not open_calls and not dangling and not answered and not bound
        if is_boundary and index > start:
            cuts.append(index)
        open_calls |= {call_id for call_id, _ in layout.calls(message)}
        bound = layout.binds_to_next(message)
    return cuts
