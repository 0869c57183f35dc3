"""Compaction counts tokens only where a decision needs them (issue 28): a long history whose known counts
plus its new turn's bytes stay under every threshold is not counted at all, a turn that needs counting
counts its new messages only, and the session's record rides the request's first state round trip."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import orjson
import pytest

from gateway.compaction.tokens import counter_for, message_bound
from gateway.history import memo
from gateway.history.facts import image_marks
from gateway.traces import read_sessions
from tests.compaction.sessions import TOOLS_OPENAI, openai_history
from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway
from tests.state.test_request_batch import WireCount, counting_redis

MODEL = "gpt-4o-mini"


def route(name: str, window: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "openai",
        "model": MODEL,
        "api_base": "embedded-sim",
        "context_window": window,
    } | extra


# ~5 bytes a token: 20 steps are ~55 KB (~11,000 tokens). Under a 128K window that is over the byte
# check of every threshold (shrink: 19,200) but far under compaction's trigger (64,000 tokens).
ROUTES = [route("wide", 128_000), route("narrow", 20_000)]  # narrow: trigger 10,000, under the bytes


def unique_history(steps: int, tag: str) -> list[dict[str, Any]]:
    """A synthetic agent history no other test sent (the message facts are shared by the process)."""
    return [{**m, "content": f"{m['content']} [{tag}]"} for m in openai_history(steps)]


def counted(messages: list[dict[str, Any]]) -> int:
    encoding = counter_for("openai", MODEL).name
    return sum(memo.facts(orjson.dumps(m)).tokens.get(encoding) is not None for m in messages)


def send(gw: RunningGateway, model: str, messages: list[dict[str, Any]], session: str) -> httpx.Headers:
    raw = gw.openai().chat.completions.with_raw_response.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        extra_headers={"x-session-id": session},
    )
    return raw.headers


@pytest.fixture(scope="module")
def gw() -> Any:
    policy = {"response_cache": {"enabled": False}, "prompt_cache": {"enabled": False}}
    with running_gateway(models=ROUTES, policy=policy) as gateway:
        yield gateway


def test_a_long_history_under_every_threshold_is_not_counted(gw: RunningGateway) -> None:
    tag = uuid.uuid4().hex
    for steps in (18, 19, 20):
        messages = unique_history(steps, tag)
        headers = send(gw, "wide", messages, f"wide-{tag}")
        assert headers["x-cachegate-compaction"] == "none"
        # Nothing asked for a count: the bound (bytes) showed it. Before, every message was counted.
        assert counted(messages) == 0
        assert "x-cachegate-compaction-tokens-before" not in headers


def test_a_counted_turn_counts_its_new_messages_only_and_exactly(gw: RunningGateway) -> None:
    tag = uuid.uuid4().hex
    counter = counter_for("openai", MODEL)
    first = unique_history(8, tag)  # ~22 KB, ~4,500 tokens: the bound passes the trigger, the count does not
    send(gw, "narrow", first, f"narrow-{tag}")
    assert counted(first) == len(first)
    later = unique_history(9, tag)
    assert counted(later) == len(first)  # only the new turn is left to count
    headers = send(gw, "narrow", later, f"narrow-{tag}")
    assert counted(later) == len(later)
    exact = counter.json(TOOLS_OPENAI) + sum(counter.message(m) for m in later)
    assert headers["x-cachegate-compaction"] == "none"
    assert int(headers["x-cachegate-compaction-tokens-before"]) == exact


def test_the_bound_is_never_under_the_count() -> None:
    """A message's bound from its bytes and the image marks in them (as its facts and a body's bound take
    them) covers its count, an image of every type a provider counts flat included (a URL is a few bytes)."""
    counter = counter_for("openai", MODEL)
    session = next(iter(read_sessions()))
    images = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]},
        {"role": "user", "content": [{"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}}]},
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/b.png"}, {"type": "text"}]},
        {"role": "user", "content": "é" * 50 + '\n\t"quoted"' * 20},
    ]
    for message in [*session["messages"], *images]:
        data = orjson.dumps(message)
        bound = message_bound(len(data), image_marks(data))
        assert counter.message(message) <= bound, message
    text = {"role": "user", "content": 'say "type":"image" and {"type":"document"}'}  # text, not blocks
    assert image_marks(orjson.dumps(text)) == 0


def settled(count: WireCount) -> int:
    """The round trips once the request's end and the request log's writer are done (none for 0.5 s)."""
    seen, deadline = count.trips(b"acme"), time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if (now := count.trips(b"acme")) == seen:
            break
        seen = now
    return seen


def test_the_session_record_takes_no_round_trip_of_its_own() -> None:
    """On Redis a request whose record compaction reads costs the same round trips as one with the stage
    off: the read travels with the request's first batch (before, it was one more round trip)."""
    tag = uuid.uuid4().hex[:8]
    models = [route("wide", 128_000), route("wide-off", 128_000, policy={"compaction": {"enabled": False}})]
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    trips: dict[str, list[int]] = {"wide": [], "wide-off": []}
    with (
        counting_redis() as (url, count),
        running_gateway(redis_url=url, models=models) as gw,
        httpx.Client(base_url=gw.url, headers=headers, timeout=30) as http,
    ):
        for model in trips:
            for steps in (18, 19, 20):
                before = count.trips(b"acme")
                body = {"model": model, "messages": unique_history(steps, tag), "tools": TOOLS_OPENAI}
                answer = http.post("/v1/chat/completions", json=body, headers={"x-session-id": f"{model}-{tag}"})
                assert answer.status_code == 200, answer.text
                if model == "wide":
                    assert answer.headers["x-cachegate-compaction"] == "none"
                trips[model].append(settled(count) - before)
    assert trips["wide"][1:] == trips["wide-off"][1:], trips
