"""`langgraph.graph.state`: StateGraph, the LangGraph-compatible builder. `compile()` turns it into channels +
nodes: a CompiledGraph (LangGraph's CompiledStateGraph)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Generic, Literal, Self, cast, get_args, get_origin, get_type_hints

from typing_extensions import TypeVar

from agent_runtime.channels import (
    BaseChannel,
    EphemeralValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    SendQueue,
    Topic,
    UntrackedValue,
)
from agent_runtime.checkpoint.base import BaseCheckpointer
from agent_runtime.checkpoint.langgraph_saver import as_checkpointer
from agent_runtime.constants import TASKS
from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10, renamed_argument
from agent_runtime.core.schema import StateSchema
from agent_runtime.core.types import END, START, Command, RetryPolicy, TimeoutPolicy, TracePolicy
from agent_runtime.engine.injection import (
    is_runnable,
    no_sync_timeout,
    node_callable,
    runnable_node,
    warn_config_annotation,
)
from agent_runtime.engine.node_cache import CachePolicy, cached_node
from agent_runtime.engine.spec import (
    Branch,
    GraphSpec,
    NodeSpec,
    branch_channel,
    is_async_callable,
    join_channel,
    takes_config,
)
from agent_runtime.errors import GraphCompileError
from agent_runtime.graph.diagnostics import check_topology
from agent_runtime.graph.introspect import invoked_subgraph
from agent_runtime.graph.node_schemas import inferred_input_schema, node_name
from agent_runtime.pregel.compiled import CompiledGraph
from agent_runtime.pregel.compiled_api import SubgraphPersistence

CompiledStateGraph = CompiledGraph  # LangGraph's name of what StateGraph.compile() returns
RESERVED_NAMES = frozenset({START, END})

# LangGraph's type parameters of StateGraph (`StateGraph[State]` and `StateGraph[S, C, I, O]` both work).
StateT = TypeVar("StateT")
ContextT = TypeVar("ContextT", default=None)
InputT = TypeVar("InputT", default=StateT)
OutputT = TypeVar("OutputT", default=StateT)
Timeout = float | timedelta | TimeoutPolicy | None


def _literal_targets(annotation: Any) -> tuple[str, ...] | None:
    """Targets from a `Literal[...]` or `Command[Literal[...]]` return annotation, None if absent."""
    if get_origin(annotation) is Literal:
        return tuple(str(a) for a in get_args(annotation))
    for arg in get_args(annotation):
        found = _literal_targets(arg)
        if found is not None:
            return found
    return None


def _return_hint(fn: Callable[..., Any]) -> Any:
    target = fn if hasattr(fn, "__annotations__") else getattr(fn, "__call__", fn)  # noqa: B004
    try:
        return get_type_hints(target).get("return")
    except Exception:
        return getattr(target, "__annotations__", {}).get("return")


def _code_mentions_command(fn: Callable[..., Any], depth: int = 3) -> bool:
    """True if the function's code, or a module-level function it calls (`depth` levels down), refers
    to a name `Command` (it may route with Command(goto=...)). Callables without inspectable code count
    as yes: an unknown route only disables the reachability check."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    scope = getattr(fn, "__globals__", {})
    stack = [code]
    while stack:
        current = stack.pop()
        if "Command" in current.co_names:
            return True
        stack.extend(c for c in current.co_consts if hasattr(c, "co_names"))
        if depth > 0:
            for name in current.co_names:
                helper = scope.get(name)
                if helper is fn or not callable(helper) or not hasattr(helper, "__code__"):
                    continue
                if _code_mentions_command(helper, depth - 1):
                    return True
    return False


def _command_destinations(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """Command goto targets of a node: () if it never returns Command, None if unknown."""
    hint = _return_hint(fn)
    if hint is not None and _mentions_command(hint):
        return _literal_targets(hint)
    return None if _code_mentions_command(fn) else ()


def _mentions_command(annotation: Any) -> bool:
    if annotation is Command or get_origin(annotation) is Command:
        return True
    if isinstance(annotation, str):
        return "Command" in annotation
    return any(_mentions_command(a) for a in get_args(annotation))


def _retry_policies(retry_policy: RetryPolicy | Sequence[RetryPolicy] | None) -> tuple[RetryPolicy, ...] | None:
    if retry_policy is None:
        return None
    return (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)


class _NodeDef:
    __slots__ = (
        "defer",
        "destinations",
        "error_handler",
        "fn",
        "input_schema",
        "is_error_handler",
        "retry",
        "subgraph",
        "timeout",
        "trace_policy",
    )

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        subgraph: CompiledGraph | None,
        defer: bool,
        retry: tuple[RetryPolicy, ...] | None,
        destinations: tuple[str, ...] | None,
        timeout: TimeoutPolicy | None,
        error_handler: str | None = None,
        is_error_handler: bool = False,
        trace_policy: TracePolicy | None = None,
        input_schema: StateSchema | None = None,
    ) -> None:
        self.fn = fn
        self.subgraph = subgraph
        self.defer = defer
        self.retry = retry  # None: the graph's default (set_node_defaults)
        self.destinations = destinations
        self.timeout = timeout  # None: the graph's default
        self.error_handler = error_handler  # its handler's node; None: the graph's default handler
        self.is_error_handler = is_error_handler  # a handler's own failure fails the run
        self.trace_policy = trace_policy
        self.input_schema = input_schema  # None: the graph's state schema

    @property
    def runnable(self) -> Any:
        """The node's action as LangGraph shows it: a Runnable (a function wrapped in a RunnableCallable,
        whose `func` is the function), or the compiled subgraph."""
        if self.subgraph is not None or is_runnable(self.fn):
            return self.subgraph or self.fn
        from agent_runtime.engine.runnable import RunnableCallable

        return RunnableCallable(self.fn, trace=False)


ERROR_HANDLER_PREFIX = "__error_handler__"  # + node name: the node of add_node(..., error_handler=fn)
DEFAULT_ERROR_HANDLER = "__default_error_handler__"  # the node of set_node_defaults(error_handler=fn)


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """Nodes read the shared state and return updates; edges decide which nodes run next."""

    def __init__(
        self,
        state_schema: type[StateT],
        context_schema: type[ContextT] | None = None,
        *,
        input_schema: type[InputT] | None = None,
        output_schema: type[OutputT] | None = None,
        **deprecated: Any,
    ) -> None:
        input_schema = renamed_argument(deprecated, "input", "input_schema", input_schema)
        output_schema = renamed_argument(deprecated, "output", "output_schema", output_schema)
        context_schema = renamed_argument(
            deprecated, "config_schema", "context_schema", context_schema, LangGraphDeprecatedSinceV10
        )
        if deprecated:
            raise TypeError(f"StateGraph() got unexpected keyword arguments {sorted(deprecated)}")
        self.schema = StateSchema(state_schema)  # grows: input, output and node schemas' keys join it
        self.state = StateSchema(state_schema)  # the state schema's own keys: what nodes read by default
        self.state_schema = state_schema
        self.input_schema: type[Any] = input_schema or state_schema
        self.output_schema: type[Any] = output_schema or state_schema
        self.context_schema = context_schema
        self.default_retry: tuple[RetryPolicy, ...] = ()
        self.default_timeout: TimeoutPolicy | None = None
        self.default_error_handler: Callable[..., Any] | None = None
        # As LangGraph: the input and output schemas' keys are state keys too; the graph takes only the
        # input schema's keys, and invoke returns only the output schema's (streams and get_state: all).
        self.input_keys = self._also_state(input_schema)
        self.output_keys = self._also_state(output_schema)
        self.nodes: dict[str, _NodeDef] = {}
        self.edges: set[tuple[str, str]] = set()
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.branches: dict[str, list[Branch]] = {}
        self.destination_labels: dict[str, dict[str, str]] = {}  # add_node(destinations={node: label})
        self.cache_policies: dict[str, CachePolicy] = {}  # add_node(cache_policy=...)
        self._compiled = False

    @property
    def channels(self) -> dict[str, BaseChannel]:
        """The state's channels by key (input, output and node schemas' keys included), as LangGraph's."""
        return self.schema.channels

    @property
    def managed(self) -> dict[str, Any]:
        """The state's managed values (RemainingSteps, IsLastStep) by key."""
        return self.schema.managed

    def _also_state(self, schema: type[Any] | None) -> frozenset[str] | None:
        if schema is None:
            return None
        extra = StateSchema(schema)
        self.schema.merge(extra)
        return frozenset(extra.channels)

    def _own_input(
        self, explicit: type[Any] | None, fn: Callable[..., Any], *, state_too: bool = False
    ) -> StateSchema | None:
        """The schema a node or path function reads when not the state schema (`state_too`: even the
        state schema): `input_schema=`, or the class its first parameter is annotated with. Its keys
        join the graph's state."""
        schema = explicit or inferred_input_schema(fn)
        if schema is not None and schema is self.state_schema and state_too:
            return self.state
        if schema is None or schema is self.state_schema:
            return None
        own = StateSchema(schema)
        self.schema.merge(own)
        return own

    # -- building -------------------------------------------------------------------------------
    def add_node(
        self,
        node: str | Callable[..., Any] | CompiledGraph,
        action: Callable[..., Any] | CompiledGraph | Mapping[str, Any] | None = None,
        *,
        defer: bool = False,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        destinations: Sequence[str] | Mapping[str, str] | None = None,
        timeout: Timeout = None,
        error_handler: Callable[..., Any] | None = None,
        trace_policy: TracePolicy | None = None,
        input_schema: type[Any] | None = None,
        cache_policy: CachePolicy | None = None,
        **options: Any,
    ) -> Self:
        """A node running `action` (a function, a Runnable or a compiled graph); `error_handler` runs instead
        of failing the run once its retries are spent (see agent_runtime/engine/error_handlers.py)."""
        retry_policy = renamed_argument(options, "retry", "retry_policy", retry_policy)
        input_schema = renamed_argument(options, "input", "input_schema", input_schema)
        if not isinstance(node, str):
            action, node = node, node_name(node)
        if action is None:
            raise ValueError(f"Node '{node}' needs an action (a function or a compiled graph)")
        if isinstance(action, Mapping):  # {key: runnable}: run them all, as LangChain's RunnableParallel
            from langchain_core.runnables import RunnableParallel

            action = cast("Callable[..., Any]", RunnableParallel(action))
        if not node or node in RESERVED_NAMES or ":" in node:
            raise ValueError(f"Invalid node name {node!r}: empty, reserved ({START}, {END}) or containing ':'")
        if node in self.nodes:
            raise ValueError(f"Node '{node}' already present")
        retry = _retry_policies(retry_policy)
        policy = TimeoutPolicy.coerce(timeout)
        handler = (
            None if error_handler is None else self._add_error_handler(f"{ERROR_HANDLER_PREFIX}{node}", error_handler)
        )
        if isinstance(destinations, Mapping):
            self.destination_labels[node] = dict(destinations)
        if cache_policy is not None:
            self.cache_policies[node] = cache_policy
        if isinstance(action, CompiledGraph):  # its Command(graph=PARENT) targets: `destinations`
            self.nodes[node] = _NodeDef(
                None, action, defer, retry, tuple(destinations or ()), policy, handler, trace_policy=trace_policy
            )
            return self
        warn_config_annotation(action)
        dests = tuple(destinations) if destinations is not None else _command_destinations(action)
        own_input = self._own_input(input_schema, action)
        self.nodes[node] = _NodeDef(
            action, None, defer, retry, dests, policy, handler, trace_policy=trace_policy, input_schema=own_input
        )
        return self

    def _add_error_handler(self, name: str, fn: Callable[..., Any]) -> str:
        if name in self.nodes:
            raise ValueError(f"Auto-generated error handler node `{name}` already exists.")
        self.nodes[name] = _handler_def(fn)
        return name

    def set_node_defaults(
        self,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        timeout: Timeout = None,
        error_handler: Callable[..., Any] | None = None,
        **_ignored: Any,
    ) -> Self:
        """Retry policy, timeout (of every node, error handlers included) and error handler (of the
        other nodes) where `add_node` gives none; applied at compile."""
        if error_handler is not None:
            self.default_error_handler = error_handler
        retry = _retry_policies(retry_policy)
        if retry is not None:
            self.default_retry = retry
        policy = TimeoutPolicy.coerce(timeout)
        if policy is not None:
            self.default_timeout = policy
        return self

    def add_edge(self, start_key: str | Sequence[str], end_key: str) -> Self:
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.add((start_key, end_key))
            return self
        starts = tuple(start_key)
        if not starts:
            raise ValueError("add_edge([...], end) needs at least one start node")
        for start in starts:
            if start == END:
                raise ValueError("END cannot be a start node")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        if end_key != END:  # a join into END adds nothing: each start node ends where it ends (as LangGraph)
            self.waiting_edges.add((starts, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> Self:
        mapping: dict[Hashable, str] | None
        if path_map is None:
            mapping = None
            declared = _literal_targets(_return_hint(path))
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
            declared = tuple(mapping.values())
        else:
            mapping = {name: name for name in path_map}
            declared = tuple(path_map)
        if is_runnable(path):  # a chain as the path function: called through ainvoke
            path = runnable_node(path)
        # a path function annotated with a schema, the state schema included, reads just that schema
        own_input = self._own_input(None, path, state_too=True)
        reader = own_input.input_reader() if own_input is not None else None
        branch = Branch(source, path, mapping, declared, reader=reader, own_schema=reader is not None)
        self.branches.setdefault(source, []).append(branch)
        return self

    def add_sequence(self, nodes: Sequence[str | Callable[..., Any] | tuple[str, Callable[..., Any]]]) -> Self:
        if not nodes:
            raise ValueError("add_sequence needs at least one node")
        previous: str | None = None
        for item in nodes:
            if isinstance(item, tuple):
                self.add_node(item[0], item[1])
                name = item[0]
            else:
                self.add_node(item)
                name = item if isinstance(item, str) else item.__name__
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> Self:
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self, path: Callable[..., Any], path_map: Mapping[Hashable, str] | Sequence[str] | None = None
    ) -> Self:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> Self:
        return self.add_edge(key, END)

    # -- compiling ------------------------------------------------------------------------------
    def _validate(self, interrupts: Sequence[str]) -> None:
        known = set(self.nodes) | {START}
        problems: list[str] = []
        for src, dst in sorted(self.edges):
            if src not in known:
                problems.append(f"Found edge starting at unknown node {src!r} (edge {src!r} -> {dst!r})")
            if dst not in known and dst != END:
                problems.append(f"Found edge ending at unknown node `{dst}` (edge {src!r} -> {dst!r})")
        for starts, dst in sorted(self.waiting_edges):
            for src in starts:
                if src not in known:
                    problems.append(f"Found edge starting at unknown node {src!r} (join {list(starts)} -> {dst!r})")
            if dst not in known:
                problems.append(f"Found edge ending at unknown node `{dst}` (join {list(starts)} -> {dst!r})")
        for source, branches in sorted(self.branches.items()):
            if source not in known:
                problems.append(f"Found edge starting at unknown node {source!r} (a conditional edge)")
            for branch in branches:
                for dst in branch.declared or ():
                    if dst not in known and dst != END:
                        problems.append(f"At {source!r} node, a conditional edge found unknown target {dst!r}")
        for name, node in self.nodes.items():
            for dst in node.destinations or ():
                if dst not in known and dst != END:
                    problems.append(f"node {name!r} declares Command destination {dst!r}, which is not a node")
        for name in interrupts:
            if name not in self.nodes:
                problems.append(f"Interrupt node `{name}` not found (interrupt_before/after)")
        if not any(src == START for src, _ in self.edges) and START not in self.branches:
            problems.append("Graph must have an entrypoint: add at least one edge from START to another node")
        if problems:
            raise GraphCompileError("Invalid graph: " + "; ".join(problems))

    def _all_nodes(self) -> dict[str, _NodeDef]:
        """The nodes, with the default error handler's (set_node_defaults) when a node uses it."""
        if self.default_error_handler is None or all(
            n.error_handler or n.is_error_handler for n in self.nodes.values()
        ):
            return self.nodes
        if DEFAULT_ERROR_HANDLER in self.nodes:
            raise ValueError(f"Auto-generated default error handler node `{DEFAULT_ERROR_HANDLER}` already exists.")
        return {**self.nodes, DEFAULT_ERROR_HANDLER: _handler_def(self.default_error_handler)}

    def _error_handlers(self, nodes: Mapping[str, _NodeDef]) -> dict[str, str]:
        default = DEFAULT_ERROR_HANDLER if self.default_error_handler is not None else None
        handlers = {name: node.error_handler or default for name, node in nodes.items() if not node.is_error_handler}
        return {name: handler for name, handler in handlers.items() if handler is not None}

    def _build_spec(self, cache: Any = None) -> GraphSpec:
        all_nodes = self._all_nodes()
        untracked = frozenset(k for k, ch in self.schema.channels.items() if isinstance(ch, UntrackedValue))
        channels: dict[str, BaseChannel] = {
            **{k: ch.new() for k, ch in self.schema.channels.items()},
            START: EphemeralValue(key=START),
            TASKS: SendQueue(untracked, key=TASKS) if untracked else Topic(key=TASKS),
        }
        writes: dict[str, list[tuple[str, Any]]] = {name: [] for name in (*all_nodes, START)}
        triggers: dict[str, list[str]] = {name: [branch_channel(name)] for name in all_nodes}
        joins: dict[str, tuple[frozenset[str], str]] = {}
        for name, node in all_nodes.items():
            chan = branch_channel(name)
            channels[chan] = LastValueAfterFinish(key=chan) if node.defer else EphemeralValue(guard=False, key=chan)
        for src, dst in sorted(self.edges):
            if dst != END:
                writes[src].append((branch_channel(dst), None))
        for starts, dst in sorted(self.waiting_edges):
            chan = join_channel(starts, dst)
            barrier = NamedBarrierValueAfterFinish if all_nodes[dst].defer else NamedBarrierValue
            channels[chan] = barrier(names=frozenset(starts), key=chan)
            joins[chan] = (frozenset(starts), dst)
            triggers[dst].append(chan)
            for src in starts:
                writes[src].append((chan, src))
        # a graph with keys beyond its state schema's (input, output, node schemas): nodes and paths
        # without a schema of their own read the state schema's keys, and invoke takes and returns those
        extra_keys = self.schema.keys != self.state.keys
        default_reader = self.state.input_reader() if extra_keys else None
        nodes: dict[str, NodeSpec] = {
            START: NodeSpec(START, None, (START,), tuple(writes[START]), self._branches(START, default_reader))
        }
        for name, node in all_nodes.items():
            timeout = node.timeout or self.default_timeout
            if node.fn is not None:
                no_sync_timeout(name, node.fn, timeout)
            fn = None if node.fn is None else node_callable(name, node.fn)
            policy = self.cache_policies.get(name)
            if fn is not None and policy is not None and cache is not None:
                fn = cached_node(name, fn, policy, cache)
            reader = node.input_schema.input_reader() if node.input_schema is not None else default_reader
            nodes[name] = NodeSpec(
                name=name,
                fn=fn if fn is not None else _subgraph_marker,
                triggers=tuple(triggers[name]),
                static_writes=tuple(writes[name]),
                branches=self._branches(name, reader),
                retry=self.default_retry if node.retry is None else node.retry,
                timeout=timeout,
                defer=node.defer,
                subgraph=node.subgraph,
                invoked_graph=None if node.fn is None else invoked_subgraph(node.fn),
                is_async=fn is not None and is_async_callable(fn),
                takes_config=fn is not None and takes_config(fn),
                destinations=node.destinations,
                trace_policy=node.trace_policy,
                reader=reader,
            )
        trigger_to_nodes: dict[str, list[str]] = {}
        for name, spec in nodes.items():
            for chan in spec.triggers:
                trigger_to_nodes.setdefault(chan, []).append(name)
        finishable = tuple(
            c for c, ch in channels.items() if isinstance(ch, LastValueAfterFinish | NamedBarrierValueAfterFinish)
        )
        return GraphSpec(
            step_sensitive=tuple(c for c, ch in channels.items() if ch.STEP_SENSITIVE),
            consumable=frozenset(c for c, ch in channels.items() if type(ch).consume is not BaseChannel.consume),
            schema=self.schema,
            channels=channels,
            nodes=nodes,
            trigger_to_nodes={c: tuple(sorted(n)) for c, n in trigger_to_nodes.items()},
            finishable=finishable,
            joins=joins,
            edges=frozenset(self.edges),
            waiting_edges=frozenset(self.waiting_edges),
            input_keys=self.input_keys if self.input_keys is not None or not extra_keys else self.state.keys,
            output_keys=self.output_keys if self.output_keys is not None or not extra_keys else self.state.keys,
            error_handlers=self._error_handlers(all_nodes),
        )

    def _branches(self, source: str, default_reader: Callable[[dict[str, Any]], Any] | None) -> tuple[Branch, ...]:
        """`source`'s conditional edges; a path function without a schema of its own reads what its source
        node reads (`default_reader`)."""
        branches = self.branches.get(source, ())
        if default_reader is None:
            return tuple(branches)
        return tuple(b if b.reader is not None else dataclasses.replace(b, reader=default_reader) for b in branches)

    def compile(
        self,
        checkpointer: BaseCheckpointer | bool | None = None,
        *,
        interrupt_before: Sequence[str] | Literal["*"] | None = None,
        interrupt_after: Sequence[str] | Literal["*"] | None = None,
        strict: bool = False,
        name: str | None = None,
        guard_rails: Any = None,
        store: Any = None,
        transformers: Sequence[Any] | None = None,
        cache: Any = None,
        **_ignored: Any,
    ) -> CompiledGraph:
        checkpointer = as_checkpointer(checkpointer)  # LangGraph's own savers too
        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointer | bool):
            raise TypeError(
                "Invalid checkpointer provided. Expected a checkpointer (BaseCheckpointer), True, False or None. "
                f"Received {type(checkpointer).__name__}."
            )
        persistence: SubgraphPersistence = _PERSISTENCE[checkpointer] if isinstance(checkpointer, bool) else "per_call"
        if isinstance(checkpointer, bool):  # a subgraph's runs use the parent's, but for False
            checkpointer = None
        before = tuple(self.nodes) if interrupt_before == "*" else tuple(interrupt_before or ())
        after = tuple(self.nodes) if interrupt_after == "*" else tuple(interrupt_after or ())
        self._validate((*before, *after))
        spec = self._build_spec(cache)
        check_topology(spec, strict=strict)
        compiled = CompiledGraph(
            spec,
            checkpointer=checkpointer,
            interrupt_before=before,
            interrupt_after=after,
            name=name or "LangGraph",  # LangGraph's default (a tracer names the graph's run after it)
            guard_rails=guard_rails,
        )
        compiled.persistence = persistence
        compiled.store = store
        compiled.cache = cache
        compiled.context_schema = self.context_schema
        compiled.builder = self
        compiled.stream_transformers = tuple(transformers or ())  # stream_events(version="v3")'s extras
        return compiled


def _handler_def(fn: Callable[..., Any]) -> _NodeDef:
    return _NodeDef(fn, None, False, None, _command_destinations(fn), None, is_error_handler=True)


# compile(checkpointer=True / False): a subgraph's checkpoints kept per thread / none at all
_PERSISTENCE: dict[bool, SubgraphPersistence] = {True: "per_thread", False: "off"}


def _subgraph_marker(state: Any) -> Any:
    """Placeholder callable of a subgraph node; the runtime calls the subgraph instead."""
    raise AssertionError("subgraph nodes are run by the engine")
