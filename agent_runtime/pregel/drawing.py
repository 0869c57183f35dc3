"""`get_graph()`: a compiled graph's nodes and edges as LangChain's drawable Graph (Mermaid, PNG, JSON),
drawn as LangGraph draws the same graph: its supersteps are walked statically (static edges and joins
write their trigger channels; branches and Command destinations write every target they declare), the
edges found are sorted, nodes nothing leaves from end at END, and `xray` puts subgraphs' own drawings
in place of their nodes. Needs langchain-core."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from langchain_core.runnables import Runnable, RunnableSerializable
from langchain_core.runnables.graph import Graph, Node
from pydantic import ConfigDict

from agent_runtime.channels.base import BaseChannel
from agent_runtime.core.types import END, START

if TYPE_CHECKING:
    from agent_runtime.engine.spec import GraphSpec, NodeSpec

STEP_LIMIT = 250  # supersteps walked (a cycle revisits the same edges)


class Drawable(Protocol):
    """What a drawing reads of a compiled graph (agent_runtime.pregel.compiled)."""

    @property
    def spec(self) -> GraphSpec: ...

    @property
    def builder(self) -> Any: ...  # the StateGraph it was compiled from, if any

    @property
    def interrupt_before(self) -> tuple[str, ...]: ...

    @property
    def interrupt_after(self) -> tuple[str, ...]: ...

    def get_subgraphs(self) -> Iterator[tuple[str, Any]]: ...


class Edge(NamedTuple):
    source: str
    target: str
    conditional: bool
    label: str | None


class TriggerEdge(NamedTuple):
    channel: str  # a trigger channel written (or END)
    conditional: bool
    label: str | None


class DeclaredWrite(NamedTuple):
    channel: str
    label: str | None


class _DrawnAction(RunnableSerializable[Any, Any]):
    """A node's action as the drawing's node data. LangChain's JSON names node data by `lc_id`; these
    carry the ids LangGraph's drawings have, so `to_json()` equals LangGraph's for the same graph."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    action: Any = None
    LC_ID: ClassVar[list[str]] = []

    @classmethod
    def lc_id(cls) -> list[str]:
        return list(cls.LC_ID)

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if isinstance(self.action, Runnable) or hasattr(self.action, "invoke"):
            return self.action.invoke(input, config, **kwargs)
        return self.action(input)


class DrawnFunction(_DrawnAction):
    LC_ID: ClassVar[list[str]] = ["langgraph", "_internal", "_runnable", "RunnableCallable"]


class DrawnGraph(_DrawnAction):
    LC_ID: ClassVar[list[str]] = ["langgraph", "graph", "state", "CompiledStateGraph"]


def node_data(graph: Drawable, name: str) -> Runnable[Any, Any]:
    """What LangGraph shows as a node's data: the user's Runnable itself, else the function or subgraph."""
    spec = graph.spec.nodes[name]
    if spec.subgraph is not None:
        return DrawnGraph(action=spec.subgraph, name=name)
    builder = graph.builder
    defined = builder.nodes.get(name) if builder is not None else None
    action = defined.runnable if defined is not None else spec.fn
    from agent_runtime.engine.runnable import RunnableCallable

    if isinstance(action, Runnable) and type(action) is not RunnableCallable:
        return action
    return DrawnFunction(action=action, name=name)


def declared_writes(
    node: NodeSpec, labels: Mapping[str, str], branch_channel: Mapping[str, str]
) -> list[DeclaredWrite]:
    """What a node's branches and Command destinations may write, for the static walk: every target
    they declare (nothing for a path function that declares none, as in LangGraph)."""
    writes: list[DeclaredWrite] = []

    def channel(target: str) -> str:
        return END if target == END else branch_channel.get(target, target)

    for branch in node.branches:
        if branch.path_map is not None:
            writes += [DeclaredWrite(channel(t), str(label)) for label, t in branch.path_map.items()]
        elif branch.declared is not None:
            writes += [DeclaredWrite(channel(t), t) for t in branch.declared]
    for target in node.destinations or ():
        writes.append(DeclaredWrite(channel(target), labels.get(target)))
    return writes


class _Walk:
    """LangGraph's static walk of the supersteps (langgraph.pregel._draw.draw_graph), on our channels."""

    def __init__(self, spec: GraphSpec, labels: Mapping[str, Mapping[str, str]]) -> None:
        self.spec = spec
        self.channels: dict[str, BaseChannel] = {}
        for node in spec.nodes.values():
            for chan in (*node.triggers, *(c for c, _ in node.static_writes)):
                if chan in spec.channels and chan not in self.channels:
                    self.channels[chan] = spec.channels[chan].copy()
        branch_channel = {n: node.triggers[0] for n, node in spec.nodes.items() if node.triggers and n != START}
        self.declared = {n: declared_writes(node, labels.get(n, {}), branch_channel) for n, node in spec.nodes.items()}
        self.edges: set[Edge] = set()
        self.step_sources: dict[str, set[TriggerEdge]] = {}

    def triggered(self, updated: set[str]) -> list[str]:
        return sorted(
            name
            for name, node in self.spec.nodes.items()
            if any(c in updated and c in self.channels and self.channels[c].is_available() for c in node.triggers)
        )

    def apply(self, tasks: list[str], writes: Mapping[str, list[tuple[str, Any]]]) -> set[str]:
        """LangGraph's apply_writes on the trigger channels: consume what the tasks read, update what
        they wrote, clear the rest; finish (deferred nodes) when nothing would run next."""
        for chan in {c for t in tasks for c in self.spec.nodes[t].triggers if c in self.channels}:
            self.channels[chan].consume()
        grouped: dict[str, list[Any]] = defaultdict(list)
        for task in tasks:
            for chan, value in writes[task]:
                if chan in self.channels:
                    grouped[chan].append(value)
        updated = {c for c, ch in self.channels.items() if ch.update(grouped.get(c, []))}
        if not self.triggered(updated):
            updated |= {c for c, ch in self.channels.items() if ch.finish()}
        return updated

    def run(self) -> None:
        static_seen: set[str] = set()
        static_declared: dict[str, set[TriggerEdge]] = defaultdict(set)
        sources: dict[str, set[TriggerEdge]] = {}
        tasks = [START] if START in self.spec.nodes else []
        for _ in range(-1, STEP_LIMIT):
            if not tasks:
                break
            conditionals: dict[tuple[str, str], str | None] = {}
            writes: dict[str, list[tuple[str, Any]]] = {}
            for task in tasks:
                writes[task] = list(self.spec.nodes[task].static_writes)
                if task not in static_seen:  # declared writes count once, as LangGraph's static writes
                    static_seen.add(task)
                    for chan, label in self.declared[task]:
                        if chan == END:
                            self.edges.add(Edge(task, END, True, label))
                            continue
                        conditionals[(task, chan)] = label
                        static_declared[task].add(TriggerEdge(chan, True, label))
                        writes[task].append((chan, None))
            self.step_sources = {}
            for task in tasks:
                found = {
                    TriggerEdge(
                        chan,
                        value is None and (task, chan) in conditionals,
                        conditionals.get((task, chan)) if value is None else None,
                    )
                    for chan, value in writes[task]
                }
                self.step_sources[task] = found | static_declared.get(task, set())
            sources.update(self.step_sources)
            trigger_to_sources: dict[str, set[TriggerEdge]] = defaultdict(set)
            for src, triggers in sources.items():
                for chan, cond, label in triggers:
                    trigger_to_sources[chan].add(TriggerEdge(src, cond, label))
            tasks = self.triggered(self.apply(tasks, writes))
            for task in tasks:
                added = False
                for trigger in self.spec.nodes[task].triggers:
                    for src, cond, label in sorted(trigger_to_sources[trigger], key=_edge_key):
                        self.edges.add(Edge(src, task, cond, label))
                        if TriggerEdge(trigger, cond, label) in self.step_sources.get(src, set()):
                            added = True
                        else:
                            sources[src].discard(TriggerEdge(trigger, cond, label))
                if not added:  # reached without an edge of this step: from each of its tasks
                    for src in self.step_sources:
                        self.edges.add(Edge(src, task, True, None))


def _edge_key(edge: tuple[str, bool, str | None]) -> tuple[str, bool, str]:
    return edge[0], edge[1], edge[2] or ""


def _sorted_edges(edges: set[Edge]) -> list[Edge]:
    return sorted(edges, key=lambda e: (e.source, e.target, e.conditional, e.label or ""))


def add_edge(graph: Graph, source: str, target: str, *, data: Any = None, conditional: bool = False) -> None:
    """An edge, unless one joins the same nodes already (LangGraph's rule); END is added when first needed."""
    if any(e.source == source and e.target == target for e in graph.edges):
        return
    if target not in graph.nodes and target == END:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, conditional)


def node_metadata(graph: Drawable, name: str, deferred: bool) -> dict[str, Any] | None:
    metadata: dict[str, Any] = {}
    if deferred:
        metadata["defer"] = True
    before, after = name in graph.interrupt_before, name in graph.interrupt_after
    if before or after:
        metadata["__interrupt"] = ",".join(w for w, on in (("before", before), ("after", after)) if on)
    tools = getattr(node_data(graph, name), "tools_by_name", None)
    if isinstance(tools, Mapping) and tools:
        metadata["__tools"] = list(tools)
    return metadata or None


def _subgraphs(graph: Drawable, config: Any, xray: int | bool) -> Iterator[tuple[str, Graph]]:
    if not xray:
        return
    deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
    for name, sub in graph.get_subgraphs():
        yield name, sub.get_graph(config, xray=deeper)


def draw(graph: Drawable, config: Any = None, xray: int | bool = False) -> Graph:
    """The drawable graph of `graph`, as LangGraph's `get_graph(config, xray=xray)` draws it."""
    spec = graph.spec
    labels = graph.builder.destination_labels if graph.builder is not None else {}
    walk = _Walk(spec, labels)
    walk.run()
    deferred = {n for n, node in spec.nodes.items() if node.defer}
    drawn = Graph()
    for name in spec.nodes:
        drawn.add_node(node_data(graph, name), name, metadata=node_metadata(graph, name, name in deferred))
    edges = walk.edges
    for src, dst, conditional, label in _sorted_edges(edges):
        add_edge(drawn, src, dst, data=label if label != dst else None, conditional=conditional)
    termini = {e.target for e in edges if e.target != END} - {e.source for e in edges}
    if termini:
        for src in sorted(termini):
            add_edge(drawn, src, END)
    elif len(walk.step_sources) == 1 and not any(e.target == END for e in edges):
        for src in sorted(walk.step_sources):
            add_edge(drawn, src, END, conditional=True)
    for name, subgraph in _subgraphs(graph, config, xray):
        _replace_with_subgraph(drawn, name, subgraph)
    return drawn


def _replace_with_subgraph(drawn: Graph, name: str, subgraph: Graph) -> None:
    """xray: the subgraph's nodes (prefixed `name:`) in place of its node, less its START and END."""
    if len(subgraph.nodes) <= 1 or name not in drawn.nodes or not subgraph.first_node() or not subgraph.last_node():
        return
    subgraph.trim_first_node()
    subgraph.trim_last_node()
    drawn.nodes.pop(name)
    first, last = drawn.extend(subgraph, prefix=name)
    for idx, edge in enumerate(drawn.edges):
        if edge.source == name and isinstance(last, Node):
            edge = edge.copy(source=last.id)
        if edge.target == name and isinstance(first, Node):
            edge = edge.copy(target=first.id)
        drawn.edges[idx] = edge
