"""Topology diagnostics (compile time and run time) and invalid graphs."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, Literal, TypedDict

import pytest

import agent_runtime as ar
from agent_runtime.graph.diagnostics import TopologyWarning


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    cve: bool
    cvss: bool


def _node(name: str) -> Any:
    return lambda state: {"log": [name]}


def _unequal(defer: bool = False, join: bool = False) -> ar.StateGraph:
    g = ar.StateGraph(Log)
    for name in ("a", "b", "c", "b2"):
        g.add_node(name, _node(name))
    g.add_node("d", _node("d"), defer=defer)
    g.add_edge(ar.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("b", "b2")
    if join:
        g.add_edge(["b2", "c"], "d")
    else:
        g.add_edge("b2", "d")
        g.add_edge("c", "d")
    return g


def _cve(defer: bool = False) -> ar.StateGraph:
    g = ar.StateGraph(Log)
    for name in ("get_cve_data", "get_cvss_data", "enrich_cve", "generate"):
        g.add_node(name, _node(name))
    g.add_node("normalize", _node("normalize"), defer=defer)
    g.add_edge(ar.START, "get_cve_data")
    g.add_edge(ar.START, "get_cvss_data")
    g.add_conditional_edges(
        "get_cve_data", lambda s: "enrich" if s["cve"] else "skip", {"enrich": "enrich_cve", "skip": "normalize"}
    )
    g.add_conditional_edges("get_cvss_data", lambda s: "normalize" if s["cvss"] else ar.END, ["normalize", ar.END])
    g.add_edge("enrich_cve", "normalize")
    g.add_edge("normalize", "generate")
    return g


def _hazards(g: ar.StateGraph) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g.compile()
    return [str(w.message) for w in caught if issubclass(w.category, TopologyWarning)]


def test_unequal_paths_warning_names_node_paths_and_fix() -> None:
    (message,) = _hazards(_unequal())
    assert "node 'd'" in message
    assert "a -> c -> d" in message and "a -> b -> b2 -> d" in message
    assert "defer=True" in message and "add_edge(['c', 'b2'], 'd')" in message


def test_strict_mode_raises() -> None:
    with pytest.raises(ar.TopologyError, match="node 'd'"):
        _unequal().compile(strict=True)


@pytest.mark.parametrize("kwargs", [{"defer": True}, {"join": True}])
def test_fixed_shapes_compile_clean(kwargs: dict[str, bool]) -> None:
    assert _hazards(_unequal(**kwargs)) == []
    _unequal(**kwargs).compile(strict=True)


def test_cve_shape_reports_normalize_and_skippable_branch() -> None:
    messages = _hazards(_cve())
    assert any("node 'normalize'" in m and "enrich_cve" in m for m in messages)
    assert _hazards(_cve(defer=True)) == []


def test_join_with_skippable_input_is_reported() -> None:
    g = ar.StateGraph(Log)
    for name in ("a", "b", "c", "d"):
        g.add_node(name, _node(name))
    g.add_edge(ar.START, "a")
    g.add_edge(ar.START, "b")
    g.add_conditional_edges("a", lambda s: "c" if s["cve"] else ar.END, ["c", ar.END])
    g.add_edge(["b", "c"], "d")
    (message,) = _hazards(g)
    assert "add_edge(['b', 'c'], 'd')" in message and "'a' goes to END" in message and "['c'] never run" in message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = g.compile()
    assert app.invoke({"log": [], "cve": False})["log"] == ["a", "b"]
    report = app.last_run_report
    assert report is not None and report.stop_reason is ar.StopReason.GOAL
    (waiting,) = report.waiting_joins
    assert waiting.node == "d" and waiting.missing == ("c",) and waiting.arrived == ("b",)
    assert app.invoke({"log": [], "cve": True})["log"][-1] == "d"
    assert app.last_run_report is not None and app.last_run_report.waiting_joins == []


def test_run_report_names_the_double_run() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = _unequal().compile()
    assert app.invoke({"log": []})["log"] == ["a", "b", "c", "b2", "d", "d"]
    report = app.last_run_report
    assert report is not None
    (dup,) = report.duplicate_runs
    assert dup.node == "d" and dup.steps == (3, 4) and dup.fanout == "a"
    assert dup.paths == (("a", "c", "d"), ("a", "b", "b2", "d"))
    assert "defer=True" in str(dup)
    assert report.diagnostics() == [str(dup)]
    events = list(app.stream({"log": []}, stream_mode="report"))
    assert events[-1]["type"] == "run_report" and events[-1]["payload"].duplicate_runs
    (diagnostic,) = [e for e in events if e["type"] == "diagnostic"]
    assert diagnostic["step"] == 4 and "node 'd' ran twice" in diagnostic["payload"]["message"]
    # LangGraph's "debug" stream has no such events: ours are on "report" only
    assert {e["type"] for e in app.stream({"log": []}, stream_mode="debug")} == {"task", "task_result"}


def test_loops_and_defer_are_not_reported_as_double_runs() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_edge(ar.START, "a")
    g.add_conditional_edges("a", lambda s: "a" if len(s["log"]) < 5 else ar.END, ["a", ar.END])
    app = g.compile()
    app.invoke({"log": []})
    assert app.last_run_report is not None and app.last_run_report.duplicate_runs == []
    deferred = _unequal(defer=True).compile()
    assert deferred.invoke({"log": []})["log"] == ["a", "b", "c", "b2", "d"]
    assert deferred.last_run_report is not None and deferred.last_run_report.duplicate_runs == []


# -- invalid graphs --------------------------------------------------------------------------------------
def test_unknown_node_in_edge() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_edge(ar.START, "a")
    g.add_edge("a", "nope")
    with pytest.raises(ar.GraphCompileError, match="unknown node `nope`"):
        g.compile()


def test_unreachable_node_is_a_hazard() -> None:
    """LangGraph compiles a graph with a node nothing leads to: a warning here, an error when strict."""
    g = ar.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_node("island", _node("island"))
    g.add_edge(ar.START, "a")
    with pytest.warns(TopologyWarning, match=r"\['island'\] cannot be reached"):
        assert g.compile().invoke({"log": []})["log"] == ["a"]
    with pytest.raises(ar.TopologyError, match=r"\['island'\] cannot be reached"):
        g.compile(strict=True)


def test_command_destinations_make_nodes_reachable() -> None:
    def router(state: Log) -> ar.Command[Literal["island"]]:  # type: ignore[type-arg]
        return ar.Command(goto="island")

    g = ar.StateGraph(Log)
    g.add_node("router", router)
    g.add_node("island", _node("island"))
    g.add_edge(ar.START, "router")
    assert g.compile().invoke({"log": []})["log"] == ["island"]


def _route_to_island() -> ar.Command:  # type: ignore[type-arg]
    return ar.Command(goto="island")


def test_command_in_a_helper_function_counts_as_a_route() -> None:
    g = ar.StateGraph(Log)
    g.add_node("router", lambda state: _route_to_island())
    g.add_node("island", _node("island"))
    g.add_edge(ar.START, "router")
    assert g.compile().invoke({"log": []})["log"] == ["island"]


def test_reducer_with_wrong_arity() -> None:
    class Bad(TypedDict):
        log: Annotated[list[str], lambda a, b, c: a]

    with pytest.raises(ValueError, match="Invalid reducer signature for state key 'log'"):
        ar.StateGraph(Bad)


def test_missing_entry_point() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", _node("a"))
    with pytest.raises(ar.GraphCompileError, match="must have an entrypoint"):
        g.compile()


def test_duplicate_and_reserved_node_names() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", _node("a"))
    with pytest.raises(ValueError, match="already present"):
        g.add_node("a", _node("a"))
    with pytest.raises(ValueError, match="reserved"):
        g.add_node(ar.END, _node("x"))
