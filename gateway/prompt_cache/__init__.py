"""Prompt-cache optimizer: breakpoints, session keys, prefix diagnostics and cache accounting.

One concept per module; the stages that use them are gateway/stages/prompt_cache.py.
"""

from gateway.prompt_cache.accounting import CacheTotals, hit_ratio, write_premium_usd
from gateway.prompt_cache.optimizer import Outcome, optimize
from gateway.prompt_cache.prefix import PrefixBreak, diagnose, record_prefix
from gateway.prompt_cache.providers import CacheStyle, cache_style
from gateway.prompt_cache.session_key import session_cache_key

__all__ = [
    "CacheStyle",
    "CacheTotals",
    "Outcome",
    "PrefixBreak",
    "cache_style",
    "diagnose",
    "hit_ratio",
    "optimize",
    "record_prefix",
    "session_cache_key",
    "write_premium_usd",
]
