# Copied verbatim from https://github.com/langchain-ai/langgraph (langgraph 1.2.24),
# libs/langgraph/tests/test_managed_values.py; Copyright (c) 2024 LangChain, Inc.; MIT License, see
# tests/langgraph_suite/LICENSE. Source and provenance: tests/langgraph_suite/README.md.
from typing_extensions import NotRequired, Required, TypedDict

from langgraph.graph import StateGraph
from langgraph.managed import RemainingSteps


class StatePlain(TypedDict):
    remaining_steps: RemainingSteps


class StateNotRequired(TypedDict):
    remaining_steps: NotRequired[RemainingSteps]


class StateRequired(TypedDict):
    remaining_steps: Required[RemainingSteps]


def test_managed_values_recognized() -> None:
    graph = StateGraph(StatePlain)
    assert "remaining_steps" in graph.managed

    graph = StateGraph(StateNotRequired)
    assert "remaining_steps" in graph.managed

    graph = StateGraph(StateRequired)
    assert "remaining_steps" in graph.managed
