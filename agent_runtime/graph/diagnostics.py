"""Compile-time topology checks.

* Errors: nodes that cannot be reached from START.
* Hazards (a warning, or `TopologyError` with `compile(strict=True)`):
  - a node reached from one fan-out by paths of different lengths without a join or `defer=True`:
    each path triggers it in a different superstep, so it runs more than once (langgraph #5979);
  - a join `add_edge([a, b], c)` whose input can be skipped by a conditional edge while another
    input still runs: the barrier never completes and `c` silently never runs (langgraph #3249).
Routes whose targets are unknown (a path function without a path map or Literal return type, a node
returning Command without declared destinations) are treated as "could go anywhere" for
reachability and ignored for the hazards.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

from agent_runtime.core.types import END, START
from agent_runtime.engine.spec import GraphSpec
from agent_runtime.errors import TopologyError

MAX_PATH_LENGTH = 12
MAX_PATHS = 2_000  # per fan-out; the check gives up quietly beyond this (very wide graphs)


class TopologyWarning(UserWarning):
    """A graph shape that runs differently from what it looks like (see `diagnostics`)."""


def _successors(spec: GraphSpec, node: str) -> tuple[set[str], bool]:
    """(known successors, True if some route's targets are unknown)."""
    out: set[str] = set()
    unknown = False
    for _, targets in spec.successor_groups(node):
        if targets is None:
            unknown = True
        else:
            out.update(targets)
    return out, unknown


def unreachable_nodes(spec: GraphSpec) -> list[str]:
    seen = {START}
    stack = [START]
    while stack:
        successors, unknown = _successors(spec, stack.pop())
        if unknown:
            return []
        for nxt in successors - seen:
            seen.add(nxt)
            stack.append(nxt)
    return sorted(n for n in spec.nodes if n not in seen)


def _paths(spec: GraphSpec, first: str, origin: str) -> Iterator[tuple[str, ...]]:
    """Simple paths origin -> first -> ... (every prefix is yielded)."""
    stack: list[tuple[str, ...]] = [(origin, first)]
    count = 0
    while stack and count < MAX_PATHS:
        path = stack.pop()
        count += 1
        yield path
        if len(path) > MAX_PATH_LENGTH:
            continue
        successors, _ = _successors(spec, path[-1])
        for nxt in sorted(successors):
            if nxt not in path and nxt != END:
                stack.append((*path, nxt))


def _joined(spec: GraphSpec, node: str, a: str, b: str) -> bool:
    """True if `node` waits for both predecessors `a` and `b` through a join."""
    return any(dst == node and a in starts and b in starts for starts, dst in spec.waiting_edges)


def unequal_path_hazards(spec: GraphSpec) -> list[str]:
    found: dict[str, str] = {}
    for origin in sorted(spec.nodes):
        groups = [g for g in spec.successor_groups(origin) if g[1] is not None and g[0] not in ("join", "error")]
        firsts = sorted({t for _, targets in groups for t in targets or ()})
        if len(groups) < 2 or len(firsts) < 2:
            continue
        by_node: dict[str, list[tuple[str, ...]]] = {}
        for first in firsts:
            if first == origin:
                continue  # a self-loop is a loop, not a parallel branch
            for path in _paths(spec, first, origin):
                by_node.setdefault(path[-1], []).append(path)
        for node, paths in sorted(by_node.items()):
            if node in found or spec.nodes[node].defer:
                continue
            hazard = _first_unequal_pair(spec, node, paths)
            if hazard is not None:
                p1, p2 = hazard
                found[node] = (
                    f"node '{node}' is reached from the fan-out at '{origin}' by paths of different lengths "
                    f"({' -> '.join(p1)} and {' -> '.join(p2)}) without a join: each path triggers it in a "
                    f"different superstep, so it runs twice (langgraph #5979). Fix: add_node('{node}', ..., "
                    f"defer=True), or join the branches with add_edge(['{p1[-2]}', '{p2[-2]}'], '{node}') "
                    "if neither branch can be skipped"
                )
    return list(found.values())


def _first_unequal_pair(
    spec: GraphSpec, node: str, paths: list[tuple[str, ...]]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    for i, p1 in enumerate(paths):
        for p2 in paths[i + 1 :]:
            if len(p1) == len(p2) or p1[1] == p2[1]:
                continue
            if set(p1[1:-1]) & set(p2[1:-1]):
                continue  # they merge earlier: the earlier node is the one to report
            if _joined(spec, node, p1[-2], p2[-2]):
                continue
            return (p1, p2) if len(p1) < len(p2) else (p2, p1)
    return None


def _reachable(spec: GraphSpec, start: str, restrict: tuple[str, str] | None) -> set[str]:
    """Nodes reachable from `start`; `restrict=(source, dest)` forces `source`'s branches to `dest`."""
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        if restrict is not None and node == restrict[0]:
            successors = {restrict[1]} | {
                t for kind, ts in spec.successor_groups(node) if kind != "branch" for t in ts or ()
            }
        else:
            successors, _ = _successors(spec, node)
        for nxt in successors - seen:
            if nxt in spec.nodes:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _branch_choices(spec: GraphSpec, source: str) -> set[str]:
    """Where the conditional edges of `source` can go (END included); empty if any is unknown."""
    choices: set[str] = set()
    for branch in spec.nodes[source].branches:
        known = branch.declared
        if known is None:
            return set()
        choices.update(known)
    return choices


def skippable_join_hazards(spec: GraphSpec) -> list[str]:
    out = []
    for starts, target in sorted(spec.waiting_edges):
        for source, choice in _skip_points(spec, starts):
            reached = _reachable(spec, START, (source, choice))
            missing = [s for s in starts if s not in reached]
            present = [s for s in starts if s in reached]
            if missing and present:
                where = "END" if choice == END else repr(choice)
                verb = "runs" if len(missing) == 1 else "run"
                out.append(
                    f"join add_edge({list(starts)}, '{target}') can wait forever: when the conditional edge "
                    f"of '{source}' goes to {where}, {missing} never {verb} "
                    f"but {present} do, and '{target}' silently never runs (langgraph #3249). Fix: separate "
                    f"edges into '{target}' with add_node('{target}', ..., defer=True)"
                )
                break
    return out


def _skip_points(spec: GraphSpec, starts: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for source in sorted(spec.nodes):
        choices = _branch_choices(spec, source)
        if len(choices) >= 2 and source not in starts:
            for choice in sorted(choices):
                # a choice that loops back to `source` is decided again later: not a skip
                if choice == END or source not in _reachable(spec, choice, None):
                    yield source, choice


def check_topology(spec: GraphSpec, *, strict: bool) -> list[str]:
    """Warn about hazards, unreachable nodes included (LangGraph compiles such graphs); raise in strict
    mode. Returns the hazards."""
    unreachable = unreachable_nodes(spec)
    hazards = [
        f"node(s) {unreachable} cannot be reached from START (add an edge to them; if they are reached through "
        "Command(goto=...), declare add_node(..., destinations=(...)) or annotate the return type as "
        "Command[Literal[...]])"
    ] if unreachable else []  # fmt: skip
    hazards += unequal_path_hazards(spec) + skippable_join_hazards(spec)
    if hazards and strict:
        raise TopologyError("Topology hazards (compile(strict=True)):\n- " + "\n- ".join(hazards))
    for hazard in hazards:
        warnings.warn(hazard, TopologyWarning, stacklevel=3)
    return hazards
