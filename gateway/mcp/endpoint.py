"""The MCP endpoint (/mcp, Streamable HTTP): authenticates the caller with its cachegate key, then hands
the request to the MCP SDK's session manager, whose server lists and calls the upstreams' tools
(gateway/mcp/tools.py). Mounted only when ``mcp.servers`` is configured.

The caller's key is checked on every HTTP request (a session id proves nothing) and goes no further;
the authenticated caller travels to the handlers in the request's ASGI scope.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gateway.mcp.caller import CALLER, Callers
from gateway.mcp.guard import ToolGuard
from gateway.mcp.held import Held
from gateway.mcp.metrics import McpMetrics
from gateway.mcp.prompts import Prompts
from gateway.mcp.tools import Tools
from gateway.mcp.upstream import Upstreams
from gateway.services import Services

PATH = "/mcp"


def _unauthorized() -> JSONResponse:
    message = "Missing or invalid API key: send your cachegate key as 'Authorization: Bearer <key>' or 'x-api-key'."
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}, status_code=401)


class McpEndpoint:
    """The ASGI app at /mcp, and everything it owns (closed with the services)."""

    def __init__(self, services: Services) -> None:
        settings = services.settings
        self.callers = Callers(services.keys, settings.policy)
        self.upstreams = Upstreams(settings.mcp.servers)
        guard = ToolGuard(services.store, settings.policy.guard.session_ttl_s)
        metrics = McpMetrics(services.metrics.registry)
        tracer = services.tracing.tracer
        tools = Tools(self.upstreams, guard, metrics, services.requests, tracer, settings.mcp.max_result_bytes)
        prompts = Prompts(self.upstreams)
        server: Server[Any] = Server(
            "cachegate",
            on_list_tools=tools.list_tools,
            on_call_tool=tools.call_tool,
            on_list_prompts=prompts.list_prompts,
            on_get_prompt=prompts.get_prompt,
        )
        self.manager = StreamableHTTPSessionManager(
            app=server, json_response=True, max_request_body_size=settings.max_body_bytes
        )
        self._running: Held[None] = Held(self.manager.run, "mcp-sessions")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = self.callers.identify(Headers(scope=scope)) if scope["type"] == "http" else None
        if caller is None:
            await _unauthorized()(scope, receive, send)
            return
        await self._running.get()  # the session manager's task group, started by the first request
        await self.manager.handle_request({**scope, CALLER: caller}, receive, send)

    async def aclose(self) -> None:
        await self._running.aclose()
        await self.upstreams.aclose()


def mount_mcp(app: FastAPI, services: Services) -> None:
    """/mcp, when upstream MCP servers are configured (closed with the services, as stage extras are)."""
    if not services.settings.mcp.servers:
        return
    endpoint = McpEndpoint(services)
    services.extras["mcp"] = endpoint
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
