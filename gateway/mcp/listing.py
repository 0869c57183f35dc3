"""What the caller's servers list, gathered: prompts and resources are aggregated across the upstreams
the key may use, each asked with the caller's credential for it; a server that is down, or that has none
of the kind (it answers "method not found"), adds nothing. Results the caller reads are bounded like
tool results."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel

from gateway.mcp.caller import McpCaller
from gateway.mcp.errors import not_available, upstream_failed
from gateway.mcp.upstream import Credential, Upstream, UpstreamError, Upstreams

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


async def gather(
    upstreams: Upstreams,
    caller: McpCaller,
    fetch: Callable[[Upstream, Credential | None], Awaitable[list[T]]],
) -> list[tuple[Upstream, list[T]]]:
    """Each allowed server's listing, in the configured order (failed ones left out)."""
    access = caller.policy.mcp
    servers = [u for u in upstreams.by_name.values() if access.server_allowed(u.name)]
    listings = await asyncio.gather(
        *(fetch(u, access.credentials.get(u.name)) for u in servers), return_exceptions=True
    )
    return [(u, listed) for u, listed in zip(servers, listings, strict=True) if not isinstance(listed, BaseException)]


async def ask_one(
    upstreams: Upstreams,
    caller: McpCaller,
    target: tuple[str, str] | None,
    fetch: Callable[[Upstream, str, Credential | None], Awaitable[R]],
    missing: tuple[str, str],
) -> tuple[Upstream, R]:
    """The answer of the server `target` names (server, name there), asked with the caller's credential;
    `missing` (kind, name shown) is the error when the key may not use it or there is none."""
    access = caller.policy.mcp
    upstream = upstreams.get(target[0]) if target is not None else None
    if target is None or upstream is None or not access.server_allowed(upstream.name):
        raise not_available(*missing)
    try:
        return upstream, await fetch(upstream, target[1], access.credentials.get(upstream.name))
    except UpstreamError as exc:
        raise upstream_failed(str(exc)) from None


def bounded(result: R, max_bytes: int) -> R:
    """`result`, unless its JSON is larger than `max_bytes` (an MCP error, as for a tool result)."""
    if len(result.model_dump_json(by_alias=True, exclude_none=True)) > max_bytes:
        raise upstream_failed(f"The server's answer is larger than {max_bytes} bytes.")
    return result
