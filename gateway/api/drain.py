"""A relayed stream whose client left: read on from the provider, without the client, so what the provider
generated is charged.

A provider bills the whole answer whether anyone reads it or not, and it says how much only at the end
(OpenAI's usage chunk, Anthropic's `message_delta`, the Responses API's `response.completed`): a relay
stopped when its client hangs up would charge nothing. So the relay goes on in the background, its writes
dropped, until the provider's stream ends and the response stages (usage, token rate, budgets, telemetry)
have run; at most `stream_drain_s` seconds and `stream_drain_bytes` bytes after the client left, after which
it stops reading and the usage stage charges an estimate of what was streamed
(gateway/governance/estimate.py `generated`). Drains still running when the gateway shuts down are stopped
the same way, and cancelled if they do not end within CLOSE_S.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.types import Message, Send

from gateway.logs import log_failure
from gateway.wire.sse import SSEEvent

if TYPE_CHECKING:
    from gateway.services import Services

log = logging.getLogger("cachegate.drain")
EXTRAS_KEY = "drains"  # Services.extras: the Drains of this process
CLOSE_S = 5.0  # at shutdown: how long stopped drains get to charge what they read, before being cancelled


@dataclass(frozen=True, slots=True)
class DrainLimits:
    seconds: float
    bytes: int


class ClientEnd:
    """The client's end of a relayed stream: passes the relay's writes on until the client leaves, then drops
    them and bounds how much longer the relay reads from the provider."""

    def __init__(self, limits: DrainLimits) -> None:
        self.limits = limits
        self.left_at: float | None = None  # the event loop's time when the client left
        self.cut = False  # the drain stopped before the provider's stream ended
        self._read = 0  # bytes read from the provider since the client left
        self._bound: asyncio.Timeout | None = None  # on the relay's reads while it is in `events`

    def forward(self, send: Send) -> Send:
        async def to_client(message: Message) -> None:
            if self.left_at is not None:
                return
            try:
                await send(message)
            except OSError:  # servers of ASGI spec 2.4 raise once the client is gone
                self.leave()

        return to_client

    def leave(self) -> None:
        if self.left_at is None:
            self.left_at = asyncio.get_running_loop().time()
            self._bind(self.left_at + self.limits.seconds)

    def stop(self) -> None:
        """End the drain now (the gateway shuts down)."""
        self._bind(asyncio.get_running_loop().time())

    def _bind(self, deadline: float) -> None:
        if self._bound is not None and not self._bound.expired():
            self._bound.reschedule(deadline)

    async def events(self, events: AsyncIterator[SSEEvent]) -> AsyncGenerator[SSEEvent, None]:
        """The provider's events: all of them while the client reads, then as many as the limits allow. The
        deadline bounds the read in progress too (a provider that stalls after the client left): once the
        client has gone, the relay awaits nothing but the provider, so that is where it lands."""
        deadline = self.left_at + self.limits.seconds if self.left_at is not None else None
        try:
            async with asyncio.timeout(deadline) as self._bound:
                async for event in events:
                    yield event
                    if self.left_at is not None:
                        self._read += len(event.raw)
                        if self._read > self.limits.bytes:
                            self.cut = True
                            return
        except TimeoutError:
            if self._bound is None or not self._bound.expired():
                raise
            self.cut = True
        finally:
            self._bound = None


def drains_of(services: Services) -> Drains:
    """The process's drains, made on first use."""
    drains = services.extras.get(EXTRAS_KEY)
    if not isinstance(drains, Drains):
        drains = services.extras[EXTRAS_KEY] = Drains()
    return drains


class Drains:
    """The relays of one gateway process that run on after their client left; stopped at shutdown (kept in
    Services.extras, whose `aclose` runs before the state store closes)."""

    def __init__(self) -> None:
        self._running: dict[asyncio.Task[None], ClientEnd] = {}

    def keep(self, task: asyncio.Task[None], client: ClientEnd) -> None:
        self._running[task] = client
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        if task.cancelled():
            return
        try:
            task.result()
        except Exception:
            log_failure(log, "a drained stream failed")

    async def aclose(self) -> None:
        running = dict(self._running)
        for client in running.values():
            client.stop()
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=CLOSE_S)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
