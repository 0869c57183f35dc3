"""The state layer every stage uses: counters, per-session state and cached objects.

Two backends share this interface: in-process memory (the embedded default) and Redis (shared by all
replicas). Values are bytes; callers serialise. Keys are namespaced by the caller (tenant first).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass


class StateUnavailable(Exception):
    """The backend could not answer (Redis down or slow)."""


@dataclass(frozen=True, slots=True)
class Window:
    """At most `limit` holders in any `seconds`: a sliding-window rate (holders expire) or, when the holder
    releases its place at the end of its request, a concurrency limit (`seconds` is then a lease that frees
    the places of requests whose replica died)."""

    key: str
    limit: int
    seconds: float


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
    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        """Take a place for `holder` in every window, all or none, atomically: 0.0 when taken, else the
        seconds until the fullest window frees a place (nothing is taken)."""

    @abstractmethod
    async def leave(self, keys: Sequence[str], holder: str) -> None:
        """Give back `holder`'s places in the windows `keys` (concurrency limits)."""

    @abstractmethod
    async def ping(self) -> bool: ...

    async def close(self) -> None:
        return None
