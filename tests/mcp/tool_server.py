"""A small MCP server for the tests: a file tool (read_file, under one root), a flaky tool that fails
every other call, a tool that echoes the request headers it got, one prompt, and the root's files as
resources (and a template for them). Serves Streamable HTTP (``python -m tests.mcp.tool_server PORT
ROOT``), stdio (``python -m tests.mcp.tool_server stdio ROOT``) or HTTP+SSE (``sse_app``, in tests)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

TOOLS = [
    types.Tool(
        name="read_file",
        description="Read a text file under the server's root",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    types.Tool(
        name="flaky",
        description="Fails every other call",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="whoami",
        description="The request headers the server saw (names only), for the credential tests",
        input_schema={"type": "object", "properties": {}},
    ),
]


PROMPTS = [
    types.Prompt(
        name="review",
        description="Ask for a review of a topic",
        arguments=[types.PromptArgument(name="topic", required=True)],
    )
]


async def list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
    topic = (params.arguments or {}).get("topic", "")
    message = types.PromptMessage(role="user", content=types.TextContent(text=f"Please review {topic}."))
    return types.GetPromptResult(messages=[message])


NOTES_URI = "file:///notes.txt"
TEMPLATE = types.ResourceTemplate(name="file", uri_template="file:///{path}", description="A file under the root")


def build_server(root: Path) -> Server[Any]:
    calls = {"flaky": 0}

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[types.Resource(name="notes", uri=NOTES_URI, mime_type="text/plain")]
        )

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        path = (root / params.uri.removeprefix("file:///")).resolve()
        text = path.read_text() if path.is_relative_to(root.resolve()) and path.is_file() else ""
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text=text)])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "read_file":
            path = (root / str(args.get("path", ""))).resolve()
            if not path.is_relative_to(root.resolve()) or not path.is_file():
                return types.CallToolResult(content=[types.TextContent(text="no such file")], is_error=True)
            return types.CallToolResult(content=[types.TextContent(text=path.read_text())])
        if params.name == "flaky":
            calls["flaky"] += 1
            if calls["flaky"] % 2:
                return types.CallToolResult(content=[types.TextContent(text="temporary failure")], is_error=True)
            return types.CallToolResult(content=[types.TextContent(text=f"ok {calls['flaky']}")])
        if params.name == "whoami":
            request = ctx.request
            headers = dict(getattr(request, "headers", {}) or {})
            text = " ".join(f"{k}={v}" for k, v in sorted(headers.items()))
            return types.CallToolResult(content=[types.TextContent(text=text)])
        return types.CallToolResult(content=[types.TextContent(text="unknown tool")], is_error=True)

    return Server(
        "test-tools",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )


def sse_app(root: Path) -> Starlette:
    """The server over the older HTTP+SSE transport: GET /sse, POST /messages/?session_id=..."""
    server = build_server(root)
    transport = SseServerTransport("/messages/")

    class Stream:  # an ASGI endpoint (Starlette calls a plain function with a Request); no gateway import here
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            async with transport.connect_sse(scope, receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())

    return Starlette(
        routes=[
            Route("/sse", Stream(), methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
        ]
    )


def main() -> None:
    mode, root = sys.argv[1], Path(sys.argv[2])
    server = build_server(root)
    if mode == "stdio":

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    app = server.streamable_http_app(streamable_http_path="/mcp")
    uvicorn.run(app, host="127.0.0.1", port=int(mode), log_level="warning")


if __name__ == "__main__":
    main()
