"""A loopback stub provider that answers every POST with one recorded exchange of a real API (a JSON error
body, or an SSE stream), and keeps the request bodies it got."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers import run_app_in_thread


@dataclass
class Recorded:
    status: int = 200
    body: Any = None  # a JSON body; or
    events: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None  # the stream for a request body


@dataclass
class Stub:
    url: str
    answer: Recorded = field(default_factory=Recorded)
    requests: list[dict[str, Any]] = field(default_factory=list)


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


@contextmanager
def recorded_provider() -> Iterator[Stub]:
    stub = Stub(url="")

    async def answer(request: Request) -> Response:
        body = orjson.loads(await request.body())
        stub.requests.append(body)
        recorded = stub.answer
        if recorded.events is not None:
            return Response(sse(recorded.events(body)), recorded.status, media_type="text/event-stream")
        return Response(orjson.dumps(recorded.body), recorded.status, media_type="application/json")

    app = Starlette(routes=[Route("/{path:path}", answer, methods=["POST"])])
    with run_app_in_thread(app) as url:
        stub.url = url
        yield stub


def routes(url: str, path: str) -> list[dict[str, Any]]:
    """An OpenAI, an Anthropic and a Gemini route to the stub."""
    common = {"api_base": url, "path": path, "retries": 0}
    return [
        {"name": "gpt-4o", "provider": "openai", "model": "gpt-4o", **common},
        {"name": "claude-sonnet-4-5", "provider": "anthropic", "model": "claude-sonnet-4-5", **common},
        {"name": "gemini-2.5-flash", "provider": "gemini", "model": "gemini-2.5-flash", **common},
    ]
