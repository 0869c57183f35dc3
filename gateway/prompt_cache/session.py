"""What the optimizer remembers per agent session and model (in the state store, keyed by the
tenant-scoped session key and the route name): the previous request's prefix record, its marks, and the
gaps between requests. Per model, because an agent's side calls to another model in the same session
(Claude Code's Haiku title and summary calls) are a line of their own, with their own provider cache:
comparing them with the main line would report a prefix break on every switch. The totals (hit ratio,
savings) stay per session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.prompt_cache.accounting import CacheTotals
from gateway.prompt_cache.prefix import PrefixRecord
from gateway.state import Op, StateStore, incr_fields

PREFIX = "prompt_cache"


@dataclass(slots=True)
class SessionState:
    last_seen: float | None = None
    gaps: list[float] = field(default_factory=list)
    record: PrefixRecord | None = None
    marks: list[int] = field(default_factory=list)  # block positions of every mark the request carried
    static_changes: int = 0  # consecutive requests whose tools or system differed from the previous one

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "last_seen": self.last_seen,
                "gaps": self.gaps,
                "record": self.record.to_json() if self.record else None,
                "marks": self.marks,
                "static_changes": self.static_changes,
            }
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> SessionState:
        data: dict[str, Any] = orjson.loads(raw)
        record = data.get("record")
        return cls(
            last_seen=data.get("last_seen"),
            gaps=list(data.get("gaps") or []),
            record=PrefixRecord.from_json(record) if record else None,
            marks=list(data.get("marks") or []),
            static_changes=int(data.get("static_changes") or 0),
        )


def line_key(session_key: str, route: str) -> str:
    """One session's requests to one model (route name): the unit whose prefix is compared."""
    return f"{session_key}:{route}"


def _state_key(line: str) -> str:
    return f"{PREFIX}:session:{line}"


def _totals_key(session_key: str) -> str:
    # "sums", not the "totals" of the counters of each field that came before: no key of theirs is this one.
    return f"{PREFIX}:sums:{session_key}"


def state_read(line: str) -> Op:
    """The read of `load_state` (a request declares it ahead: gateway/state/request.py)."""
    return Op("get", _state_key(line))


def state_write(line: str, state: SessionState | bytes, ttl_s: float) -> Op:
    """The write of `save_state`, as an op (a request defers it: gateway/state/request.py); `state` may
    be given as its bytes (`to_bytes`)."""
    raw = state if isinstance(state, bytes) else state.to_bytes()
    return Op("set", _state_key(line), ttl_s=ttl_s, values=(raw,))


async def load_raw(store: StateStore, line: str) -> bytes | None:
    """The line's state as stored (`SessionState.from_bytes` decodes it)."""
    raw: bytes | None = (await store.batch([state_read(line)]))[0]
    return raw


async def load_state(store: StateStore, line: str) -> SessionState:
    raw = await load_raw(store, line)
    return SessionState.from_bytes(raw) if raw else SessionState()


async def save_state(store: StateStore, line: str, state: SessionState, ttl_s: float) -> None:
    await store.batch([state_write(line, state, ttl_s)])


async def add_totals(store: StateStore, session_key: str, step: CacheTotals, ttl_s: float) -> CacheTotals:
    """Add one request's totals (`step`) to the session's; the session's totals after it. Each field is a
    counter stepped atomically (one command for all: a hash's fields): replicas answering one session at
    once lose none of its requests (a read, add and write of one record would keep only one of two
    concurrent adds)."""
    (after,) = await store.batch([incr_fields(_totals_key(session_key), step.to_json(), ttl_s)])
    return CacheTotals.from_json(after)
