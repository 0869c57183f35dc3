"""The superstep loop: one asyncio event loop; a superstep's tasks run concurrently, their writes are
buffered and applied at the barrier in a deterministic order, then a checkpoint is saved."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.channels.untracked import SendQueue
from agent_runtime.checkpoint.base import (
    BaseCheckpointer,
    CheckpointTuple,
    ThreadStore,
    checkpoint_config,
    step_metadata,
    thread_key,
)
from agent_runtime.constants import INTERRUPT, NODE_FINISHED, TASKS
from agent_runtime.core.run_config import checkpoint_metadata
from agent_runtime.core.schema import ROOT
from agent_runtime.core.types import START, Command, Interrupt, IsLastStepManager, StopReason
from agent_runtime.engine import context, events, payloads
from agent_runtime.engine.algo import ChannelState, Task, apply_writes, prepare_tasks, sort_tasks
from agent_runtime.engine.error_handlers import handler_config, in_barrier_order
from agent_runtime.engine.lineage import Lineage
from agent_runtime.engine.replay import ReplayBound
from agent_runtime.engine.report import RunReport
from agent_runtime.engine.resume import restore_step
from agent_runtime.engine.resume_source import ResumeSource
from agent_runtime.engine.runner import StepRun
from agent_runtime.engine.saving import committed_writes, put_checkpoint
from agent_runtime.engine.spec import Branch, EngineGraph, config_namespace
from agent_runtime.engine.start import start
from agent_runtime.engine.stream_event import Event
from agent_runtime.engine.task_status import CONTROL_WRITES
from agent_runtime.engine.waker import Waker
from agent_runtime.errors import GraphDrained, GraphRecursionError

if TYPE_CHECKING:
    from agent_runtime.engine.callbacks import RunCallbacks
    from agent_runtime.engine.control import RunControl
    from agent_runtime.engine.guard_rails import GuardRails, GuardSession


class Run:
    """One invocation of a compiled graph on one thread."""

    # stream modes whose chunks a running task writes (custom writes): they go out as written
    live_modes: frozenset[str] = frozenset({"custom"})

    def __init__(
        self,
        graph: EngineGraph[Run],
        input: Any,
        config: dict[str, Any],
        *,
        modes: frozenset[str],
        recursion_limit: int,
        durability: str,
        executor: Executor,
        guard_rails: GuardRails | None,
        checkpointer: BaseCheckpointer | None,
    ) -> None:
        self.graph = graph
        self.spec = graph.spec
        self.input = input
        self.config = config
        self.modes = modes
        self.recursion_limit = recursion_limit
        self.durability = durability
        self.executor = executor
        self.checkpointer = checkpointer
        self.checkpointing = self.checkpointer is not None
        self.config_metadata = checkpoint_metadata(config)  # saved with each checkpoint
        self.events: list[Event] = []
        self.events_lock = threading.Lock()  # a subgraph's events may come from a pool thread
        # this run's namespace in the stream: its checkpoint namespace (a subgraph's, or the caller's)
        self.stream_ns: tuple[str, ...] = config_namespace(config)
        self.nested = False  # run by a node of a parent run (whose stream reports this run's pause)
        self.subgraphs = False  # stream the subgraphs' events too (stream(subgraphs=True))
        # static breakpoints: the compiled graph's, or the call's (stream(interrupt_before=...))
        self.interrupt_before: tuple[str, ...] = graph.interrupt_before
        self.interrupt_after: tuple[str, ...] = graph.interrupt_after
        self.stream_version = "v1"  # astream(version=): a v3 event stream reads "v2" parts
        self.waker: Waker | None = None
        self.callbacks: RunCallbacks | None = None  # LangChain callbacks, when asked for (engine/callbacks.py)
        self.task_events = not events.TASK_MODES.isdisjoint(modes)
        self.checkpoint_events = not events.CHECKPOINT_MODES.isdisjoint(modes)
        self.report = RunReport()
        self.resume_source = ResumeSource()
        self.grace = False
        self.control: RunControl | None = None  # set by bind_runtime
        # the event loop is the runtime's own (invoke, stream), not the caller's (ainvoke, astream): a
        # lone sync task may then run on its thread; a caller's loop must not be blocked by one
        self.owns_loop = True
        self.status = "running"
        self.interrupts: list[Interrupt] = []
        self.terminate_status: StopReason | None = None
        self.lineage = Lineage(self.spec)
        self.guard: GuardSession | None = guard_rails.session(self) if guard_rails is not None else None
        self._view: dict[str, Any] | None = None
        self._state_keys = tuple(self.spec.schema.channels)
        self._managed = self.spec.schema.managed
        self._pending_writes: list[tuple[str, str, Any]] = []
        self._saved_max = 0  # highest channel version in the last saved checkpoint
        self._persisted_id = ""  # id of the last checkpoint actually written
        self._last_step = -1  # step of the last applied superstep
        self._exit_source = "loop"  # durability="exit": the source of the checkpoint not written yet
        self._tasks: list[Task] = []
        self._coerce = self.spec.schema.coerce if self.spec.schema.coerces else None
        queue = self.spec.channels.get(TASKS)  # a graph with UntrackedValue keys: they are never saved
        self._send_queue = queue if isinstance(queue, SendQueue) else None
        self._cp_config_cache: tuple[str, dict[str, Any]] | None = None
        self._store: ThreadStore | None = None  # the checkpointer's direct path for this thread, if it has one
        self._loaded: CheckpointTuple | None = None  # the checkpoint the run started from
        self.replay: ReplayBound | None = None  # a time-travelling run's (shared with its subgraphs' runs)
        self.start_from: Any = MISSING  # a subgraph's on replay: its checkpoint then (None: none), not its latest
        self.ns = ""  # the checkpoint namespace (set from the config when the run has a checkpointer)
        self.node_finished = config.get("configurable", {}).get(NODE_FINISHED)  # LangGraph's test hook
        self.parents: dict[str, str] = {}  # a subgraph's: namespace -> current checkpoint id of each graph above
        # functional API: saved writes of the step's task calls (by call id), the calls started in the
        # current step (committed at exit with durability="exit"), and a lock for their bookkeeping,
        # which sync calls do on pool threads
        self.saved_writes: dict[str, list[tuple[str, Any]]] = {}
        self.calls: list[Task] = []
        self.lock = threading.Lock()

    # -- reading state ----------------------------------------------------------------------------
    def step_view(self) -> dict[str, Any]:
        """Available state values before this superstep's writes (shared by all its tasks)."""
        view = self._view
        if view is None:
            channels = self.state.channels
            view = {}
            for key in self._state_keys:
                channel = channels[key]
                if channel.is_available():
                    view[key] = channel.get()
            self._view = view
        return view

    def _with_managed(self, values: dict[str, Any]) -> dict[str, Any]:
        for key, kind in self._managed.items():
            values[key] = self.step == self.stop - 1 if kind is IsLastStepManager else self.stop - self.step
        return values

    def task_input(self, task: Task) -> Any:
        if task.kind:  # PUSH: the Send argument is the whole input
            return task.input
        if task.node.fn is None:  # type: ignore[union-attr]
            return self.state.channels[START].get()
        values = dict(self.step_view())
        if self._managed:
            self._with_managed(values)
        reader = task.node.reader  # type: ignore[union-attr]
        if reader is not None:
            return reader(values)
        return self._coerce(values) if self._coerce is not None else values

    @property
    def result_keys(self) -> frozenset[str]:
        """The channels a task's result shows ("debug" task_result, get_state's tasks)."""
        return self.spec.schema.keys

    def shown_input(self, task_input: Any) -> Any:
        """A task's input as its "debug" task event and its chain run show it."""
        return task_input

    def local_state(self, own: Sequence[tuple[str, Any]], result: Any, branch: Branch) -> Any:
        """What a conditional edge sees: the pre-step state plus only this task's own writes (read
        through the branch's reader, if it has one)."""
        state = dict(self.step_view())
        if own:
            channels = self.state.channels
            if len(own) == 1:
                key, value = own[0]
                grouped: dict[str, list[Any]] = {key: [value]}
            else:
                grouped = {}
                for key, value in own:
                    grouped.setdefault(key, []).append(value)
            for key, values in grouped.items():
                value = channels[key].preview(values)
                if value is not MISSING:
                    state[key] = value
        if isinstance(result, dict):
            for key, value in result.items():
                state.setdefault(key, value)
        if self._managed:
            self._with_managed(state)
        if branch.reader is not None:
            read = branch.reader(state)
            if branch.own_schema or not isinstance(read, dict) or not isinstance(result, dict):
                return read
            return {**result, **read}  # the node's other returned keys still reach it, as in LangGraph
        schema = self.spec.schema
        if schema.coerces:
            return schema.coerce({k: v for k, v in state.items() if k in schema.keys or k in self._managed})
        return state

    def output(self) -> Any:
        """The state values (a root state: its value)."""
        if self.spec.schema.is_root:
            return self.step_view().get(ROOT)
        return dict(self.step_view())

    def node_config(self, task: Task) -> dict[str, Any]:
        # the run's durability, where LangGraph's nodes find it
        configurable = {**self.config.get("configurable", {}), "__pregel_durability": self.durability}
        metadata = {**self.config.get("metadata", {}), "langgraph_step": self.step, "langgraph_node": task.name}
        return handler_config(task, {**self.config, "configurable": configurable, "metadata": metadata})

    def task_update(self, task: Task, keys: frozenset[str]) -> Any:
        """What stream_mode="updates" shows for a finished task: its state updates (a root state's:
        the value written)."""
        update = payloads.task_update(task.writes, keys)
        if not self.spec.schema.is_root or update is None:
            return update
        return [u[ROOT] for u in update] if isinstance(update, list) else update[ROOT]

    # -- events -------------------------------------------------------------------------------------
    def _emit(self, mode: str, payload: Any) -> None:
        if mode in self.modes:
            self.events.append((self.stream_ns, mode, payload))

    def _debug(self, kind: str, payload: Any) -> None:
        events.debug(self, kind, self.step, payload)

    def _drain(self) -> list[Event]:
        with self.events_lock:
            drained, self.events = self.events, []
        return drained

    def forward(self, event: Event) -> None:
        """An event into this run's stream from any thread (a subgraph's, a chunk a node writes, a chat
        model's token), waking the step that waits for its tasks, so the event goes out at once."""
        with self.events_lock:
            self.events.append(event)
        if self.waker is not None:
            self.waker.wake()

    # -- loading and input ----------------------------------------------------------------------------
    def _load(self) -> bool:
        spec = self.spec
        saved = None
        if self.checkpointer is not None:
            self.thread_id, self.ns = thread_key(self.config)
            self._store = self.checkpointer.thread_store(self.thread_id, self.ns)
            saved = self.checkpointer.get_tuple(self.config) if self.start_from is MISSING else self.start_from
        if saved is None:
            self.state = ChannelState({k: ch.new() for k, ch in spec.channels.items()}, {}, {})
            self.checkpoint_id = ""
            saved_step = -2
        else:
            checkpoint = saved.checkpoint
            channels = {
                k: ch.from_checkpoint(checkpoint.channel_values.get(k, MISSING)) for k, ch in spec.channels.items()
            }
            self.state = ChannelState(channels, dict(checkpoint.channel_versions), checkpoint.versions_seen)
            self.checkpoint_id = self._persisted_id = checkpoint.id
            self._loaded = saved
            if "checkpoint_id" in self.config.get("configurable", {}):
                self._above_the_thread()
            self._saved_max = self.state.max_version
            self._pending_writes = list(saved.pending_writes or ())  # a saver may give None (LangGraph's default)
            saved_step = int(saved.metadata.get("step", -1))
        if self.start_from is not MISSING:  # an earlier state of the namespace (or none): a fork of it
            self._above_the_thread()
        self.step = saved_step + 1
        self.stop = self.step + self.recursion_limit + 1
        self.updated: set[str] | None = None
        return saved is not None

    def _above_the_thread(self) -> None:
        """A run from a named (earlier) checkpoint forks the thread (replay, update_state): its new channel
        versions start above every version the thread has saved, or they would overwrite the stored
        values of the later checkpoints (a value is stored once per channel version). Every write goes
        above all earlier ones, so the thread's newest checkpoint holds its highest version."""
        assert self.checkpointer is not None
        configurable = {k: v for k, v in self.config["configurable"].items() if k != "checkpoint_id"}
        newest = self.checkpointer.get_tuple({"configurable": configurable})
        if newest is not None:
            highest = max(newest.checkpoint.channel_versions.values(), default=0)
            self.state.max_version = max(self.state.max_version, highest)

    def _first(self, has_checkpoint: bool) -> None:
        """Take the run's input (engine/start.py); a subclass may note what it finds first."""
        start(self, has_checkpoint)

    def input_writes(self, value: Any) -> list[tuple[str, Any]]:
        """The writes of a new graph input: the state keys it sets, for the hidden __start__ task."""
        schema = self.spec.schema
        data = schema.input_dict(value)
        if self.spec.input_keys is not None:  # StateGraph(input_schema=...): only its keys are input
            data = {k: v for k, v in data.items() if k in self.spec.input_keys}
        unknown = [k for k in data if k not in schema.keys]
        if unknown and not self.nested:  # a subgraph gets its parent's whole state: no warning there
            warnings.warn(f"Input keys {unknown} are not state keys; they are dropped", stacklevel=5)
        return [(START, {k: data[k] for k in data if k in schema.keys})]

    # -- checkpoints ------------------------------------------------------------------------------------
    def _config_of(self, checkpoint_id: str) -> dict[str, Any]:
        """Config naming a checkpoint of this run's thread ("": the thread, no checkpoint)."""
        if checkpoint_id:
            return checkpoint_config(self.thread_id, self.ns, checkpoint_id)
        return {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": self.ns}}

    def _cp_config(self) -> dict[str, Any]:
        """Config naming the current checkpoint (the parent of the next one)."""
        cached = self._cp_config_cache
        if cached is None or cached[0] != self.checkpoint_id:
            cached = self._cp_config_cache = (self.checkpoint_id, self._config_of(self.checkpoint_id))
        return cached[1]

    def _save(self, source: str) -> None:
        """Checkpoint the state after a superstep (or the input / an update). With
        durability="exit" the ids still advance (task ids derive from them, so a resume matches
        the saved writes) but only the final state is written, by `_save_exit`."""
        checkpointer = self.checkpointer
        if checkpointer is None:
            return
        self._last_step = self.step
        parent_id = self.checkpoint_id
        if self.durability == "exit":
            self.checkpoint_id = checkpointer.new_id()
            self._exit_source = source  # what `_save_exit` writes it as
            parent_id = ""  # its debug event names no parent: none was written in this run (LangGraph's)
        else:
            self._put(checkpointer.new_id(), source, self.step, parent_id)
        if self.checkpoint_events:
            metadata = step_metadata(self.config_metadata, source, self.step, self.parents)
            events.checkpoint_saved(self, metadata, self._config_of(parent_id))

    def save_branch_point(self, source: str) -> None:
        """Save the loaded state as the first checkpoint of a new branch. It gets a version above the
        thread's (on the Send topic, which triggers nothing), so it holds the thread's highest version
        and runs continuing it, or forking the thread again, write above every stored version."""
        state = self.state
        state.max_version += 1
        state.versions[TASKS] = state.max_version
        state.seen[INTERRUPT] = dict(state.versions)
        self._save(source)

    def _save_exit(self, tasks: Sequence[Task]) -> None:
        """durability="exit": persist the final state and the unfinished step's task writes."""
        if self.checkpointer is None or self.durability != "exit":
            return
        if self.checkpoint_id and self.checkpoint_id != self._persisted_id:
            self._put(self.checkpoint_id, self._exit_source, self._last_step, self._persisted_id)
        for task in (*tasks, *self.calls):
            if task.done or task.interrupts is not None or task.error is not None:
                self.commit(task, force=True)

    def _put(self, checkpoint_id: str, source: str, step: int, parent_id: str) -> None:
        """Save the state as checkpoint `checkpoint_id`, the child of `parent_id` ("": none)."""
        state = self.state
        # versions only grow, so what changed since the last save is what is newer than its maximum
        saved_max = self._saved_max
        store = self._store
        if store is not None:  # our own saver: no checkpoint, metadata or config to build per step
            versions, channels, step_updated = state.versions, state.channels, self.updated
            changed = []  # a loop, not a comprehension: cheaper for the few channels a step changes (3.11)
            for chan, version in versions.items():
                if version > saved_max:
                    changed.append((chan, version, channels[chan].stored()))
            store.save(
                checkpoint_id,
                time.time(),
                versions.copy(),
                state.seen.copy(),
                None if step_updated is None else tuple(step_updated),
                parent_id or None,
                changed,
                self.config_metadata,
                source,
                step,
                self.parents,
            )
        else:
            assert self.checkpointer is not None
            metadata = step_metadata(self.config_metadata, source, step, self.parents)
            parent = self._config_of(parent_id)
            put_checkpoint(
                self.checkpointer, parent, checkpoint_id, time.time(), state, saved_max, self.updated, metadata
            )
        self.checkpoint_id = self._persisted_id = checkpoint_id
        self._saved_max = state.max_version

    def commit(self, task: Task, force: bool = False) -> None:
        """Persist a finished task's writes at once, so a resume after a crash skips it."""
        checkpointer = self.checkpointer
        if checkpointer is None or (self.durability == "exit" and not force):
            return
        writes = task.writes  # a task that finished with output: its writes as they are (the saver copies them)
        ended = task.interrupts is not None or task.error is not None or not writes or writes[0][0] in CONTROL_WRITES
        if ended or self.saved_writes or self._send_queue is not None:
            writes = committed_writes(task, self.saved_writes.get(task.id, ()), self._send_queue)
        if self._store is not None:
            self._store.put_writes(self.checkpoint_id, task.id, writes)
        else:
            checkpointer.put_writes(self._cp_config(), list(writes), task.id)

    def _reapply_pending(self, tasks: list[Task], handlers: bool = True) -> None:
        """On the first tick of a resume, tasks that finished before keep their saved writes (and
        `handlers`: the error handlers of failed tasks join the step)."""
        self.saved_writes = restore_step(self, tasks, self._pending_writes, handlers)  # task calls look up theirs
        events.tasks_restored(self, tasks)
        self._pending_writes = []

    # -- running ----------------------------------------------------------------------------------------
    def _should_break(self, names: tuple[str, ...], tasks: list[Task]) -> bool:
        state = self.state
        seen = state.seen.get(INTERRUPT, {})
        if not any(v > seen.get(c, 0) for c, v in state.versions.items()):
            return False
        if any(t.name in names for t in tasks):
            state.seen[INTERRUPT] = dict(state.versions)
            return True
        return False

    async def events_iter(self) -> AsyncGenerator[Event, None]:
        started = time.perf_counter()
        callbacks = self.callbacks
        if callbacks is not None:
            callbacks.start(self)
        if (
            self.subgraphs
            or (callbacks is not None and callbacks.streams)
            or not self.live_modes.isdisjoint(self.modes)
        ):
            self.waker = Waker()  # subgraphs' events, chat model tokens and custom writes go out as they come
        try:
            self._first(self._load())
            if callbacks is not None and (self.input is None or isinstance(self.input, Command)):
                await callbacks.resumed(self)
            for event in self._drain():
                yield event
            while True:
                if self.step > self.stop:
                    self.status = "out_of_steps"
                    break
                tasks = prepare_tasks(self.spec, self.state, self.step, self.checkpoint_id, self.updated)
                if not tasks:
                    self.status = "done"
                    break
                if self._pending_writes:
                    self._reapply_pending(tasks)
                if self.interrupt_before and self._should_break(self.interrupt_before, tasks):
                    self.status = "interrupt_before"
                    break
                # after the breakpoint check: a resume passes the step's breakpoints, so a drain in
                # front of one would skip it
                if self.control is not None and self.control.drain_requested:
                    self.status = "draining"
                    break
                if self.guard is not None and self.guard.before_step(tasks):
                    break
                known = len(self.lineage.duplicates)
                self.lineage.tasks_started(self.step, tasks, self.state)
                if len(self.lineage.duplicates) > known:
                    for duplicate in self.lineage.duplicates[known:]:
                        self._debug("diagnostic", {"kind": "duplicate_run", "message": str(duplicate)})
                if self.task_events:
                    events.tasks_started(self, tasks)
                if self.events:
                    for event in self._drain():
                        yield event
                self._tasks = tasks
                self.calls = []
                step = StepRun(self, tasks)
                try:
                    while not step.finished:
                        await step.advance()
                        if self.events:
                            for event in self._drain():
                                yield event
                finally:
                    await step.close()  # cancels what still runs if the step failed or the reader stopped
                scratches = step.scratches
                if self.status == "guard":
                    break  # stopped at a task call (functional API): the step is not applied
                interrupted = [t.interrupts for t in tasks if t.interrupts is not None]
                if interrupted:  # () is a subgraph's static breakpoint: it pauses this run too
                    self.interrupts = [i for found in interrupted for i in found]
                    self.status = "interrupted"
                    break
                self._barrier(tasks, scratches)
                if self.events:
                    for event in self._drain():
                        yield event
                if self.status != "running":
                    break
                if self.interrupt_after and self._should_break(self.interrupt_after, tasks):
                    self.step += 1
                    self.status = "interrupt_after"
                    break
                self.step += 1
            self._finish()
            if callbacks is not None and self.status.startswith("interrupt"):
                await callbacks.paused(self)
        except asyncio.CancelledError as exc:
            self.report.stop_reason = StopReason.ABORTED
            if callbacks is not None:
                callbacks.error(exc)
            raise
        except GeneratorExit as exc:  # the reader stopped early: the graph's chain run ends with it
            if callbacks is not None:
                callbacks.error(exc)
            raise
        except GraphDrained as exc:  # a subgraph this step ran was drained: so is this run (its finished tasks kept)
            if callbacks is not None:
                callbacks.error(exc)  # as LangGraph: the graph's chain run ends with GraphDrained
            self.status = "draining"
            self._save_exit(self._tasks)
            for event in self._drain():  # what its subgraph streamed before it was drained
                yield event
            self._finish()
        except Exception as exc:
            if callbacks is not None:
                callbacks.error(exc)
            self.report.stop_reason = StopReason.ERROR
            self.report.error = repr(exc)
            self._save_exit(self._tasks)
            for event in self._drain():  # the failed task's own events come before its error
                yield event
            raise
        finally:
            self.report.elapsed_s = time.perf_counter() - started
            self.graph.last_run_report = self.report
        if callbacks is not None:
            callbacks.end(self.graph.shape_output(self.output()))
        for event in self._drain():
            yield event

    def _barrier(self, tasks: list[Task], scratches: list[context.TaskScratch]) -> None:
        ordered = sort_tasks(tasks)
        if self.spec.error_handlers:
            ordered = in_barrier_order(ordered)
        before = self.step_view()
        try:
            self.updated = apply_writes(self.spec, self.state, ordered)
        except Exception:
            for task in ordered:
                if task.done and not task.hidden:
                    self.commit(task)  # keep the finished writes for a resume, as if committed at once
            raise
        self._view = None
        self.lineage.writes_applied(ordered)
        names = tuple(t.name for t in ordered if not t.hidden)
        if names:
            self.report.steps.append((self.step, names))
        if self.guard is not None:
            self.guard.after_step(ordered, scratches, before)
        else:
            for scratch in scratches:
                self.report.tokens += scratch.tokens
                self.report.cost += scratch.cost
        for task in ordered:
            if task.terminate is not None:
                self.terminate_status = task.terminate.status
                self.report.message = task.terminate.message
                self.status = "terminated"
        if "values" in self.modes and not self.updated.isdisjoint(self.spec.schema.keys):
            self._emit("values", self.output())
        self._save("loop")

    def _finish(self) -> None:
        report = self.report
        report.duplicate_runs = self.lineage.duplicates
        if self.status in ("done", "terminated", "guard"):
            report.waiting_joins = self.lineage.waiting_joins(self.state)
        paused = self.status.startswith("interrupt")
        if paused or not self.ns or ":" not in self.ns:  # a finished per-call subgraph leaves nothing to resume
            self._save_exit(self._tasks if paused else ())
        if self.status == "done":
            report.stop_reason = StopReason.GOAL
        elif self.status == "terminated":
            report.stop_reason = self.terminate_status or StopReason.GOAL
        elif self.status.startswith("interrupt"):
            report.stop_reason = StopReason.INTERRUPTED
            report.interrupts = list(self.interrupts)
            events.paused(self)
        elif self.status == "guard":
            pass  # the guard set the stop reason
        elif self.status == "draining":
            report.stop_reason = StopReason.DRAINED
            self._debug("run_report", report)
            assert self.control is not None
            raise GraphDrained(self.control.drain_reason or "shutdown")
        elif self.status == "out_of_steps":
            report.stop_reason = StopReason.MAX_STEPS
            self._debug("run_report", report)
            raise GraphRecursionError(
                f"Recursion limit of {self.recursion_limit} reached without hitting a stop condition. "
                "You can increase the limit by setting the `recursion_limit` config key, or stop cleanly "
                "with guard rails (GuardRails(max_steps=...))."
            )
        self._debug("run_report", report)
