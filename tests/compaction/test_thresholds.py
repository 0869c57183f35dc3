"""Threshold arithmetic: fractions of the context window or absolute tokens, windows from the model map."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.compaction.thresholds import Thresholds, context_window, resolve
from gateway.compaction.tokens import counter_for, encoding_name
from gateway.config import ModelConfig
from gateway.config.compaction import CompactionConfig


def test_fraction_or_absolute() -> None:
    assert resolve(0.5, 200_000) == 100_000
    assert resolve(1.0, 32_000) == 32_000
    assert resolve(90_000, 200_000) == 90_000


def test_defaults_on_a_128k_window() -> None:
    t = Thresholds.of(CompactionConfig(), 128_000)
    assert (t.compact_trigger, t.compact_target, t.summarize_trigger) == (64_000, 44_800, 102_400)
    assert t.compact_target < t.compact_trigger < t.summarize_trigger < t.window
    assert t.clear_at_least == 12_800 and t.summarize_keep == 32_000 and t.shrink_at == 19_200


def test_absolute_overrides_mix_with_fractions() -> None:
    config = CompactionConfig(compact_trigger=100_000, compact_target=60_000, summarize_trigger=0.9)
    t = Thresholds.of(config, 200_000)
    assert (t.compact_trigger, t.compact_target, t.summarize_trigger) == (100_000, 60_000, 180_000)


def test_window_from_model_map_override_and_default() -> None:
    route = ModelConfig(name="m", provider="openai", model="gpt-4o-mini")
    assert context_window(route, 1) == 128_000
    claude = ModelConfig(name="c", provider="anthropic", model="claude-sonnet-4-5")
    assert context_window(claude, 1) == 200_000
    assert context_window(route.model_copy(update={"context_window": 32_000}), 1) == 32_000
    unknown = ModelConfig(name="u", provider="openai", model="no-such-model-xyz")
    assert context_window(unknown, 77_000) == 77_000


def test_target_must_be_below_trigger() -> None:
    with pytest.raises(ValidationError):
        CompactionConfig(compact_trigger=0.5, compact_target=0.6)
    with pytest.raises(ValidationError):
        CompactionConfig(summarize_trigger=0.3, summarize_keep=0.4)


def test_encodings_and_counts() -> None:
    assert encoding_name("openai", "gpt-4o-mini") == "o200k_base"
    assert encoding_name("openai", "gpt-4") == "cl100k_base"
    assert encoding_name("anthropic", "claude-sonnet-4-5") == "cl100k_base"  # stated approximation
    counter = counter_for("openai", "gpt-4o-mini")
    assert counter.text("hello world") == 2
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:..."}}]}
    assert counter.message(image) >= 1000
