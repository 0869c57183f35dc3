"""Forwarded headers that change the provider's answer (anthropic-beta, openai-beta, anthropic-version) are
part of the response-cache key: the same body under another beta must not be served the first one's answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from gateway.response_cache.keys import canonical_request, exact_key, semantic_scope
from tests.gateway_harness import RunningGateway, running_gateway
from tests.security.upstream_probe import request_body, send


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(policy={"response_cache": {"semantic": False}}) as gw:
        yield gw


def _cache(gw: RunningGateway, wire: str, model: str, prompt: str, headers: dict[str, str]) -> str:
    namespace = {"x-cachegate-cache-namespace": "cache-key-headers"}
    status, _, head = send(gw, wire, request_body(wire, model, prompt, temperature=0), {**namespace, **headers})
    assert status == 200
    result: str = json.loads(head)["x-cachegate-cache"]
    return result


@pytest.mark.parametrize(
    ("wire", "model", "header"),
    [("anthropic", "claude-sonnet-4-5", "anthropic-beta"), ("openai", "gpt-4o-mini", "openai-beta")],
)
def test_another_beta_header_is_another_cache_entry(gw: RunningGateway, wire: str, model: str, header: str) -> None:
    prompt = f"beta header {uuid.uuid4().hex}"
    assert _cache(gw, wire, model, prompt, {header: "feature-a-2025-01-01"}) == "miss"
    assert _cache(gw, wire, model, prompt, {header: "feature-a-2025-01-01"}) == "exact"
    assert _cache(gw, wire, model, prompt, {header: "feature-b-2025-02-02"}) == "miss"
    assert _cache(gw, wire, model, prompt, {}) == "miss"
    # The same set of betas in another order or spacing is the same request.
    both = "feature-a-2025-01-01,feature-b-2025-02-02"
    assert _cache(gw, wire, model, prompt, {header: both}) == "miss"
    assert _cache(gw, wire, model, prompt, {header: "feature-b-2025-02-02 , feature-a-2025-01-01"}) == "exact"


def test_anthropic_version_is_part_of_the_key(gw: RunningGateway) -> None:
    prompt = f"version header {uuid.uuid4().hex}"
    model = "claude-sonnet-4-5"
    assert _cache(gw, "anthropic", model, prompt, {"anthropic-version": "2023-06-01"}) == "miss"
    assert _cache(gw, "anthropic", model, prompt, {"anthropic-version": "2023-01-01"}) == "miss"
    assert _cache(gw, "anthropic", model, prompt, {"anthropic-version": "2023-06-01"}) == "exact"


def test_headers_that_never_reach_the_provider_do_not_split_the_cache(gw: RunningGateway) -> None:
    prompt = f"other header {uuid.uuid4().hex}"
    assert _cache(gw, "openai", "gpt-4o-mini", prompt, {"x-request-note": "a"}) == "miss"
    assert _cache(gw, "openai", "gpt-4o-mini", prompt, {"x-request-note": "b"}) == "exact"


def test_semantic_scope_is_split_by_beta_headers_too() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "what is a cache?"}]}
    plain = canonical_request("anthropic", body)
    beta = canonical_request("anthropic", body, {"anthropic-beta": "context-1m-2025-08-07"})
    assert exact_key("anthropic", plain) != exact_key("anthropic", beta)
    plain_scope, beta_scope = semantic_scope("anthropic", plain), semantic_scope("anthropic", beta)
    assert plain_scope is not None and beta_scope is not None
    assert plain_scope.settings_hash != beta_scope.settings_hash
    assert plain_scope.prompt == beta_scope.prompt
