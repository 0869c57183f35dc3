"""Irreversible summarization of the oldest span, written through the gateway's own upstream path.

The request reuses the session's system prompt, tools and (compacted) history exactly as last sent,
with tool use disabled, so that it reads the provider's warm prefix cache when the summarizer is the
session's own model. A cheaper `summarizer_model` trades that cache read for a lower price.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from gateway.compaction.layout import Layout, Message
from gateway.compaction.reference import preview
from gateway.compaction.tokens import TokenCounter
from gateway.config import ModelConfig
from gateway.pacing import CHUNK, Steps, finish
from gateway.upstream.router import Router
from gateway.usage import Cost, Price, Usage, route_price
from gateway.wire import WIRES

INSTRUCTION = """Summarize the conversation so far. Your summary will replace the messages above, so it \
must let you continue the task without them. Do not call any tool. Be terse and specific; use exactly \
these sections:
## Goal
## Decisions
## Current state
## Open items
## Files and identifiers
## Next step"""

# Request fields that would change what the summary request returns or how.
DROPPED = frozenset(
    {
        "stream",
        "stream_options",
        "n",
        "response_format",
        "tool_choice",
        "parallel_tool_calls",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "stop_sequences",
        "prediction",
        "logprobs",
        "top_logprobs",
        "audio",
        "modalities",
        "text",  # Responses: the output format (structured outputs)
        "max_output_tokens",
        "background",
    }
)


class SummaryFailed(Exception):
    """The summarizer errored, timed out or answered with no text."""


@dataclass(frozen=True, slots=True)
class Written:
    """A summary and what writing it cost (charged to the caller's tenant and session by the stage)."""

    text: str
    route: ModelConfig  # the route that answered (a fallback, if the summarizer's own failed)
    usage: Usage
    price: Price
    cost: Cost

    @property
    def cost_usd(self) -> float:
        return self.cost.usd


def fit(prefix: list[Message], counter: TokenCounter, budget: int, preview_chars: int) -> list[Message]:
    """The prefix, with its largest plain-text messages cut to a head and tail until it fits the
    summarizer's window. Normally a no-op: only a history holding a message near the window's size
    (which compaction may not touch) needs it, and then this one request misses the warm cache."""
    return finish(fit_steps(prefix, counter, budget, preview_chars))


def fit_steps(
    prefix: list[Message], counter: TokenCounter, budget: int, preview_chars: int, counts: list[int] | None = None
) -> Steps[list[Message]]:
    """`fit` as steps (see compaction/pacing.py); `counts` are the prefix's message tokens, if known."""
    if counts is None:
        counts = yield from counter.each_message(prefix)
    total = sum(counts)
    fitted = list(prefix)
    if total <= budget:
        return fitted
    # Only a plain-text message longer than two previews gets shorter: the others are not even sorted.
    shrinkable: list[int] = []
    for first in range(0, len(fitted), CHUNK):
        for index in range(first, min(first + CHUNK, len(fitted))):
            content = fitted[index].get("content")
            if isinstance(content, str) and len(content) > 2 * preview_chars:
                shrinkable.append(index)
        yield
    for done, index in enumerate(sorted(shrinkable, key=lambda i: -counts[i])):
        if total <= budget:
            break
        shorter = {**fitted[index], "content": preview(fitted[index]["content"], preview_chars)}
        total -= counts[index] - counter.message(shorter)
        fitted[index] = shorter
        if done % CHUNK == CHUNK - 1:
            yield
    return fitted


def summary_request(layout: Layout, body: dict[str, Any], prefix: list[Message], max_tokens: int) -> dict[str, Any]:
    request = {key: value for key, value in body.items() if key not in DROPPED}
    request = layout.with_messages(request, [*prefix, layout.user_message(INSTRUCTION)])
    if body.get("tools"):
        request.update(layout.no_tool_use())
    layout.limit_output(request, body, max_tokens)
    return request


async def write_summary(
    router: Router, layout: Layout, route: ModelConfig, request: dict[str, Any], timeout_s: float
) -> Written:
    try:
        result = await asyncio.wait_for(router.call(layout.name, route, request, {}, stream=False), timeout_s)
    except TimeoutError as exc:
        raise SummaryFailed("timeout") from exc
    except Exception as exc:  # any upstream failure: the caller forwards compacted-only
        raise SummaryFailed(type(exc).__name__) from exc
    reply = result.body or {}
    text = layout.reply_text(reply).strip()
    if not text:
        raise SummaryFailed("empty")
    usage = WIRES[layout.name].usage(reply)
    price = route_price(result.route)
    return Written(text, result.route, usage, price, Cost.of(usage, price))
