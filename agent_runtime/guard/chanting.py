"""Chanting: a model repeating the same text inside one streamed response.

``ChantDetector`` follows Gemini CLI's content-loop check: every 50-character window of the streamed
prose is tracked; when one window has appeared ``threshold`` (10) times, the last 10 occurrences lie at a
mean distance of at most ``max_mean_gap`` (250) characters, and the texts between consecutive occurrences
take at most ``max_distinct_gaps`` (5) distinct values (a true loop, not items sharing a prefix), the
stream is chanting, unless the occurrences lie closer than ``min_period`` (20) characters on average:
that is a short repeating pattern inside one run of text (``77.3333...`` to 64 digits, ``hahaha``, a
row of ``=``), not a model saying the same sentence over and over.

Structured text repeats legitimately, so it is never tracked: code fences (``` or ~~~, until closed),
list items, table rows, headings, block quotes and divider lines. Unlike Gemini CLI, structure is
recognised per *line* of the text, not per delta, so the result does not depend on how the provider
split the stream; entering a structured line also resets the tracking, so windows never span two
elements.

Usage: one detector per streamed response (call ``reset()`` at a tool call or a new response)::

    detector = ChantDetector()
    for delta in stream:
        if (detection := detector.feed(delta)) is not None:
            ...  # stop the stream; detection.reason is LOOP

Once tripped, ``feed`` keeps returning the same detection until ``reset()``.
"""

from __future__ import annotations

import re
from itertools import pairwise

from .detection import Detection, StopReason

__all__ = ["ChantDetector"]

_FENCE = re.compile(r"(?:```|~~~)")
# A line is structured if its start (after indentation) matches; decided once enough of it is seen.
_STRUCTURED = re.compile(r"[*+-]\s|\d{1,9}[.)]\s|\||#|>|[-=_*+|\u2500-\u257f]{3}")
_DECIDE_CHARS = 12
_LINE_PARTS = re.compile(r"(?<=\n)")


class ChantDetector:
    """Streaming chanting detector (see the module docstring)."""

    def __init__(
        self,
        *,
        chunk_size: int = 50,
        threshold: int = 10,
        max_mean_gap: int = 250,
        max_distinct_gaps: int = 5,
        min_period: int = 20,
    ) -> None:
        self.chunk_size = chunk_size
        self.threshold = threshold
        self.max_mean_gap = max_mean_gap
        self.max_distinct_gaps = max_distinct_gaps
        self.min_period = min_period
        # Occurrences further back than this can no longer be part of a tripping window.
        self._keep = max_mean_gap * (threshold - 1) + chunk_size
        self.reset()

    def reset(self) -> None:
        """Forget everything: a new response, or a tool call in between."""
        self.detection: Detection | None = None
        self._in_code = False
        self._line = ""  # the current line's text not yet classified
        self._line_state: str | None = None  # None: undecided; "prose" / "skip" once decided
        self._offset = 0  # characters fed so far (for Detection.start)
        self._clear_tracking()

    def _clear_tracking(self) -> None:
        self._text = ""  # tracked prose, self._base is the stream offset of its first character
        self._base = 0
        self._next = 0  # next window start (relative to self._base) to examine
        self._seen: dict[str, int | list[int]] = {}  # window -> where it starts (a list once it repeats)

    def feed(self, delta: str) -> Detection | None:
        """Add the next piece of streamed text; returns a detection once the stream chants."""
        if self.detection is not None:
            return self.detection
        for part in _LINE_PARTS.split(delta) if "\n" in delta else (delta,):
            if part:
                self._feed_line_part(part)
                self._offset += len(part)
            if self.detection is not None:
                break
        return self.detection

    def _feed_line_part(self, part: str) -> None:
        end = self._offset + len(part)
        ends_line = part.endswith("\n")
        if self._line_state is None:
            self._line += part
            head = self._line.lstrip()
            if not ends_line and len(head) < _DECIDE_CHARS:
                return
            self._decide(head)
            part, self._line = self._line, ""
        if self._line_state == "prose":
            self._track(part, end)
        if ends_line:
            self._line_state = None

    def _decide(self, head: str) -> None:
        if _FENCE.match(head):
            self._in_code = not self._in_code
            self._line_state = "skip"
        elif self._in_code or _STRUCTURED.match(head):
            self._line_state = "skip"
        else:
            self._line_state = "prose"
            return
        self._clear_tracking()

    def _track(self, text: str, end: int) -> None:
        """Track prose ``text``, which ends at stream offset ``end``."""
        if not self._text:
            self._base = end - len(text)
        self._text += text
        text, size, seen = self._text, self.chunk_size, self._seen
        seen_at = seen.get
        # The hot loop (one pass per streamed character): a new window is only remembered, by its position
        # alone (most windows never repeat: no list for them).
        for position in range(self._next, len(text) - size + 1):
            chunk = text[position : position + size]
            positions = seen_at(chunk)
            if positions is None:
                seen[chunk] = position
                continue
            if isinstance(positions, int):
                positions = seen[chunk] = [positions]
            if self._repeats(chunk, positions, position):
                break
        self._next = max(self._next, len(text) - size + 1)
        if len(text) > 2 * self._keep:
            self._trim()

    def _repeats(self, chunk: str, positions: list[int], position: int) -> bool:
        """Record another occurrence of ``chunk``; trips the detector when it is chanting."""
        positions.append(position)
        if len(positions) > self.threshold:
            del positions[0]
        if len(positions) < self.threshold:
            return False
        first, last = positions[0], positions[-1]
        mean_gap = (last - first) / (self.threshold - 1)
        if mean_gap > self.max_mean_gap or mean_gap < self.min_period:
            return False
        gaps = {self._text[a:b] for a, b in pairwise(positions)}
        if len(gaps) > self.max_distinct_gaps:
            return False
        span = last - first
        detail = f'the text "{chunk.strip()}" repeated {len(positions)} times within {span} characters'
        self.detection = Detection(StopReason.LOOP, "chanting", detail, len(positions), self._base + first)
        return True

    def _trim(self) -> None:
        """Drop tracked text older than any window that could still trip (bounded memory)."""
        cut = len(self._text) - self._keep
        self._text = self._text[cut:]
        self._base += cut
        self._next -= cut
        trimmed: dict[str, int | list[int]] = {}
        for chunk, positions in self._seen.items():
            if isinstance(positions, int):
                if positions >= cut:
                    trimmed[chunk] = positions - cut
                continue
            kept = [p - cut for p in positions if p >= cut]
            if kept:
                trimmed[chunk] = kept
        self._seen = trimmed
