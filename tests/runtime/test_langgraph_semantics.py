"""LangGraph semantics: reducers inside TypedDict qualifiers, on abstract collection types from the
first write, with parameters that have defaults (LangGraph's own add_messages); interrupt() without a
checkpointer."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any, NotRequired, TypedDict

import pytest

import agent_runtime as ar


def _one_node(schema: Any, update: dict[str, Any]) -> ar.CompiledGraph:
    g = ar.StateGraph(schema)
    g.add_node("n", lambda s: update)
    g.add_edge(ar.START, "n")
    return g.compile()


def test_a_reducer_inside_not_required_is_kept() -> None:
    class State(TypedDict):
        log: NotRequired[Annotated[list[str], operator.add]]

    assert _one_node(State, {"log": ["b"]}).invoke({"log": ["a"]})["log"] == ["a", "b"]


def append(current: Sequence[str], word: str) -> list[str]:
    return [*current, word]


def test_an_abstract_sequence_starts_empty_and_folds_the_first_write() -> None:
    class State(TypedDict):
        words: Annotated[Sequence[str], append]

    # Not ['h', 'e', 'l', 'l', 'o', 'there']: the first write goes through the reducer too.
    assert _one_node(State, {"words": "there"}).invoke({"words": "hello"})["words"] == ["hello", "there"]


def merge(left: list[str] | None = None, right: list[str] | None = None) -> list[str]:
    return [*(left or []), *(right or [])]


def one_argument(only: list[str]) -> list[str]:
    return only


def test_reducer_parameters_may_have_defaults() -> None:
    class State(TypedDict):
        log: Annotated[list[str], merge]

    assert _one_node(State, {"log": ["b"]}).invoke({"log": ["a"]})["log"] == ["a", "b"]

    class Wrong(TypedDict):
        log: Annotated[list[str], one_argument]

    with pytest.raises(ValueError, match="reducer"):
        ar.StateGraph(Wrong)


class Asked(TypedDict, total=False):
    answer: str


def test_interrupt_without_a_checkpointer_pauses_and_reports_it() -> None:
    """As LangGraph: the run stops at the interrupt and returns `__interrupt__` (it cannot be resumed)."""
    g = ar.StateGraph(Asked)
    g.add_node("ask", lambda s: {"answer": ar.interrupt("which file?")})
    g.add_edge(ar.START, "ask")
    result = g.compile().invoke({"answer": "none yet"})
    assert result["answer"] == "none yet" and [i.value for i in result["__interrupt__"]] == ["which file?"]


class Named(TypedDict, total=False):
    a: str
    b: str
    step: str


def test_graph_validation_agrees_with_langgraph() -> None:
    g = ar.StateGraph(Named)
    g.add_node("a", lambda s: {"a": "done"})
    g.add_node("b", lambda s: {"b": "done"})
    g.add_node("step", lambda s: {"step": "done"})  # a node named like a state key
    g.add_edge(ar.START, "a")
    g.add_edge(ar.START, "b")
    g.add_edge(["a", "b"], ar.END)  # a join into END: accepted, adds nothing
    g.add_edge("a", "step")
    assert g.compile().invoke({}) == {"a": "done", "b": "done", "step": "done"}
    with pytest.raises(ValueError, match="at least one node"):
        ar.StateGraph(Named).add_sequence([])
    with pytest.raises(TypeError, match="checkpointer"):
        g.compile(checkpointer="memory")  # type: ignore[arg-type]
    assert g.compile(checkpointer=False).invoke({})["a"] == "done"


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def test_update_state_with_no_values_copies_the_checkpoint() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_edge(ar.START, "a")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": "copy"}}
    app.invoke({"log": ["x"]}, cfg)
    first = list(app.get_state_history(cfg))[-1]
    copy = app.update_state(first.config, None)
    assert copy["configurable"]["checkpoint_id"] != first.config["configurable"]["checkpoint_id"]
    assert app.get_state(copy).values == first.values and app.get_state(copy).next == first.next


def test_state_shows_the_tasks_that_finished_in_an_interrupted_step() -> None:
    g = ar.StateGraph(Log)
    g.add_node("ask", lambda s: {"log": [ar.interrupt("go on?")]})
    g.add_node("sibling", lambda s: {"log": ["sibling"]})
    g.add_edge(ar.START, "ask")
    g.add_edge(ar.START, "sibling")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": "interrupted-step"}}
    app.invoke({"log": []}, cfg)
    state = app.get_state(cfg)
    assert state.next == ("ask",) and {t.name for t in state.tasks} == {"ask", "sibling"}
    sibling = next(t for t in state.tasks if t.name == "sibling")
    assert sibling.result == {"log": ["sibling"]}  # its state writes, shaped as LangGraph shows them
    assert [i.value for i in state.interrupts] == ["go on?"]


async def test_async_state_readers_and_the_default_stream_mode() -> None:
    g = ar.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_edge(ar.START, "a")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": "async-readers"}}
    assert list(app.stream({"log": ["x"]}, cfg)) == [{"a": {"log": ["a"]}}]  # "updates", as LangGraph
    assert (await app.aget_state(cfg)).values["log"] == ["x", "a"]
    history = [snapshot async for snapshot in app.aget_state_history(cfg)]
    assert [h.metadata["step"] for h in history] == [1, 0, -1]


def test_interrupts_in_streams_are_tuples_and_in_invoke_a_list() -> None:
    g = ar.StateGraph(Asked)
    g.add_node("ask", lambda s: {"answer": ar.interrupt("q?")})
    g.add_edge(ar.START, "ask")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    chunks = list(app.stream({"answer": "x"}, {"configurable": {"thread_id": "tuple"}}, stream_mode="values"))
    assert isinstance(chunks[-1]["__interrupt__"], tuple)
    assert isinstance(app.invoke({"answer": "x"}, {"configurable": {"thread_id": "list"}})["__interrupt__"], list)


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


class Work(Question, Answer, total=False):
    scratch: str


def test_input_and_output_schemas_as_langgraph() -> None:
    g = ar.StateGraph(Work, input_schema=Question, output_schema=Answer)
    g.add_node("think", lambda s: {"scratch": "hm " + s["question"]})
    g.add_node("say", lambda s: {"answer": s["scratch"].upper()})
    g.add_edge(ar.START, "think")
    g.add_edge("think", "say")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": "schemas"}}
    assert app.invoke({"question": "why", "scratch": "not an input key"}, cfg) == {"answer": "HM WHY"}
    assert app.get_state(cfg).values == {"question": "why", "scratch": "hm why", "answer": "HM WHY"}


def _child() -> ar.CompiledGraph:
    sub = ar.StateGraph(Log)
    sub.add_node("inner", lambda s: ar.Command(graph=ar.Command.PARENT, goto="after", update={"log": ["inner"]}))
    sub.add_edge(ar.START, "inner")
    return sub.compile()


@pytest.mark.parametrize("how", ["subgraph node", "inside a node"])
def test_command_parent_routes_in_the_parent_graph(how: str) -> None:
    """A subgraph's node returns Command(graph=PARENT): its update and goto apply in the parent, as the
    result of the parent's node that ran the subgraph (LangGraph gives ['x', 'inner', 'after'])."""
    child = _child()
    g = ar.StateGraph(Log)
    if how == "subgraph node":
        g.add_node("sub", child, destinations=("after",))
    else:
        g.add_node("sub", lambda s: child.invoke(s), destinations=("after",))
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(ar.START, "sub")
    assert g.compile().invoke({"log": ["x"]})["log"] == ["x", "inner", "after"]


def test_command_parent_at_the_top_is_an_error() -> None:
    with pytest.raises(ar.errors.ParentCommand):
        _child().invoke({"log": []})
