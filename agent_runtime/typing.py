"""`langgraph.typing`: the type variables of LangGraph's generic classes (typing only)."""

from typing import TypeVar

StateT = TypeVar("StateT")
StateT_co = TypeVar("StateT_co", covariant=True)
StateT_contra = TypeVar("StateT_contra", contravariant=True)
ContextT = TypeVar("ContextT")
InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")

__all__ = ["ContextT", "InputT", "OutputT", "StateT", "StateT_co", "StateT_contra"]
