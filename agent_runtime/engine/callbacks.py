"""LangChain callbacks of a run, as LangGraph reports them: the graph is a chain run (named after the
graph, or after the node it runs as), each task a child chain run named after its node, with LangGraph's
task metadata (`langgraph_step`, `langgraph_node`, `langgraph_triggers`, `langgraph_path`,
`langgraph_checkpoint_ns`). The node's code runs with the task's config as LangChain's ambient config
(`var_child_runnable_config`), so a chat model or a tool called inside reports to the same handlers: the
tracers of `config["callbacks"]`, and the handlers of the `"messages"` and `"tools"` stream modes.

Built only when asked for (callbacks in the config or inherited from the node that runs the graph, or one
of those stream modes): a run without them does not import langchain-core and pays one `None` check per
task."""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from agent_runtime.constants import PUSH_TRIGGER
from agent_runtime.core.protocol import CONFIG_KEY_STREAM_MESSAGES_V2, CONFIG_KEY_TASK_ID, NS_SEP
from agent_runtime.core.run_config import callback_manager_for_config, ensure_config
from agent_runtime.engine.algo import PULL
from agent_runtime.engine.timeouts import progress

if TYPE_CHECKING:
    from langchain_core.callbacks import (
        BaseCallbackHandler,
        BaseCallbackManager,
        CallbackManager,
        CallbackManagerForChainRun,
    )

    from agent_runtime.callbacks import GraphCallbackManager, GraphLifecycleStatus
    from agent_runtime.core.types import Interrupt, TracePolicy
    from agent_runtime.engine.algo import Task
    from agent_runtime.engine.stream_event import Event

logger = logging.getLogger(__name__)

CALLBACK_MODES = frozenset({"messages", "tools"})  # stream modes fed by LangChain callback handlers


class TracedRun(Protocol):
    """What the callbacks read of their run (engine/loop.py's Run): its input and stream, where it is
    (step, checkpoint, namespace), how it paused, and its nodes' config."""

    input: Any
    modes: frozenset[str]
    subgraphs: bool
    stream_version: str
    step: int
    checkpoint_id: str
    ns: str
    status: str
    interrupts: list[Interrupt]

    def forward(self, event: Event) -> None: ...

    def node_config(self, task: Task) -> dict[str, Any]: ...


def wanted(config: dict[str, Any], modes: frozenset[str], ambient: dict[str, Any] | None) -> bool:
    """Whether a run reports callbacks at all (the test every run pays)."""
    if config.get("callbacks") or not CALLBACK_MODES.isdisjoint(modes):
        return True
    return (ambient is not None and bool(ambient.get("callbacks"))) or _langsmith_tracing()


def _langsmith_tracing() -> bool:
    """Whether LangSmith tracing is on (`langsmith.tracing_context(enabled=True)`, a traced caller, the
    LANGSMITH_TRACING environment variable): then LangChain's callback manager adds its tracer. Read
    as langsmith's `tracing_is_enabled` does, but from its context variables (it costs microseconds a
    run otherwise); langsmith not loaded: no tracing context can be set."""
    context = sys.modules.get("langsmith._internal._context")
    utils = sys.modules.get("langsmith.utils")
    if context is None or utils is None:
        return False
    try:
        enabled = context._TRACING_ENABLED.get()
        if enabled is not None:
            return bool(enabled)
        if context._PARENT_RUN_TREE_REF.get() is not None:
            return True
        if context._GLOBAL_TRACING_ENABLED is not None:
            return bool(context._GLOBAL_TRACING_ENABLED)
        return _tracing_env(utils)
    except AttributeError:  # another langsmith: its public test
        return bool(utils.tracing_is_enabled())


@functools.cache
def _tracing_env(utils: Any) -> bool:
    """The environment's LANGSMITH_TRACING (read once, as langsmith caches it too)."""
    return bool(utils.get_env_var("TRACING_V2", default=utils.get_env_var("TRACING", default="")) == "true")


def _streams_only_its_graph(handler: Any) -> bool:
    return getattr(handler, "streams_only_its_graph", False) is True


def _recorded(value: Any, process: Callable[[Any], Any] | None) -> Any:
    """What tracers record of `value` under a TracePolicy processor (the value itself if it fails)."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:
        logger.exception("trace input/output processor raised; recording untransformed payload")
        return value


_Manager = TypeVar("_Manager", bound="BaseCallbackManager | CallbackManagerForChainRun")


def _split_tracers(manager: _Manager) -> tuple[_Manager, _Manager]:
    """(the manager without its tracers, the manager with its tracers only). A stream handler is not
    a tracer here, even a LangChain tracer class (it feeds a caller's stream with the real values)."""
    from langchain_core.tracers import BaseTracer
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    real, tracers = copy.copy(manager), copy.copy(manager)
    tracers.handlers = [
        h for h in manager.handlers if isinstance(h, BaseTracer) and _StreamingCallbackHandler not in type(h).__mro__
    ]
    real.handlers = [h for h in manager.handlers if h not in tracers.handlers]
    return real, tracers


def _namespace(run: TracedRun) -> tuple[str, ...]:
    return tuple(run.ns.split(NS_SEP)) if run.ns else ()


class RunCallbacks:
    """The callback side of one run: its chain run and its tasks' child runs."""

    __slots__ = ("config", "handlers", "lifecycle", "manager", "metadata", "name", "ns", "run_manager", "tags")

    def __init__(self, config: dict[str, Any], ambient: dict[str, Any] | None, graph_name: str) -> None:

        config = self.config = ensure_config(config)  # over the ambient config
        configurable = config["configurable"]
        self.name: str = config.get("run_name") or graph_name
        self.metadata: dict[str, Any] = config["metadata"]
        self.tags: list[str] = config["tags"]
        self.ns: str = configurable.get("checkpoint_ns", "")
        self.manager: CallbackManager = callback_manager_for_config(config)
        if ambient is not None and CONFIG_KEY_TASK_ID not in configurable:
            # run from a node as a graph of its own (its own thread), not as the node's subgraph: its
            # namespace starts at the root, so a caller's stream handler that shows only its own graph
            # would take this graph's events for its own
            self._drop(_streams_only_its_graph)
        if "ls_integration" not in self.manager.metadata:
            self.manager.add_metadata({"ls_integration": "langgraph"})
        self.handlers: list[BaseCallbackHandler] = []
        self.run_manager: CallbackManagerForChainRun | None = None
        self.lifecycle: GraphCallbackManager | None = None  # graph lifecycle handlers (agent_runtime.callbacks)

    def _drop(self, unwanted: Callable[[Any], bool]) -> None:
        """Remove handlers this run must not report to."""
        manager = self.manager
        manager.handlers = [h for h in manager.handlers if not unwanted(h)]
        manager.inheritable_handlers = [h for h in manager.inheritable_handlers if not unwanted(h)]

    def _add_stream_handlers(self, run: TracedRun) -> None:
        """The handlers of the "messages" / "tools" modes, feeding `run`'s stream (from any thread)."""
        modes, subgraphs = run.modes, run.subgraphs

        def stream(event: Event) -> None:
            run.forward(event)
            progress("auto")  # a streamed token or tool event is progress of the node's timed attempt

        parent_ns = tuple(self.ns.split(NS_SEP)) if self.ns else ()
        if "messages" in modes:
            from agent_runtime.streaming.messages import StreamMessagesHandler, StreamMessagesHandlerV2

            # the run a v3 event stream opened (its config key, inherited by graphs run inside, and v2 parts)
            if run.stream_version == "v2" and self.config["configurable"].get(CONFIG_KEY_STREAM_MESSAGES_V2):
                self.handlers.append(StreamMessagesHandlerV2(stream, subgraphs, parent_ns=parent_ns))
            else:  # chat models must send this stream v1 chunks, not an inherited v3 stream's events
                self._drop(lambda h: isinstance(h, StreamMessagesHandlerV2))
                self.handlers.append(StreamMessagesHandler(stream, subgraphs, parent_ns=parent_ns))
        if "tools" in modes:
            from agent_runtime.streaming.tools import StreamToolCallHandler

            self.handlers.append(StreamToolCallHandler(stream, subgraphs, parent_ns=parent_ns))

    @property
    def streams(self) -> bool:
        """Whether a handler streams what the run does as it happens (a "messages" / "tools" mode, an
        event stream): then the run's own chunks go out as they come too, not at the end of a step."""
        from langchain_core.tracers._streaming import _StreamingCallbackHandler

        return bool(self.handlers) or any(_StreamingCallbackHandler in type(h).__mro__ for h in self.manager.handlers)

    # -- the graph's chain run ------------------------------------------------------------------------
    def start(self, run: TracedRun) -> None:
        if not CALLBACK_MODES.isdisjoint(run.modes):
            self._add_stream_handlers(run)
        self.run_manager = self.manager.on_chain_start(
            None, run.input, name=self.name, run_id=self.config.get("run_id")
        )
        self.run_manager.inheritable_handlers.extend(self.handlers)
        # a GraphCallbackHandler was given only if its module is loaded; a subgraph does not report
        lifecycle = sys.modules.get("agent_runtime.callbacks")
        if lifecycle is not None and CONFIG_KEY_TASK_ID not in (self.config.get("configurable") or {}):
            manager = lifecycle.GraphCallbackManager.configure(self.manager, run_id=self.run_manager.run_id)
            self.lifecycle = manager if manager.handlers else None

    async def resumed(self, run: TracedRun) -> None:
        """A run resumed its thread: the lifecycle handlers' `on_resume`."""
        if self.lifecycle is not None:
            from agent_runtime.callbacks import GraphResumeEvent

            event = GraphResumeEvent(self.lifecycle.run_id, "pending", run.checkpoint_id, _namespace(run))
            await self.lifecycle.aon_resume(event)

    async def paused(self, run: TracedRun) -> None:
        """The run paused on interrupts (or a breakpoint): the lifecycle handlers' `on_interrupt`."""
        if self.lifecycle is not None:
            from agent_runtime.callbacks import GraphInterruptEvent

            status: GraphLifecycleStatus = "pending"  # a dynamic interrupt
            if run.status == "interrupt_before":
                status = "interrupt_before"
            elif run.status == "interrupt_after":
                status = "interrupt_after"
            event = GraphInterruptEvent(
                self.lifecycle.run_id, status, run.checkpoint_id, _namespace(run), tuple(run.interrupts)
            )
            await self.lifecycle.aon_interrupt(event)

    def end(self, output: Any) -> None:
        if self.run_manager is not None:
            self.run_manager.on_chain_end(output)

    def error(self, exc: BaseException) -> None:
        if self.run_manager is not None:
            self.run_manager.on_chain_error(exc)

    # -- a task's chain run -----------------------------------------------------------------------------
    def task_config(self, run: TracedRun, task: Task, callbacks: Any) -> dict[str, Any]:
        """The config a task's code runs with (and a node's `config` parameter receives)."""
        ns = f"{task.name}:{task.id}"
        task_ns = f"{self.ns}{NS_SEP}{ns}" if self.ns else ns
        path = ("__pregel_pull", task.name) if task.kind == PULL else ("__pregel_push", task.index, False)
        metadata = {
            **self.metadata,
            "langgraph_step": run.step,
            "langgraph_node": task.name,
            "langgraph_triggers": task.triggers,
            "langgraph_path": path,
            "langgraph_checkpoint_ns": task_ns,
        }
        # the graph's run id and name are its own chain run's, not a task's
        config = {k: v for k, v in run.node_config(task).items() if k not in ("run_id", "run_name")}
        configurable = {**config["configurable"], "checkpoint_ns": task_ns, CONFIG_KEY_TASK_ID: task.id}
        return {**config, "metadata": metadata, "tags": self.tags, "callbacks": callbacks, "configurable": configurable}

    def task_started(self, run: TracedRun, task: Task, input: Any) -> tuple[CallbackManagerForChainRun, dict[str, Any]]:
        """A node's chain run (a child of the graph's, tagged with the step), and its code's config."""
        assert self.run_manager is not None
        step_manager = self.run_manager.get_child(f"graph:step:{run.step}")
        config = self.task_config(run, task, step_manager)
        step_manager.add_metadata(config["metadata"])
        policy = task.node.trace_policy if task.node is not None else None
        recorded = _recorded(input, policy.process_inputs) if policy is not None else input
        if recorded is input:
            node_run = step_manager.on_chain_start(None, input, name=task.name)
        else:  # the tracers record the processed input, the other handlers get the real one
            real, tracers = _split_tracers(step_manager)
            node_run = real.on_chain_start(None, input, name=task.name)
            tracers.on_chain_start(None, recorded, name=task.name, run_id=node_run.run_id)
            node_run.handlers = step_manager.handlers
        # the node's code runs as the first step of the node's chain run (LangGraph's node is a sequence
        # of its function and its writers): what it calls is tagged "seq:step:1"
        return node_run, {**config, "callbacks": node_run.get_child("seq:step:1")}

    async def task_ended(self, task: Task, node_run: CallbackManagerForChainRun, output: Any) -> None:
        """A node's chain run ends; the tracers record its output as its TracePolicy processes it. When
        its output was streamed (an event stream), the run ends one loop iteration later, as a LangGraph
        node's, whose output goes through an async generator: the events the step wrote meanwhile (its
        task calls' updates) come between."""
        policy = task.node.trace_policy if task.node is not None else None
        try:
            if _stream_output(node_run, output):
                await asyncio.sleep(0)
        finally:  # (cancelled meanwhile: the node had finished)
            _end(node_run, output, policy)

    def call_started(
        self, caller: dict[str, Any], call: Task, input: Any
    ) -> tuple[CallbackManagerForChainRun, dict[str, Any]]:
        """A task call's chain run (a child of its caller's) and its code's config, from the caller's
        config: a call runs in its caller's graph, its namespace nested under the caller's."""
        metadata = caller["metadata"]
        task_ns = f"{caller['configurable']['checkpoint_ns']}{NS_SEP}{call.name}:{call.id}"
        metadata = {
            **metadata,
            "langgraph_node": call.name,
            "langgraph_triggers": (PUSH_TRIGGER,),
            "langgraph_path": (PUSH_TRIGGER, metadata["langgraph_path"], call.index, True),
            "langgraph_checkpoint_ns": task_ns,
        }
        manager = caller["callbacks"].copy()
        manager.add_metadata(metadata)
        call_run = manager.on_chain_start(None, input, name=call.name)
        configurable = {**caller["configurable"], "checkpoint_ns": task_ns, CONFIG_KEY_TASK_ID: call.id}
        config = {**caller, "metadata": metadata, "callbacks": call_run.get_child(), "configurable": configurable}
        return call_run, config


def chain_ended(run: CallbackManagerForChainRun, output: Any, policy: TracePolicy | None = None) -> None:
    """A node's or a task call's chain run ends: its output is streamed (one chunk) to the stream
    handlers (an event stream's `on_chain_stream`), then the run ends; tracers record the output as
    `policy` processes it."""
    _stream_output(run, output)
    _end(run, output, policy)


def _stream_output(run: CallbackManagerForChainRun, output: Any) -> bool:
    """The chain run's output as one streamed chunk to its stream handlers; whether it has any."""
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    streamed = False
    for handler in run.handlers:
        if _StreamingCallbackHandler in type(handler).__mro__:  # not any class with the tap methods
            streaming = cast("_StreamingCallbackHandler", handler)
            for _ in streaming.tap_output_iter(run.run_id, iter((output,))):
                pass
            streamed = True
    return streamed


def _end(run: CallbackManagerForChainRun, output: Any, policy: TracePolicy | None) -> None:
    recorded = _recorded(output, policy.process_outputs) if policy is not None else output
    if recorded is output:
        run.on_chain_end(output)
        return
    real, tracers = _split_tracers(run)
    tracers.on_chain_end(recorded)  # first: an interruption cannot leave a tracer's run open
    real.on_chain_end(output)


@contextmanager
def ambient(config: dict[str, Any]) -> Iterator[None]:
    """Run the code inside with `config` as LangChain's ambient config (and LangSmith's parent run)."""
    from langchain_core.runnables.config import _set_config_context, var_child_runnable_config

    token, previous = _set_config_context(config)  # type: ignore[arg-type]
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        if previous is not None:
            from langsmith.run_helpers import _set_tracing_context

            _set_tracing_context(previous)


def with_ambient(config: dict[str, Any], fn: Callable[..., Any]) -> Callable[..., Any]:
    """Sync `fn` run with `config` as the ambient config, on whatever thread calls it (a pool thread has
    no context of its caller's)."""

    def call(*args: Any) -> Any:
        with ambient(config):
            return fn(*args)

    return call
