"""The transformers that project one stream mode of the run's own scope onto a channel of the same
name (`run.updates`, `run.custom`, `run.checkpoints`, `run.debug`, `run.tasks`; `run.values` adds the
run's output). Events of deeper subgraphs stay in the main log, and reach the subgraph handles'
own projections."""

from __future__ import annotations

from typing import Any, ClassVar

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer


class ScopedModeTransformer(StreamTransformer):
    """Pushes the data of each `mode` event at the transformer's scope onto `run.<mode>`; never
    suppresses an event. Native: the projection is an attribute of the run stream."""

    _native = True
    mode: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "mode" in cls.__dict__:
            cls.required_stream_modes = (cls.mode,)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list = list(scope)  # a list: compared with the events' `namespace` lists

    def init(self) -> dict[str, Any]:
        return {self.mode: self._log}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] == self.mode and event["params"]["namespace"] == self._scope_list:
            self._accept(event)
        return True

    def _accept(self, event: ProtocolEvent) -> None:
        self._log.push(event["params"]["data"])


class UpdatesTransformer(ScopedModeTransformer):
    """`run.updates`: each node's update, as `stream_mode="updates"`."""

    mode = "updates"


class CustomTransformer(ScopedModeTransformer):
    """`run.custom`: what the nodes wrote with `get_stream_writer()`."""

    mode = "custom"


class CheckpointsTransformer(ScopedModeTransformer):
    """`run.checkpoints`: the checkpoint payloads (none without a checkpointer)."""

    mode = "checkpoints"


class DebugTransformer(ScopedModeTransformer):
    """`run.debug`: the debug envelopes (step, timestamp, type, payload)."""

    mode = "debug"


class TasksTransformer(ScopedModeTransformer):
    """`run.tasks`: the task start and result payloads."""

    mode = "tasks"
