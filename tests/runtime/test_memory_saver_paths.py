"""InMemoryCheckpointer's direct path for the engine (`thread_store`): taken only when the saver's put hooks
are its own, so a subclass's or a patched hook still sees every save; and a thread deleted under a
running graph gets the run's later checkpoints again."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, TypedDict

import agent_runtime as ar


class State(TypedDict):
    n: int


def _counter(saver: ar.BaseCheckpointer, node: Any = None, steps: int = 3) -> ar.CompiledGraph:
    def inc(state: State) -> dict[str, int]:
        return {"n": state["n"] + 1}

    g = ar.StateGraph(State)
    g.add_node("inc", node or inc)
    g.add_edge(ar.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ar.END, ["inc", ar.END])
    return g.compile(checkpointer=saver)


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


class CountingSaver(ar.InMemoryCheckpointer):
    def __init__(self) -> None:
        super().__init__()
        self.puts = 0
        self.writes = 0

    def put(
        self, config: dict[str, Any], checkpoint: Any, metadata: dict[str, Any], new_versions: dict[str, int]
    ) -> dict[str, Any]:
        self.puts += 1
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        self.writes += 1
        super().put_writes(config, writes, task_id)


def test_a_subclass_overriding_put_hooks_sees_every_save() -> None:
    saver, cfg = CountingSaver(), _cfg()
    assert _counter(saver).invoke({"n": 0}, cfg) == {"n": 3}
    history = list(saver.list(cfg))
    assert saver.puts == len(history) == 5  # input, then one per superstep (inc x3 after __start__)
    assert saver.writes == sum(1 for saved in history if saved.pending_writes)


def test_an_instance_patched_put_writes_is_called() -> None:
    saver, cfg = ar.InMemoryCheckpointer(), _cfg()
    seen: list[str] = []
    own = saver.put_writes

    def spy(config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        seen.append(task_id)
        own(config, writes, task_id)

    saver.put_writes = spy  # type: ignore[method-assign]
    _counter(saver).invoke({"n": 0}, cfg)
    assert len(seen) == 4  # __start__ and three inc tasks


def test_the_direct_path_reads_back_as_the_public_one() -> None:
    fast, slow, cfg = ar.InMemoryCheckpointer(), CountingSaver(), _cfg()
    _counter(fast).invoke({"n": 0}, cfg, durability="sync")
    _counter(slow).invoke({"n": 0}, cfg, durability="sync")

    def shape(saver: ar.BaseCheckpointer) -> list[Any]:
        rows = []
        for saved in saver.list(cfg):
            lg = saved.checkpoint.as_langgraph()
            rows.append(
                (
                    lg["channel_values"],
                    lg["channel_versions"],
                    lg["versions_seen"],
                    lg["updated_channels"],
                    {k: v for k, v in saved.metadata.items()},
                    saved.parent_config is None,
                    [(chan, value) for _, chan, value in saved.pending_writes],
                )
            )
        return rows

    assert shape(fast) == shape(slow)


def test_a_thread_deleted_while_its_graph_runs_gets_the_later_checkpoints() -> None:
    saver, cfg = ar.InMemoryCheckpointer(), _cfg()

    def inc(state: State) -> dict[str, int]:
        if state["n"] == 1:
            saver.delete_thread(cfg["configurable"]["thread_id"])
        return {"n": state["n"] + 1}

    app = _counter(saver, inc, steps=4)
    assert app.invoke({"n": 0}, cfg) == {"n": 4}
    snapshot = app.get_state(cfg)
    assert snapshot.values == {"n": 4} and snapshot.next == ()
    steps = [saved.metadata["step"] for saved in saver.list(cfg)]
    assert steps == [4, 3, 2]  # saved after the delete (in the step that deleted: the writes of n=1's task)
