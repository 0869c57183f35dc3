"""Server-sent events: split a byte stream into events, and encode events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson

# The key, inside a stream's final usage object, of the gateway's cost fields (cost_usd, saved_usd,
# cache_read_tokens, cache_write_tokens): both SDKs keep unknown usage keys (`usage.model_extra`).
USAGE_EXTRA_KEY = "cachegate"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    raw: bytes  # the event exactly as received, terminator included, for pass-through
    event: str | None
    data: str
    # More complete events arrived in the same read: a relay can send them on together, in one write.
    followed: bool = False

    def json(self) -> Any:
        return orjson.loads(self.data)


def parse_event(raw: bytes, followed: bool = False) -> SSEEvent:
    event: str | None = None
    data_lines: list[str] = []
    for line in raw.decode("utf-8").splitlines():
        if line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" "))
        elif line.startswith("event:"):
            event = line[6:].strip()
    return SSEEvent(raw=raw, event=event, data="\n".join(data_lines), followed=followed)


async def iter_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[SSEEvent]:
    """Yield complete events; comments and blank keep-alives are skipped."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk.replace(b"\r\n", b"\n")
        # Events are cut from the read by offset, the rest kept once per read: slicing the rest off after
        # each event copied a read of n events n times.
        start, end = 0, buffer.find(b"\n\n")
        while end >= 0:
            raw, start = buffer[start : end + 2], end + 2
            end = buffer.find(b"\n\n", start)
            if raw.strip() and not raw.startswith(b":"):
                yield parse_event(raw, followed=end >= 0)
        buffer = buffer[start:]
    if buffer.strip() and not buffer.startswith(b":"):
        yield parse_event(buffer + b"\n\n")


def encode(data: Any, event: str | None = None) -> bytes:
    body = b"data: " + orjson.dumps(data) + b"\n\n"
    return b"event: " + event.encode() + b"\n" + body if event else body


def comment(text: str) -> bytes:
    return b": " + text.encode() + b"\n\n"
