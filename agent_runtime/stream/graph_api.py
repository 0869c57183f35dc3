"""`stream_events(version="v3")` / `astream_events(version="v3")` on compiled graphs, entrypoints and
Pregel graphs: the run streamed with `subgraphs=True` and `version="v2"` in the stream modes its
transformers need, each part pumped through a StreamMux of the built-in transformers, the graph's
`compile(transformers=...)` and the call's `transformers=`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from agent_runtime.constants import CONF
from agent_runtime.core.protocol import CONFIG_KEY_STREAM_MESSAGES_V2
from agent_runtime.engine.events import STREAM_MODES
from agent_runtime.engine.spec import config_namespace
from agent_runtime.stream.mux import StreamMux, TransformerFactory
from agent_runtime.stream.protocol import StreamTransformer
from agent_runtime.stream.run_stream import AsyncGraphRunStream, GraphRunStream
from agent_runtime.stream.transformers import LifecycleTransformer, SubgraphTransformer, ValuesTransformer

# v3 owns these: the stream modes come from the transformers, subgraphs are always streamed
_V3_OWNED_KWARGS = ("stream_mode", "subgraphs")
# passed to the inner stream even when not given, as LangGraph's v3 does (a stream() override sees them)
_V3_DEFAULTS: dict[str, Any] = {"interrupt_before": None, "interrupt_after": None, "control": None}


def normalize_stream_transformer_factories(specs: Sequence[Any] | None) -> list[TransformerFactory]:
    """Scope-aware factories (`factory(scope)`, e.g. a transformer class) from `transformers=`: a built
    instance cannot be cloned into subgraph scopes, so it is refused."""
    factories: list[TransformerFactory] = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got pre-built instance "
                f"{type(spec).__name__}. Pass the transformer class or a factory like "
                "`lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                f"stream_events(version='v3') transformers must be scope-aware callables, got {type(spec).__name__}."
            )
        factories.append(spec)
    return factories


def _builtin_factories() -> list[TransformerFactory]:
    from agent_runtime.stream.transformers.messages import MessagesTransformer  # needs langchain-core

    return [ValuesTransformer, MessagesTransformer, LifecycleTransformer, SubgraphTransformer]


def _check_v3_call(version: str, kwargs: dict[str, Any]) -> None:
    if version != "v3":
        # v1/v2 are LangChain's callback events: CompiledGraph.astream_events has them
        # (agent_runtime.streaming.events); langchain-core has no sync form
        raise NotImplementedError(
            f"stream_events(version={version!r}): agent_runtime streams v1/v2 events with astream_events only; "
            "use version='v3' for stream_events"
        )
    owned = [key for key in _V3_OWNED_KWARGS if key in kwargs]
    if owned:
        raise TypeError(
            f"stream_events(version='v3') / astream_events(version='v3') do not accept {', '.join(owned)}; v3 owns "
            "these (stream_mode is built from the transformer mux, subgraphs is forced True so nested namespaces "
            "flow through scoped muxes)."
        )


def _parent_ns(graph_config: dict[str, Any] | None, config: dict[str, Any] | None) -> tuple[str, ...]:
    """The checkpoint namespace the run streams under (the call's config over the graph's bound one):
    the projections take the events of that level as the run's own."""
    return config_namespace(config) or config_namespace(graph_config)


def _v3_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """The config of the run a v3 event stream opens: its "messages" mode emits v2 (content-block)
    events, which the MessagesTransformer reads (as LangGraph: the key is set by the v3 stream only)."""
    config = config or {}
    return {**config, CONF: {**config.get(CONF, {}), CONFIG_KEY_STREAM_MESSAGES_V2: True}}


def _graph_modes(mux: StreamMux) -> list[str]:
    """The stream modes the transformers need, among those this runtime streams."""
    return sorted(mux.required_stream_modes() & STREAM_MODES)


class StreamEventsAPI:
    """Mixed into CompiledGraph."""

    config: dict[str, Any] | None = None
    stream_transformers: tuple[TransformerFactory, ...] = ()  # compile(transformers=...)

    if TYPE_CHECKING:

        def stream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Iterator[Any]: ...
        def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...

    def _v3_mux(self, config: dict[str, Any] | None, transformers: Sequence[Any] | None, is_async: bool) -> StreamMux:
        factories = [
            *_builtin_factories(),
            *normalize_stream_transformer_factories(self.stream_transformers),
            *normalize_stream_transformer_factories(transformers),
        ]
        return StreamMux(factories=factories, scope=_parent_ns(self.config, config), is_async=is_async)

    def stream_events(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> GraphRunStream:
        """The run as a v3 run stream; iterating its projections runs the graph. `kwargs` go to
        `stream(...)` (context, durability, ...)."""
        _check_v3_call(version, kwargs)
        kwargs = {**_V3_DEFAULTS, **kwargs}
        mux = self._v3_mux(config, transformers, is_async=False)
        parts = self.stream(
            input, _v3_config(config), stream_mode=_graph_modes(mux), subgraphs=True, version="v2", **kwargs
        )
        return GraphRunStream(iter(parts), mux)

    def astream_events(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """`await graph.astream_events(input, version="v3")`: the async run stream."""
        _check_v3_call(version, kwargs)
        return self._astream_v3(input, config, transformers, {**_V3_DEFAULTS, **kwargs})

    async def _astream_v3(
        self, input: Any, config: dict[str, Any] | None, transformers: Sequence[Any] | None, kwargs: dict[str, Any]
    ) -> AsyncGraphRunStream:
        mux = self._v3_mux(config, transformers, is_async=True)
        parts = self.astream(
            input, _v3_config(config), stream_mode=_graph_modes(mux), subgraphs=True, version="v2", **kwargs
        )
        return AsyncGraphRunStream(parts.__aiter__(), mux)
