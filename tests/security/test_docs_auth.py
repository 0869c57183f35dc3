"""The OpenAPI document and the docs page need an admin key (issue #26, finding 11): they map every admin
endpoint and parameter. Real gateway on loopback, plain HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway, running_gateway


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway() as gateway:
        yield gateway


@pytest.mark.parametrize("path", ["/openapi.json", "/docs"])
@pytest.mark.parametrize("key", [None, TENANT_KEYS["acme"], "sk-made-up"], ids=["no key", "tenant key", "bad key"])
def test_docs_need_an_admin_key(gw: RunningGateway, path: str, key: str | None) -> None:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    response = httpx.get(gw.url + path, headers=headers)
    assert response.status_code == 401
    assert "/admin/config" not in response.text


def test_admins_read_the_document_and_the_page(gw: RunningGateway) -> None:
    document = httpx.get(gw.url + "/openapi.json", headers=ADMIN_HEADERS)
    assert document.status_code == 200
    assert {"/v1/chat/completions", "/admin/config"} <= set(document.json()["paths"])
    assert "/openapi.json" not in document.json()["paths"]
    page = httpx.get(gw.url + "/docs", headers=ADMIN_HEADERS)
    assert page.status_code == 200 and "SwaggerUIBundle" in page.text
    assert "/admin/config" in page.text  # the document is inline: the page's own fetch would carry no key


def test_redoc_is_not_served(gw: RunningGateway) -> None:
    assert httpx.get(gw.url + "/redoc").status_code == 404
