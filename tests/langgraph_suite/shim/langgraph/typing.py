"""`langgraph.typing`: LangGraph's type variables (typing only, no behaviour), so generic classes that
use them (langgraph-prebuilt, the tests) can be defined."""

from typing import Any, TypeVar

from langgraph import _shim

StateT = TypeVar("StateT")
StateT_co = TypeVar("StateT_co", covariant=True)
StateT_contra = TypeVar("StateT_contra", contravariant=True)
ContextT = TypeVar("ContextT")
ContextT_contra = TypeVar("ContextT_contra", contravariant=True)
InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")
NodeInputT = TypeVar("NodeInputT")
NodeInputT_contra = TypeVar("NodeInputT_contra", contravariant=True)
StateLike = Any

__getattr__ = _shim.module_getattr(__name__)
