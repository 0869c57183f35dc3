"""Chanting in a response's text: a stream observer that cuts the stream, and the same check on a body.

Both feed the text in the same pieces a stream would deliver, so a streamed and a non-streamed answer
are cut at about the same place (the end of the delta that tripped the detector).
"""

from __future__ import annotations

from agent_runtime.guard import ChantDetector, Detection
from gateway.config.guard import ChantingConfig

PIECE_CHARS = 64  # the size of the deltas the gateway itself replays


def detector(config: ChantingConfig) -> ChantDetector:
    return ChantDetector(
        chunk_size=config.chunk_size,
        threshold=config.threshold,
        max_mean_gap=config.max_mean_gap,
        max_distinct_gaps=config.max_distinct_gaps,
        min_period=config.min_period,
    )


class ChantObserver:
    """A ctx.stream_observers entry: True (cut the stream) once the text chants, if cutting is allowed."""

    def __init__(self, config: ChantingConfig, cut: bool) -> None:
        self._detector = detector(config)
        self.cut = cut

    @property
    def detection(self) -> Detection | None:
        return self._detector.detection

    def __call__(self, delta: str) -> bool:
        return self._detector.feed(delta) is not None and self.cut


def chant_cut(config: ChantingConfig, text: str) -> tuple[int, Detection] | None:
    """Where a complete text would have been cut for chanting (its kept length), or None."""
    # ``threshold`` windows of ``chunk_size`` characters, starting at least ``min_period`` (and 1) apart on
    # average, do not fit in a shorter text: most answers (a tool call, a short reply) skip the detector.
    if len(text) < config.chunk_size + (config.threshold - 1) * max(config.min_period, 1):
        return None
    chant = detector(config)
    for start in range(0, len(text), PIECE_CHARS):
        found = chant.feed(text[start : start + PIECE_CHARS])
        if found is not None:
            return start + PIECE_CHARS, found
    return None
