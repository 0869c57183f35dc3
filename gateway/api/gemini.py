"""The Gemini API endpoints: `POST /v1beta/models/{model}:{method}` (and the same under /v1/).

- `generateContent`: one response.
- `streamGenerateContent?alt=sse`: SSE chunks (what Gemini CLI and the google-genai SDKs ask for).
  Without `alt=sse` Google streams one JSON array of chunks; the gateway answers that form with an array
  holding the one complete response (a valid array of GenerateContentResponse, sent when it is done).
- `countTokens`: answered by the gateway itself with its own token counting, `{"totalTokens": n}`.

The model comes from the path and goes on the request context (`path_model`), the API key from
`x-goog-api-key` or `?key=` (`query_key`; query strings are never logged).
"""

from __future__ import annotations

import re

import orjson
from starlette.requests import Request
from starlette.responses import Response

from gateway.api.admission import admit, finish
from gateway.api.body import read_json
from gateway.api.errors import error_response
from gateway.api.headers import request_headers
from gateway.compaction.tokens import counter_for
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError, bad_request
from gateway.pacing import Pacer
from gateway.services import Services
from gateway.wire import GEMINI
from gateway.wire.gemini_convert import to_openai

PREFIXES = ("/v1beta/models/", "/v1/models/")  # Gemini CLI and google-genai 1.x use v1beta; 3.x defaults to v1
PATH = re.compile(r"/v1(?:beta)?/models/([^/:]+):([A-Za-z]+)")
METHODS = ("generateContent", "streamGenerateContent", "countTokens")


def not_found(what: str) -> GatewayError:
    return GatewayError(ErrorKind.NOT_FOUND, what, code="not_found")


async def gemini_endpoint(request: Request) -> Response:
    from gateway.api.proxy import proxy  # the shared handler; imported here to avoid an import cycle

    services: Services = request.app.state.services
    match = PATH.fullmatch(request.url.path)
    if match is None or match.group(2) not in METHODS:
        error = not_found(f"Method not found; this gateway serves {', '.join(METHODS)}.")
        return error_response(GEMINI, error, services.metrics)
    model, method = match.groups()
    query_key = request.query_params.get("key") or None
    if method == "countTokens":
        return await count_tokens(request, services, model, query_key)
    streaming = method == "streamGenerateContent"
    sse = streaming and request.query_params.get("alt") == "sse"
    return await proxy(
        request, GEMINI, path_model=model, path_stream=sse, query_key=query_key, json_array=streaming and not sse
    )


async def count_tokens(request: Request, services: Services, model: str, query_key: str | None) -> Response:
    """Counted locally (the route's tokenizer, as compaction counts), never sent to a provider."""
    ctx = RequestContext(wire=GEMINI, body={}, headers=request_headers(request), services=services, query_key=query_key)
    try:
        await admit(ctx)  # authentication and rate limits, as for every request
        tenant = ctx.tenant
        assert tenant is not None
        route = services.settings.model_by_name(model)
        if route is None or (tenant.allowed_models is not None and route.name not in tenant.allowed_models):
            raise not_found(f"models/{model} is not found for API version v1beta.")
        body = await read_json(request, services.settings.max_body_bytes)
        if not isinstance(body, dict):
            raise bad_request("Request body must be a JSON object.")
        inner = body.get("generateContentRequest")
        request_body = inner if isinstance(inner, dict) else {"contents": body.get("contents") or [], **body}
        GEMINI.validate({**request_body, "contents": request_body.get("contents") or [{"parts": []}]})
        chat = to_openai(request_body, stream=False)
        counter = counter_for(route.provider, route.model)
        # Paced, and large messages counted in a worker thread: never long on the event loop.
        total = sum(await counter.count_messages(chat["messages"], Pacer()))
        total += await counter.json_off_loop(chat["tools"]) if chat.get("tools") else 0
        return Response(orjson.dumps({"totalTokens": total}), media_type="application/json")
    except GatewayError as error:
        return error_response(GEMINI, error, services.metrics)
    finally:
        await finish(ctx)
