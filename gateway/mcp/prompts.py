"""prompts/list and prompts/get passed through: the allowed servers' prompts under the same per-server
prefixes as tools ('<server>__<prompt>'), fetched from the server that owns them. A server that lists
none (or has no prompts at all) adds none. Access: the key's server lists (tool globs are for tools)."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from gateway.mcp.caller import caller_of
from gateway.mcp.errors import not_available, upstream_failed
from gateway.mcp.naming import public_name, split_name
from gateway.mcp.upstream import UpstreamError, Upstreams


class Prompts:
    def __init__(self, upstreams: Upstreams) -> None:
        self.upstreams = upstreams

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        access = caller_of(ctx).policy.mcp
        servers = [u for u in self.upstreams.by_name.values() if access.server_allowed(u.name)]
        listings = await asyncio.gather(*(u.list_prompts() for u in servers), return_exceptions=True)
        prompts = [
            prompt.model_copy(update={"name": public_name(upstream.name, prompt.name)})
            for upstream, listed in zip(servers, listings, strict=True)
            if not isinstance(listed, BaseException)  # a server without prompts, or down: none of its own
            for prompt in listed
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        access = caller_of(ctx).policy.mcp
        target = split_name(params.name)
        upstream = self.upstreams.get(target[0]) if target is not None else None
        if target is None or upstream is None or not access.server_allowed(upstream.name):
            raise not_available("prompt", params.name)
        try:
            return await upstream.get_prompt(target[1], params.arguments)
        except UpstreamError as exc:
            raise upstream_failed(str(exc)) from None
