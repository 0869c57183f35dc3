"""add_messages and MessagesState against LangGraph's own (the same inputs, the same merged messages),
and MessagesState in a graph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES as LG_REMOVE_ALL
from langgraph.graph.message import add_messages as langgraph_add_messages

import agent_runtime as ar


def shape(messages: list[Any]) -> list[tuple[str, Any, str | None]]:
    """What must agree: type, content and id (generated ids replaced by a marker)."""
    return [(m.type, m.content, m.id if str(m.id).count("-") != 4 else "<uuid>") for m in messages]


CASES = [
    ([HumanMessage("hi", id="1")], [AIMessage("hello", id="2")]),
    ([HumanMessage("hi", id="1"), AIMessage("old", id="2")], [AIMessage("new", id="2")]),  # replace by id
    ([HumanMessage("hi", id="1"), AIMessage("bye", id="2")], [RemoveMessage(id="1")]),
    ([HumanMessage("hi", id="1")], HumanMessage("no list", id="3")),
    ([{"role": "user", "content": "a dict", "id": "4"}], [("assistant", "a tuple")]),
    ([], ["a plain string"]),
    ([SystemMessage("sys", id="s")], [RemoveMessage(id=LG_REMOVE_ALL), HumanMessage("fresh", id="f")]),
]


@pytest.mark.parametrize(("left", "right"), CASES)
def test_add_messages_merges_as_langgraph_does(left: Any, right: Any) -> None:
    ours = ar.add_messages(left, right)
    theirs = langgraph_add_messages(left, right)
    assert shape(ours) == shape(theirs)


def test_deleting_an_unknown_id_is_refused_like_langgraph() -> None:
    with pytest.raises(ValueError, match="doesn't exist"):
        ar.add_messages([HumanMessage("hi", id="1")], [RemoveMessage(id="9")])
    assert ar.REMOVE_ALL_MESSAGES == LG_REMOVE_ALL


def test_messages_state_in_a_graph() -> None:
    def reply(state: ar.MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"you said {state['messages'][-1].content}")]}

    g = ar.StateGraph(ar.MessagesState)
    g.add_node("reply", reply)
    g.add_edge(ar.START, "reply")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": "chat"}}
    app.invoke({"messages": [("user", "hello")]}, cfg)
    result = app.invoke({"messages": [{"role": "user", "content": "again"}]}, cfg)
    assert [m.type for m in result["messages"]] == ["human", "ai", "human", "ai"]
    assert result["messages"][-1].content == "you said again" and all(m.id for m in result["messages"])
