"""Commands of another user of the state store's Redis client ride a request's round trip (gateway/state/
request.py `ride`; the response cache's store does, gateway/response_cache/cache.py `ride_put`): one write
carries the request's ops and theirs, each side gets its own replies, an error reply fails only its own
side, and a trip that never reached Redis tells the riders so instead of sending them again."""

from __future__ import annotations

import uuid
from typing import Any

from redis.exceptions import ResponseError

from gateway.state import MemoryStore, RedisStore, ResilientStore
from gateway.state.base import Op, Rider
from gateway.state.request import RequestStore
from tests.state.test_request_batch import counting_redis


def rider(client: object, commands: list[tuple[Any, ...]], landed: list[Any], alone: list[str] | None = None) -> Rider:
    """A rider whose lone trips (a trip that never left) are recorded in `alone`."""
    gone = alone if alone is not None else []

    async def go_alone() -> list[Any]:
        gone.append("alone")
        return []

    return Rider(client, commands, landed.append, go_alone)


async def test_riders_go_in_the_requests_round_trip_with_their_own_replies() -> None:
    tag = uuid.uuid4().hex[:8]
    with counting_redis() as (url, count):
        shared = RedisStore(url, prefix="t:")
        await shared.ping()
        view = RequestStore(shared)
        assert view.carries(shared.client) and not view.carries(object())
        landed: list[Any] = []
        view.defer([Op("set", f"{tag}-w", values=(b"1",))])
        view.ride(rider(shared.client, [("SET", f"x:{tag}", b"v"), ("INCRBY", f"x:{tag}", 1)], landed))
        view.ride(rider(shared.client, [("ECHO", tag)], landed))
        before = count.trips(tag.encode())
        assert await view.batch([Op("incr", f"{tag}-n", 2)]) == [2]
        assert count.trips(tag.encode()) - before == 1  # ops, deferred writes and both riders: one write
        first, second = landed
        assert first[0] == b"OK" and isinstance(first[1], ResponseError)  # theirs: failed in place
        assert second == [tag.encode()]
        assert await shared.get(f"{tag}-w") == b"1"  # the ops went through
        view.ride(rider(shared.client, [("ECHO", "last")], landed))
        assert view.pending == 1
        await view.flush()  # a rider alone is sent at the request's end
        assert landed[-1] == [b"last"]
        await shared.close()


async def test_an_error_among_the_ops_fails_them_but_the_riders_land() -> None:
    tag = uuid.uuid4().hex[:8]
    with counting_redis() as (url, _):
        shared = RedisStore(url, prefix="t:")
        await shared.client.rpush(f"t:{tag}", b"a")  # a list: INCRBY on it is an error reply
        landed: list[Any] = []
        fallbacks: list[str] = []
        resilient = RequestStore(ResilientStore(shared, fallbacks.append))
        resilient.ride(rider(shared.client, [("ECHO", "theirs")], landed))
        assert await resilient.batch([Op("incr", tag, 1)]) == [1]  # from the fallback memory
        assert fallbacks == ["batch"] and landed == [[b"theirs"]]
        await shared.close()


async def test_a_trip_that_never_reached_redis_tells_its_riders() -> None:
    fallbacks: list[str] = []
    down = RedisStore("redis://127.0.0.1:1/0", timeout_s=0.05)
    store = ResilientStore(down, fallbacks.append)
    view = RequestStore(store)
    landed: list[Any] = []
    alone: list[str] = []
    assert view.carries(down.client)
    view.ride(rider(down.client, [("ECHO", "x")], landed, alone))
    view.defer([Op("set", "a", values=(b"1",))])
    await view.flush()  # the ops fall back to memory; the rider is told, never sent again
    assert len(landed) == 1 and isinstance(landed[0], Exception) and view.pending == 0
    assert alone == []  # its trip failed: it is not sent alone after it
    assert not view.carries(down.client)  # marked down: nothing boards now
    assert await view.get("a") == b"1" and fallbacks[0] == "batch"


def test_a_memory_store_carries_nothing() -> None:
    assert not RequestStore(MemoryStore()).carries(object())


async def test_a_rider_whose_trip_never_left_goes_alone_before_the_request_ends() -> None:
    """Marked down after it boarded (a stalled call, say): the store never asks Redis, so the rider sends
    its commands in a trip of its own (its owner's breaker bounds it), and lands before the flush returns."""
    with counting_redis() as (url, _):
        shared = RedisStore(url, prefix="t:")
        store = ResilientStore(shared, lambda _: None)
        view = RequestStore(store)
        landed: list[Any] = []
        alone: list[str] = []
        view.ride(rider(shared.client, [("ECHO", "x")], landed, alone))
        store._mark_down()
        await view.flush()
        assert alone == ["alone"] and landed == [[]]
        await shared.close()
