"""A least-recently-used map bounded by entries and bytes, per tenant as well as in total.

Per-replica memory keyed by caller-chosen values (the guard's parsed histories and active sessions,
the semantic cache's vector index) grows with what callers send: without a count and byte bound one
tenant could grow it without limit, and without a per-tenant bound one tenant filling it would evict
everyone else's entries. Eviction takes the tenant's own oldest entries first when the tenant is over
its share, then the globally oldest; each eviction is reported with its key and reason (a small fixed
set, usable as a metric label).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

V = TypeVar("V")

# Eviction reasons (metric label values).
TENANT_ENTRIES, TENANT_BYTES, TOTAL_ENTRIES, TOTAL_BYTES = "tenant_entries", "tenant_bytes", "entries", "bytes"


@dataclass(frozen=True, slots=True)
class Caps:
    max_entries: int
    max_bytes: int
    max_entries_per_tenant: int
    max_bytes_per_tenant: int


@dataclass(slots=True)
class _Slot(Generic[V]):
    tenant: str
    value: V
    size: int


class TenantLRU(Generic[V]):
    def __init__(self, caps: Caps, on_evict: Callable[[str, str], None] | None = None) -> None:
        self.caps = caps
        self.on_evict = on_evict
        self._slots: OrderedDict[str, _Slot[V]] = OrderedDict()
        self._by_tenant: dict[str, OrderedDict[str, None]] = {}
        self._tenant_bytes: dict[str, int] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def tenant_usage(self, tenant: str) -> tuple[int, int]:
        """(entries, bytes) the tenant holds."""
        return len(self._by_tenant.get(tenant, ())), self._tenant_bytes.get(tenant, 0)

    def get(self, key: str) -> V | None:
        """The value, marked as just used."""
        slot = self._slots.get(key)
        if slot is None:
            return None
        self._slots.move_to_end(key)
        self._by_tenant[slot.tenant].move_to_end(key)
        return slot.value

    def put(self, key: str, tenant: str, value: V, size: int) -> None:
        """Insert or replace (as the newest entry), then evict what the caps require."""
        slot = self._slots.get(key)
        if slot is not None and slot.tenant == tenant:  # a session's entry put back each request: in place
            slot.value = value
            self._slots.move_to_end(key)
            self._by_tenant[tenant].move_to_end(key)
            self._resized(slot, key, size)
            return
        self.pop(key)
        self._slots[key] = _Slot(tenant, value, size)
        self._by_tenant.setdefault(tenant, OrderedDict())[key] = None
        self._tenant_bytes[tenant] = self._tenant_bytes.get(tenant, 0) + size
        self.bytes += size
        self._enforce(tenant, keep=key)

    def resize(self, key: str, size: int) -> None:
        """The entry's value grew or shrank in place: account for it, then evict what the caps require."""
        slot = self._slots.get(key)
        if slot is not None:
            self._resized(slot, key, size)

    def _resized(self, slot: _Slot[V], key: str, size: int) -> None:
        delta, slot.size = size - slot.size, size
        self._tenant_bytes[slot.tenant] += delta
        self.bytes += delta
        self._enforce(slot.tenant, keep=key)

    def pop(self, key: str) -> V | None:
        slot = self._slots.pop(key, None)
        if slot is None:
            return None
        entries = self._by_tenant[slot.tenant]
        del entries[key]
        self._tenant_bytes[slot.tenant] -= slot.size
        if not entries:
            del self._by_tenant[slot.tenant], self._tenant_bytes[slot.tenant]
        self.bytes -= slot.size
        return slot.value

    def oldest(self) -> Iterator[tuple[str, V]]:
        """Entries from the least recently used on (do not change the map while iterating)."""
        return ((key, slot.value) for key, slot in self._slots.items())

    def _enforce(self, tenant: str, keep: str) -> None:
        """Evict oldest first; the entry just written goes last (only when alone it is over a cap)."""
        caps, by_tenant, tenant_bytes = self.caps, self._by_tenant, self._tenant_bytes
        while True:
            entries, size = len(by_tenant.get(tenant, ())), tenant_bytes.get(tenant, 0)  # tenant_usage, inline
            if entries > caps.max_entries_per_tenant:
                reason = TENANT_ENTRIES
            elif size > caps.max_bytes_per_tenant:
                reason = TENANT_BYTES
            else:
                break
            self._evict(self._victim(iter(self._by_tenant[tenant]), keep), reason)
        while len(self._slots) > caps.max_entries or self.bytes > caps.max_bytes:
            reason = TOTAL_ENTRIES if len(self._slots) > caps.max_entries else TOTAL_BYTES
            self._evict(self._victim(iter(self._slots), keep), reason)

    @staticmethod
    def _victim(keys: Iterator[str], keep: str) -> str:
        first = next(keys)
        return next(keys, keep) if first == keep else first

    def _evict(self, key: str, reason: str) -> None:
        self.pop(key)
        if self.on_evict is not None:
            self.on_evict(key, reason)
