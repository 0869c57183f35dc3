"""In-memory checkpointer (per process); values are deep-copied in and out.

Storage is one `_Thread` per (thread_id, checkpoint_ns): a record per checkpoint, the channel values
per channel and version, and the pending writes per checkpoint as the calls that put them. The engine
saves through a thread's `save` / `put_writes` directly (`thread_store`); the records are turned into
LangGraph-shaped checkpoints, metadata and configs only when read, so a superstep stores what it
already holds and builds nothing it does not need."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import (
    BaseCheckpointer,
    Checkpoint,
    CheckpointTuple,
    NewCheckpoint,
    ThreadStore,
    step_metadata,
    thread_key,
    write_slots,
)

_EMPTY = object()  # a channel version whose value is empty (e.g. a cleared trigger)
_NONE: dict[int, Any] = {}  # no value of a channel saved yet
_ATOMIC = frozenset({int, float, str, bool, bytes, type(None)})

# A checkpoint as stored: (ts, channel_versions, versions_seen, updated_channels, parent id, metadata,
# source, step, parents); saved by the engine (source set) the metadata is the run's config metadata,
# made LangGraph's metadata dict with source, step and parents when read.
_Record = tuple[
    float,
    dict[str, int],
    dict[str, dict[str, int]],
    tuple[str, ...] | None,
    str | None,
    dict[str, Any],
    str | None,
    int,
    dict[str, str] | None,
]


class _Thread:
    """One (thread_id, checkpoint_ns) of an InMemoryCheckpointer: its checkpoints, values and writes."""

    __slots__ = ("atomic", "blobs", "checkpoints", "dead", "dump", "key", "owner", "writes")

    def __init__(self, owner: InMemoryCheckpointer, key: tuple[str, str]) -> None:
        self.owner = owner
        self.key = key
        self.dump = owner._dump
        # values stored as they are: the common immutable scalars (most trigger and counter values);
        # with a serde every value goes through it
        self.atomic = _ATOMIC if owner.serde is None else frozenset()
        self.checkpoints: dict[str, _Record] = {}
        # channel -> version -> dumped value, or _EMPTY (no (channel, version) key to allocate per value)
        self.blobs: dict[str, dict[int, Any]] = {}
        # checkpoint id -> the put_writes calls on it, in order: (task id, [(channel, dumped value)])
        self.writes: dict[str, list[tuple[str, list[tuple[str, Any]]]]] = {}
        self.dead = False  # deleted (delete_thread) while a run still held it: it re-registers on write

    def save(
        self,
        checkpoint_id: str,
        ts: float,
        versions: dict[str, int],
        seen: dict[str, dict[str, int]],
        updated: tuple[str, ...] | None,
        parent_id: str | None,
        changed: Sequence[tuple[str, int, Any]],
        metadata: dict[str, Any],
        source: str | None = None,
        step: int = 0,
        parents: dict[str, str] | None = None,
    ) -> None:
        """ThreadStore.save. No lock: each store is one dict assignment, atomic under the GIL, and
        readers go through a thread's dicts only in C (max, sorted); the saver's lock keeps its map
        of threads stable."""
        target = self._live() if self.dead else self
        blobs = target.blobs
        atomic, dump = self.atomic, self.dump
        for chan, version, value in changed:
            by_version = blobs.get(chan)
            if by_version is None:
                by_version = blobs.setdefault(chan, {})
            if type(value) in atomic:
                by_version[version] = value
            else:
                by_version[version] = _EMPTY if value is MISSING else dump(value)
        target.checkpoints[checkpoint_id] = (ts, versions, seen, updated, parent_id, metadata, source, step, parents)

    def put_writes(self, checkpoint_id: str, task_id: str, writes: Sequence[tuple[str, Any]]) -> None:
        atomic, dump = self.atomic, self.dump
        copied = []  # a loop, not a comprehension: cheaper for a task's few writes (3.11)
        for chan, value in writes:
            copied.append((chan, value if type(value) in atomic else dump(value)))
        target = self._live() if self.dead else self
        target.writes.setdefault(checkpoint_id, []).append((task_id, copied))

    def _live(self) -> _Thread:
        """The thread's registered store, for a run that still holds one deleted under it."""
        with self.owner._lock:
            return self.owner._threads.setdefault(self.key, _Thread(self.owner, self.key))

    def pending(self, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        """The pending writes of a checkpoint, a later control write of a task replacing its earlier one
        (and a task's writes put again replacing its earlier ones by position)."""
        slots: dict[tuple[str, int], tuple[str, str, Any]] = {}
        for task_id, writes in self.writes.get(checkpoint_id, ()):
            for slot, chan, value in write_slots(writes):
                slots[task_id, slot] = (task_id, chan, value)
        load = self.owner._load
        return [(t, c, load(v)) for t, c, v in slots.values()]

    def read(self, checkpoint_id: str) -> CheckpointTuple:
        ts, versions, seen, updated, parent_id, metadata, source, step, parents = self.checkpoints[checkpoint_id]
        load = self.owner._load
        blobs = self.blobs
        values = {}
        for chan, version in versions.items():
            blob = blobs.get(chan, _NONE).get(version, _EMPTY)
            if blob is not _EMPTY and blob is not MISSING:
                values[chan] = load(blob)
        checkpoint = Checkpoint(
            checkpoint_id,
            ts,
            values,
            dict(versions),
            {k: dict(v) for k, v in seen.items()},
            updated,
        )
        meta = metadata if source is None else step_metadata(metadata, source, step, parents or {})
        return CheckpointTuple.saved(self.key, checkpoint, copy.deepcopy(meta), parent_id, self.pending(checkpoint_id))


class InMemoryCheckpointer(BaseCheckpointer):
    """`serde=` (LangGraph's `InMemorySaver(serde=)`): values are stored as its `dumps_typed` and read
    back with `loads_typed` (an encrypting serializer, say); without one they are deep-copied."""

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = serde
        self._dump: Callable[[Any], Any] = copy.deepcopy if serde is None else serde.dumps_typed
        self._load: Callable[[Any], Any] = copy.deepcopy if serde is None else serde.loads_typed
        self._lock = threading.Lock()
        self._threads: dict[tuple[str, str], _Thread] = {}

    def _thread(self, key: tuple[str, str]) -> _Thread:
        thread = self._threads.get(key)
        if thread is None:
            with self._lock:
                thread = self._threads.setdefault(key, _Thread(self, key))
        return thread

    def thread_store(self, thread_id: str, ns: str) -> ThreadStore | None:
        """The engine's direct path, unless the saver's put hooks were replaced (a subclass's, a patched
        method, an instance attribute): those must then see every save, as LangGraph's savers' do."""
        cls = type(self)
        if (
            (cls.put, cls._save, cls.put_writes) != _OWN_HOOKS
            or cls.full_values
            or hasattr(self, "get_next_version")
            or not _HOOK_NAMES.isdisjoint(vars(self))
        ):
            return None
        return self._thread((thread_id, ns))

    def _save(self, new: NewCheckpoint) -> None:
        stored = new.checkpoint  # the saver owns it now: its versions and seen-maps are kept as they are
        self._thread(new.thread).save(
            stored.id,
            stored.ts,
            stored.channel_versions,
            stored.versions_seen,
            stored.updated_channels,
            new.parent_id,
            new.blobs,
            dict(new.metadata),
        )

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        checkpoint_id = config["configurable"]["checkpoint_id"]
        self._thread(thread_key(config)).put_writes(checkpoint_id, task_id, writes)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        key = thread_key(config)
        with self._lock:
            thread = self._threads.get(key)
            if thread is None or not thread.checkpoints:
                return None
            checkpoint_id = config["configurable"].get("checkpoint_id") or max(thread.checkpoints)
            if checkpoint_id not in thread.checkpoints:
                return None
            return thread.read(checkpoint_id)

    def _namespaces(self, thread_id: str) -> set[str]:
        with self._lock:
            return {ns for (thread, ns), saved in self._threads.items() if thread == thread_id and saved.checkpoints}

    def _list(self, thread_id: str, ns: str, before: str | None, limit: int | None) -> Iterator[CheckpointTuple]:
        with self._lock:
            thread = self._threads.get((thread_id, ns))
            ids = sorted(thread.checkpoints if thread is not None else (), reverse=True)
            if before is not None:
                ids = [i for i in ids if i < before]
            ids = ids[:limit]
            tuples = [thread.read(i) for i in ids] if thread is not None else []
        yield from tuples

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            for key in [k for k in self._threads if k[0] == thread_id]:
                thread = self._threads.pop(key)
                thread.dead = True  # a run still saving to it re-registers a fresh one
                thread.checkpoints, thread.blobs, thread.writes = {}, {}, {}


_OWN_HOOKS = (BaseCheckpointer.put, InMemoryCheckpointer._save, InMemoryCheckpointer.put_writes)
_HOOK_NAMES = frozenset({"put", "_save", "put_writes"})

MemorySaver = InMemorySaver = InMemoryCheckpointer  # LangGraph's names
