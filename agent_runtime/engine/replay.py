"""Subgraph state on time travel (LangGraph's ReplayState). A run replaying or forking a named earlier
checkpoint re-runs its subgraphs; each subgraph, the first time it runs in that run, starts from its
own latest checkpoint saved before the replayed parent checkpoint (so a stateful subgraph sees what it
had then, not what later turns added). Later runs of it in the same run (a loop) load their latest
checkpoint as usual. One ReplayBound is shared by a run and all its nested subgraph runs."""

from __future__ import annotations

from typing import Any

from agent_runtime.checkpoint.base import BaseCheckpointer, CheckpointTuple

# a checkpoint that is already a branch point: its subgraphs' state is that of the checkpoint it copies
_BRANCH_SOURCES = ("update", "fork")


class ReplayBound:
    __slots__ = ("checkpoint_id", "visited")

    def __init__(self, checkpoint_id: str) -> None:
        self.checkpoint_id = checkpoint_id
        self.visited: set[str] = set()

    @classmethod
    def of(cls, loaded: CheckpointTuple) -> ReplayBound:
        """The bound of a run from `loaded`: that checkpoint, or the one it copies (an update / fork
        saved after the subgraph checkpoints of the step it branches from)."""
        bound = loaded.checkpoint.id
        if loaded.metadata.get("source") in _BRANCH_SOURCES and loaded.parent_config is not None:
            bound = loaded.parent_config["configurable"].get("checkpoint_id", bound)
        return cls(bound)

    def first_visit(self, ns: str) -> bool:
        """True the first time the subgraph at `ns` runs (task ids aside: one subgraph in a loop runs
        under a new task id each time)."""
        stable = "|".join(part.split(":")[0] for part in ns.split("|"))
        if stable in self.visited:
            return False
        self.visited.add(stable)
        return True

    def checkpoint(self, checkpointer: BaseCheckpointer, config: dict[str, Any]) -> CheckpointTuple | None:
        """The subgraph's latest checkpoint saved before the bound (None: it had none then)."""
        before = {"configurable": {"checkpoint_id": self.checkpoint_id}}
        return next(iter(checkpointer.list(config, before=before, limit=1)), None)
