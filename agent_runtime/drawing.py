"""`get_graph()`: a compiled graph's nodes and edges as LangChain's drawable Graph (Mermaid, PNG, JSON),
laid out as LangGraph draws them: edges sorted, conditional ones (branches, Command destinations)
marked, and nodes nothing leaves from ending at END. Needs langchain-core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from agent_runtime.types import END, START

if TYPE_CHECKING:
    from langchain_core.runnables.graph import Graph

    from agent_runtime.engine.spec import GraphSpec


class DrawnEdge(NamedTuple):
    source: str
    target: str
    conditional: bool
    label: str | None


def _branch_edges(spec: GraphSpec, source: str, labels: Mapping[str, str]) -> list[DrawnEdge]:
    """A node's conditional edges: its branches' targets (all nodes when only the path function knows)
    and its declared Command destinations."""
    edges: list[DrawnEdge] = []
    everywhere = [n for n in spec.nodes if n != START] + [END]
    node = spec.nodes[source]
    for branch in node.branches:
        if branch.path_map is not None:
            edges += [DrawnEdge(source, target, True, str(label)) for label, target in branch.path_map.items()]
        else:
            edges += [DrawnEdge(source, target, True, None) for target in branch.declared or everywhere]
    edges += [DrawnEdge(source, target, True, labels.get(target)) for target in node.destinations or ()]
    return edges


def drawn_edges(spec: GraphSpec, labels: Mapping[str, Mapping[str, str]]) -> list[DrawnEdge]:
    """Every edge: static ones, joins (from each of their sources), branches and Command destinations
    (`labels`: a node's `add_node(destinations={node: label})`)."""
    edges = {DrawnEdge(src, dst, False, None) for src, dst in spec.edges}
    edges |= {DrawnEdge(src, dst, False, None) for starts, dst in spec.waiting_edges for src in starts}
    for name in spec.nodes:
        edges.update(_branch_edges(spec, name, labels.get(name, {})))
    return sorted(edges, key=lambda e: (e.source, e.target, e.conditional, e.label or ""))


def draw(spec: GraphSpec, bound: Mapping[str, Any], labels: Mapping[str, Mapping[str, str]]) -> Graph:
    """The drawable graph of `spec`; `bound`: what each node runs (the drawing's node data)."""
    from langchain_core.runnables.graph import Graph

    graph = Graph()
    for name in spec.nodes:
        graph.add_node(bound.get(name), name)
    graph.add_node(None, END)
    edges = drawn_edges(spec, labels)
    for edge in edges:
        label = edge.label if edge.label != edge.target else None
        graph.add_edge(graph.nodes[edge.source], graph.nodes[edge.target], label, edge.conditional)
    sources = {e.source for e in edges}
    for terminus in sorted({e.target for e in edges if e.target != END} - sources):
        graph.add_edge(graph.nodes[terminus], graph.nodes[END])
    return graph
