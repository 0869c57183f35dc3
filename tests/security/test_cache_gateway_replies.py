"""The response cache never stores an answer the gateway wrote or cut (issue #11, item 8): a loop guard's
stop reply and an answer cut for chanting must not be served to another session sending the same body.

Real gateway on loopback with the response cache on (state in a real Redis), the official OpenAI SDK,
two sessions of one tenant sending the same body at temperature 0.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.config import hash_key
from gateway.sim.responses import CHANT_SENTENCE
from tests.gateway_harness import REDIS_TEST_URL, TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

CACHE = "x-cachegate-cache"
GUARD = "x-cachegate-guard"


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    stop_first = {"guard": {"rungs": ["stop", "block"]}}  # globex: the first detection stops the session
    settings = gateway_settings(
        redis_url=REDIS_TEST_URL,
        tenants=[
            {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])]},
            {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "policy": stop_first},
        ],
    )
    with running_gateway(**settings) as gateway:
        yield gateway


def chanting_body() -> list[dict[str, Any]]:
    # A nonce keeps earlier runs' cache entries (Redis outlives a test run) out of the way.
    return [{"role": "user", "content": f"[[sim:chant 60]] ({uuid.uuid4().hex})"}]


def send(
    gw: RunningGateway, tenant: str, session: str, messages: list[dict[str, Any]], stream: bool
) -> tuple[str, dict[str, str]]:
    """The answer's text and the response headers."""
    client = gw.openai(tenant, default_headers={"x-session-id": session})
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=messages,  # type: ignore[arg-type]
        temperature=0,
        stream=stream,  # type: ignore[arg-type]
    )
    headers = dict(raw.headers)
    if not stream:
        return raw.parse().choices[0].message.content or "", headers  # type: ignore[union-attr]
    text = "".join(choice.delta.content or "" for chunk in raw.parse() for choice in chunk.choices)  # type: ignore[union-attr]
    return text, headers


@pytest.mark.parametrize("stream", [False, True])
def test_stop_reply_is_not_served_from_the_cache(gw: RunningGateway, stream: bool) -> None:
    messages = chanting_body()
    text, _ = send(gw, "globex", f"stop-a-{uuid.uuid4().hex}", messages, stream)
    if not stream:  # a stream was already cut by the time the stop was decided
        assert text.startswith("Stopped by the loop guard")
    other_text, other = send(gw, "globex", f"stop-b-{uuid.uuid4().hex}", messages, stream)
    assert other[CACHE] == "miss", other_text


@pytest.mark.parametrize("stream", [False, True])
def test_chanting_cut_is_not_served_from_the_cache(gw: RunningGateway, stream: bool) -> None:
    messages = chanting_body()
    text, headers = send(gw, "acme", f"cut-a-{uuid.uuid4().hex}", messages, stream)
    assert headers.get(GUARD, "").startswith("nudge;") or stream  # streams report it in the trailer
    assert CHANT_SENTENCE in text and len(text) < 60 * len(CHANT_SENTENCE) / 2
    other_text, other = send(gw, "acme", f"cut-b-{uuid.uuid4().hex}", messages, stream)
    assert other[CACHE] == "miss", other_text


def test_upstream_answers_are_still_cached(gw: RunningGateway) -> None:
    messages = [{"role": "user", "content": f"hello ({uuid.uuid4().hex})"}]
    send(gw, "acme", f"plain-a-{uuid.uuid4().hex}", messages, False)
    _, other = send(gw, "acme", f"plain-b-{uuid.uuid4().hex}", messages, False)
    assert other[CACHE] == "exact"
