"""What every OpenAI-shaped simulator endpoint (Chat Completions, Responses) does around its own answer:
read and check the request, plan its prompt cache by OpenAI's rules, pick a fault and a reply, then count
and time the answer. Each endpoint brings only its shape: how to check a body, its turns, how its prompt
renders for the cache, which tool its tool_choice forces and where it asks for JSON output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.requests import Request

from gateway.sim.conversation import Turn
from gateway.sim.exchange import Conversation, Timing, choose_fault, read_request
from gateway.sim.json_mode import JsonSchema
from gateway.sim.openai_cache import OpenAICachePlan
from gateway.sim.responses import Reply, limit_reply, output_tokens
from gateway.sim.settings import FaultKind
from gateway.sim.state import SimState
from gateway.sim.tokens import encode, openai_encoding

REJECTED_KEY = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."


@dataclass(frozen=True)
class OpenAIShape:
    check: Callable[[dict[str, Any]], None]
    turns: Callable[[dict[str, Any]], list[list[Turn]]]
    render: Callable[[dict[str, Any]], str]
    forced_tool: Callable[[dict[str, Any]], str | None]
    json_schema: Callable[[dict[str, Any]], JsonSchema | None]  # the JSON output the request asks for


@dataclass(frozen=True)
class Exchange:
    body: dict[str, Any]
    model: str
    reply: Reply
    fault: FaultKind | None
    encoding: str
    namespace: tuple[str, str]
    plan: OpenAICachePlan
    headers: dict[str, str]  # the rate limits left (none when the simulator sets no limit)


@dataclass(frozen=True)
class Answer:
    reply: Reply
    produced: int
    timing: Timing
    on_start: Callable[[], None]


async def begin(request: Request, state: SimState, shape: OpenAIShape) -> Exchange:
    """Raises SimError for a request the provider refuses."""
    settings = state.settings
    key, body = await read_request(request, state, "openai", REJECTED_KEY)
    shape.check(body)
    model = body["model"]
    conversation = Conversation.of(shape.turns(body))
    fault = await choose_fault(request, state, model, conversation.directives)
    encoding = openai_encoding(model)
    extended = body.get("prompt_cache_retention") == "24h"
    ttl_s = settings.openai_extended_ttl_s if extended else settings.openai_in_memory_ttl_s
    namespace = (key, model)
    plan = state.openai_cache.plan(namespace, encode(shape.render(body), encoding), ttl_s)
    headers = state.rate_limits.admit(namespace, plan.prompt_tokens, "openai")
    tools_offered = bool(body.get("tools"))
    reply = conversation.reply(state.replay, "call_", shape.forced_tool(body), shape.json_schema(body), tools_offered)
    return Exchange(body, model, reply, fault, encoding, namespace, plan, headers)


def settle(state: SimState, exchange: Exchange, max_tokens: Any) -> Answer:
    """The reply cut to max_tokens, counted in the stats, with its simulated timing."""
    reply = limit_reply(exchange.reply, max_tokens, exchange.encoding)
    produced = output_tokens(reply, exchange.encoding)
    plan = exchange.plan
    uncached = plan.prompt_tokens - plan.cached_tokens
    state.stats.count(
        exchange.model, requests=1, input_tokens=uncached, cache_read_tokens=plan.cached_tokens, output_tokens=produced
    )
    timing = Timing.simulated(state.settings.latency, uncached, plan.cached_tokens, produced)
    return Answer(reply, produced, timing, partial(state.openai_cache.commit, exchange.namespace, plan))
