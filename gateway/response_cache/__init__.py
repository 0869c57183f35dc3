"""Response cache: exact and semantic tiers, shared across replicas (stage: gateway/stages/response_cache.py)."""

from gateway.response_cache.cache import Hit, ResponseCache

__all__ = ["Hit", "ResponseCache"]
