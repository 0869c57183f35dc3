"""Per-session record of what was compacted, and summaries memoised by the range they replaced.

Clients resend the full history each turn; replaying this record makes the gateway send the same
bytes for the same history on every later turn (the provider's prefix cache keeps hitting). The
record only grows between compaction events: recorded results stay compacted, a recorded summary
stays in place as long as the history still starts with the range it replaced.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from gateway.state import Op, StateStore


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary that replaced messages[head : head + count] (their digest: `range_digest`)."""

    count: int
    range_digest: str
    text: str
    dump: str  # handle of the write-ahead dump of the history it was written from


@dataclass(slots=True)
class SessionRecord:
    compacted: set[str] = field(default_factory=set)  # handles of tool results sent as references
    summary: Summary | None = None
    summary_failures: int = 0

    def dumps(self) -> bytes:
        summary = asdict(self.summary) if self.summary else None
        return orjson.dumps(
            {"compacted": sorted(self.compacted), "summary": summary, "summary_failures": self.summary_failures}
        )

    @classmethod
    def loads(cls, raw: bytes) -> SessionRecord:
        data: dict[str, Any] = orjson.loads(raw)
        summary = data.get("summary")
        return cls(
            set(data.get("compacted") or []),
            Summary(**summary) if summary else None,
            int(data.get("summary_failures") or 0),
        )


def record_read(session: str) -> Op:
    """The read of `Memo.record` (a request declares it ahead: gateway/state/request.py)."""
    return Op("get", _record_key(session))


def _record_key(session: str) -> str:
    return f"cg:cmp:rec:{session}"


class Memo:
    def __init__(self, store: StateStore, ttl_s: float) -> None:
        self.store = store
        self.ttl_s = ttl_s

    async def record(self, session: str) -> SessionRecord:
        raw = await self.store.get(_record_key(session))
        return SessionRecord.loads(raw) if raw else SessionRecord()

    async def save(self, session: str, record: SessionRecord) -> None:
        await self.store.set(_record_key(session), record.dumps(), self.ttl_s)

    async def summary(self, tenant: str, range_digest: str) -> Summary | None:
        """A summary already written for this exact range (another turn, replica or forked session)."""
        raw = await self.store.get(f"cg:cmp:sum:{tenant}:{range_digest}")
        return Summary(**orjson.loads(raw)) if raw else None

    async def remember(self, tenant: str, summary: Summary) -> None:
        key = f"cg:cmp:sum:{tenant}:{summary.range_digest}"
        await self.store.set(key, orjson.dumps(asdict(summary)), self.ttl_s)
