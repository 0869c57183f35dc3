"""LangGraph's low-level API (`langgraph.pregel`): `Pregel` and `NodeBuilder`, on the superstep engine.

```python
app = Pregel(
    nodes={"one": NodeBuilder().subscribe_only("a").do(lambda x: x + 1).write_to("b")},
    channels={"a": LastValue(int), "b": LastValue(int)},
    input_channels="a",
    output_channels="b",
)
app.invoke(1)  # -> 2
```

Nodes name the channels they read and write; there is no state schema and no edges. A node runs when
one of its trigger channels has a version it has not seen (the same rule as a StateGraph's nodes,
whose triggers are `branch:to:<node>` channels) and gets one channel's value (`subscribe_only`) or a
dict of the available values of several (`subscribe_to`, `read_from`). Input is written straight to
the input channels (no `__start__` task); `invoke` returns the output channel's value, or a dict of
the available output channels' values.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final, Self, TypedDict

from agent_runtime.channels import BaseChannel, EmptyChannelError, Topic
from agent_runtime.checkpoint.base import BaseCheckpointer
from agent_runtime.constants import RESERVED, TASKS
from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10, renamed_argument
from agent_runtime.core.schema import StateSchema
from agent_runtime.core.types import END, START, RetryPolicy, TimeoutPolicy
from agent_runtime.engine.algo import Task
from agent_runtime.engine.injection import is_runnable, node_callable
from agent_runtime.engine.loop import Run
from agent_runtime.engine.spec import GraphSpec, NodeSpec, is_async_callable, takes_config
from agent_runtime.engine.timeouts import sync_timeout_unsupported
from agent_runtime.pregel.compiled import CompiledGraph, OutputKeys, select_output

logger = logging.getLogger(__name__)

__all__ = ("ChannelWriteEntry", "NodeBuilder", "Pregel", "PregelNode")

PASSTHROUGH: Final = object()  # a write of the node's return value
_RESERVED_NAMES = frozenset({START, END, TASKS, *RESERVED})


@dataclass(frozen=True, slots=True)
class ChannelWriteEntry:
    """One write of a node: the return value (`value=PASSTHROUGH`), `mapper(return value)`, or a fixed
    value; with `skip_none`, a None is not written."""

    channel: str
    value: Any = PASSTHROUGH
    skip_none: bool = False
    mapper: Callable[[Any], Any] | None = None

    def write(self, result: Any) -> Any:
        value = result if self.value is PASSTHROUGH else self.value
        return self.mapper(value) if self.mapper is not None else value


@dataclass(frozen=True, slots=True)
class PregelNode:
    """A built node: what it reads (`channels`: one name or a list), what triggers it, the functions it
    runs in turn (`bound`; none: it passes its input on), and its writes. As LangGraph's, `bound` may be
    one function and `writers` more that run after it on its output (they join `bound`)."""

    channels: str | tuple[str, ...]
    triggers: tuple[str, ...]
    bound: tuple[Callable[..., Any], ...] = ()
    writes: tuple[ChannelWriteEntry, ...] = ()
    retry_policy: tuple[RetryPolicy, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timeout: TimeoutPolicy | None = None  # a number of seconds, a timedelta or a TimeoutPolicy, coerced
    writers: Sequence[Callable[..., Any]] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "timeout", TimeoutPolicy.coerce(self.timeout))
        bound = tuple(self.bound) if isinstance(self.bound, tuple | list) else (self.bound,)
        object.__setattr__(self, "bound", (*bound, *self.writers))
        object.__setattr__(self, "writers", ())  # folded into `bound` (a copy must not add them twice)

    def read_channels(self) -> tuple[str, ...]:
        return (self.channels,) if isinstance(self.channels, str) else self.channels


class NodeBuilder:
    """Builds a Pregel node: `NodeBuilder().subscribe_only("a").do(fn).write_to("b")`."""

    __slots__ = ("_bound", "_channels", "_metadata", "_retry", "_tags", "_timeout", "_triggers", "_writes")

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._bound: list[Callable[..., Any]] = []
        self._writes: list[ChannelWriteEntry] = []
        self._retry: list[RetryPolicy] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._timeout: TimeoutPolicy | None = None

    def subscribe_only(self, channel: str) -> Self:
        """Run when `channel` is updated, with its value as the input."""
        if self._channels:
            raise ValueError("Cannot subscribe to single channels when other channels are already subscribed to")
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> Self:
        """Run when any of `channels` is updated, with a dict of the available values (`read=False`:
        they trigger the node without being part of its input)."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot subscribe to channels when subscribed to a single channel")
        if read:
            self._channels.extend(channels)
        self._triggers.extend(channels)
        return self

    def read_from(self, *channels: str) -> Self:
        """Also read `channels` (they do not trigger the node)."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot read additional channels when subscribed to single channels")
        self._channels.extend(channels)
        return self

    def do(self, node: Callable[..., Any]) -> Self:
        """Run `node` on the input (or on the previous function's result); a LangChain Runnable works too."""
        self._bound.append(node)
        return self

    def write_to(self, *channels: str | ChannelWriteEntry, **kwargs: Any) -> Self:
        """Write the result to `channels`; `name=fn` writes `fn(result)`, `name=value` a fixed value."""
        self._writes.extend(ChannelWriteEntry(c) if isinstance(c, str) else c for c in channels)
        self._writes.extend(
            ChannelWriteEntry(k, mapper=v) if callable(v) else ChannelWriteEntry(k, value=v) for k, v in kwargs.items()
        )
        return self

    def meta(self, *tags: str, **metadata: Any) -> Self:
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> Self:
        self._retry.extend(policies)
        return self

    def set_timeout(self, timeout: float | timedelta | TimeoutPolicy | None) -> Self:
        """Time limits of each attempt of the node (its functions must be async)."""
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self) -> PregelNode:
        channels = self._channels if isinstance(self._channels, str) else tuple(self._channels)
        return PregelNode(
            channels=channels,
            triggers=tuple(self._triggers),
            bound=tuple(self._bound),
            writes=tuple(self._writes),
            retry_policy=tuple(self._retry),
            tags=tuple(self._tags),
            metadata=dict(self._metadata),
            timeout=self._timeout,
        )


def _runs_async(step: Any) -> bool:
    """Whether a step has async code of its own to run (a timeout needs it): an async function, or a
    LangChain Runnable made of them (a lambda with an async function, a binding, a parallel or a
    sequence of such)."""
    if is_async_callable(step):
        return True
    if not is_runnable(step):
        return False
    bound = getattr(step, "bound", None)
    if bound is not None:  # RunnableBinding (`.with_config(...)`)
        return _runs_async(bound)
    steps = getattr(step, "steps__", None)  # RunnableParallel
    if isinstance(steps, Mapping):
        return all(_runs_async(s) for s in steps.values())
    sequence = getattr(step, "steps", None)  # RunnableSequence
    if isinstance(sequence, list):
        return all(_runs_async(s) for s in sequence)
    if hasattr(step, "afunc"):  # RunnableLambda / RunnableCallable: an async function given or not
        return step.afunc is not None
    return False


def _step_function(name: str, step: Any, timed: bool) -> Callable[..., Any]:
    """`step` as the engine calls a node function: a Runnable through its `invoke`, or its `ainvoke`
    in a node with a timeout (which needs async code to cancel)."""
    if is_runnable(step):
        runnable = step
        if timed:

            async def ainvoke(value: Any, config: dict[str, Any]) -> Any:
                return await runnable.ainvoke(value, config)

            return ainvoke

        def invoke(value: Any, config: dict[str, Any]) -> Any:
            return runnable.invoke(value, config)

        return invoke
    return node_callable(name, step)


def _node_function(name: str, steps: tuple[Callable[..., Any], ...], timed: bool) -> Callable[..., Any]:
    """One function running `steps` in turn, each on the previous one's result (identity if none)."""
    if len(steps) == 1:
        return _step_function(name, steps[0], timed)
    functions = [(fn, takes_config(fn)) for fn in (_step_function(name, s, timed) for s in steps)]
    if any(is_async_callable(fn) for fn, _ in functions):

        async def run_async(value: Any, config: dict[str, Any]) -> Any:
            for fn, with_config in functions:
                value = fn(value, config) if with_config else fn(value)
                if inspect.isawaitable(value):
                    value = await value
            return value

        return run_async

    def run(value: Any, config: dict[str, Any]) -> Any:
        for fn, with_config in functions:
            value = fn(value, config) if with_config else fn(value)
        return value

    return run


def _writer(writes: tuple[ChannelWriteEntry, ...]) -> Callable[[Any], list[tuple[str, Any]]]:
    def write(result: Any) -> list[tuple[str, Any]]:
        out = [(entry.channel, entry.write(result)) for entry in writes]
        return [(c, v) for (c, v), entry in zip(out, writes, strict=True) if not (entry.skip_none and v is None)]

    return write


def _validate(
    nodes: Mapping[str, PregelNode], channels: Mapping[str, BaseChannel], input_channels: str | Sequence[str]
) -> None:
    """LangGraph's checks (pregel/_validate.py), with its messages."""
    for name in (*channels, *nodes):
        if name in _RESERVED_NAMES:
            raise ValueError(f"Channel or node name '{name}' is reserved")
    subscribed = {chan for node in nodes.values() for chan in node.triggers}
    for node in nodes.values():
        for chan in node.read_channels():
            if chan not in channels:
                raise ValueError(f"Channel '{chan}' read by a node not in 'channels'")
    for chan in subscribed:
        if chan not in channels:
            raise ValueError(f"Subscribed channel '{chan}' not in 'channels'")
    inputs = (input_channels,) if isinstance(input_channels, str) else tuple(input_channels)
    for chan in inputs:
        if chan not in channels:
            raise ValueError(f"Input channel '{chan}' not in 'channels'")
    if all(chan not in subscribed for chan in inputs):
        raise ValueError(f"None of the input channels {list(inputs)} are subscribed to by any node")


class PregelRun(Run):
    """A run of a Pregel graph: input and output are channel values, nodes read their channels."""

    graph: Pregel
    _outputs_at_start: tuple[int, ...] = ()

    def _first(self, has_checkpoint: bool) -> None:
        self._outputs_at_start = self._output_versions()
        super()._first(has_checkpoint)

    def _output_versions(self) -> tuple[int, ...]:
        outputs = self.graph.output_channels
        versions = self.state.versions
        return tuple(versions.get(c, 0) for c in ((outputs,) if isinstance(outputs, str) else outputs))

    def outputs_written(self) -> bool:
        """Whether this run wrote an output channel (else, as LangGraph, invoke returns None)."""
        return self._output_versions() != self._outputs_at_start

    def input_writes(self, value: Any) -> list[tuple[str, Any]]:
        inputs = self.graph.input_channels
        if isinstance(inputs, str):
            return [(inputs, value)]
        if not isinstance(value, dict):
            raise TypeError(f"Expected chunk to be a dict, got {type(value).__name__}")
        for key in value:
            if key not in inputs:
                logger.warning("Input channel %s not found in %s", key, inputs)
        return [(k, v) for k, v in value.items() if k in inputs]

    def task_input(self, task: Task) -> Any:
        if task.kind:  # a Send's argument
            return task.input
        node = self.graph.pregel_nodes[task.name]
        return self._read(node.channels)

    def _read(self, channels: str | Sequence[str]) -> Any:
        values = self.state.channels
        if isinstance(channels, str):
            try:
                return values[channels].get()
            except EmptyChannelError:
                return None
        return {c: values[c].get() for c in channels if values[c].is_available()}

    def output(self) -> Any:
        """The available values of the channels the graph shows (shape_output picks the output)."""
        return self._read(tuple(self.spec.schema.channels))


class Pregel(CompiledGraph):
    """A graph of nodes reading and writing named channels (LangGraph's `langgraph.pregel.Pregel`)."""

    run_class = PregelRun

    def __init__(
        self,
        *,
        nodes: Mapping[str, NodeBuilder | PregelNode],
        channels: Mapping[str, BaseChannel] | None,
        input_channels: str | Sequence[str],
        output_channels: str | Sequence[str],
        stream_channels: str | Sequence[str] | None = None,
        checkpointer: BaseCheckpointer | None = None,
        interrupt_before_nodes: Sequence[str] = (),
        interrupt_after_nodes: Sequence[str] = (),
        retry_policy: RetryPolicy | Sequence[RetryPolicy] = (),
        name: str = "LangGraph",
        store: Any = None,
        context_schema: type[Any] | None = None,
        step_timeout: float | None = None,
        **options: Any,
    ) -> None:
        context_schema = renamed_argument(
            options, "config_type", "context_schema", context_schema, LangGraphDeprecatedSinceV10
        )
        built = {n: node.build() if isinstance(node, NodeBuilder) else node for n, node in nodes.items()}
        channels = dict(channels or {})
        _validate(built, channels, input_channels)
        self.pregel_nodes = built
        self.input_channels = input_channels if isinstance(input_channels, str) else tuple(input_channels)
        self.output_channels = output_channels if isinstance(output_channels, str) else tuple(output_channels)
        # what the values / updates streams and get_state show: all channels unless given
        shown = (
            channels
            if stream_channels is None
            else (stream_channels,)
            if isinstance(stream_channels, str)
            else stream_channels
        )
        self.stream_channels = tuple(shown)
        default_retry = (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)
        super().__init__(
            self._spec(built, channels, default_retry),
            checkpointer=checkpointer,
            interrupt_before=tuple(interrupt_before_nodes),
            interrupt_after=tuple(interrupt_after_nodes),
            name=name,
            guard_rails=None,
        )
        self.store = store
        self.context_schema = context_schema
        self.step_timeout = step_timeout

    def _spec(
        self, nodes: Mapping[str, PregelNode], channels: Mapping[str, BaseChannel], retry: tuple[RetryPolicy, ...]
    ) -> GraphSpec:
        compiled = {name: ch.keyed(name) for name, ch in channels.items()}
        compiled[TASKS] = Topic(key=TASKS)
        specs: dict[str, NodeSpec] = {}
        trigger_to_nodes: dict[str, list[str]] = {}
        for name, node in nodes.items():
            if node.timeout is not None and not all(_runs_async(step) for step in node.bound):
                raise sync_timeout_unsupported(name)
            fn = _node_function(name, node.bound, node.timeout is not None) if node.bound else _passthrough
            specs[name] = NodeSpec(
                name=name,
                fn=fn,
                triggers=node.triggers,
                retry=node.retry_policy or retry,
                timeout=node.timeout,
                is_async=is_async_callable(fn),
                takes_config=takes_config(fn),
                writer=_writer(node.writes),
            )
            for chan in node.triggers:
                trigger_to_nodes.setdefault(chan, []).append(name)
        outputs = (self.output_channels,) if isinstance(self.output_channels, str) else self.output_channels
        # the "state" of a Pregel graph (values stream, updates, get_state): the stream and output channels
        shown = dict.fromkeys((*self.stream_channels, *outputs), Any)
        schema = StateSchema(TypedDict("PregelState", shown))  # type: ignore[misc, operator]
        return GraphSpec(
            schema=schema,
            channels=compiled,
            nodes=specs,
            trigger_to_nodes={c: tuple(sorted(n)) for c, n in trigger_to_nodes.items()},
            finishable=tuple(c for c, ch in compiled.items() if type(ch).finish is not BaseChannel.finish),
            step_sensitive=tuple(c for c, ch in compiled.items() if ch.STEP_SENSITIVE),
            consumable=frozenset(c for c, ch in compiled.items() if type(ch).consume is not BaseChannel.consume),
        )

    def io_channels(self) -> tuple[str | Sequence[str], str | Sequence[str]]:
        return self.input_channels, self.output_channels

    def result_of(self, run: Run, output_keys: OutputKeys | None = None) -> Any:
        """As a graph's, but None when the run wrote no output channel (it stopped before: LangGraph
        returns the last "values" chunk of the run, and there was none)."""
        assert isinstance(run, PregelRun)
        return super().result_of(run, output_keys) if run.outputs_written() else None

    def shape_output(self, output: Any, output_keys: OutputKeys | None = None) -> Any:
        """`invoke`'s result: the output channel's value (None if empty), or a dict of the available ones."""
        return select_output(output, self.output_channels if output_keys is None else output_keys)

    def stream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Iterator[Any]:
        """As a graph's, with LangGraph's default for Pregel: `stream_mode="values"`."""
        return super().stream(input, config, **{"stream_mode": "values", **kwargs})

    def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        return super().astream(input, config, **{"stream_mode": "values", **kwargs})


def _passthrough(value: Any) -> Any:
    return value
