"""The semantic tier's optional judge: a call to a configured (cheap) model asking whether one answer fits
two requests. Off by default; it widens what the tier may serve below the cosine threshold (paraphrases
that a small embedder scores 0.90-0.98), and its cost is charged to the request that asked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from gateway.config import ModelConfig
from gateway.upstream.router import Router
from gateway.usage import Cost, Price, Usage, route_price
from gateway.wire import WIRES

WIRE = "openai"  # the router speaks every provider from the Chat Completions shape
INSTRUCTION = """Two requests to an assistant follow. Answer YES if one and the same answer would be \
correct and complete for both (same question, same constraints, same numbers, names and negations), \
otherwise NO. Reply with YES or NO only."""


@dataclass(frozen=True, slots=True)
class Judged:
    same: bool
    route: ModelConfig  # the route that answered (a fallback, if the judge's own failed)
    usage: Usage
    price: Price
    cost: Cost


def judge_request(route: ModelConfig, cached: str, asked: str) -> dict[str, object]:
    # The request being answered comes last: it is the one the judge must not misread.
    text = f"{INSTRUCTION}\n\nRequest A:\n{cached}\n\nRequest B:\n{asked}"
    return {"model": route.name, "messages": [{"role": "user", "content": text}], "max_tokens": 3, "temperature": 0}


async def judge_pair(router: Router, route: ModelConfig, cached: str, asked: str, timeout_s: float) -> Judged:
    """Raises on any failure (upstream error, timeout): the caller treats it as a refusal."""
    request = judge_request(route, cached, asked)
    result = await asyncio.wait_for(router.call(WIRE, route, request, {}, stream=False), timeout_s)
    reply = result.body or {}
    usage = WIRES[WIRE].usage(reply)
    price = route_price(result.route)
    same = WIRES[WIRE].reply_text(reply).strip().lower().startswith("yes")
    return Judged(same, result.route, usage, price, Cost.of(usage, price))
