"""Redis checkpointer (redis-py). Per (thread, namespace): a lexicographically ordered index of
checkpoint ids, a hash of checkpoints, a hash of channel values per version, and one hash of pending
writes per checkpoint. Every key starts with `prefix`, so several apps can share one Redis.

On a Redis Cluster (a `redis.RedisCluster` client) a thread's keys carry a digest of its id as a hash tag
(`prefix:kind:{digest}thread:ns`), so the MULTI/EXEC that saves a checkpoint touches one slot whatever
braces the id holds; a single server keeps the untagged keys it always had, so checkpoints saved before
stay readable."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, cast

import redis

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import (
    BaseCheckpointer,
    Checkpoint,
    CheckpointTuple,
    NewCheckpoint,
    thread_key,
    write_slots,
)
from agent_runtime.checkpoint.serde import dumps, loads

_EMPTY = b""  # a channel version with no value (e.g. a cleared trigger); pickles are never empty


class RedisCheckpointer(BaseCheckpointer):
    def __init__(
        self, client: redis.Redis | redis.RedisCluster, *, prefix: str = "agent_runtime", ttl_s: int | None = None
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_s = ttl_s
        self.hash_tagged = isinstance(client, redis.RedisCluster)

    @classmethod
    def from_url(cls, url: str = "redis://127.0.0.1:6379/0", **kwargs: Any) -> RedisCheckpointer:
        return cls(redis.Redis.from_url(url), **kwargs)

    def _key(self, kind: str, thread_id: str, ns: str, *rest: str) -> str:
        return ":".join((self.prefix, kind, self._thread(thread_id), ns, *rest))

    def _thread(self, thread_id: str) -> str:
        if not self.hash_tagged:
            return thread_id
        # A digest, not the id itself: an id such as "}x" would make the tag empty, hence no tag at all.
        return f"{{{hashlib.blake2b(thread_id.encode(), digest_size=8).hexdigest()}}}{thread_id}"

    def _expire(self, pipe: Any, *keys: str) -> None:
        if self.ttl_s is not None:
            for key in keys:
                pipe.expire(key, self.ttl_s)

    def _save(self, new: NewCheckpoint) -> None:
        blobs = {
            f"{chan}\x00{version}": _EMPTY if value is MISSING else dumps(value) for chan, version, value in new.blobs
        }
        checkpoint = new.checkpoint
        record = dumps(
            (
                checkpoint.ts,
                checkpoint.channel_versions,
                checkpoint.versions_seen,
                checkpoint.updated_channels,
                new.metadata,
                new.parent_id,
            )
        )
        index, body, blob_key = (self._key(k, *new.thread) for k in ("index", "checkpoints", "blobs"))
        pipe = self.client.pipeline(transaction=True)
        if blobs:
            pipe.hset(blob_key, mapping=blobs)  # type: ignore[arg-type]
        pipe.hset(body, checkpoint.id, record)
        pipe.zadd(index, {checkpoint.id: 0})
        namespaces = self._key("namespaces", new.thread[0], "")
        pipe.sadd(namespaces, new.thread[1])
        self._expire(pipe, index, body, blob_key, namespaces)
        pipe.execute()

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        thread_id, ns = thread_key(config)
        key = self._key("writes", thread_id, ns, config["configurable"]["checkpoint_id"])
        mapping = {
            f"{task_id}\x00{slot:06d}": dumps((task_id, chan, value)) for slot, chan, value in write_slots(writes)
        }
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping=mapping)  # type: ignore[arg-type]
        self._expire(pipe, key)
        pipe.execute()

    def _tuple(self, thread_id: str, ns: str, checkpoint_id: str, record: bytes) -> CheckpointTuple:
        ts, versions, seen, updated, metadata, parent_id = loads(record)
        fields = [f"{chan}\x00{version}" for chan, version in versions.items()]
        raw = self.client.hmget(self._key("blobs", thread_id, ns), fields) if fields else []
        values = {chan: loads(cast(bytes, data)) for chan, data in zip(versions, raw, strict=True) if data}
        writes = self.client.hgetall(self._key("writes", thread_id, ns, checkpoint_id))
        pending = [loads(cast(bytes, writes[k])) for k in sorted(writes)]
        checkpoint = Checkpoint(checkpoint_id, ts, values, versions, seen, updated)
        return CheckpointTuple.saved((thread_id, ns), checkpoint, metadata, parent_id, pending)

    def _ids(self, thread_id: str, ns: str, limit: int | None, before: str | None = None) -> list[str]:
        raw = self.client.zrevrangebylex(
            self._key("index", thread_id, ns),
            "+" if before is None else f"({before}",
            "-",
            start=0,
            num=-1 if limit is None else limit,
        )
        return [i.decode() if isinstance(i, bytes) else str(i) for i in raw]

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        thread_id, ns = thread_key(config)
        checkpoint_id = config["configurable"].get("checkpoint_id")
        if not checkpoint_id:
            latest = self._ids(thread_id, ns, 1)
            if not latest:
                return None
            checkpoint_id = latest[0]
        record = self.client.hget(self._key("checkpoints", thread_id, ns), checkpoint_id)
        return None if record is None else self._tuple(thread_id, ns, checkpoint_id, cast(bytes, record))

    def _namespaces(self, thread_id: str) -> set[str]:
        # threads saved before the set was kept have it empty: their root namespace is still listed
        members = self.client.smembers(self._key("namespaces", thread_id, ""))
        return {"", *(m.decode() if isinstance(m, bytes) else str(m) for m in members)}  # type: ignore[union-attr]

    def _list(self, thread_id: str, ns: str, before: str | None, limit: int | None) -> Iterator[CheckpointTuple]:
        body = self._key("checkpoints", thread_id, ns)
        for checkpoint_id in self._ids(thread_id, ns, limit, before):
            record = self.client.hget(body, checkpoint_id)
            if record is not None:
                yield self._tuple(thread_id, ns, checkpoint_id, cast(bytes, record))

    def delete_thread(self, thread_id: str) -> None:
        for kind in ("index", "checkpoints", "blobs", "writes", "namespaces"):
            thread = _glob_escape(self._thread(thread_id))
            keys = list(self.client.scan_iter(match=f"{_glob_escape(self.prefix)}:{kind}:{thread}:*"))
            if keys:
                self.client.delete(*keys)


def _glob_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)
