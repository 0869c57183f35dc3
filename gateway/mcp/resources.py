"""resources/list, resources/templates/list and resources/read passed through, aggregated across the
servers the key may use (access: the key's server lists, as for prompts; tool globs are for tools).

Names take the servers' prefixes like tools ('<server>__<name>'). URIs, which two servers may share
('file:///README.md'), become 'cachegate://<server>/<the server's own URI>': the server's name holds no
'/', so the first one after it ends it, and a template's URI ('file:///{path}') stays a template the
client expands as it is. resources/read maps the URI back and asks that server only, with the caller's
credential for it; a URI naming no server the key may use answers "Unknown resource", like a tool that
does not exist. Contents larger than ``mcp.max_result_bytes`` answer an error.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from gateway.mcp.caller import caller_of
from gateway.mcp.listing import ask_one, bounded, gather
from gateway.mcp.naming import public_name
from gateway.mcp.upstream import Upstream, Upstreams

SCHEME = "cachegate://"


def public_uri(server: str, uri: str) -> str:
    return f"{SCHEME}{server}/{uri}"


def split_uri(uri: str) -> tuple[str, str] | None:
    """(server, the server's own URI), or None for a URI the gateway did not hand out."""
    if not uri.startswith(SCHEME):
        return None
    server, slash, own = uri[len(SCHEME) :].partition("/")
    return (server, own) if slash and server and own else None


class Resources:
    def __init__(self, upstreams: Upstreams, max_bytes: int) -> None:
        self.upstreams, self.max_bytes = upstreams, max_bytes

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listings = await gather(self.upstreams, caller_of(ctx), Upstream.list_resources)
        resources = [
            resource.model_copy(
                update={"name": public_name(u.name, resource.name), "uri": public_uri(u.name, resource.uri)}
            )
            for u, listed in listings
            for resource in listed
        ]
        return types.ListResourcesResult(resources=resources)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listings = await gather(self.upstreams, caller_of(ctx), Upstream.list_resource_templates)
        templates = [
            template.model_copy(
                update={
                    "name": public_name(u.name, template.name),
                    "uri_template": public_uri(u.name, template.uri_template),
                }
            )
            for u, listed in listings
            for template in listed
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        upstream, result = await ask_one(
            self.upstreams, caller_of(ctx), split_uri(params.uri), Upstream.read_resource, ("resource", params.uri)
        )
        contents = [c.model_copy(update={"uri": public_uri(upstream.name, c.uri)}) for c in result.contents]
        return bounded(result.model_copy(update={"contents": contents}), self.max_bytes)
