"""The MCP endpoint (/mcp, Streamable HTTP; /mcp/sse and /mcp/messages/, the older HTTP+SSE transport,
gateway/mcp/sse.py): authenticates the caller with its cachegate key, then hands the request to the MCP
SDK's transport, whose server lists and calls the upstreams' tools (gateway/mcp/tools.py), and passes
their prompts and resources through (prompts.py, resources.py); tool listings and calls the SDK would
answer with one JSON body take a shorter way to the same handlers (gateway/mcp/fast.py, unless
``mcp.fast_path`` is off). Mounted only when ``mcp.servers`` is configured.

The caller's key is checked on every HTTP request (a session id proves nothing; a session's requests
are accepted only with the key that opened it) and goes no further; the authenticated caller travels to
the handlers in the request's ASGI scope.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gateway.mcp.caller import CURRENT_CALLER, Callers
from gateway.mcp.fast import FastPath
from gateway.mcp.guard import ToolGuard
from gateway.mcp.held import Held
from gateway.mcp.limits import CallLimits
from gateway.mcp.metrics import McpMetrics
from gateway.mcp.prompts import Prompts
from gateway.mcp.resources import Resources
from gateway.mcp.sse import MESSAGES_PATH, STREAM_PATH, AsgiRoute, SseEndpoint, unauthorized, with_caller
from gateway.mcp.tools import Tools
from gateway.mcp.upstream import Upstreams
from gateway.services import Services

PATH = "/mcp"


class McpEndpoint:
    """The ASGI app at /mcp, and everything it owns (closed with the services)."""

    def __init__(self, services: Services) -> None:
        settings = services.settings
        max_bytes = settings.mcp.max_result_bytes
        self.callers = Callers(services.keys, settings.policy)
        self.upstreams = Upstreams(settings.mcp.servers)
        guard = ToolGuard(services.store, settings.policy.guard.session_ttl_s)
        metrics = McpMetrics(services.metrics.registry)
        tracer = services.tracing.tracer
        limits = CallLimits(services.store)
        tools = Tools(self.upstreams, guard, metrics, services.requests, tracer, max_bytes, limits)
        prompts = Prompts(self.upstreams, max_bytes)
        resources = Resources(self.upstreams, max_bytes)
        server: Server[Any] = Server(
            "cachegate",
            on_list_tools=tools.list_tools,
            on_call_tool=tools.call_tool,
            get_tool_input_schema=tools.input_schema,
            on_list_prompts=prompts.list_prompts,
            on_get_prompt=prompts.get_prompt,
            on_list_resources=resources.list_resources,
            on_list_resource_templates=resources.list_resource_templates,
            on_read_resource=resources.read_resource,
        )
        # The gateway makes its own spans of a tool call (gateway/mcp/spans.py): not the SDK's too.
        server.middleware = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
        self.manager = StreamableHTTPSessionManager(
            app=server, json_response=True, max_request_body_size=settings.max_body_bytes
        )
        self.fast = FastPath(self.manager, metrics) if settings.mcp.fast_path else None
        self.sse = SseEndpoint(server, self.callers, settings.max_body_bytes)
        self._running: Held[None] = Held(self.manager.run, "mcp-sessions")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = self.callers.identify(Headers(scope=scope)) if scope["type"] == "http" else None
        if caller is None:
            await unauthorized()(scope, receive, send)
            return
        await self._running.get()  # the session manager's task group, started by the first request
        token = CURRENT_CALLER.set(caller)
        scope = with_caller(scope, caller)
        try:
            if self.fast is not None:
                left = await self.fast.handle(scope, receive, send)
                if left is None:
                    return
                receive, send = left, self.fast.watch(scope, send)
            await self.manager.handle_request(scope, receive, send)
        finally:
            CURRENT_CALLER.reset(token)

    async def start(self) -> None:
        """Open the upstream connections when the gateway starts (run by its lifespan): a client's first
        listing does not wait for them (a stdio server takes seconds to start; Codex sends its first
        model request without the tools of an MCP server still listing)."""
        servers = self.upstreams.by_name.values()
        await asyncio.gather(*(upstream.list_tools() for upstream in servers), return_exceptions=True)

    async def aclose(self) -> None:
        await self._running.aclose()
        await self.upstreams.aclose()


def mount_mcp(app: FastAPI, services: Services) -> None:
    """/mcp and the SSE transport's two paths, when upstream MCP servers are configured (closed with the
    services, as stage extras are)."""
    if not services.settings.mcp.servers:
        return
    endpoint = McpEndpoint(services)
    services.extras["mcp"] = endpoint
    # First in the router: a tool call is matched at once, not after every other route (~0.1 ms a call).
    app.router.routes[:0] = [
        Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False),
        Route(STREAM_PATH, AsgiRoute(endpoint.sse.stream), methods=["GET"], include_in_schema=False),
        Route(MESSAGES_PATH, AsgiRoute(endpoint.sse.message), methods=["POST"], include_in_schema=False),
    ]
