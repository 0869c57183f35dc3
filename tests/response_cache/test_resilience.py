"""A corrupt entry is dropped, never served; a dead Redis skips the cache while requests are still answered."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.gateway_harness import running_gateway
from tests.ports import spawn_port
from tests.redis_target import redis_client
from tests.response_cache.conftest import REDIS_URL, Replicas, metric
from tests.response_cache.test_exact import ask, cache_trace


def entry_keys(namespace: str) -> list[bytes]:
    return list(redis_client(REDIS_URL).scan_iter(match=f"cg:rc:acme:{namespace}:*"))


@pytest.mark.parametrize("damage", ["garbage", "flipped_byte", "other_key"])
def test_corrupt_entry_is_dropped(replicas: Replicas, namespace: str, damage: str) -> None:
    client = redis_client(REDIS_URL)
    prompt = f"Corruptible {uuid.uuid4().hex}"
    assert ask(replicas.a, prompt, namespace)[0] == "miss"
    [key] = entry_keys(namespace)
    stored: Any = client.get(key)
    assert isinstance(stored, bytes)
    if damage == "garbage":
        client.set(key, b"not an entry at all")
    elif damage == "flipped_byte":
        client.set(key, stored.replace(prompt.encode(), b"Injected answer text".ljust(len(prompt))))
    else:  # a valid entry copied under another key must not answer for it
        other = f"Other {uuid.uuid4().hex}"
        ask(replicas.a, other, namespace)
        client.set(key, client.get(next(k for k in entry_keys(namespace) if k != key)) or b"")
    before = metric(replicas.b, "cachegate_response_cache_errors_total", kind="corrupt_entry")
    assert ask(replicas.b, prompt, namespace) == ("miss", prompt)
    counted = metric(replicas.b, "cachegate_response_cache_errors_total", kind="corrupt_entry")
    assert counted == before + 1, cache_trace(replicas)
    # the fresh answer replaced it
    assert ask(replicas.b, prompt, namespace) == ("exact", prompt), cache_trace(replicas)


@pytest.fixture
def doomed_redis() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A redis-server of the test's own on a free port, so the test can kill it."""
    port = spawn_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
    yield server, url
    server.kill()
    server.wait()


def test_redis_outage_skips_the_cache(doomed_redis: tuple[subprocess.Popen[bytes], str]) -> None:
    server, url = doomed_redis
    with running_gateway(redis_url=url) as gw:
        prompt = f"Outage {uuid.uuid4().hex}"
        assert ask(gw, prompt, "outage") == ("miss", prompt)
        assert ask(gw, prompt, "outage") == ("exact", prompt)
        server.kill()
        server.wait()
        started = time.monotonic()
        for _ in range(3):
            assert ask(gw, prompt, "outage") == ("miss", prompt)  # answered by the provider
        stream = gw.openai().chat.completions.create(
            model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": prompt}]
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == prompt
        assert time.monotonic() - started < 5
        assert metric(gw, "cachegate_response_cache_skips_total", tier="all", reason="backend_unavailable") >= 3
