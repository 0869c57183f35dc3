"""CompiledGraph: invoke / stream / state API over the superstep loop."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from agent_runtime.checkpoint.base import NULL_TASK_ID, BaseCheckpointer, CheckpointTuple, iso
from agent_runtime.checkpoint.langgraph_saver import as_checkpointer
from agent_runtime.constants import INTERRUPT, RESERVED
from agent_runtime.core.deprecation import checkpoint_during
from agent_runtime.core.run_config import DEFAULT_RECURSION_LIMIT, ambient_config
from agent_runtime.core.types import START, GraphOutput, PregelTask, StateSnapshot, StateUpdate
from agent_runtime.engine import context as task_context
from agent_runtime.engine.algo import PULL, Task, apply_writes, prepare_tasks, sort_tasks
from agent_runtime.engine.callbacks import RunCallbacks, wanted
from agent_runtime.engine.control import RunControl
from agent_runtime.engine.events import STREAM_MODES, with_interrupts
from agent_runtime.engine.loop import Run
from agent_runtime.engine.payloads import snapshot_task_result
from agent_runtime.engine.report import RunReport
from agent_runtime.engine.runtime import CONFIG_KEY_RUNTIME, bind_runtime
from agent_runtime.engine.spec import GraphSpec
from agent_runtime.engine.subgraphs import inherits, run_subgraph, subgraph_state, with_checkpoint_map
from agent_runtime.engine.sync import in_running_loop, on_own_loop, run_sync, shared_executor, thread_loop
from agent_runtime.engine.task_status import read_task_statuses
from agent_runtime.pregel.compiled_api import GraphAPI
from agent_runtime.stream.graph_api import StreamEventsAPI
from agent_runtime.stream.parts import PartShaper, schema_mapper

if TYPE_CHECKING:
    from agent_runtime.engine.context import TaskScratch
    from agent_runtime.engine.guard_rails import GuardRails

OutputKeys = str | Collection[str]  # invoke(output_keys=...): the state keys or channels returned

PULL_PATH, PUSH_PATH = "__pregel_pull", "__pregel_push"  # a task's `path` in a snapshot, as LangGraph's

# a run's own (interrupt_before, interrupt_after), given to invoke / stream instead of the graph's
Breakpoints = tuple[tuple[str, ...], tuple[str, ...]]


def select_output(output: Any, keys: OutputKeys) -> Any:
    """One key's value (None if unset), or a dict of the keys set among several."""
    if not isinstance(output, dict):  # a root state's value, an entrypoint's return value
        return output
    if isinstance(keys, str):
        return output.get(keys)
    return {k: v for k, v in output.items() if k in keys}


class CompiledGraph(GraphAPI, StreamEventsAPI):
    run_class: type[Run] = Run  # the functional API's entrypoint maps input and output its own way
    step_timeout: float | None = None  # seconds a superstep may take (engine/runner.py); settable

    def __init__(
        self,
        spec: GraphSpec,
        *,
        checkpointer: BaseCheckpointer | None,
        interrupt_before: tuple[str, ...],
        interrupt_after: tuple[str, ...],
        name: str,
        guard_rails: GuardRails | None,
    ) -> None:
        self.spec = spec
        self.checkpointer = as_checkpointer(checkpointer)
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.name = name
        self.guard_rails = guard_rails
        # The report of the last run that finished in this process (per graph object): runs on several
        # threads at once should read `stream_mode="report"`'s final "run_report" event instead.
        self.last_run_report: RunReport | None = None

    # -- running --------------------------------------------------------------------------------------
    def _new_run(
        self,
        input: Any,
        config: dict[str, Any] | None,
        modes: frozenset[str],
        durability: str | None,
        guard_rails: GuardRails | None,
        checkpointer: BaseCheckpointer | None = None,
        breakpoints: Breakpoints | None = None,
    ) -> Run:
        """A run of this graph; `breakpoints` (invoke's interrupt_before / interrupt_after) replace the
        graph's for this run."""
        config = dict(config or {})
        limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        if limit < 1:
            raise ValueError("recursion_limit must be at least 1")
        unknown = modes - STREAM_MODES
        if unknown:
            raise ValueError(f"Unsupported stream_mode {sorted(unknown)}; use one of {sorted(STREAM_MODES)}")
        run = self.run_class(
            self,
            input,
            config,
            modes=modes,
            recursion_limit=limit,
            durability=durability or "sync",
            executor=shared_executor(),
            guard_rails=guard_rails if guard_rails is not None else self.guard_rails,
            # (`graph.checkpointer = False` set after compile: never checkpoint)
            checkpointer=checkpointer
            or (self.checkpointer if isinstance(self.checkpointer, BaseCheckpointer) else None),
        )
        ambient = ambient_config()
        if wanted(config, modes, ambient):
            run.callbacks = RunCallbacks(config, ambient, self.name)
        if breakpoints is not None:
            run.interrupt_before, run.interrupt_after = breakpoints
        run.owns_loop = on_own_loop()
        bind_runtime(run)
        return run

    def run_breakpoints(
        self, before: Sequence[str] | str | None, after: Sequence[str] | str | None
    ) -> Breakpoints | None:
        """A run's interrupt_before / interrupt_after ("*": every node), None: the graph's."""
        if before is None and after is None:
            return None
        nodes = tuple(n for n in self.spec.nodes if n != START)
        return (
            nodes if before == "*" else tuple(before) if before is not None else self.interrupt_before,
            nodes if after == "*" else tuple(after) if after is not None else self.interrupt_after,
        )

    def shape_output(self, output: Any, output_keys: OutputKeys | None = None) -> Any:
        """What invoke returns (and a parent gets of a subgraph): the `output_keys` asked for, else
        StateGraph(output_schema=...)'s keys, else the whole state."""
        keys = output_keys if output_keys is not None else self.spec.output_keys
        return output if keys is None else select_output(output, keys)

    async def ainvoke(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        durability: str | None = None,
        guard_rails: GuardRails | None = None,
        context: Any = None,
        stream_mode: str | Sequence[str] = "values",
        version: str = "v1",
        control: RunControl | None = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        output_keys: OutputKeys | None = None,
        **options: Any,
    ) -> Any:
        """The output state (with the interrupts it paused on); for another `stream_mode`, the list of
        the run's chunks. `version="v2"`: a GraphOutput, or v2 stream parts."""
        durability = checkpoint_during(options, durability)
        if stream_mode != "values":
            return await _collect(
                self.astream(
                    input,
                    config,
                    stream_mode=stream_mode,
                    durability=durability,
                    guard_rails=guard_rails,
                    context=context,
                    version=version,
                    control=control,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                )
            )
        config = self.entry_config(config, context, control)
        breakpoints = self.run_breakpoints(interrupt_before, interrupt_after)
        caller = task_context.running()
        result = await self.invoke_from(caller, input, config, durability, guard_rails, breakpoints, output_keys)
        return self.graph_output(result) if version == "v2" else result

    async def invoke_from(
        self,
        caller: TaskScratch | None,
        input: Any,
        config: dict[str, Any] | None,
        durability: str | None = None,
        guard_rails: GuardRails | None = None,
        breakpoints: Breakpoints | None = None,
        output_keys: OutputKeys | None = None,
    ) -> Any:
        """Invoke, from inside the node `caller` (None: not in a node). There, as in LangGraph, the graph
        is the node's subgraph: on the node's thread unless given one or a checkpointer of its own."""
        if (
            caller is not None
            and (inherits(caller.run, self) or caller.run.subgraphs)
            and "thread_id" not in (config or {}).get("configurable", {})
        ):
            index, caller.subgraph_calls = caller.subgraph_calls, caller.subgraph_calls + 1
            runtime = (config or {}).get("configurable", {}).get(CONFIG_KEY_RUNTIME)
            control = getattr(runtime, "control", None)  # invoke(control=...): the graph's own
            own = control if control is not caller.run.control else None
            return await run_subgraph(caller.run, caller.task, self, input, index, own)
        run = self._new_run(input, config, frozenset(), durability, guard_rails, breakpoints=breakpoints)
        async for _ in run.events_iter():
            pass
        return self.result_of(run, output_keys)

    def result_of(self, run: Run, output_keys: OutputKeys | None = None) -> Any:
        """What `invoke` returns once `run` ended: its output, with the interrupts it paused on."""
        output = self.shape_output(run.output(), output_keys)
        return with_interrupts(output, list(run.interrupts)) if run.interrupts else output

    def invoke(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        durability: str | None = None,
        guard_rails: GuardRails | None = None,
        context: Any = None,
        stream_mode: str | Sequence[str] = "values",
        version: str = "v1",
        control: RunControl | None = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        output_keys: OutputKeys | None = None,
        **options: Any,
    ) -> Any:
        durability = checkpoint_during(options, durability)
        if stream_mode != "values":
            return list(
                self.stream(
                    input,
                    config,
                    stream_mode=stream_mode,
                    durability=durability,
                    guard_rails=guard_rails,
                    context=context,
                    version=version,
                    control=control,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                )
            )
        config = self.entry_config(config, context, control)
        breakpoints = self.run_breakpoints(interrupt_before, interrupt_after)
        # the caller is looked up here: run_sync may go on in a thread that does not see this context
        caller = task_context.running()
        result = run_sync(self.invoke_from(caller, input, config, durability, guard_rails, breakpoints, output_keys))
        return self.graph_output(result) if version == "v2" else result

    def graph_output(self, result: Any) -> GraphOutput[Any]:
        """`invoke(version="v2")`'s result: the output (mapped to a pydantic / dataclass output schema)
        and the interrupts apart."""
        interrupts: tuple[Any, ...] = ()
        if isinstance(result, dict) and INTERRUPT in result:
            result = dict(result)
            interrupts = tuple(result.pop(INTERRUPT))
        map_output = self.part_shaper().output
        return GraphOutput(map_output(result) if map_output and isinstance(result, dict) else result, interrupts)

    def part_shaper(self) -> PartShaper:
        """How v2 output shows this graph's states (a StateGraph's pydantic / dataclass schemas)."""
        if self.builder is None:
            return PartShaper(None, None)
        return PartShaper(schema_mapper(self.builder.output_schema), schema_mapper(self.builder.state_schema))

    async def astream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] = "updates",  # LangGraph's default for a StateGraph
        subgraphs: bool = False,
        durability: str | None = None,
        guard_rails: GuardRails | None = None,
        context: Any = None,
        version: str = "v1",
        control: RunControl | None = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        **options: Any,
    ) -> AsyncGenerator[Any, None]:
        """The run's chunks: `payload` for one mode, `(mode, payload)` for a list; with `subgraphs=True`
        the subgraphs' chunks too, each as `(namespace, payload)` / `(namespace, mode, payload)`.
        `version="v2"`: every chunk a `{"type", "ns", "data"}` dict (agent_runtime.stream.parts)."""
        durability = checkpoint_during(options, durability)
        single = isinstance(stream_mode, str)
        modes = frozenset([stream_mode] if isinstance(stream_mode, str) else stream_mode)
        config = self.entry_config(config, context, control)
        breakpoints = self.run_breakpoints(interrupt_before, interrupt_after)
        run = self._new_run(input, config, modes, durability, guard_rails, breakpoints=breakpoints)
        run.subgraphs = subgraphs
        run.stream_version = version
        shaper = self.part_shaper() if version == "v2" else None
        events = run.events_iter()
        try:
            async for ns, mode, payload in events:
                if shaper is not None:
                    yield shaper.part(ns, mode, payload)
                elif subgraphs:
                    yield (ns, payload) if single else (ns, mode, payload)
                else:
                    yield payload if single else (mode, payload)
        finally:
            await events.aclose()  # a reader that stopped early: the tasks still running are cancelled

    def stream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] = "updates",  # LangGraph's default for a StateGraph
        subgraphs: bool = False,
        durability: str | None = None,
        guard_rails: GuardRails | None = None,
        context: Any = None,
        version: str = "v1",
        control: RunControl | None = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        **options: Any,
    ) -> Iterator[Any]:
        agen = self.astream(
            input,
            config,
            stream_mode=stream_mode,
            subgraphs=subgraphs,
            durability=checkpoint_during(options, durability),
            guard_rails=guard_rails,
            context=context,
            version=version,
            control=control,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
        )
        if in_running_loop():
            # called from async code: run to the end on a helper thread, then hand the events over
            yield from run_sync(_collect(agen))
            return
        loop = thread_loop()
        try:
            while True:
                try:
                    item = loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    return
                yield item
        finally:
            _close_on(loop, agen)

    def astream_log(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        """LangChain's run log of the run (`RunLogPatch`es; agent_runtime.streaming.events)."""
        from agent_runtime.streaming.events import astream_log

        return astream_log(self, input, config, **kwargs)

    def astream_events(
        self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2", **kwargs: Any
    ) -> Any:
        """LangChain's event stream of the run (`version="v1"` / `"v2"`, agent_runtime.streaming.events);
        other versions go to the next implementation in the class hierarchy."""
        if version in ("v1", "v2"):
            from agent_runtime.streaming.events import astream_events

            return astream_events(self, input, config, version=version, **kwargs)
        fallback = getattr(super(), "astream_events", None)
        if fallback is None:
            raise NotImplementedError(f"astream_events(version={version!r}): agent_runtime has 'v1' and 'v2'")
        return fallback(input, config, version=version, **kwargs)

    # -- state ------------------------------------------------------------------------------------------
    def _require_checkpointer(self) -> BaseCheckpointer:
        if self.checkpointer is None:
            raise ValueError("No checkpointer set: compile(checkpointer=InMemoryCheckpointer())")
        return self.checkpointer

    def _snapshot(
        self, saved: CheckpointTuple, checkpointer: BaseCheckpointer, *, live: bool, recurse: bool = False
    ) -> StateSnapshot:
        """`live` (get_state of the latest checkpoint): finished tasks' writes applied and only the
        tasks still to run in `next`. Otherwise (history): the step as recorded, values at its start.
        `recurse` (`subgraphs=True`): a subgraph node's task has its subgraph's state."""
        run = self._new_run(None, saved.config, frozenset(), None, None, checkpointer=checkpointer)
        run._load()
        null_writes = [(c, v) for t, c, v in saved.pending_writes if t == NULL_TASK_ID and c not in RESERVED]
        if null_writes:
            apply_writes(self.spec, run.state, [Task.pseudo("__input__", null_writes)])
        tasks = prepare_tasks(self.spec, run.state, run.step, run.checkpoint_id, None)
        statuses = read_task_statuses(saved.pending_writes)
        # live: the questions still waiting for an answer; the step's record: every question asked
        interrupts = {t: s.pending_interrupts if live else s.interrupts for t, s in statuses.items()}
        errors = {t: s.error for t, s in statuses.items() if s.error is not None}
        run._reapply_pending(tasks, handlers=False)  # as LangGraph's, a snapshot shows the step's own tasks
        pending = tasks
        if live:  # a failed task its error handler took over is still to run (its handler is)
            finished = [t for t in tasks if t.done and t.error is None]
            if finished:
                apply_writes(self.spec, run.state, sort_tasks(finished))
            pending = [t for t in tasks if not t.done or t.error is not None]
        run._view = None
        return StateSnapshot(
            values=run.output(),
            next=tuple(t.name for t in pending),
            config=with_checkpoint_map(saved.config, saved.metadata),
            metadata=saved.metadata,
            created_at=iso(saved.checkpoint.ts),
            parent_config=saved.parent_config and with_checkpoint_map(saved.parent_config, saved.metadata),
            # Every task of the step, those that finished before a failure or an interrupt included (with
            # their writes as the result), as LangGraph shows them; `next` holds the ones still to run.
            tasks=tuple(
                PregelTask(
                    t.id,
                    t.name,
                    (PULL_PATH, t.name) if t.kind == PULL else (PUSH_PATH, t.index, False),
                    errors.get(t.id),
                    interrupts.get(t.id, ()),
                    self._task_state(run, t, checkpointer, recurse),
                    self._task_result(run, t, live),
                )
                for t in tasks
            ),
            interrupts=tuple(i for t in tasks for i in interrupts.get(t.id, ())),
        )

    def _task_result(self, run: Run, task: Task, live: bool) -> Any:
        """A finished task's state writes. The `__start__` task of an earlier checkpoint ran, and its
        writes are the input it maps (kept on its channel; a lone task's writes are not saved apart)."""
        keys = run.result_keys
        if task.done and task.error is None:  # (a failed task its error handler took over wrote nothing)
            return snapshot_task_result(task.writes, keys)
        if live or task.name != START or not run.state.channels[START].is_available():
            return None
        return snapshot_task_result(run.state.channels[START].get().items(), keys)

    def _task_state(
        self, run: Run, task: Task, checkpointer: BaseCheckpointer, recurse: bool
    ) -> dict[str, Any] | StateSnapshot | None:
        """A subgraph node's task: the config of the subgraph's checkpoints or (`recurse`) its state."""
        config = subgraph_state(run.config, task)
        if config is None or not recurse:
            return config
        subgraph = task.node.subgraph or task.node.invoked_graph if task.node is not None else None
        assert isinstance(subgraph, CompiledGraph)  # subgraph_state gives a config to a subgraph node's task only
        return subgraph._state(config, checkpointer, recurse=True)

    def _state(self, config: dict[str, Any], checkpointer: BaseCheckpointer, *, recurse: bool) -> StateSnapshot:
        config = self.own_config(config)
        saved = checkpointer.get_tuple(config)
        if saved is None:
            return StateSnapshot({}, (), config, {}, "", None)
        live = not config.get("configurable", {}).get("checkpoint_id")
        return self._snapshot(saved, checkpointer, live=live, recurse=recurse)

    def get_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state; with `subgraphs=True`, each subgraph node's task holds its subgraph's."""
        return self._owner(config)._state(config, self._require_checkpointer(), recurse=subgraphs)

    def get_state_history(
        self,
        config: dict[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's snapshots, newest first: those saved before `before` (a checkpoint's config), whose
        metadata has the `filter` items, at most `limit`."""
        checkpointer = self._require_checkpointer()
        owner = self._owner(config)
        configurable = config.get("configurable", {})
        one_ns = {**config, "configurable": {**configurable, "checkpoint_ns": configurable.get("checkpoint_ns", "")}}
        saved_list = checkpointer.list(owner.own_config(one_ns), before=before, limit=None if filter else limit)
        if filter:
            matching = (t for t in saved_list if all(t.metadata.get(k) == v for k, v in filter.items()))
            saved_list = itertools.islice(matching, limit)
        for saved in saved_list:
            yield owner._snapshot(saved, checkpointer, live=False)

    async def aget_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        # the checkpointers are synchronous and in-process or one round trip
        return self.get_state(config, subgraphs=subgraphs)

    async def aget_state_history(
        self,
        config: dict[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        for snapshot in self.get_state_history(config, filter=filter, before=before, limit=limit):
            yield snapshot

    def update_state(self, config: dict[str, Any], values: Any, as_node: str | None = None) -> dict[str, Any]:
        """Write `values` as if node `as_node` had returned them (its edges fire too); a new checkpoint."""
        return run_sync(self.aupdate_state(config, values, as_node))

    async def aupdate_state(self, config: dict[str, Any], values: Any, as_node: str | None = None) -> dict[str, Any]:
        return await self.abulk_update_state(config, [[StateUpdate(values, as_node)]])


def _close_on(loop: asyncio.AbstractEventLoop, agen: AsyncGenerator[Any, None]) -> None:
    """Close a sync stream's generator on the loop it ran on. A stream dropped unfinished inside
    async code (a `stream_events` run stream, collected while another loop runs on this thread) is
    closed from a helper thread: this thread cannot run a second loop."""
    if not in_running_loop():
        loop.run_until_complete(agen.aclose())
        return
    closer = threading.Thread(target=loop.run_until_complete, args=(agen.aclose(),))
    closer.start()
    closer.join()


async def _collect(agen: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in agen]
