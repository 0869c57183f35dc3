"""Checkpointer protocol and the checkpoint record (one per superstep, plus pending writes per task)."""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from agent_runtime.channels import MISSING
from agent_runtime.constants import ERROR, INTERRUPT, RESUME

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"

_last_id = 0


def new_checkpoint_id() -> str:
    """Sortable, time-based id, increasing within a thread of execution. No lock: one graph thread
    is run by one task at a time, and ids only need to be ordered within a thread."""
    global _last_id
    now = time.time_ns()
    _last_id = now if now > _last_id else _last_id + 1
    return str(_last_id).zfill(20)  # zero-padded to 20 digits (zfill: a third of an f"{:020d}")


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


LANGGRAPH_CHECKPOINT_VERSION = 4  # langgraph.checkpoint.base.LATEST_VERSION of the format written

_CHECKPOINT_KEYS = frozenset({"id", "ts", "channel_values", "channel_versions", "versions_seen", "updated_channels"})


@dataclass(slots=True)
class Checkpoint:
    """One superstep's saved state. After `put` the saver owns the object (the engine hands over
    copies of versions and seen-maps, whose inner dicts it never mutates)."""

    id: str
    ts: float  # epoch seconds (formatted only when read: a superstep is shorter than a strftime)
    channel_values: dict[str, Any]
    channel_versions: dict[str, int]
    versions_seen: dict[str, dict[str, int]]
    updated_channels: tuple[str, ...] | None = None

    def __getitem__(self, key: str) -> Any:
        """LangGraph's checkpoints are dicts: `checkpoint["channel_values"]` reads the field (`ts` as
        the ISO time LangGraph stores)."""
        if key not in _CHECKPOINT_KEYS:
            raise KeyError(key)
        return iso(self.ts) if key == "ts" else getattr(self, key)

    def as_langgraph(self) -> dict[str, Any]:
        """LangGraph's checkpoint dict (format v4) of this checkpoint."""
        updated = None if self.updated_channels is None else sorted(self.updated_channels)
        return {
            "v": LANGGRAPH_CHECKPOINT_VERSION,
            **{k: self[k] for k in _CHECKPOINT_KEYS},
            "updated_channels": updated,
        }

    def __eq__(self, other: object) -> bool:
        """Equal to the same checkpoint, or to LangGraph's dict of it (what LangGraph's savers return)."""
        if isinstance(other, Mapping):
            return self.as_langgraph() == other
        if not isinstance(other, Checkpoint):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _CHECKPOINT_KEYS)

    __hash__ = None  # type: ignore[assignment]


class CheckpointTuple(NamedTuple):
    """A saved checkpoint as `get_tuple` / `list` return it: a named tuple, as LangGraph's (so the two
    compare equal field by field)."""

    config: dict[str, Any]
    checkpoint: Checkpoint
    metadata: dict[str, Any]
    parent_config: dict[str, Any] | None = None
    pending_writes: list[tuple[str, str, Any]] = []  # noqa: RUF012 (never mutated: each tuple gets its list)

    @classmethod
    def saved(
        cls,
        thread: tuple[str, str],
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        parent_id: str | None,
        pending_writes: list[tuple[str, str, Any]],
    ) -> CheckpointTuple:
        """A checkpoint saved on `thread` ((thread_id, checkpoint_ns)), as `get_tuple` and `list` return it."""
        return cls(
            config=checkpoint_config(*thread, checkpoint.id),
            checkpoint=checkpoint,
            metadata=metadata,
            parent_config=None if parent_id is None else checkpoint_config(*thread, parent_id),
            pending_writes=pending_writes,
        )


def thread_key(config: dict[str, Any]) -> tuple[str, str]:
    conf = config.get("configurable", {})
    if "thread_id" not in conf:
        raise ValueError('A checkpointer needs a thread: pass config={"configurable": {"thread_id": "..."}}')
    return str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))


# A task's control writes each have a fixed slot (LangGraph's WRITES_IDX_MAP), so a newer one replaces the
# older and never an output write; output writes are keyed by their position.
_CONTROL_SLOTS = {ERROR: -1, INTERRUPT: -3, RESUME: -4}


def write_slots(writes: Sequence[tuple[str, Any]]) -> list[tuple[int, str, Any]]:
    """(slot, channel, value) of each of a task's writes, the key a backend stores it under per task."""
    return [(_CONTROL_SLOTS.get(chan, idx), chan, value) for idx, (chan, value) in enumerate(writes)]


def before_id(before: dict[str, Any] | None) -> str | None:
    """The checkpoint id a `list(before=...)` config names (None: no bound)."""
    return None if before is None else before.get("configurable", {}).get("checkpoint_id")


def checkpoint_config(thread_id: str, ns: str, checkpoint_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def step_metadata(run_metadata: dict[str, Any], source: str, step: int, parents: dict[str, str]) -> dict[str, Any]:
    """A checkpoint's metadata as LangGraph saves it: the run's config metadata, source, step, parents."""
    return {**run_metadata, "source": source, "step": step, "parents": parents}


class ThreadStore(Protocol):
    """A saver's direct path for the engine, one per (thread_id, checkpoint_ns) (`thread_store`): what
    `put` and `put_writes` store, without the checkpoint, config and metadata dicts built for them."""

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
        """`put` of a checkpoint without values; `changed`: (channel, version, value) per channel whose
        version is new (MISSING: empty at that version). The store owns `versions` and `seen`. With
        `source`, `metadata` is the run's config metadata, and the checkpoint's is
        `step_metadata(metadata, source, step, parents)`, made when read."""

    def put_writes(self, checkpoint_id: str, task_id: str, writes: Sequence[tuple[str, Any]]) -> None:
        """`put_writes` on the checkpoint `checkpoint_id` of this thread."""


@dataclass(frozen=True, slots=True)
class NewCheckpoint:
    """What `put` hands a backend to store: the checkpoint, where it goes, and its changed channel values."""

    thread: tuple[str, str]  # (thread_id, checkpoint_ns)
    parent_id: str | None
    checkpoint: Checkpoint  # the backend owns it now; its values are the `blobs`
    metadata: dict[str, Any]
    # (channel, version, value) per channel whose version changed; MISSING: empty at that version
    # (e.g. a cleared trigger)
    blobs: list[tuple[str, int, Any]]


class BaseCheckpointer:
    """Storage of checkpoints per (thread_id, checkpoint_ns).

    `put` receives the full checkpoint plus `new_versions` (the channels whose version changed since
    the parent); implementations store a channel value once per (channel, version), so a superstep
    costs a copy of what changed, not of the whole state. Values are copied at save time, so later
    in-place mutation by the running graph cannot leak into a saved checkpoint (LangGraph #8748).
    Backends implement `_save` (what `put` stores) and the readers below.
    """

    # Whether `put` needs every channel's value in the checkpoint, not only the changed ones (the
    # engine hands over just those: the blobs are all a backend storing values per version needs).
    full_values = False

    # The id of the next checkpoint: ordered by time, as the backend sorts a thread's checkpoints.
    new_id = staticmethod(new_checkpoint_id)

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        new_versions: dict[str, int],
    ) -> dict[str, Any]:
        """Save `checkpoint` as the child of the one `config` names; returns the config that names it."""
        thread = thread_key(config)
        values = checkpoint.channel_values
        blobs = [(chan, version, values.get(chan, MISSING)) for chan, version in new_versions.items()]
        parent_id = config["configurable"].get("checkpoint_id")
        self._save(NewCheckpoint(thread, parent_id, checkpoint, metadata, blobs))
        return checkpoint_config(*thread, checkpoint.id)

    def _save(self, new: NewCheckpoint) -> None:
        raise NotImplementedError

    def thread_store(self, thread_id: str, ns: str) -> ThreadStore | None:
        """The saver's direct path for the engine's saves on one thread namespace, if it has one (None:
        the engine calls `put` and `put_writes`)."""
        return None

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        raise NotImplementedError

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        raise NotImplementedError

    def list(
        self, config: dict[str, Any], *, before: dict[str, Any] | None = None, limit: int | None = None
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints of the thread's namespace, newest first, or of all its namespaces when the config
        names none (as LangGraph's savers); `before` (a config naming a checkpoint): only those saved
        before it (ids are time-ordered across a thread's namespaces)."""
        thread_id, ns = thread_key(config)
        bound = before_id(before)
        if "checkpoint_ns" in config["configurable"]:
            yield from self._list(thread_id, ns, bound, limit)
            return
        per_ns = [self._list(thread_id, each, bound, limit) for each in sorted(self._namespaces(thread_id))]
        newest_first = heapq.merge(*per_ns, key=lambda saved: saved.checkpoint.id, reverse=True)
        yield from itertools.islice(newest_first, limit)

    def _list(self, thread_id: str, ns: str, before: str | None, limit: int | None) -> Iterator[CheckpointTuple]:
        """Checkpoints of one namespace, newest first (ids below `before` only)."""
        raise NotImplementedError

    def _namespaces(self, thread_id: str) -> set[str]:
        """The namespaces the thread has checkpoints in."""
        raise NotImplementedError

    def delete_thread(self, thread_id: str) -> None:
        raise NotImplementedError

    # LangGraph's BaseCheckpointSaver readers; the async forms run the sync ones (in-process, or one
    # round trip: the runtime itself calls the sync ones from its event loop too)
    def get(self, config: dict[str, Any]) -> Checkpoint | None:
        """The checkpoint `config` names (the thread's latest without an id)."""
        saved = self.get_tuple(config)
        return None if saved is None else saved.checkpoint

    async def aget(self, config: dict[str, Any]) -> Checkpoint | None:
        return self.get(config)

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self, config: dict[str, Any], *, before: dict[str, Any] | None = None, limit: int | None = None
    ) -> AsyncIterator[CheckpointTuple]:
        for saved in self.list(config, before=before, limit=limit):
            yield saved

    async def aput(
        self, config: dict[str, Any], checkpoint: Checkpoint, metadata: dict[str, Any], new_versions: dict[str, int]
    ) -> dict[str, Any]:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)
