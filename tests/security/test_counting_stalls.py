"""Counting tokens of hostile text never stalls another tenant (security issue #26, finding 5).

tiktoken's work grows faster than linearly with the length of one pre-tokenizer piece, and a run of
letters with no space is one piece: 6 MB of random letters took 9+ s to encode in one call (30+ s of a
core on a loaded box). Where the gateway counted on the event loop (Gemini's countTokens; the prompt
cache when a long block held few tokens) every other request waited 7-12 s; elsewhere one request kept a
core busy that long. Now text is encoded in bounded pieces (linear work), countTokens counts paced and
off the loop, and the prompt cache stops counting once the minimum is met.

A real gateway (every stage that counts on: guard, compaction, exact response cache, prompt cache) sends
the big requests to a loopback provider that answers at once, so the measured time is the gateway's own.
While tenant acme's big request runs, tenant globex keeps sending small chat requests to the simulator.
"""

from __future__ import annotations

import random
import string
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from gateway.compaction.tokens import TokenCounter, counter_for
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.redis_target import redis_url
from tests.security.upstream_probe import trap_listener

REDIS_URL = redis_url(14)  # never flushed here: every key this test makes is new
BIG_CHARS = 6_000_000
# The unfixed gateway stalled small requests 5-12 s. Measured after the fix: 0.1-0.3 s on a loaded 2-core
# box where the test's clients share the gateway's process (and GIL); the margin is for busier machines.
MAX_SMALL_LATENCY_S = 1.0
MAX_COST_RATIO = 18  # measured 10-11 (linear) after the fix, 27-37 before
OPENAI_REPLY = {
    "id": "chatcmpl-trap",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}
ANTHROPIC_REPLY = {
    "id": "msg_trap",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}
POLICY = {
    "guard": {"enabled": True},
    "compaction": {"enabled": True},
    "response_cache": {"enabled": True, "exact": True, "semantic": False},
    "prompt_cache": {"enabled": True},
}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with (
        trap_listener(status=200, reply=OPENAI_REPLY) as openai_trap,
        trap_listener(status=200, reply=ANTHROPIC_REPLY) as anthropic_trap,
    ):
        base = gateway_settings()
        models = [
            {"name": "big-gpt", "provider": "openai", "model": "gpt-4o-mini", "api_base": f"{openai_trap.url}/v1"},
            {
                "name": "big-claude",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "api_base": anthropic_trap.url,
            },
        ]
        settings = {**base, "models": [*base["models"], *models], "policy": POLICY, "redis_url": REDIS_URL}
        with running_gateway(**{**settings, "max_body_bytes": 8 * 1024 * 1024}) as gateway:
            yield gateway


def _letters(seed: int, size: int = BIG_CHARS) -> str:
    """One word of random lowercase letters: a single pre-tokenizer piece."""
    return "".join(random.Random(seed).choices(string.ascii_lowercase, k=size))


def _big_request(kind: str) -> tuple[str, dict[str, Any]]:
    """The path and body of a request within every limit (8 MiB) that is costly to count."""
    seed = uuid.uuid4().int  # nothing memoised from an earlier run
    if kind == "messages_spaces":  # ~128 characters a token: the prompt cache's minimum is met late
        spaces = [{"role": "user", "content": f"{seed}" + " " * BIG_CHARS}]
        return "/v1/messages", {"model": "big-claude", "max_tokens": 16, "messages": spaces}
    if kind == "gemini_count":
        return "/v1beta/models/big-gpt:countTokens", {
            "contents": [{"role": "user", "parts": [{"text": _letters(seed)}]}]
        }
    raise AssertionError(kind)


def _send_big(gw: RunningGateway, path: str, body: bytes, result: dict[str, Any]) -> None:
    headers = {
        "content-type": "application/json",
        "authorization": f"Bearer {TENANT_KEYS['acme']}",
        "x-goog-api-key": TENANT_KEYS["acme"],
        "anthropic-version": "2023-06-01",
    }
    started = time.perf_counter()
    response = httpx.post(f"{gw.url}{path}", content=body, headers=headers, timeout=120)
    result.update(status=response.status_code, text=response.text[:300], seconds=time.perf_counter() - started)


@pytest.mark.parametrize("kind", ["messages_spaces", "gemini_count"])
def test_counting_a_hostile_request_does_not_stall_other_tenants(gw: RunningGateway, kind: str) -> None:
    small = gw.openai("globex")
    small.chat.completions.create(model="gpt-4o-mini", max_tokens=5, messages=[{"role": "user", "content": "warm"}])
    path, body = _big_request(kind)
    result: dict[str, Any] = {}
    big = threading.Thread(target=_send_big, args=(gw, path, orjson.dumps(body), result))
    big.start()
    latencies: list[float] = []
    while big.is_alive() or not latencies:
        started = time.perf_counter()
        small.chat.completions.create(
            model="gpt-4o-mini", max_tokens=5, messages=[{"role": "user", "content": f"ping {uuid.uuid4().hex}"}]
        )
        latencies.append(time.perf_counter() - started)
        time.sleep(0.02)
    big.join()

    assert result["status"] == 200, result
    slowest = f"slowest small request {max(latencies):.3f} s, big request {result['seconds']:.1f} s"
    assert max(latencies) < MAX_SMALL_LATENCY_S, slowest


def _fastest_count_s(counter: TokenCounter, text: str, tries: int) -> float:
    seconds = []
    for _ in range(tries):
        started = time.perf_counter()
        counter.text(text)
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def test_counting_a_run_of_letters_costs_in_proportion_to_its_length() -> None:
    """Where counting runs in a worker thread (chat, Messages, count_tokens: tiktoken releases the GIL) a
    hostile message stalled no one, but held a core for 10-35 s: a few such requests starved a replica.
    Ten times the letters now cost about ten times as much (unfixed: 27-45 times, and growing)."""
    counter = counter_for("openai", "gpt-4o-mini")
    letters = _letters(uuid.uuid4().int, 4_000_000)
    ratio = _fastest_count_s(counter, letters, 2) / _fastest_count_s(counter, letters[:400_000], 3)
    assert ratio < MAX_COST_RATIO, f"10x the letters cost {ratio:.1f}x as much"
