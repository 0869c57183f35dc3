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
from gateway.compaction.replies import reply_text
from gateway.compaction.tokens import TokenCounter
from gateway.config import ModelConfig
from gateway.upstream.router import Router
from gateway.usage import Cost, price_for
from gateway.wire import ANTHROPIC, OPENAI

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
    }
)


class SummaryFailed(Exception):
    """The summarizer errored, timed out or answered with no text."""


@dataclass(frozen=True, slots=True)
class Written:
    text: str
    cost_usd: float


def fit(prefix: list[Message], counter: TokenCounter, budget: int, preview_chars: int) -> list[Message]:
    """The prefix, with its largest plain-text messages cut to a head and tail until it fits the
    summarizer's window. Normally a no-op: only a history holding a message near the window's size
    (which compaction may not touch) needs it, and then this one request misses the warm cache."""
    total = counter.messages(prefix)
    fitted = list(prefix)
    for index in sorted(range(len(fitted)), key=lambda i: -counter.message(fitted[i])):
        content = fitted[index].get("content")
        if total <= budget:
            break
        if isinstance(content, str):
            shorter = {**fitted[index], "content": preview(content, preview_chars)}
            total -= counter.message(fitted[index]) - counter.message(shorter)
            fitted[index] = shorter
    return fitted


def summary_request(layout: Layout, body: dict[str, Any], prefix: list[Message], max_tokens: int) -> dict[str, Any]:
    request = {key: value for key, value in body.items() if key not in DROPPED}
    request["messages"] = [*prefix, layout.user_message(INSTRUCTION)]
    if body.get("tools"):
        request["tool_choice"] = layout.no_tool_use()
    thinking = body.get("thinking")
    budget = thinking.get("budget_tokens", 0) if isinstance(thinking, dict) else 0
    token_field = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    request[token_field] = max_tokens + int(budget or 0)
    return request


async def write_summary(
    router: Router, wire: str, route: ModelConfig, request: dict[str, Any], timeout_s: float
) -> Written:
    try:
        result = await asyncio.wait_for(router.call(wire, route, request, {}, stream=False), timeout_s)
    except TimeoutError as exc:
        raise SummaryFailed("timeout") from exc
    except Exception as exc:  # any upstream failure: the caller forwards compacted-only
        raise SummaryFailed(type(exc).__name__) from exc
    reply = result.body or {}
    text = reply_text(wire, reply).strip()
    if not text:
        raise SummaryFailed("empty")
    usage = (OPENAI if wire == "openai" else ANTHROPIC).usage(reply)
    cost = Cost.of(usage, price_for(result.route.pricing_model or result.route.litellm_model))
    return Written(text, cost.usd)
