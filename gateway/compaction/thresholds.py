"""Token thresholds of one request: fractions of the model's context window or absolute counts."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gateway.config import ModelConfig
from gateway.config.compaction import CompactionConfig


@lru_cache(maxsize=256)
def _model_map_window(model_key: str) -> int | None:
    import litellm

    entry = litellm.model_cost.get(model_key)
    if entry is None and "/" in model_key:
        entry = litellm.model_cost.get(model_key.split("/", 1)[1])
    window = (entry or {}).get("max_input_tokens")
    return int(window) if window else None


def context_window(route: ModelConfig, default: int) -> int:
    """The route's override, else LiteLLM's max_input_tokens for the model, else `default`."""
    if route.context_window:
        return route.context_window
    return _model_map_window(route.pricing_model or route.litellm_model) or default


def resolve(value: float, window: int) -> int:
    """A threshold in tokens: values <= 1 are fractions of the window, larger ones token counts."""
    return int(value * window) if value <= 1 else int(value)


_KNOWN: dict[tuple[int, int], tuple[CompactionConfig, Thresholds]] = {}
KNOWN_MAX = 256  # policies are computed once each (Services.policy_for): a handful of configs


@dataclass(frozen=True, slots=True)
class Thresholds:
    window: int
    compact_trigger: int
    compact_target: int
    clear_at_least: int
    summarize_trigger: int
    summarize_keep: int
    shrink_at: int

    @classmethod
    def of(cls, config: CompactionConfig, window: int) -> Thresholds:
        return cls(
            window=window,
            compact_trigger=resolve(config.compact_trigger, window),
            compact_target=resolve(config.compact_target, window),
            clear_at_least=resolve(config.clear_at_least, window),
            summarize_trigger=resolve(config.summarize_trigger, window),
            summarize_keep=resolve(config.summarize_keep, window),
            shrink_at=resolve(config.shrink_tool_result_at, window),
        )

    @classmethod
    def for_request(cls, config: CompactionConfig, window: int) -> Thresholds:
        """`of`, remembered per config object (policies are shared by the requests they apply to)."""
        known = _KNOWN.get((id(config), window))
        if known is not None and known[0] is config:  # the same object, not one that reused its id
            return known[1]
        if len(_KNOWN) >= KNOWN_MAX:
            _KNOWN.clear()
        found = _KNOWN[(id(config), window)] = (config, cls.of(config, window))
        return found[1]
