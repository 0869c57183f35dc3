"""LangGraph's CompiledStateGraph API beyond running and reading state: a bound config
(`with_config`), the run's `context=` and `store`, `nodes` / `channels`, the JSON schemas of the input
and output, and `bulk_update_state` (several updates per superstep, one checkpoint each)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

from agent_runtime.channels import BaseChannel
from agent_runtime.constants import INTERRUPT, NO_WRITES
from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.core.models import create_model
from agent_runtime.core.run_config import merge_configs
from agent_runtime.core.types import END, START, StateUpdate
from agent_runtime.engine import node_cache
from agent_runtime.engine.algo import PULL, Task, apply_writes, prepare_tasks, sort_tasks
from agent_runtime.engine.control import RunControl
from agent_runtime.engine.runtime import coerce_context, with_runtime
from agent_runtime.engine.spec import GraphSpec
from agent_runtime.engine.subgraphs import with_checkpoint_map
from agent_runtime.engine.tasks import node_writes_async
from agent_runtime.errors import InvalidUpdateError
from agent_runtime.pregel.json_schemas import channels_model, context_json_schema, graph_name, state_json_schema

if TYPE_CHECKING:
    from agent_runtime.checkpoint.base import BaseCheckpointer
    from agent_runtime.engine.loop import Run

SubgraphPersistence = Literal["per_call", "per_thread", "off"]
INPUT = "__input__"  # update_state's as_node for writing a graph input
COPY = "__copy__"  # update_state's as_node for a sibling copy of the checkpoint


class GraphBuilder(Protocol):
    """What a compiled graph reads of the StateGraph it was compiled from (agent_runtime.graph.state)."""

    @property
    def input_schema(self) -> Any: ...

    @property
    def output_schema(self) -> Any: ...

    @property
    def state_schema(self) -> Any: ...

    @property
    def nodes(self) -> Mapping[str, Any]: ...

    @property
    def destination_labels(self) -> Mapping[str, Mapping[str, str]]: ...


@dataclass(frozen=True)
class NodeView:
    """A compiled node as `compiled.nodes[name]` shows it (LangGraph's PregelNode, read-only)."""

    name: str
    bound: Callable[..., Any] | None
    triggers: tuple[str, ...]
    subgraphs: list[Any] = field(default_factory=list)

    def copy(self, update: dict[str, Any]) -> NodeView:
        return dataclasses.replace(self, **update)


class GraphAPI:
    """Mixed into CompiledGraph."""

    spec: GraphSpec
    name: str
    checkpointer: BaseCheckpointer | None
    config: dict[str, Any] | None = None  # bound by with_config
    store: Any = None  # compile(store=...): the runtime's store
    cache: Any = None  # compile(cache=...): where cached nodes keep their results
    context_schema: type[Any] | None = None  # StateGraph(context_schema=...): a dict context is coerced to it
    builder: GraphBuilder | None = None
    # as a subgraph: "per_call" (the parent's checkpointer, a fresh state per call; compile's default),
    # "per_thread" (checkpointer=True: its state kept across the parent's turns), "off" (checkpointer=False)
    persistence: SubgraphPersistence = "per_call"

    def with_config(self, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """A copy of the graph whose runs start from `config` (merged under the config of each call)."""
        bound = copy.copy(self)
        bound.config = merge_configs(self.config, {**(config or {}), **kwargs})
        return bound

    def entry_config(
        self, config: dict[str, Any] | None, context: Any = None, control: RunControl | None = None
    ) -> dict[str, Any] | None:
        """The config a public call runs with: the bound config, the call's, and the run's Runtime."""
        if self.config:
            config = merge_configs(self.config, config)
        # a subgraph checkpoint's config reads the thread (without a checkpointer there is none: the
        # keys stay, as the run's metadata, which LangGraph's callbacks and "messages" stream show)
        if config and self.checkpointer is not None and config.get("configurable", {}).get("checkpoint_ns"):
            config = _from_subgraph_checkpoint(config)
        return with_runtime(config, coerce_context(self.context_schema, context), self.store, control)

    @property
    def nodes(self) -> dict[str, NodeView]:
        views = {}
        for name, node in self.spec.nodes.items():
            subgraph = node.subgraph or node.invoked_graph
            views[name] = NodeView(name, node.fn, node.triggers, [subgraph] if subgraph is not None else [])
        return views

    def get_subgraphs(self, *, namespace: str | None = None, recurse: bool = False) -> Iterator[tuple[str, GraphAPI]]:
        """(namespace, graph) of each node's subgraph (the node is a compiled graph or its function
        invokes one); `namespace` ("parent|child", without task ids) picks the one there, matching
        whole segments; a nested one needs `recurse`."""
        for name, view in self.nodes.items():
            if namespace is not None and namespace != name and not namespace.startswith(name + "|"):
                continue
            if not view.subgraphs:
                continue
            graph = view.subgraphs[0]
            if name == namespace:
                yield name, graph
                return
            if namespace is None:
                yield name, graph
            if recurse:
                child = None if namespace is None else namespace[len(name) + 1 :]
                for sub_ns, sub in graph.get_subgraphs(namespace=child, recurse=True):
                    yield f"{name}|{sub_ns}", sub

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, GraphAPI]]:
        for found in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield found

    def _owner(self, config: dict[str, Any], *, for_update: bool = False) -> Any:
        """The graph whose checkpoints `config` names: for a subgraph's namespace ("<node>:<task id>|..."),
        that subgraph; for one that names none (a graph a tool invokes, say), this graph reads it, but
        cannot update it (its nodes and channels would write the wrong state there)."""
        ns = config.get("configurable", {}).get("checkpoint_ns", "")
        if not ns:
            return self
        path = "|".join(part.split(":")[0] for part in ns.split("|") if not part.isdigit())
        for _, graph in self.get_subgraphs(namespace=path, recurse=True):
            return graph
        if for_update:
            raise ValueError(f"Subgraph {path} not found")
        return self

    def own_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config` with the namespace this graph keeps its checkpoints in (see `own_namespace`)."""
        configurable = config.get("configurable", {})
        ns = configurable.get("checkpoint_ns", "")
        own = self.own_namespace(ns)
        return config if own == ns else {**config, "configurable": {**configurable, "checkpoint_ns": own}}

    def own_namespace(self, ns: str) -> str:
        """The namespace this graph, run as a subgraph under `ns`, keeps its checkpoints in: a stateful
        one (`checkpointer=True`) drops the task ids, so every call continues one history."""
        if self.persistence != "per_thread":
            return ns
        return "|".join(part.split(":")[0] for part in ns.split("|"))

    @property
    def channels(self) -> dict[str, BaseChannel]:
        return self.spec.channels

    def get_name(self, suffix: str | None = None) -> str:
        return graph_name(self.name, suffix) if suffix else self.name

    def _as_runnable(self) -> Any:
        """The graph as a LangChain Runnable (agent_runtime.pregel.as_runnable; needs langchain-core)."""
        from agent_runtime.pregel.as_runnable import GraphRunnable

        return GraphRunnable(self)

    def __or__(self, other: Any) -> Any:
        from agent_runtime.pregel.as_runnable import pipe

        return pipe(self._as_runnable(), other._as_runnable() if isinstance(other, GraphAPI) else other)

    def __ror__(self, other: Any) -> Any:
        from agent_runtime.pregel.as_runnable import pipe

        return pipe(other._as_runnable() if isinstance(other, GraphAPI) else other, self._as_runnable())

    @property
    def input_schema(self) -> Any:
        """What the graph takes: the builder's input schema; a graph reading channels (a Pregel graph, an
        entrypoint, `io_channels`) has a model of its input channels' types."""
        if self.builder is not None:
            return self.builder.input_schema
        inputs, _ = self.io_channels()
        return channels_model(self.get_name("Input"), self.spec.channels, inputs, output=False)

    @property
    def output_schema(self) -> Any:
        if self.builder is not None:
            return self.builder.output_schema
        _, outputs = self.io_channels()
        return channels_model(self.get_name("Output"), self.spec.channels, outputs, output=True)

    def io_channels(self) -> tuple[str | Sequence[str], str | Sequence[str]]:
        """The (input, output) channels of a graph built without a StateGraph: all its state keys."""
        keys = tuple(self.spec.schema.keys)
        return keys, keys

    def get_input_jsonschema(self, config: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.builder is None:
            return self.input_schema.model_json_schema()  # type: ignore[no-any-return]
        return state_json_schema(self.input_schema, self.get_name("Input"))

    def get_output_jsonschema(self, config: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.builder is None:
            return self.output_schema.model_json_schema()  # type: ignore[no-any-return]
        return state_json_schema(self.output_schema, self.get_name("Output"))

    def get_graph(self, config: dict[str, Any] | None = None, *, xray: int | bool = False) -> Any:
        """The graph as LangChain's drawable Graph (`.draw_mermaid()`, `.to_json()`), as LangGraph draws
        it; `xray` (True, or how many levels) draws subgraphs' nodes in place of theirs."""
        from agent_runtime.pregel.drawing import draw

        return draw(self, config, xray)  # type: ignore[arg-type]

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached results of `nodes` (all nodes by default)."""
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        self.cache.clear([node_cache.namespace(name) for name in nodes or self.spec.nodes])

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        await self.cache.aclear([node_cache.namespace(name) for name in nodes or self.spec.nodes])

    def copy(self, update: dict[str, Any] | None = None) -> Any:
        """A shallow copy of the compiled graph, with the attributes in `update` replaced."""
        clone = copy.copy(self)
        for key, value in (update or {}).items():
            setattr(clone, key, value)
        return clone

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        return context_json_schema(self.context_schema)

    def config_schema(self) -> type[BaseModel]:
        """Deprecated (LangGraph 1.0): a model of the config, its `configurable` the context schema."""
        warnings.warn(
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant schema instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        fields = {"configurable": (self.context_schema, None)} if self.context_schema is not None else {}
        return create_model(self.get_name("Config"), field_definitions=fields)

    def get_config_jsonschema(self) -> dict[str, Any]:
        warnings.warn(
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return self.config_schema().model_json_schema()

    def batch(
        self,
        inputs: Sequence[Any],
        config: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """`invoke` of each input, run concurrently (LangChain's Runnable.batch); `config` is one for
        all or one per input; with `return_exceptions`, a failed run's exception is its result."""
        from agent_runtime.engine.sync import run_sync

        return run_sync(self.abatch(inputs, config, return_exceptions=return_exceptions, **kwargs))

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        configs = list(config) if isinstance(config, Sequence) else [config or {}] * len(inputs)
        if len(configs) != len(inputs):
            raise ValueError(f"batch: {len(inputs)} inputs but {len(configs)} configs")
        runs = [self.ainvoke(value, run_config, **kwargs) for value, run_config in zip(inputs, configs, strict=True)]
        return await asyncio.gather(*runs, return_exceptions=return_exceptions)

    def map(self) -> GraphMap:
        """A runnable invoking this graph on each item of a list (LangChain's Runnable.map)."""
        return GraphMap(self)

    if TYPE_CHECKING:  # CompiledGraph's

        def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...

        async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...

        def stream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Iterator[Any]: ...

        def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...

        def _new_run(self, *args: Any, **kwargs: Any) -> Run: ...  # CompiledGraph's

    def bulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]]) -> dict[str, Any]:
        from agent_runtime.engine.sync import run_sync

        return run_sync(self.abulk_update_state(config, supersteps))

    async def abulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply each superstep's updates together, as if their nodes had run in one step (their edges
        fire too), saving one checkpoint per superstep; returns the config of the last. A config in a
        subgraph's namespace updates that subgraph."""
        if self.checkpointer is None:
            raise ValueError("No checkpointer set: compile(checkpointer=InMemoryCheckpointer())")
        owner = self._owner(config, for_update=True)
        return await owner.apply_updates(owner.own_config(config), supersteps, self.checkpointer)

    async def apply_updates(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]], checkpointer: BaseCheckpointer
    ) -> dict[str, Any]:
        if not supersteps:
            raise ValueError("No supersteps provided")
        for updates in supersteps:
            if not updates:
                raise ValueError("No updates provided")
            run = self._new_run(None, config, frozenset(), None, None, checkpointer=checkpointer)
            run._load()
            if run._loaded is not None:  # a subgraph's checkpoint: the update keeps its place under the graphs above
                run.parents = dict(run._loaded.metadata.get("parents", {}))
            special = {update.as_node for update in updates} & {INPUT, COPY, END}
            if special and len(updates) > 1:
                raise InvalidUpdateError(f"Cannot apply multiple updates with as_node={special.pop()!r}")
            if len(updates) == 1 and updates[0].values is None and updates[0].as_node is None:
                run.save_branch_point("update")  # as LangGraph: a copy of the checkpoint, a new branch point
            elif INPUT in special:
                self._update_as_input(run, updates[0])
            elif COPY in special:
                await self._copy(run, updates[0].values)
            elif END in special:
                self._clear_tasks(run)
            else:
                await self._update_superstep(run, updates)
            config = run._cp_config()
        return with_checkpoint_map(config, {"parents": run.parents})

    async def _update_superstep(self, run: Run, updates: Sequence[StateUpdate]) -> None:
        tasks = [await self._update_task(run, update, len(updates)) for update in updates]
        self._save_as_pending_tasks(run, tasks)
        run.updated = apply_writes(self.spec, run.state, tasks)
        run._save("update")

    def _save_as_pending_tasks(self, run: Run, updates: Sequence[Task]) -> None:
        """An update as a node the checkpoint has a task of is saved as that task's writes (as LangGraph,
        so the step's history shows them as its result), in the order of the node's tasks."""
        if run.checkpointer is None or not run.checkpoint_id:
            return
        task_ids: dict[str, list[str]] = {}
        for task in prepare_tasks(self.spec, run.state, run.step, run.checkpoint_id, None):
            task_ids.setdefault(task.name, []).append(task.id)
        for update in updates:
            ids = task_ids.get(update.name)
            if ids:
                run.checkpointer.put_writes(run._cp_config(), update.writes or [(NO_WRITES, None)], ids.pop(0))

    async def _copy(self, run: Run, values: Any) -> None:
        """as_node="__copy__": a sibling of the checkpoint (same values, same parent, source "fork"), a
        branch point; `values` a list of (values, as_node) updates: then applied as a superstep on it."""
        loaded = run._loaded
        if loaded is None:
            raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
        parent = loaded.parent_config
        run.checkpoint_id = parent["configurable"]["checkpoint_id"] if parent is not None else ""
        run.save_branch_point("fork")
        if isinstance(values, list) and values:
            run.step += 1
            await self._update_superstep(run, [StateUpdate(*item[:2]) for item in values])

    def _clear_tasks(self, run: Run) -> None:
        """as_node="__end__": the step's finished tasks' writes applied, the others dropped (their
        triggers marked seen): nothing is left to run."""
        tasks = prepare_tasks(self.spec, run.state, run.step, run.checkpoint_id, None)
        if run._pending_writes:
            run._reapply_pending(tasks)
        for task in tasks:
            if not task.done:
                task.writes = []
        run.updated = apply_writes(self.spec, run.state, sort_tasks(tasks))
        run._save("update")

    def _update_as_input(self, run: Run, update: StateUpdate) -> None:
        """as_node="__input__" (LangGraph's INPUT): the values as a new graph input, an "input"
        checkpoint whose next task is __start__. Unlike invoke's input, pending tasks stay pending."""
        if update.values is None:
            raise InvalidUpdateError(f"Received no input writes for {START}")
        writes = run.input_writes(update.values)
        run.updated = apply_writes(self.spec, run.state, [Task.pseudo(INPUT, writes)])
        run._save("input")

    async def _update_task(self, run: Run, update: StateUpdate, count: int) -> Task:
        """The update as the writes of a finished task of node `as_node` (the last writer by default)."""
        if update.as_node is None and count > 1:
            raise InvalidUpdateError("update_state: as_node is required when a superstep has several updates")
        node_name = update.as_node or self._last_writer(run)
        if node_name is None:
            raise InvalidUpdateError("Ambiguous update, specify as_node")
        if node_name not in self.spec.nodes:
            raise InvalidUpdateError(f"Node {node_name} does not exist")
        task = Task(node_name, "", self.spec.nodes[node_name], PULL, 0, (INTERRUPT,))
        writes = await node_writes_async(run, task, update.values)
        return Task.pseudo(node_name, writes, (INTERRUPT,))

    def _last_writer(self, run: Run) -> str | None:
        """The node an update without `as_node` is applied as (LangGraph's inference): the one that saw
        the newest channel version, START on a thread where none ran; None when two nodes tie."""
        nodes = self.spec.nodes
        if len(nodes) == 1:
            return next(iter(nodes))
        seen = sorted(
            (v, name) for name, versions in run.state.seen.items() if name in nodes for v in versions.values()
        )
        if not seen or not seen[-1][0]:
            return START
        if len(seen) == 1 or seen[-1][0] != seen[-2][0]:
            return seen[-1][1]
        return None


def _from_subgraph_checkpoint(config: dict[str, Any]) -> dict[str, Any]:
    """A run of the graph from a config naming a subgraph's checkpoint (a snapshot's, with its
    `checkpoint_map`): the graph runs from its own checkpoint of that moment, and the subgraph, when
    its task runs, from the named one (time travel into a subgraph, as LangGraph)."""
    configurable = {k: v for k, v in config["configurable"].items() if k not in ("checkpoint_ns", "checkpoint_id")}
    own = configurable.get("checkpoint_map", {}).get("")
    if own is not None:
        configurable["checkpoint_id"] = own
    return {**config, "configurable": configurable}


class GraphMap:
    """`graph.map()`: invoke and ainvoke take a list and return the graph's result for each item."""

    def __init__(self, graph: GraphAPI) -> None:
        self.graph = graph

    def invoke(self, inputs: Sequence[Any], config: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        return self.graph.batch(inputs, config, **kwargs)

    async def ainvoke(self, inputs: Sequence[Any], config: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        return await self.graph.abatch(inputs, config, **kwargs)
