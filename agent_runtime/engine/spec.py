"""The compiled topology: nodes with their trigger channels and writers (LangGraph's PregelNodes)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from agent_runtime.channels import BaseChannel
from agent_runtime.constants import CONF, CONFIG_KEY_CHECKPOINT_NS
from agent_runtime.core.schema import StateSchema
from agent_runtime.core.types import END, START, RetryPolicy, TimeoutPolicy, TracePolicy

if TYPE_CHECKING:
    from agent_runtime.checkpoint.base import BaseCheckpointer
    from agent_runtime.engine.report import RunReport
    from agent_runtime.engine.subgraph_run import SubgraphRun


def config_namespace(config: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The checkpoint namespace a config names, as a stream namespace: () for a root graph."""
    ns = (config or {}).get(CONF, {}).get(CONFIG_KEY_CHECKPOINT_NS)
    return tuple(ns.split("|")) if ns else ()


def branch_channel(node: str) -> str:
    return f"branch:to:{node}"


def join_channel(starts: tuple[str, ...], end: str) -> str:
    return f"join:{'+'.join(starts)}:{end}"


def takes_config(fn: Callable[..., Any]) -> bool:
    """LangGraph passes `config` to a node or path function that declares it."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "config" in params


def is_async_callable(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


def is_async_generator(fn: Callable[..., Any]) -> bool:
    """An async generator function, or an object whose `__call__` is one."""
    return inspect.isasyncgenfunction(fn) or inspect.isasyncgenfunction(getattr(fn, "__call__", None))  # noqa: B004


@dataclass(slots=True)
class Branch:
    """A conditional edge: `path(state)` names the next node(s), optionally through `path_map`."""

    source: str
    path: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None
    # where the edge can lead (END included), from the path map or a Literal return type;
    # None when only the path function knows
    declared: tuple[str, ...] | None
    is_async: bool = False
    takes_config: bool = False
    # the path function's input from the state values: its own input schema's, else its source node's
    # or the state schema's when the graph has more keys (None: all the state)
    reader: Callable[[dict[str, Any]], Any] | None = None
    own_schema: bool = False  # `reader` is the path function's own input schema's

    def __post_init__(self) -> None:
        self.is_async = is_async_callable(self.path)
        self.takes_config = takes_config(self.path)


FAST_NODE_S = 0.0005
FAST_RUNS_BEFORE_INLINE = 3


class SyncPlacement:
    """Where a sync node runs when its superstep has several tasks. Every sync node starts in the
    thread pool; one that finished in under FAST_NODE_S in each of its first FAST_RUNS_BEFORE_INLINE
    runs runs inline on the loop thread from then on (a thread handoff costs more than such a node),
    and any slower run sends it back to the pool for good. Shared by all runs of a compiled graph."""

    __slots__ = ("fast_runs", "pooled")

    def __init__(self) -> None:
        self.fast_runs = 0
        self.pooled = False

    def inline_ok(self) -> bool:
        return not self.pooled and self.fast_runs >= FAST_RUNS_BEFORE_INLINE

    def observe(self, seconds: float) -> None:
        if seconds >= FAST_NODE_S:
            self.pooled = True
        else:
            self.fast_runs += 1


# the runs a graph makes (engine/loop.py's Run, or a subclass) and takes back for their result
RunT = TypeVar("RunT", bound="SubgraphRun")


class EngineGraph(Protocol[RunT]):
    """A compiled graph as the engine runs it, as the root graph or as a node's subgraph
    (agent_runtime.pregel.compiled.CompiledGraph): its topology, breakpoints and persistence."""

    last_run_report: RunReport | None

    @property
    def spec(self) -> GraphSpec: ...

    @property
    def interrupt_before(self) -> tuple[str, ...]: ...

    @property
    def interrupt_after(self) -> tuple[str, ...]: ...

    @property
    def step_timeout(self) -> float | None: ...

    @property
    def persistence(self) -> str: ...

    @property
    def checkpointer(self) -> BaseCheckpointer | None: ...

    def own_namespace(self, ns: str) -> str: ...

    def shape_output(self, output: Any) -> Any: ...

    def result_of(self, run: RunT) -> Any: ...

    def _new_run(
        self,
        input: Any,
        config: dict[str, Any] | None,
        modes: frozenset[str],
        durability: str | None,
        guard_rails: None,
        checkpointer: BaseCheckpointer | None = None,
    ) -> RunT: ...


@dataclass(slots=True)
class NodeSpec:
    name: str
    fn: Callable[..., Any] | None
    triggers: tuple[str, ...]
    static_writes: tuple[tuple[str, Any], ...] = ()
    branches: tuple[Branch, ...] = ()
    retry: tuple[RetryPolicy, ...] = ()
    timeout: TimeoutPolicy | None = None  # of each attempt (async nodes only)
    defer: bool = False
    subgraph: EngineGraph[Any] | None = None
    invoked_graph: EngineGraph[Any] | None = None  # a graph the node's function invokes (graph/introspect.py)
    is_async: bool = False
    takes_config: bool = False
    destinations: tuple[str, ...] | None = ()  # Command goto targets; None = unknown
    # maps the node's return value to its writes instead of the state schema (the functional API's
    # entrypoint returns any value, which goes to its return and `previous` channels)
    writer: Callable[[Any], list[tuple[str, Any]]] | None = None
    # the node's input from the state values when it reads a schema of its own (None: all of them)
    reader: Callable[[dict[str, Any]], Any] | None = None
    async_branches: bool = False  # derived: any conditional edge has an async path function
    placement: SyncPlacement = field(default_factory=SyncPlacement)
    trace_policy: TracePolicy | None = None  # what tracers record of its runs (engine/callbacks.py)

    def __post_init__(self) -> None:
        self.async_branches = any(b.is_async for b in self.branches)

    def runs_inline(self) -> bool:
        """A fast, plain sync node: run on the loop thread even when the superstep has several tasks."""
        return self.fn is not None and self.subgraph is None and not self.is_async and self.placement.inline_ok()


@dataclass
class GraphSpec:
    schema: StateSchema
    channels: dict[str, BaseChannel]
    nodes: dict[str, NodeSpec]
    trigger_to_nodes: dict[str, tuple[str, ...]]
    finishable: tuple[str, ...]
    joins: dict[str, tuple[frozenset[str], str]] = field(default_factory=dict)
    step_sensitive: tuple[str, ...] = ()  # channels the new-step notification may change
    consumable: frozenset[str] = frozenset()  # channels whose consume() does something
    # the builder's edges, kept for diagnostics: (source, target)
    edges: frozenset[tuple[str, str]] = frozenset()
    branch_channels: dict[str, str] = field(default_factory=dict)  # node -> its trigger channel
    waiting_edges: frozenset[tuple[tuple[str, ...], str]] = frozenset()
    input_keys: frozenset[str] | None = None  # StateGraph(input_schema=...): the keys the graph takes
    output_keys: frozenset[str] | None = None  # StateGraph(output_schema=...): the keys invoke returns
    error_handlers: dict[str, str] = field(default_factory=dict)  # node -> its error handler's node

    def __post_init__(self) -> None:
        self.branch_channels = {name: branch_channel(name) for name in self.nodes if name != START}

    def successor_groups(self, node: str) -> list[tuple[str, tuple[str, ...] | None]]:
        """Outgoing routes of `node`: one group per static edge / join / branch / Command / error
        handler (kind, targets)."""
        groups: list[tuple[str, tuple[str, ...] | None]] = []
        for src, dst in sorted(self.edges):
            if src == node and dst != END:
                groups.append(("edge", (dst,)))
        for starts, dst in sorted(self.waiting_edges):
            if node in starts:
                groups.append(("join", (dst,)))
        for branch in self.nodes[node].branches:
            dests = branch.declared
            groups.append(("branch", None if dests is None else tuple(d for d in dests if d != END)))
        handler = self.error_handlers.get(node)
        if handler is not None:
            groups.append(("error", (handler,)))
        destinations = self.nodes[node].destinations
        if destinations is None:
            groups.append(("command", None))
        elif destinations:
            groups.append(("command", tuple(d for d in destinations if d != END)))
        return groups
