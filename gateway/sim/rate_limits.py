"""Per-key rate limits with the providers' own headers, so that a gateway can be tested reading them.

Like the providers, each limit is a token bucket that refills continuously (a minute's worth a minute),
counted per key and model. A request is admitted when its bucket has a request and its input tokens
left; else it gets a 429 with `retry-after` (seconds until it would be admitted) and the same headers.

Header names and formats, as documented by the providers:
- OpenAI (platform.openai.com/docs/guides/rate-limits, "Rate limits in headers"):
  `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`; reset is a duration such as `1s`, `6m0s`, `12ms`
  ("the time until the rate limit resets to its initial state").
- Anthropic (docs.anthropic.com/en/api/rate-limits, "Response headers"):
  `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`; reset is an
  RFC 3339 time; `-tokens-` is the most restrictive token limit in effect; cache reads do not count
  against input tokens; `retry-after` on a 429.
- Gemini sends no rate-limit headers; a 429 says RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from gateway.sim.errors import ErrorKind, SimError
from gateway.sim.settings import RateLimitSettings

PER_MINUTE_S = 60.0
RATE_LIMITED = {  # the providers' messages
    "openai": "Rate limit reached for requests (simulated).",
    "anthropic": "This request would exceed your organization's rate limit (simulated).",
    "gemini": "Resource has been exhausted (e.g. check quota). (simulated)",
}


@dataclass
class Bucket:
    """A token bucket of `capacity`, refilled at capacity a minute."""

    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.capacity / PER_MINUTE_S)
        self.at = now

    def wait_s(self, amount: float) -> float:
        """Seconds until `amount` is in the bucket (a request larger than the bucket waits for a full one)."""
        missing = min(amount, self.capacity) - self.level
        return max(missing, 0.0) * PER_MINUTE_S / self.capacity

    def reset_s(self) -> float:
        """Seconds until the bucket is full again (the providers' `reset`)."""
        return self.wait_s(self.capacity)


@dataclass(frozen=True)
class Reading:
    """One limit as a response reports it."""

    limit: int
    remaining: int
    reset_s: float


@dataclass(frozen=True)
class Standing:
    """A key's limits after a request: what the response headers say."""

    requests: Reading | None
    tokens: Reading | None
    now: float

    def headers(self, api: str) -> dict[str, str]:
        """The response headers of `api` (openai, anthropic; gemini sends none)."""
        headers: dict[str, str] = {}
        if api == "openai":
            for name, reading in (("requests", self.requests), ("tokens", self.tokens)):
                if reading is not None:
                    headers[f"x-ratelimit-limit-{name}"] = str(reading.limit)
                    headers[f"x-ratelimit-remaining-{name}"] = str(reading.remaining)
                    headers[f"x-ratelimit-reset-{name}"] = duration(reading.reset_s)
        elif api == "anthropic":
            # Only input tokens are limited here, so the most restrictive token limit (`-tokens-`) is that one.
            for name, reading in (("requests", self.requests), ("input-tokens", self.tokens), ("tokens", self.tokens)):
                if reading is not None:
                    headers[f"anthropic-ratelimit-{name}-limit"] = str(reading.limit)
                    headers[f"anthropic-ratelimit-{name}-remaining"] = str(reading.remaining)
                    headers[f"anthropic-ratelimit-{name}-reset"] = rfc3339(self.now + reading.reset_s)
        return headers


def duration(seconds: float) -> str:
    """OpenAI's reset format: `12ms`, `1.5s`, `6m0s`."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".")
    return f"{int(minutes)}m{text}s" if minutes else f"{text}s"


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(math.ceil(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class RateLimiter:
    """The buckets of every (key, model) that has called: bounded by the keys and models a test uses."""

    def __init__(self, settings: RateLimitSettings) -> None:
        self._settings = settings
        self._buckets: dict[tuple[str, str, str], Bucket] = {}

    def clear(self) -> None:
        self._buckets.clear()

    def _bucket(self, namespace: tuple[str, str], kind: str, capacity: int | None, now: float) -> Bucket | None:
        if not capacity:
            return None
        bucket = self._buckets.setdefault((*namespace, kind), Bucket(float(capacity), float(capacity), now))
        bucket.refill(now)
        return bucket

    def admit(self, namespace: tuple[str, str], input_tokens: int, api: str) -> dict[str, str]:
        """Take one request and its input tokens from the key's buckets; the response headers of `api` that
        report what is left (none when no limit is set). Raises the 429 when either has too little left."""
        now = time.time()
        requests = self._bucket(namespace, "requests", self._settings.rpm, now)
        tokens = self._bucket(namespace, "tokens", self._settings.tpm, now)
        if requests is None and tokens is None:
            return {}
        wait_s = max(requests.wait_s(1) if requests else 0.0, tokens.wait_s(input_tokens) if tokens else 0.0)
        if wait_s == 0.0:
            for bucket, amount in ((requests, 1), (tokens, input_tokens)):
                if bucket is not None:
                    bucket.level -= min(amount, bucket.capacity)
        headers = Standing(_reading(requests), _reading(tokens), now).headers(api)
        if wait_s > 0.0:
            headers["retry-after"] = str(max(math.ceil(wait_s), 1))
            raise SimError(429, ErrorKind.RATE_LIMIT, RATE_LIMITED[api], code="rate_limit_exceeded", headers=headers)
        return headers


def _reading(bucket: Bucket | None) -> Reading | None:
    if bucket is None:
        return None
    return Reading(int(bucket.capacity), max(math.floor(bucket.level), 0), bucket.reset_s())
