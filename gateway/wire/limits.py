"""Per-request size caps that bound the work every later stage does, at the providers' own limits.

Anthropic documents at most 100,000 messages in one Messages API request; OpenAI's Chat Completions
documents no lower count for `messages` (its documented per-message cap is 128 `tool_calls`). The gateway
may route either shape to either provider, so the cap is the larger documented one: nothing a provider
accepts is refused. Content parts have no documented cap; the body-size limit bounds them (a part costs
at least ~20 bytes, so an 8 MiB body holds < 500,000), and the stages that walk them bound their own work.

Validating a long history is linear pure-Python work (~1.5 us a message: 150+ ms for 100,000): past
THREADED_VALIDATION_MESSAGES it runs in a worker thread, where the interpreter hands the event loop
the GIL every few milliseconds instead of stalling every other request for the whole walk.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.errors import bad_request
from gateway.wire.base import WireFormat

MAX_MESSAGES = 100_000  # Anthropic Messages API: "a limit of 100,000 messages in a single request"
THREADED_VALIDATION_MESSAGES = 5_000  # fewer validate inline in < ~10 ms


def check_limits(wire: WireFormat, body: Any) -> None:
    """400 (not retried: the same body always fails) when a request holds more messages than any provider takes."""
    field = wire.history_field
    messages = body.get(field) if isinstance(body, dict) else None
    if isinstance(messages, list) and len(messages) > MAX_MESSAGES:
        raise bad_request(
            f"'{field}' holds {len(messages)} messages; at most {MAX_MESSAGES} are accepted in one request.",
            param=field,
        )


async def validate_within_limits(wire: WireFormat, body: Any, known: int = 0) -> None:
    """The caps above, then the wire's own validation (off the event loop for long histories; `known`:
    WireFormat.validate's)."""
    check_limits(wire, body)
    messages = body.get(wire.history_field) if isinstance(body, dict) else None
    if isinstance(messages, list) and len(messages) - known > THREADED_VALIDATION_MESSAGES:
        await asyncio.to_thread(wire.validate, body, known)
    else:
        wire.validate(body, known)
