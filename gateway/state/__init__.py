"""State layer: one interface, in-process or Redis (with a fallback) behind it."""

from collections.abc import Callable

from gateway.state.base import Op, StateStore, StateUnavailable, incr_fields
from gateway.state.memory import MemoryStore
from gateway.state.redis import RedisStore
from gateway.state.resilient import ResilientStore


def create_store(redis_url: str | None, on_fallback: Callable[[str], None], timeout_s: float = 0.25) -> StateStore:
    """Memory when no Redis is configured; otherwise Redis with a per-replica memory fallback."""
    if not redis_url:
        return MemoryStore()
    return ResilientStore(RedisStore(redis_url, timeout_s=timeout_s), on_fallback)


def durable(store: StateStore) -> StateStore:
    """The store without the per-replica fallback: for records that must fail loudly rather than read as
    empty while Redis is down (calls raise StateUnavailable)."""
    return store.primary if isinstance(store, ResilientStore) else store


__all__ = [
    "MemoryStore",
    "Op",
    "RedisStore",
    "ResilientStore",
    "StateStore",
    "StateUnavailable",
    "create_store",
    "durable",
    "incr_fields",
]
