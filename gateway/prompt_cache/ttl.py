"""Breakpoint TTL from the observed gap between a session's requests.

Entries are refreshed on every read, so what matters is the longest recent pause: under ~5 min the
cheaper 5m entries survive it (write 1.25x); up to ~1 h only 1h entries do (write 2x, still far below
re-sending everything); beyond that nothing survives and the cheaper write wins again.
"""

from __future__ import annotations

from typing import Literal

from gateway.config.prompt_cache import PromptCacheConfig

Ttl = Literal["5m", "1h"]
GAPS_KEPT = 3


def recent_gaps(gaps: list[float], last_seen: float | None, now: float) -> list[float]:
    """The session's gaps including the one that ends with this request (newest last)."""
    if last_seen is None:
        return gaps[-GAPS_KEPT:]
    return [*gaps, max(now - last_seen, 0.0)][-GAPS_KEPT:]


def choose_ttl(gaps: list[float], config: PromptCacheConfig) -> Ttl:
    if config.ttl != "auto":
        return config.ttl
    if not gaps:
        return "5m"
    longest = max(gaps)
    if longest <= config.ttl_5m_max_gap_s:
        return "5m"
    return "1h" if longest <= config.ttl_1h_max_gap_s else "5m"
