"""The worst case of a request before it runs: what budgets and tokens per minute hold for it.

Input: the body's JSON size at 3 characters a token (real text runs nearer 4, so the hold errs high;
images and files are counted by their encoded size). Output: the request's own cap (`max_tokens` and
its per-API names), else the model's maximum from the cost map, else DEFAULT_OUTPUT_CAP. USD: input at
the dearest input rate (a 1-hour cache write), output at the output rate.

The same measure charges an answer whose provider never said what it used (`generated`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import orjson

from gateway.context import RequestContext
from gateway.usage import Usage
from gateway.usage.pricing import max_output_for, price_for, route_price

CHARS_PER_TOKEN = 3
DEFAULT_OUTPUT_CAP = 4096


@dataclass(frozen=True, slots=True)
class Estimate:
    tokens: int
    usd: float


NOTE = "worst_case"  # ctx.notes: the estimate, made once per request (token rate and budgets both hold it)
CUT_SHORT = "cut_short"  # ctx.notes: the stream ended before the provider's final usage (its count is partial)
WRITTEN_FIELDS = ("choices", "content", "output", "candidates")  # where each API's answer holds what was written


def worst_case(ctx: RequestContext) -> Estimate:
    known = ctx.notes.get(NOTE)
    if isinstance(known, Estimate):
        return known
    known = ctx.notes[NOTE] = _estimate(ctx)
    return known


def _estimate(ctx: RequestContext) -> Estimate:
    input_tokens = json_tokens(ctx.body)
    model = (ctx.route.pricing_model or ctx.route.litellm_model) if ctx.route is not None else ctx.model_name
    cap = ctx.wire.output_cap(ctx.body)  # 0: an API without output (embeddings)
    output = cap if cap is not None else max_output_for(model) or DEFAULT_OUTPUT_CAP
    price = route_price(ctx.route) if ctx.route is not None else price_for(model)
    usd = input_tokens * max(price.input, price.cache_write_5m, price.cache_write_1h) + output * price.output
    return Estimate(input_tokens + output, usd)


def json_tokens(value: object) -> int:
    try:
        size = len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):  # e.g. an integer beyond 64 bits: its text length
        size = len(str(value))
    return size // CHARS_PER_TOKEN + 1


def generated(ctx: RequestContext, reported: Usage) -> Usage:
    """The usage of an answer whose provider never gave its count (a stream cut short after its client left,
    a provider that sends none): what it did report; else its input as the holds estimate it; its output at
    least the size of what the model wrote, at CHARS_PER_TOKEN (errs high like the holds: never a silent
    zero)."""
    response = ctx.response_body or {}
    written = next((response[name] for name in WRITTEN_FIELDS if name in response), response)
    output = max(reported.output, json_tokens(written))
    if reported.input_total:
        return replace(reported, output=output)
    return replace(reported, uncached_input=json_tokens(ctx.body), output=output)
