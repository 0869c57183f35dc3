"""`langgraph.constants` -> agent_runtime.types (and the stream tags of agent_runtime.streaming). As in
LangGraph, `Send` and `Interrupt` (moved to langgraph.types) and the now private constants still import
from here, with its deprecation warning."""

import importlib
import warnings
from typing import Any

from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.streaming import TAG_HIDDEN, TAG_NOSTREAM
from agent_runtime.types import END, START
from langgraph import _shim

__all__ = ["END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"]

_MOVED_TO_TYPES = ("Send", "Interrupt")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_TYPES:
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        from langgraph import types

        return getattr(types, name)
    value = getattr(importlib.import_module("langgraph._internal._constants"), name)
    if not isinstance(value, _shim.Missing):
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. This constant is now private and "
            "should not be used directly. Please let the LangGraph team know if you need this value.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
    return value
