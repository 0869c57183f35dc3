"""The OpenAPI document and its Swagger UI page, for admin keys only: the document maps every admin
endpoint and parameter, which a caller probing the gateway has no business reading."""

from __future__ import annotations

from fastapi.openapi.docs import get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.api.admin import require_admin

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"


async def openapi_document(request: Request) -> Response:
    require_admin(request)
    return JSONResponse(request.app.openapi())


async def swagger_ui(request: Request) -> Response:
    require_admin(request)
    # The document goes inline: the page's own fetch of /openapi.json would carry no key.
    return get_swagger_ui_html(
        openapi_url="", title=f"{request.app.title} - API", swagger_ui_parameters={"spec": request.app.openapi()}
    )
