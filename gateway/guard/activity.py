"""Sessions seen recently on this replica (the cachegate_guard_sessions_active gauge).

Bounded by time (the window) and by entries and bytes, per tenant and in total (gateway/bounded.py):
session ids are caller-chosen, so a flood of new ids must not grow this map without limit.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from gateway.bounded import Caps, TenantLRU
from gateway.config.guard import GuardConfig, GuardMemoryConfig
from gateway.metrics import GatewayMetrics

ENTRY_OVERHEAD = 200  # bytes an entry costs beyond its key's text (dict and order slots, the float)


class Activity:
    def __init__(
        self,
        window_s: float,
        memory: GuardMemoryConfig | None = None,
        on_evict: Callable[[str, str], None] | None = None,
    ) -> None:
        self.window_s = window_s
        memory = memory or GuardMemoryConfig()
        caps = Caps(
            max_entries=memory.active_sessions,
            max_bytes=memory.active_bytes,
            max_entries_per_tenant=min(memory.active_sessions_per_tenant, memory.active_sessions),
            max_bytes_per_tenant=min(memory.active_bytes_per_tenant, memory.active_bytes),
        )
        self._seen: TenantLRU[float] = TenantLRU(caps, on_evict)

    @classmethod
    def create(cls, config: GuardConfig, metrics: GatewayMetrics) -> Activity:
        """Sized by the global guard policy; evictions counted as cache="guard_activity"."""
        evictions = metrics.memory_evictions
        return cls(config.active_window_s, config.memory, lambda _, r: evictions.labels("guard_activity", r).inc())

    def __len__(self) -> int:
        return len(self._seen)

    @property
    def bytes(self) -> int:
        return self._seen.bytes

    def tenant_usage(self, tenant: str) -> tuple[int, int]:
        return self._seen.tenant_usage(tenant)

    def touch(self, session: str) -> None:
        """Mark a session ("tenant:session", as ctx.session_key) as seen now."""
        size = sys.getsizeof(session) + ENTRY_OVERHEAD
        self._seen.put(session, session.split(":", 1)[0], time.monotonic(), size)

    def active(self) -> int:
        """Sessions seen within the window (older ones are forgotten here)."""
        horizon = time.monotonic() - self.window_s
        expired = []
        for session, seen in self._seen.oldest():
            if seen >= horizon:
                break
            expired.append(session)
        for session in expired:
            self._seen.pop(session)
        return len(self._seen)
