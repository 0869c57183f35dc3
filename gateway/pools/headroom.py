"""Headroom: the share of a deployment's rate limits still free, so that it takes fewer new sessions
before it says 429. Two sources: the provider's rate-limit headers on its last answer (OpenAI
`x-ratelimit-{limit,remaining}-{requests,tokens}`, Anthropic `anthropic-ratelimit-*-{limit,remaining}`),
and our own counts of this minute's requests and input tokens against the deployment's `rpm`/`tpm`."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from gateway.pools.model import Deployment
from gateway.state import Op

# (limit header, remaining header) pairs, matched on lower-case names.
_OPENAI = re.compile(r"x-ratelimit-remaining-(requests|tokens)")
_ANTHROPIC = re.compile(r"anthropic-ratelimit-((?:input-|output-)?tokens|requests)-remaining")
MAX_HEADER_CHARS = 32
HEADROOM_TTL_S = 60.0  # providers' limits are per minute: an older reading says nothing


def from_headers(headers: Mapping[str, str]) -> float | None:
    """The smallest remaining/limit share among the provider's rate-limit headers; None without any."""
    shares: list[float] = []
    for name, value in headers.items():
        name = name.lower()
        if match := _OPENAI.fullmatch(name):
            limit = headers.get(f"x-ratelimit-limit-{match[1]}")
        elif match := _ANTHROPIC.fullmatch(name):
            limit = headers.get(f"anthropic-ratelimit-{match[1]}-limit")
        else:
            continue
        share = _share(value, limit)
        if share is not None:
            shares.append(share)
    return min(shares) if shares else None


def _share(remaining: str, limit: str | None) -> float | None:
    if limit is None or len(remaining) > MAX_HEADER_CHARS or len(limit) > MAX_HEADER_CHARS:
        return None
    try:
        left, cap = float(remaining), float(limit)
    except ValueError:
        return None
    return min(max(left / cap, 0.0), 1.0) if cap > 0 else None


# What the upstream path saw of the current attempt's response headers (set by `observing`).
_seen: ContextVar[list[float] | None] = ContextVar("cachegate_rate_limit_headroom", default=None)


def note_rate_limits(headers: Mapping[str, str]) -> None:
    """Called by an upstream path with a provider's response headers (errors included)."""
    seen = _seen.get()
    share = from_headers(headers) if seen is not None else None
    if seen is not None and share is not None:
        seen.append(share)


@contextmanager
def observing() -> Iterator[list[float]]:
    """Collect the headroom the provider states while one attempt runs (in this task)."""
    seen: list[float] = []
    token = _seen.set(seen)
    try:
        yield seen
    finally:
        _seen.reset(token)


def _key(deployment: Deployment, what: str) -> str:
    return f"pools:{{{deployment.pool}}}:{deployment.id}:{what}"


def _minute() -> int:
    return int(time.time() // 60)


def reads(deployment: Deployment) -> list[Op]:
    """The ops reading the stated headroom and this minute's own counts (batched with the others)."""
    minute = _minute()
    return [
        Op("get", _key(deployment, "headroom")),
        Op("get", _key(deployment, f"rpm:{minute}")),
        Op("get", _key(deployment, f"tpm:{minute}")),
    ]


def counts(deployment: Deployment, tokens: int) -> list[Op]:
    """The ops counting one request and its input tokens against this minute."""
    minute = _minute()
    return [
        Op("incr", _key(deployment, f"rpm:{minute}"), 1, ttl_s=120),
        Op("incr", _key(deployment, f"tpm:{minute}"), tokens, ttl_s=120),
    ]


def stated(deployment: Deployment, share: float) -> Op:
    return Op("set", _key(deployment, "headroom"), ttl_s=HEADROOM_TTL_S, values=(f"{share:.4f}".encode(),))


def headroom(deployment: Deployment, stated_share: bytes | None, requests: bytes | None, tokens: bytes | None) -> float:
    """The smallest free share: the provider's stated one, and our counts against rpm/tpm (1.0: unknown)."""
    shares = [1.0]
    if (share := _number(stated_share)) is not None:
        shares.append(share)
    route = deployment.route
    for raw, cap in ((requests, route.rpm), (tokens, route.tpm)):
        used = _number(raw)
        if used is not None and cap:
            shares.append(1.0 - used / cap)
    return min(max(min(shares), 0.0), 1.0)


def _number(raw: bytes | None) -> float | None:
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None
