"""LangGraph's CompiledStateGraph API beyond running and reading state: a bound config
(`with_config`), the run's `context=` and `store`, `nodes` / `channels`, the JSON schemas of the input
and output, and `bulk_update_state` (several updates per superstep, one checkpoint each)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agent_runtime import node_cache
from agent_runtime.channels import BaseChannel
from agent_runtime.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.engine.algo import PULL, Task, apply_writes
from agent_runtime.engine.spec import INTERRUPT, GraphSpec, NodeSpec
from agent_runtime.engine.tasks import node_writes_async
from agent_runtime.errors import InvalidUpdateError
from agent_runtime.json_schemas import channels_model, context_json_schema, graph_name, state_json_schema
from agent_runtime.models import create_model
from agent_runtime.run_config import merge_configs
from agent_runtime.runtime import coerce_context, with_runtime
from agent_runtime.subgraph_detection import detected_subgraph
from agent_runtime.types import START, StateUpdate

if TYPE_CHECKING:
    from agent_runtime.checkpoint.base import BaseCheckpointer
    from agent_runtime.engine.loop import Run
    from agent_runtime.graph import StateGraph

INPUT = "__input__"  # update_state's as_node for writing a graph input


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
    builder: StateGraph[Any, Any, Any, Any] | None = None

    def with_config(self, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """A copy of the graph whose runs start from `config` (merged under the config of each call)."""
        bound = copy.copy(self)
        bound.config = merge_configs(self.config, {**(config or {}), **kwargs})
        return bound

    def entry_config(self, config: dict[str, Any] | None, context: Any = None) -> dict[str, Any] | None:
        """The config a public call runs with: the bound config, the call's, and the run's Runtime."""
        if self.config:
            config = merge_configs(self.config, config)
        return with_runtime(config, coerce_context(self.context_schema, context), self.store)

    @property
    def nodes(self) -> dict[str, NodeView]:
        return {
            name: NodeView(name, node.fn, node.triggers, self._subgraphs(node))
            for name, node in self.spec.nodes.items()
        }

    def _subgraphs(self, node: NodeSpec) -> list[Any]:
        """A node's subgraph: the compiled graph it is, or the one its function (as given to add_node,
        not the engine's wrapper of it) reaches."""
        if node.subgraph is not None:
            return [node.subgraph]
        given = self.builder.nodes.get(node.name) if self.builder is not None else None
        action = given.fn if given is not None else node.fn
        found = detected_subgraph(action) if action is not None else None
        return [found] if found is not None else []

    @property
    def channels(self) -> dict[str, BaseChannel]:
        return self.spec.channels

    def get_name(self, suffix: str | None = None) -> str:
        return graph_name(self.name, suffix) if suffix else self.name

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
        """The graph as LangChain's drawable Graph (`.draw_mermaid()`, `.to_json()`); subgraphs are
        drawn as one node (`xray` is accepted for LangGraph's signature)."""
        from agent_runtime.drawing import draw

        labels = self.builder.destination_labels if self.builder is not None else {}
        return draw(self.spec, {name: node.bound for name, node in self.nodes.items()}, labels)

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
        from agent_runtime.pregel import run_sync

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

    if TYPE_CHECKING:

        async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...

        def _new_run(self, *args: Any, **kwargs: Any) -> Run: ...  # CompiledGraph's

    def bulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]]) -> dict[str, Any]:
        from agent_runtime.pregel import run_sync

        return run_sync(self.abulk_update_state(config, supersteps))

    async def abulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply each superstep's updates together, as if their nodes had run in one step (their edges
        fire too), saving one checkpoint per superstep; returns the config of the last."""
        if self.checkpointer is None:
            raise ValueError("No checkpointer set: compile(checkpointer=InMemoryCheckpointer())")
        if not supersteps:
            raise ValueError("No supersteps provided")
        for updates in supersteps:
            if not updates:
                raise ValueError("No updates provided")
            run = self._new_run(None, config, frozenset(), None, None)
            run._load()
            if len(updates) == 1 and updates[0].values is None and updates[0].as_node is None:
                run.save_branch_point("update")  # as LangGraph: a copy of the checkpoint, a new branch point
            elif any(update.as_node == INPUT for update in updates):
                self._update_as_input(run, updates)
            else:
                tasks = [await self._update_task(run, update, len(updates)) for update in updates]
                run.updated = apply_writes(self.spec, run.state, tasks)
                run._save("update")
            config = run._cp_config()
        return config

    def _update_as_input(self, run: Run, updates: Sequence[StateUpdate]) -> None:
        """as_node="__input__" (LangGraph's INPUT): the values as a new graph input, an "input"
        checkpoint whose next task is __start__. Unlike invoke's input, pending tasks stay pending."""
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when updating as input")
        writes = run.input_writes(updates[0].values)
        if not any(values for _, values in writes):
            raise InvalidUpdateError(f"Received no input writes for {START}")
        run.updated = apply_writes(self.spec, run.state, [Task.pseudo(INPUT, writes)])
        run._save("input")

    async def _update_task(self, run: Run, update: StateUpdate, count: int) -> Task:
        """The update as the writes of a finished task of node `as_node` (the last writer by default)."""
        node_name = update.as_node or (None if count > 1 else self._last_writer(run) or START)
        if node_name is None:
            raise ValueError("update_state: as_node is required when a superstep has several updates")
        if node_name not in self.spec.nodes:
            raise ValueError(f"update_state(as_node={node_name!r}): no such node")
        task = Task(node_name, "", self.spec.nodes[node_name], PULL, 0, (INTERRUPT,))
        writes = await node_writes_async(run, task, update.values)
        return Task.pseudo(node_name, writes, (INTERRUPT,))

    def _last_writer(self, run: Run) -> str | None:
        latest = [
            (max(seen.values()), name)
            for name, seen in run.state.seen.items()
            if name in self.spec.nodes and name != START and seen
        ]
        return max(latest)[1] if latest else None


class GraphMap:
    """`graph.map()`: invoke and ainvoke take a list and return the graph's result for each item."""

    def __init__(self, graph: GraphAPI) -> None:
        self.graph = graph

    def invoke(self, inputs: Sequence[Any], config: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        return self.graph.batch(inputs, config, **kwargs)

    async def ainvoke(self, inputs: Sequence[Any], config: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        return await self.graph.abatch(inputs, config, **kwargs)
