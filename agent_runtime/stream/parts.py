"""`version="v2"` stream output: every chunk a `{"type": mode, "ns": namespace, "data": payload}` dict
whatever the stream modes and `subgraphs=`; a "values" part carries the interrupts in its own
`"interrupts"` field, and the state as an instance of a pydantic / dataclass schema (as LangGraph)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from agent_runtime.constants import INTERRUPT
from agent_runtime.core.types import START

Mapper = Callable[[dict[str, Any]], Any]


def schema_mapper(schema: Any) -> Mapper | None:
    """How v2 output shows a state dict: `schema(**values)` for a pydantic model or a dataclass; a
    TypedDict state stays a dict (None)."""
    if not inspect.isclass(schema):
        return None
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        return lambda values: schema(**values)
    return None


class PartShaper:
    """Turns a run's `(namespace, mode, payload)` events into v2 parts. `output` maps "values"
    payloads (the output schema), `state` the values inside checkpoint and debug payloads."""

    __slots__ = ("output", "state")

    def __init__(self, output: Mapper | None, state: Mapper | None) -> None:
        self.output = output
        self.state = state

    def part(self, ns: tuple[str, ...], mode: str, payload: Any) -> dict[str, Any]:
        """The v2 part of an event."""
        if mode == "values":
            interrupts: tuple[Any, ...] = ()
            if isinstance(payload, dict):
                if INTERRUPT in payload:
                    payload = dict(payload)
                    interrupts = tuple(payload.pop(INTERRUPT))
                if self.output is not None:
                    payload = self.output(payload)
            return {"type": mode, "ns": ns, "data": payload, "interrupts": interrupts}
        if mode in ("checkpoints", "debug") and self.state is not None:
            payload = self._with_state_values(mode, payload)
        return {"type": mode, "ns": ns, "data": payload}

    def _with_state_values(self, mode: str, payload: Any) -> Any:
        """A checkpoint payload (wrapped in a debug envelope or not) with its values mapped, except
        the input checkpoint's (before __start__ runs, not every channel has a value)."""
        assert self.state is not None
        envelope = payload
        if mode == "debug":
            if not isinstance(payload, dict) or payload.get("type") != "checkpoint":
                return payload
            payload = payload.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("values"), dict):
            return envelope
        if START in payload.get("next", ()):
            return envelope
        mapped = {**payload, "values": self.state(payload["values"])}
        return {**envelope, "payload": mapped} if mode == "debug" else mapped
