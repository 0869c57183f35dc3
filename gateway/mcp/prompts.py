"""prompts/list and prompts/get passed through: the allowed servers' prompts under the same per-server
prefixes as tools ('<server>__<prompt>'), fetched from the server that owns them with the caller's
credential for it. A server that lists none (or has no prompts at all) adds none. Access: the key's
server lists (tool globs are for tools). A prompt larger than ``mcp.max_result_bytes`` answers an error."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from gateway.mcp.caller import caller_of
from gateway.mcp.listing import ask_one, bounded, gather
from gateway.mcp.naming import public_name, split_name
from gateway.mcp.upstream import Upstream, Upstreams


class Prompts:
    def __init__(self, upstreams: Upstreams, max_bytes: int) -> None:
        self.upstreams, self.max_bytes = upstreams, max_bytes

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        listings = await gather(self.upstreams, caller_of(ctx), Upstream.list_prompts)
        prompts = [
            prompt.model_copy(update={"name": public_name(upstream.name, prompt.name)})
            for upstream, listed in listings
            for prompt in listed
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        _, result = await ask_one(
            self.upstreams,
            caller_of(ctx),
            split_name(params.name),
            lambda upstream, name, credential: upstream.get_prompt(name, params.arguments, credential),
            ("prompt", params.name),
        )
        return bounded(result, self.max_bytes)
