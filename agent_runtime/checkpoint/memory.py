"""In-memory checkpointer (per process); values are deep-copied in and out."""

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
    thread_key,
    write_slots,
)

_EMPTY = object()  # a channel version whose value is empty (e.g. a cleared trigger)
_ATOMIC = frozenset({int, float, str, bool, bytes, type(None)})


def _copy(value: Any) -> Any:
    """Deep copy, skipping the common immutable scalars (most trigger and counter values)."""
    return value if type(value) in _ATOMIC else copy.deepcopy(value)


class InMemoryCheckpointer(BaseCheckpointer):
    """`serde=` (LangGraph's `InMemorySaver(serde=)`): values are stored as its `dumps_typed` and read
    back with `loads_typed` (an encrypting serializer, say); without one they are deep-copied."""

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = serde
        self._dump: Callable[[Any], Any] = _copy if serde is None else serde.dumps_typed
        self._load: Callable[[Any], Any] = copy.deepcopy if serde is None else serde.loads_typed
        self._lock = threading.Lock()
        # (thread, ns) -> checkpoint id -> (checkpoint without values, metadata, parent id)
        self._checkpoints: dict[tuple[str, str], dict[str, tuple[Checkpoint, dict[str, Any], str | None]]] = {}
        self._blobs: dict[tuple[str, str, str, int], Any] = {}
        self._writes: dict[tuple[str, str, str], dict[tuple[str, int], tuple[str, str, Any]]] = {}

    def _save(self, new: NewCheckpoint) -> None:
        blobs = {
            (*new.thread, chan, version): _EMPTY if value is MISSING else self._dump(value)
            for chan, version, value in new.blobs
        }
        stored = new.checkpoint
        stored.channel_values = {}  # values live in the blobs; the saver owns the checkpoint now
        with self._lock:
            self._blobs.update(blobs)
            self._checkpoints.setdefault(new.thread, {})[stored.id] = (stored, dict(new.metadata), new.parent_id)

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        thread_id, ns = thread_key(config)
        key = (thread_id, ns, config["configurable"]["checkpoint_id"])
        copied = [(slot, (task_id, chan, self._dump(value))) for slot, chan, value in write_slots(writes)]
        with self._lock:
            bucket = self._writes.setdefault(key, {})
            for slot, write in copied:
                bucket[(task_id, slot)] = write

    def _tuple(self, thread_id: str, ns: str, checkpoint_id: str) -> CheckpointTuple:
        stored, metadata, parent_id = self._checkpoints[(thread_id, ns)][checkpoint_id]
        values = {}
        for chan, version in stored.channel_versions.items():
            blob = self._blobs.get((thread_id, ns, chan, version), _EMPTY)
            if blob is not _EMPTY and blob is not MISSING:
                values[chan] = self._load(blob)
        checkpoint = Checkpoint(
            stored.id,
            stored.ts,
            values,
            dict(stored.channel_versions),
            {k: dict(v) for k, v in stored.versions_seen.items()},
            stored.updated_channels,
        )
        writes = self._writes.get((thread_id, ns, checkpoint_id), {})
        pending = [(t, c, self._load(v)) for t, c, v in writes.values()]
        return CheckpointTuple.saved((thread_id, ns), checkpoint, copy.deepcopy(metadata), parent_id, pending)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        thread_id, ns = thread_key(config)
        with self._lock:
            history = self._checkpoints.get((thread_id, ns))
            if not history:
                return None
            checkpoint_id = config["configurable"].get("checkpoint_id") or max(history)
            if checkpoint_id not in history:
                return None
            return self._tuple(thread_id, ns, checkpoint_id)

    def _namespaces(self, thread_id: str) -> set[str]:
        with self._lock:
            return {ns for thread, ns in self._checkpoints if thread == thread_id}

    def _list(self, thread_id: str, ns: str, before: str | None, limit: int | None) -> Iterator[CheckpointTuple]:
        with self._lock:
            ids = sorted(self._checkpoints.get((thread_id, ns), {}), reverse=True)
            if before is not None:
                ids = [i for i in ids if i < before]
            ids = ids[:limit]
            tuples = [self._tuple(thread_id, ns, i) for i in ids]
        yield from tuples

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            for key in [k for k in self._checkpoints if k[0] == thread_id]:
                del self._checkpoints[key]
            for bkey in [k for k in self._blobs if k[0] == thread_id]:
                del self._blobs[bkey]
            for wkey in [k for k in self._writes if k[0] == thread_id]:
                del self._writes[wkey]


MemorySaver = InMemorySaver = InMemoryCheckpointer  # LangGraph's names
