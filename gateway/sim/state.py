"""Everything the simulator remembers between requests (one instance per app)."""

from __future__ import annotations

from gateway.sim.anthropic_cache import AnthropicPromptCache
from gateway.sim.faults import FaultInjector
from gateway.sim.openai_cache import OpenAIPromptCache
from gateway.sim.rate_limits import RateLimiter
from gateway.sim.replay import ReplayIndex
from gateway.sim.settings import SimSettings
from gateway.sim.stats import SimStats


class SimState:
    def __init__(self, settings: SimSettings) -> None:
        self.settings = settings
        self.openai_cache = OpenAIPromptCache()
        self.anthropic_cache = AnthropicPromptCache()
        self.faults = FaultInjector(settings)
        self.rate_limits = RateLimiter(settings.rate_limits)
        self.stats = SimStats(settings.recent_requests_kept)
        self.replay = ReplayIndex(settings.replay_file) if settings.replay_file else None

    def reset(self) -> None:
        """Forget caches, counters, rate-limit use and queued faults (POST /sim/reset)."""
        self.openai_cache.clear()
        self.rate_limits.clear()
        self.anthropic_cache.clear()
        self.faults.clear()
        self.stats.clear()
