"""The latency model: cached input is cheap, decode time grows with output, scale 0 is instant."""

from __future__ import annotations

from gateway.sim.latency import decode_time, time_to_first_token
from gateway.sim.settings import LatencySettings, SimSettings


def test_realistic_ttft_grows_with_uncached_tokens_only_a_tenth_for_cached() -> None:
    latency = SimSettings.realistic().latency
    cold = time_to_first_token(latency, uncached_tokens=20000, cached_tokens=0)
    warm = time_to_first_token(latency, uncached_tokens=200, cached_tokens=19800)
    assert cold > 2.0 and warm < cold / 4
    assert decode_time(latency, 200) > decode_time(latency, 20) > 0


def test_default_settings_are_instant() -> None:
    latency = LatencySettings()
    assert time_to_first_token(latency, 50000, 0) == 0.0 and decode_time(latency, 5000) == 0.0
