"""Latency model: prefill time grows with uncached input, decode time with output tokens."""

from __future__ import annotations

import asyncio

from gateway.sim.settings import LatencySettings


def time_to_first_token(settings: LatencySettings, uncached_tokens: int, cached_tokens: int) -> float:
    """Seconds before the first token; a cached token costs `cached_token_cost_ratio` of an uncached one."""
    effective = uncached_tokens + cached_tokens * settings.cached_token_cost_ratio
    return settings.scale * (settings.base_ttft_s + effective * settings.per_uncached_input_token_s)


def decode_time(settings: LatencySettings, output_tokens: int) -> float:
    return settings.scale * output_tokens * settings.per_output_token_s


async def pause(seconds: float) -> None:
    # Skip the await entirely at scale 0 so that tests do not yield to other requests needlessly.
    if seconds > 0:
        await asyncio.sleep(seconds)
