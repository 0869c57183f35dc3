"""The volatile scan runs the combined pattern only over the runs of text that can hold a span (issue 28):
its spans and masks must be exactly those of the pattern run over the whole text (a window at a time
for long texts), on fuzzed text built from the pieces spans are made of and on recorded agent messages.
(Its speed is measured in bench/, not here: docs/prompt-cache.md.)"""

from __future__ import annotations

import random
import re

import orjson

from gateway.prompt_cache import volatile
from gateway.prompt_cache.volatile import OVERLAP, WINDOW, find_spans, mask
from gateway.traces import default_traces, read_sessions

# Pieces of every kind of span, the characters around them (JSON escapes, quotes, Unicode digits, letters
# and spaces) and near misses: random strings of them hold spans, partial spans and runs of all sizes.
PIECES = [
    *("2026", "11", "22", "18", "58", "123", "0", "9", "1763837924", "1763837924123", "e89b", "a456", "abcdef"),
    *("-", "T", " ", ":", ".", "Z", "+", "UTC", "/", ",", "_", "=", "\t", "\n", '"', "\\n", "{", "}", "(", "'"),
    *("Mon", "Sunday", "day", "Jan", "Nov", "Sept", "ember", "req", "request", "trace", "correlation", "call"),
    *("chatcmpl", "msg", "span", "run", "id", "ID", "x", "ab", "tool", "A1b2C3d4"),
    *("é", "µ", "\u0663", "\u00a0", "\x1c", "\u2028"),
]


def full_scan(text: str, pos: int, endpos: int) -> list[tuple[str, int, int]]:
    return [(m.lastgroup or "", m.start(), m.end()) for m in volatile._COMBINED.finditer(text, pos, endpos)]


def reference_spans(text: str) -> list[tuple[str, int, int]]:
    """The pattern over the whole text, or a window at a time as volatile.py documents for long texts."""
    if len(text) <= WINDOW:
        return full_scan(text, 0, len(text))
    spans: list[tuple[str, int, int]] = []
    position = 0
    while position < len(text):
        end = position + WINDOW
        found = [span for span in full_scan(text, position, min(end + OVERLAP, len(text))) if span[1] < end]
        spans += found
        position = max(end, found[-1][2]) if found else end
    return spans


def reference_mask(text: str) -> str:
    pieces, cursor = [], 0
    for kind, start, end in reference_spans(text):
        pieces += [text[cursor:start], f"<{kind}>"]
        cursor = end
    return "".join([*pieces, text[cursor:]])


def spans_of(text: str) -> list[tuple[str, int, int]]:
    return [(span.kind, span.start, span.end) for span in find_spans(text)]


def fuzzed(rng: random.Random, pieces: int) -> str:
    return "".join(rng.choice(PIECES) for _ in range(pieces))


def test_the_scan_finds_what_the_whole_pattern_finds_in_fuzzed_text() -> None:
    rng = random.Random(28)
    for _ in range(20_000):
        text = fuzzed(rng, rng.randint(0, 40))
        assert spans_of(text) == reference_spans(text), text
        assert mask(text) == volatile._COMBINED.sub(lambda m: f"<{m.lastgroup}>", text), text


def test_long_texts_are_scanned_a_window_at_a_time_as_before() -> None:
    rng = random.Random(11)
    for _ in range(4):
        text = fuzzed(rng, rng.randint(30_000, 60_000))
        assert len(text) > WINDOW
        assert spans_of(text) == reference_spans(text)
        assert mask(text) == reference_mask(text)


def test_recorded_agent_messages_mask_as_with_the_whole_pattern() -> None:
    for number, session in enumerate(read_sessions(default_traces())):
        for message in session["messages"]:
            text = orjson.dumps(message).decode()
            assert mask(text) == reference_mask(text)
        if number == 10:
            break


def test_the_run_classes_spelled_for_ascii_are_the_unicode_classes() -> None:
    inside = re.compile(f"[{volatile._INSIDE}]")
    ascii_inside = volatile._ASCII_RUNS[1]
    for code in range(128):
        char = chr(code)
        assert bool(inside.fullmatch(char)) == (ascii_inside.fullmatch(char) is not None), repr(char)
