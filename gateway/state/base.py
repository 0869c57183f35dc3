"""The state layer every stage uses: counters, per-session state and cached objects.

Two backends share this interface: in-process memory (the embedded default) and Redis (shared by all
replicas). Values are bytes; callers serialise. Keys are namespaced by the caller (tenant first).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator


class StateUnavailable(Exception):
    """The backend could not answer (Redis down or slow)."""


class StateStore(ABC):
    backend: str

    @abstractmethod
    async def get(self, key: str) -> bytes | None: ...

    @abstractmethod
    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        """Store a value; with only_new, only if the key does not exist (returns whether it was set)."""

    @abstractmethod
    async def delete(self, *keys: str) -> int: ...

    @abstractmethod
    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int: ...

    @abstractmethod
    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float: ...

    @abstractmethod
    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        """Append to a list (keeping the newest max_len); returns the list length."""

    @abstractmethod
    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]: ...

    @abstractmethod
    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None: ...

    @abstractmethod
    async def hgetall(self, key: str) -> dict[str, bytes]: ...

    @abstractmethod
    def scan(self, prefix: str) -> AsyncIterator[str]:
        """Keys that start with prefix."""

    @abstractmethod
    async def ping(self) -> bool: ...

    async def close(self) -> None:
        return None
