"""Where to put cache_control breakpoints (Anthropic's rules, shared/specs/provider-caching.md).

Marks, by priority: one at the end of the static part (tools + system), one moving on the newest block,
and intermediate ones every `every` blocks after the newest entry the provider already holds when a turn
added more than that (a breakpoint only looks back a limited number of blocks). Rules kept: at most `max_marks`
including the client's own marks (never duplicated, malformed ones counted and left alone); no mark whose
prefix is below the model's minimum; 1h marks never after 5m ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gateway.prompt_cache.ttl import Ttl

MarkKind = Literal["static", "moving", "intermediate"]


@dataclass(frozen=True, slots=True)
class Limits:
    max_marks: int
    every: int
    min_tokens: int


@dataclass(frozen=True, slots=True)
class Placement:
    position: int
    kind: MarkKind
    ttl: Ttl


def client_ttl(mark: Any) -> Ttl | None:
    """TTL of a well-formed client mark; None for a malformed one (counted, but its order is unknown)."""
    if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def _candidates(static_end: int | None, last: int | None, anchor: int | None, every: int) -> list[tuple[int, MarkKind]]:
    found: list[tuple[int, MarkKind]] = []
    if static_end is not None:
        found.append((static_end, "static"))
    if last is not None:
        found.append((last, "moving"))
        if anchor is not None and last - anchor > every:
            found += [(p, "intermediate") for p in range(anchor + every, last, every)]
    return found


def _ttl_allowed(position: int, ttl: Ttl, client: dict[int, Ttl | None]) -> Ttl | None:
    """The TTL this mark can have given the client's marks (1h before 5m), or None if none fits."""
    five_before = any(t == "5m" and p < position for p, t in client.items())
    hour_after = any(t == "1h" and p > position for p, t in client.items())
    if five_before and hour_after:
        return None
    if five_before:
        return "5m"
    return "1h" if hour_after else ttl


def _markable(position: int, markable: Sequence[bool]) -> int | None:
    """The nearest block at or before `position` that can carry a mark."""
    while position >= 0 and not markable[position]:
        position -= 1
    return position if position >= 0 else None


def plan_breakpoints(
    ends: Sequence[int],
    markable: Sequence[bool],
    client_marks: dict[int, Any],
    *,
    static_end: int | None,
    last: int | None,
    anchor: int | None,
    ttl: Ttl,
    limits: Limits,
) -> list[Placement]:
    """Our marks, by position. `ends[i]`: tokens of the prefix ending at block i; `markable[i]`: block i
    may carry a mark; `client_marks`: block position -> the client's mark; `anchor`: newest position the
    provider should hold an entry for."""
    budget = limits.max_marks - len(client_marks)
    if budget <= 0:
        return []
    client = {position: client_ttl(mark) for position, mark in client_marks.items()}
    chosen: dict[int, Placement] = {}
    for candidate, kind in _candidates(static_end, last, anchor, limits.every):
        if len(chosen) == budget:
            break
        position = _markable(candidate, markable)
        if position is None or position in client or position in chosen or ends[position] < limits.min_tokens:
            continue
        allowed = _ttl_allowed(position, ttl, client)
        if allowed is not None:
            chosen[position] = Placement(position, kind, allowed)
    return sorted(chosen.values(), key=lambda placement: placement.position)
