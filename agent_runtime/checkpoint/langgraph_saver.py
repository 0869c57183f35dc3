"""LangGraph's own checkpointers (langgraph-checkpoint's ``BaseCheckpointSaver``: ``InMemorySaver``,
``SqliteSaver``, ``PostgresSaver``, ...) as agent_runtime checkpointers.

A saver is recognised by its methods (LangGraph need not be importable here). Our checkpoints go to it
in LangGraph's checkpoint format (v4 dicts: ISO ``ts``, ``v``, the saver's own channel versions from its
``get_next_version``, full ``channel_values``) and come back as ours, and the saver's ``serde`` stores the
values, so a thread saved by LangGraph resumes here and the other way round. Channel names and values are
LangGraph's already; only the version numbers and LangGraph's own ``Send`` / ``Interrupt`` classes are
translated. Task ids are not LangGraph's: a step interrupted with finished siblings re-runs them when
resumed by the other runtime (their results are the same; they are not skipped).
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from agent_runtime.checkpoint.base import (
    LANGGRAPH_CHECKPOINT_VERSION,
    BaseCheckpointer,
    Checkpoint,
    CheckpointTuple,
    iso,
    thread_key,
)
from agent_runtime.core.types import Interrupt, Send

_SAVER_METHODS = ("get_tuple", "put", "put_writes", "list", "aget_tuple", "aput", "aput_writes", "alist")
_REMEMBERED = 4096  # checkpoints whose saver versions are kept (the parents of the next puts)


def is_langgraph_saver(obj: object) -> bool:
    """Whether `obj` has LangGraph's checkpointer interface (sync and async)."""
    return not isinstance(obj, BaseCheckpointer) and all(callable(getattr(obj, m, None)) for m in _SAVER_METHODS)


def as_checkpointer(obj: Any) -> Any:
    """`obj` as a checkpointer the engine runs with: a LangGraph saver is wrapped, anything else is kept."""
    return LangGraphSaver(obj) if is_langgraph_saver(obj) else obj


def version_number(version: Any) -> int:
    """The engine's integer version of a saver's (LangGraph's strings start with the zero-padded number)."""
    if isinstance(version, str):
        return int(version.split(".", 1)[0])
    return int(version)


class LangGraphSaver(BaseCheckpointer):
    """Runs the engine's checkpoints through a LangGraph ``BaseCheckpointSaver``."""

    full_values = True  # LangGraph savers get every channel's value (SqliteSaver stores the whole dict)

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        # (thread, ns, checkpoint id) -> {(channel, engine version): saver version} of its versions and
        # seen maps ("" for any channel: the saver shares one version per step), the parents of next puts
        self._known: OrderedDict[tuple[str, str, str], dict[tuple[str, int], Any]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def serde(self) -> Any:
        return self.saver.serde

    def new_id(self) -> str:
        """LangGraph's time-ordered uuid6: the saver sorts a thread's checkpoints by id."""
        from langgraph.checkpoint.base.id import uuid6  # the saver's own distribution

        return str(uuid6())

    # -- writing ------------------------------------------------------------------------------------
    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        new_versions: dict[str, int],
    ) -> dict[str, Any]:
        thread = thread_key(config)
        known = dict(self._parent_versions(thread, config["configurable"].get("checkpoint_id")))
        channel_versions = {c: self._theirs(known, c, v) for c, v in checkpoint.channel_versions.items()}
        seen = {
            node: {c: self._theirs(known, c, v) for c, v in versions.items()}
            for node, versions in checkpoint.versions_seen.items()
        }
        saved = {
            "v": LANGGRAPH_CHECKPOINT_VERSION,
            "id": checkpoint.id,
            "ts": iso(checkpoint.ts),
            "channel_values": {c: to_langgraph(v) for c, v in checkpoint.channel_values.items()},
            "channel_versions": channel_versions,
            "versions_seen": seen,
            "updated_channels": None if checkpoint.updated_channels is None else list(checkpoint.updated_channels),
        }
        changed = {c: channel_versions[c] for c in new_versions}
        result: dict[str, Any] = self.saver.put(config, saved, metadata, changed)
        written = [(c, v, channel_versions[c]) for c, v in checkpoint.channel_versions.items()]
        written += [
            (c, v, seen[node][c]) for node, versions in checkpoint.versions_seen.items() for c, v in versions.items()
        ]
        self._remember((*thread, checkpoint.id), _index(written))
        return result

    def _theirs(self, known: dict[tuple[str, int], Any], chan: str, version: int) -> Any:
        """The saver's version for the engine's `version` of `chan`: the one it already has, else a new
        one from its `get_next_version` (one per engine version, shared by the channels, as LangGraph)."""
        found = known.get((chan, version), known.get(("", version)))
        if found is None:
            found = known[("", version)] = self.saver.get_next_version(version - 1 if version > 1 else None, None)
        known.setdefault((chan, version), found)
        return found

    def _parent_versions(self, thread: tuple[str, str], checkpoint_id: str | None) -> dict[tuple[str, int], Any]:
        if checkpoint_id is None:
            return {}
        with self._lock:
            known = self._known.get((*thread, checkpoint_id))
        if known is None:
            parent = self.saver.get_tuple(_config(thread, checkpoint_id))
            known = {} if parent is None else self._remember_read(thread, parent.checkpoint)
        return known

    def _remember(self, key: tuple[str, str, str], known: dict[tuple[str, int], Any]) -> None:
        with self._lock:
            self._known[key] = known
            self._known.move_to_end(key)
            if len(self._known) > _REMEMBERED:
                self._known.popitem(last=False)

    def _remember_read(self, thread: tuple[str, str], raw: dict[str, Any]) -> dict[tuple[str, int], Any]:
        """Index a checkpoint read from the saver (the engine's versions are the numbers of the saver's)."""
        maps = (raw.get("channel_versions", {}), *raw.get("versions_seen", {}).values())
        known = _index([(c, version_number(v), v) for versions in maps for c, v in versions.items()])
        self._remember((*thread, raw["id"]), known)
        return known

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        self.saver.put_writes(config, [(c, to_langgraph(v)) for c, v in writes], task_id)

    # -- reading ------------------------------------------------------------------------------------
    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        saved = self.saver.get_tuple(config)
        return None if saved is None else self._ours(saved)

    def list(
        self, config: dict[str, Any], *, before: dict[str, Any] | None = None, limit: int | None = None
    ) -> Iterator[CheckpointTuple]:
        # read to the end first: SqliteSaver holds its lock while its generator is open, and the
        # engine reads other checkpoints between items
        for saved in [*self.saver.list(config, before=before, limit=limit)]:
            yield self._ours(saved)

    def _ours(self, saved: Any) -> CheckpointTuple:
        raw = saved.checkpoint
        conf = saved.config["configurable"]
        self._remember_read((str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))), raw)
        updated = raw.get("updated_channels")
        checkpoint = Checkpoint(
            raw["id"],
            datetime.fromisoformat(raw["ts"]).timestamp(),
            {c: from_langgraph(v) for c, v in raw.get("channel_values", {}).items()},
            {c: version_number(v) for c, v in raw.get("channel_versions", {}).items()},
            {
                node: {c: version_number(v) for c, v in versions.items()}
                for node, versions in raw.get("versions_seen", {}).items()
            },
            None if updated is None else tuple(updated),
        )
        return CheckpointTuple(
            config=saved.config,
            checkpoint=checkpoint,
            metadata=dict(saved.metadata or {}),
            parent_config=saved.parent_config,
            pending_writes=[(t, c, from_langgraph(v)) for t, c, v in saved.pending_writes or ()],
        )

    def delete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)


def _index(versions: list[tuple[str, int, Any]]) -> dict[tuple[str, int], Any]:
    """(channel, engine version) -> saver version, and ("", engine version) -> any channel's (the saver
    shares one version per step), from (channel, engine version, saver version) triples."""
    known: dict[tuple[str, int], Any] = {}
    for chan, number, version in versions:
        known.setdefault((chan, number), version)
        known.setdefault(("", number), version)
    return known


def _config(thread: tuple[str, str], checkpoint_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread[0], "checkpoint_ns": thread[1], "checkpoint_id": checkpoint_id}}


# -- LangGraph's Send / Interrupt (in the Send topic, its writes and interrupt writes) <-> ours --------------
@functools.cache
def _langgraph_types() -> Any:
    """langgraph.types when LangGraph is installed (a thread we save must resume there), else None."""
    if importlib.util.find_spec("langgraph.types") is None:
        return None
    import langgraph.types

    return langgraph.types


def to_langgraph(value: Any) -> Any:
    if isinstance(value, list) and value and isinstance(value[0], Send | Interrupt):
        return [to_langgraph(v) for v in value]
    if not isinstance(value, Send | Interrupt):
        return value
    types = _langgraph_types()
    if types is None:
        return value
    if isinstance(value, Send):  # a Send's timeout policy is agent_runtime's own: not carried over
        return types.Send(value.node, value.arg)
    return types.Interrupt(value.value, value.id, response_schema=value.response_schema)


def _is_langgraph(value: Any, name: str) -> bool:
    cls = type(value)
    return cls.__name__ == name and cls.__module__ == "langgraph.types"


def from_langgraph(value: Any) -> Any:
    if isinstance(value, list) and value and (_is_langgraph(value[0], "Send") or _is_langgraph(value[0], "Interrupt")):
        return [from_langgraph(v) for v in value]
    if _is_langgraph(value, "Send"):
        return Send(value.node, value.arg)
    if _is_langgraph(value, "Interrupt"):
        return Interrupt(value.value, value.id, response_schema=getattr(value, "response_schema", None))
    return value
