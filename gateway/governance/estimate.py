"""The worst case of a request before it runs: what budgets and tokens per minute hold for it.

Input: the body's JSON size at 3 characters a token (real text runs nearer 4, so the hold errs high;
images and files are counted by their encoded size). Output: the request's own cap (`max_tokens` and
its per-API names), else the model's maximum from the cost map, else DEFAULT_OUTPUT_CAP. USD: input at
the dearest input rate (a 1-hour cache write), output at the output rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from gateway.context import RequestContext
from gateway.usage.pricing import max_output_for, price_for

CHARS_PER_TOKEN = 3
DEFAULT_OUTPUT_CAP = 4096


@dataclass(frozen=True, slots=True)
class Estimate:
    tokens: int
    usd: float


NOTE = "worst_case"  # ctx.notes: the estimate, made once per request (token rate and budgets both hold it)


def worst_case(ctx: RequestContext) -> Estimate:
    known = ctx.notes.get(NOTE)
    if isinstance(known, Estimate):
        return known
    known = ctx.notes[NOTE] = _estimate(ctx)
    return known


def _estimate(ctx: RequestContext) -> Estimate:
    try:
        size = len(orjson.dumps(ctx.body))
    except (TypeError, orjson.JSONEncodeError):  # e.g. an integer beyond 64 bits: its text length
        size = len(str(ctx.body))
    input_tokens = size // CHARS_PER_TOKEN + 1
    model = (ctx.route.pricing_model or ctx.route.litellm_model) if ctx.route is not None else ctx.model_name
    output = ctx.wire.output_cap(ctx.body) or max_output_for(model) or DEFAULT_OUTPUT_CAP
    price = price_for(model)
    usd = input_tokens * max(price.input, price.cache_write_5m, price.cache_write_1h) + output * price.output
    return Estimate(input_tokens + output, usd)
