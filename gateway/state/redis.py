"""Redis state, shared by every gateway replica (redis-py asyncio)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from gateway.state.base import Held, Meter, Op, Rider, StateStore, StateUnavailable, Window
from gateway.state.clients import redis_client
from gateway.state.deadline import StallTolerantDeadline, backstop_s
from gateway.state.exchange import Command, exchange

# Sorted sets of holders scored by when their place frees; Redis's own clock, so replicas never disagree.
# KEYS: the windows; ARGV: holder, then (limit, seconds) per window. Returns "0" (taken) or the wait.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local wait = 0
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local limit = tonumber(ARGV[2 * i])
  if redis.call('ZCARD', key) >= limit then
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    wait = math.max(wait, tonumber(first[2]) - now, 0.001)
  end
end
if wait > 0 then return tostring(wait) end
for i, key in ipairs(KEYS) do
  local seconds = tonumber(ARGV[2 * i + 1])
  redis.call('ZADD', key, now + seconds, ARGV[1])
  redis.call('PEXPIRE', key, math.ceil(seconds * 1000))
end
return '0'
"""

# Meters: per meter three keys (holds: a sorted set of holders by expiry, its amounts hash, the spent
# counter, or the holds key again when there is none) and ARGV limit, seconds, amount, has-counter.
# Returns the refusing meter (1-based, 0: held), the wait, then each meter's spent counter.
_METER_TRIM = """
local function trim(z, h, now)
  for _, holder in ipairs(redis.call('ZRANGEBYSCORE', z, '-inf', now)) do redis.call('HDEL', h, holder) end
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
end
local function put(z, h, holder, amount, until_s, seconds)
  redis.call('ZADD', z, until_s, holder)
  redis.call('HSET', h, holder, amount)
  redis.call('PEXPIRE', z, math.ceil(seconds * 1000))
  redis.call('PEXPIRE', h, math.ceil(seconds * 1000))
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local n = #KEYS / 3
"""
_HOLD = (
    _METER_TRIM
    + """
local spent, refused, wait = {}, 0, 0
for i = 1, n do
  local z, h, s, a = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], 1 + 4 * (i - 1)
  trim(z, h, now)
  local used = 0
  if ARGV[a + 4] == '1' then used = tonumber(redis.call('GET', s) or '0') end
  spent[i] = tostring(used)
  local held = 0
  for _, amount in ipairs(redis.call('HVALS', h)) do held = held + tonumber(amount) end
  if refused == 0 and used + held >= tonumber(ARGV[a + 1]) then
    refused = i
    local oldest = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
    if oldest[2] then wait = math.max(tonumber(oldest[2]) - now, 0) end
  end
end
if refused == 0 then
  for i = 1, n do
    local a = 1 + 4 * (i - 1)
    local seconds = tonumber(ARGV[a + 2])
    put(KEYS[3 * i - 2], KEYS[3 * i - 1], ARGV[1], ARGV[a + 3], now + seconds, seconds)
  end
end
return {refused, tostring(wait), unpack(spent)}
"""
)
# ARGV per meter: amount, seconds, has-counter, the counter's TTL in ms (0: none); last, replay ('1': only
# the holds still held are settled, so a settle that ran before its answer was lost is not counted twice).
_SETTLE = (
    _METER_TRIM
    + """
local replay = ARGV[#ARGV] == '1'
for i = 1, n do
  local z, h, s, a = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], 1 + 4 * (i - 1)
  trim(z, h, now)
  redis.call('ZREM', z, ARGV[1])
  local held = redis.call('HDEL', h, ARGV[1]) == 1
  local amount, seconds = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  if replay and not held then
    amount = 0
  end
  if amount > 0 and ARGV[a + 3] == '1' then
    redis.call('INCRBYFLOAT', s, ARGV[a + 1])
    if tonumber(ARGV[a + 4]) > 0 then redis.call('PEXPIRE', s, ARGV[a + 4], 'NX') end
  elseif amount > 0 then
    put(z, h, ARGV[1], ARGV[a + 1], now + seconds, seconds)
  end
end
return 0
"""
)

# Compare-and-set of a hash field. KEYS: the hash; ARGV: field, expected value, value, '1' when the field
# is expected not to exist. Returns 1 when set.
_HSWAP = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[4] == '1' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""

# Counters kept as the fields of one hash, stepped in one command. KEYS: the hash; ARGV: the TTL in ms (0:
# none; set when the hash is created, as INCRBY and PEXPIRE NX do for a counter), then name, amount pairs.
# Returns each field's value after its step (HINCRBYFLOAT's text: an integer's has no decimals).
_INCR_FIELDS = """
local after = {}
for i = 2, #ARGV, 2 do
  after[#after + 1] = redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1])
end
if ARGV[1] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX') end
return after
"""

T = TypeVar("T")


def _ttl_ms(ttl_s: float | None) -> int | None:
    return _ms(ttl_s) if ttl_s is not None else None


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)


def glob_escape(text: str) -> str:
    """Text matched literally by a Redis SCAN/KEYS pattern: ids and prefixes come from callers."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


async def scanned(client: aioredis.Redis, pattern: str, count: int, timeout_s: float) -> AsyncIterator[bytes]:
    """The keys matching `pattern`, each page's wait under its own deadline (a whole scan may be long)."""
    keys = aiter(client.scan_iter(match=pattern, count=count))
    while True:
        try:
            async with StallTolerantDeadline(timeout_s):
                raw = await anext(keys)
        except StopAsyncIteration:
            return
        yield raw


class RedisStore(StateStore):
    backend = "redis"

    def __init__(self, url: str, *, timeout_s: float = 0.25, prefix: str = "cg:") -> None:
        # Calls run under deadlines that do not count the event loop's stalls (deadline.py); redis-py's own
        # socket timeouts, asyncio timers that do, only back them up.
        self.client: aioredis.Redis = redis_client(url, backstop_s(timeout_s))
        self.timeout_s = timeout_s
        self.prefix = prefix

    def key(self, key: str) -> str:
        return self.prefix + key

    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        numbers = [value for w in windows for value in (w.limit, w.seconds)]
        keys = [self.key(w.key) for w in windows]
        answer = await self._call(lambda: self.client.eval(_ADMIT, len(keys), *keys, holder, *numbers))
        return float(answer)

    def _meter_keys(self, meters: Sequence[Meter]) -> list[str]:
        keys = []
        for meter in meters:
            holds = self.key(meter.holds)
            keys += [holds, holds + ":amounts", self.key(meter.spent) if meter.spent is not None else holds]
        return keys

    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        keys = self._meter_keys(meters)
        numbers = [
            value
            for meter, amount in zip(meters, amounts, strict=True)
            for value in (meter.limit, meter.seconds, amount, int(meter.spent is not None))
        ]
        answer = await self._call(lambda: self.client.eval(_HOLD, len(keys), *keys, holder, *numbers))
        refused, wait, *spent = answer
        index = int(refused) - 1
        return Held(index if index >= 0 else None, float(wait), [float(value) for value in spent])

    async def settle(
        self, meters: Sequence[Meter], holder: str, amounts: Sequence[float], *, replay: bool = False
    ) -> None:
        keys = self._meter_keys(meters)
        numbers = [
            value
            for meter, amount in zip(meters, amounts, strict=True)
            for value in (
                amount,
                meter.seconds,
                int(meter.spent is not None),
                _ms(meter.spent_ttl_s) if meter.spent_ttl_s else 0,
            )
        ]
        await self._call(lambda: self.client.eval(_SETTLE, len(keys), *keys, holder, *numbers, int(replay)))

    async def leave(self, keys: Sequence[str], holder: str) -> None:
        async def run() -> None:
            async with self.client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(self.key(key), holder)
                await pipe.execute()

        await self._call(run)

    async def _call(self, operation: Callable[[], Awaitable[T]]) -> T:
        try:
            async with StallTolerantDeadline(self.timeout_s):
                return await operation()
        except (RedisError, OSError, TimeoutError) as exc:
            raise StateUnavailable(f"redis: {type(exc).__name__}") from exc

    def carries(self, client: object) -> bool:
        return client is self.client

    async def batch(self, ops: Sequence[Op], riders: Sequence[Rider] = ()) -> list[Any]:
        commands: list[Command] = []
        for op in ops:
            self.encode(commands, op)
        own = len(commands)
        for rider in riders:
            commands.extend(rider.commands)
        answered = False

        async def run() -> list[Any]:
            nonlocal answered
            replies = await exchange(self.client, commands, errors_in_place=True)
            answered = True
            start = own
            for rider in riders:  # theirs first: an error reply among the ops fails only the ops
                rider.landed(replies[start : start + len(rider.commands)])
                start += len(rider.commands)
            failed = next((reply for reply in replies[:own] if isinstance(reply, ResponseError)), None)
            if failed is not None:
                raise failed
            mine = iter(replies[:own])
            return [self._result(op, mine) for op in ops]

        try:
            return await self._call(run)
        except StateUnavailable as error:
            if not answered:
                for rider in riders:
                    rider.landed(error)
            raise

    def encode(self, commands: list[Command], op: Op) -> None:
        """Append the op's commands: its own reply first, then those of its trim and expiry (skipped in
        _result)."""
        key = self.key(op.key)
        if op.kind == "get":
            commands.append(("GET", key))
        elif op.kind == "range":
            commands.append(("LRANGE", key, 0, -1))
        elif op.kind == "set":
            ttl = _ttl_ms(op.ttl_s)
            commands.append(("SET", key, op.values[0]) if ttl is None else ("SET", key, op.values[0], "PX", ttl))
        elif op.kind == "incr_fields":
            pairs = [part for name, amount in op.steps for part in (name, amount)]
            commands.append(("EVAL", _INCR_FIELDS, 1, key, _ms(op.ttl_s) if op.ttl_s is not None else 0, *pairs))
        elif op.kind == "push":
            commands.append(("RPUSH", key, *op.values))
            if op.max_len is not None:
                commands.append(("LTRIM", key, -op.max_len, -1))
            if op.ttl_s is not None:
                commands.append(("PEXPIRE", key, _ms(op.ttl_s)))
        else:
            commands.append(("INCRBY", key, int(op.amount)) if op.kind == "incr" else ("INCRBYFLOAT", key, op.amount))
            if op.ttl_s is not None:
                commands.append(("PEXPIRE", key, _ms(op.ttl_s), "NX"))

    @staticmethod
    def _result(op: Op, replies: Iterator[Any]) -> Any:
        reply = next(replies)
        followers = int(op.kind in ("incr", "incr_float", "push") and op.ttl_s is not None)
        followers += int(op.kind == "push" and op.max_len is not None)
        for _ in range(followers):
            next(replies)
        if op.kind == "get":
            return bytes(reply) if reply is not None else None
        if op.kind == "range":
            return [bytes(v) for v in reply]
        if op.kind == "set":
            return bool(reply)
        if op.kind == "push":
            return min(int(reply), op.max_len) if op.max_len is not None else int(reply)
        if op.kind == "incr_fields":
            return {name: type(amount)(float(value)) for (name, amount), value in zip(op.steps, reply, strict=True)}
        return int(reply) if op.kind == "incr" else float(reply)

    async def get(self, key: str) -> bytes | None:
        value: Any = await self._call(lambda: self.client.get(self.key(key)))
        return bytes(value) if value is not None else None

    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        done = await self._call(lambda: self.client.set(self.key(key), value, px=_ttl_ms(ttl_s), nx=only_new))
        return bool(done)

    async def delete(self, *keys: str) -> int:
        if not keys:
            return 0
        return int(await self._call(lambda: self.client.delete(*[self.key(k) for k in keys])))

    async def _with_ttl(self, key: str, ttl_s: float | None, command: Callable[[Any], Any]) -> Any:
        async def run() -> Any:
            async with self.client.pipeline(transaction=True) as pipe:
                command(pipe)
                if ttl_s is not None:
                    pipe.pexpire(self.key(key), _ms(ttl_s), nx=True)
                return (await pipe.execute())[0]

        return await self._call(run)

    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int:
        return int(await self._with_ttl(key, ttl_s, lambda p: p.incrby(self.key(key), amount)))

    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float:
        return float(await self._with_ttl(key, ttl_s, lambda p: p.incrbyfloat(self.key(key), amount)))

    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        async def run() -> int:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.rpush(self.key(key), *values)
                if max_len is not None:
                    pipe.ltrim(self.key(key), -max_len, -1)
                if ttl_s is not None:
                    pipe.pexpire(self.key(key), _ms(ttl_s))
                length = (await pipe.execute())[0]
            return min(int(length), max_len) if max_len is not None else int(length)

        return await self._call(run)

    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        values: Any = await self._call(lambda: self.client.lrange(self.key(key), start, end))
        return [bytes(v) for v in values]

    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None:
        async def run() -> None:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self.key(key), mapping=mapping)  # type: ignore[arg-type]
                if ttl_s is not None:
                    pipe.pexpire(self.key(key), _ms(ttl_s))
                await pipe.execute()

        await self._call(run)

    async def hgetall(self, key: str) -> dict[str, bytes]:
        values: Any = await self._call(lambda: self.client.hgetall(self.key(key)))
        return {k.decode(): bytes(v) for k, v in values.items()}

    async def hswap(self, key: str, field: str, expected: bytes | None, value: bytes) -> bool:
        absent = int(expected is None)
        done = await self._call(
            lambda: self.client.eval(_HSWAP, 1, self.key(key), field, expected or b"", value, absent)
        )
        return bool(done)

    async def scan(self, prefix: str) -> AsyncIterator[str]:
        try:
            async for raw in scanned(self.client, glob_escape(self.key(prefix)) + "*", 500, self.timeout_s):
                yield raw.decode()[len(self.prefix) :]
        except (RedisError, OSError, TimeoutError) as exc:
            raise StateUnavailable(f"redis: {type(exc).__name__}") from exc

    async def ping(self) -> bool:
        try:
            return bool(await self._call(self.client.ping))
        except StateUnavailable:
            return False

    async def close(self) -> None:
        await self.client.aclose()
