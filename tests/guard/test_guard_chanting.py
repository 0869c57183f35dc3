"""Streaming chanting detector: repeated prose trips, structured repetition does not."""

from __future__ import annotations

import random

import pytest

from agent_runtime.guard import ChantDetector, Detection, StopReason

CHANT = "I will now check the configuration file again to be sure. "
PROSE = (
    "The failure comes from the parser: it reads the header before the encoding is known, so a BOM "
    "at the start of the file shifts every offset by three bytes. Fixing the order of the two calls "
    "removes the shift; the tests that covered only ASCII input never saw it.\n"
)


def stream(text: str, seed: int = 0) -> list[str]:
    """Split ``text`` into random deltas, as a provider would."""
    rng = random.Random(seed)
    deltas, i = [], 0
    while i < len(text):
        size = rng.randint(1, 40)
        deltas.append(text[i : i + size])
        i += size
    return deltas


def run(text: str, seed: int = 0) -> Detection | None:
    detector = ChantDetector()
    for delta in stream(text, seed):
        detection = detector.feed(delta)
        if detection is not None:
            return detection
    return None


def test_chanting_trips_whatever_the_delta_boundaries() -> None:
    text = PROSE + CHANT * 30
    found = [run(text, seed) for seed in range(5)]
    assert all(d is not None and d.reason is StopReason.LOOP and d.detector == "chanting" for d in found)
    assert all(d is not None and d.start >= len(PROSE) for d in found)
    assert len({(d.start, d.detail) for d in found if d is not None}) == 1
    first = found[0]
    assert first is not None and first.count == 10 and "I will now check the configuration" in first.detail
    assert run(PROSE + CHANT * 9) is None


def test_detection_is_latched_until_reset() -> None:
    detector = ChantDetector()
    detection = detector.feed(CHANT * 20)
    assert detection is not None
    assert detector.feed("something else") is detection
    detector.reset()
    assert detector.feed(PROSE) is None


def test_normal_prose_does_not_trip() -> None:
    text = "".join(f"Step {i}: {PROSE}" for i in range(3))  # repeated paragraphs far apart
    assert run(text) is None


def test_code_block_repetition_does_not_trip() -> None:
    line = "assert parse(b'\\xef\\xbb\\xbfx') == 'x'  # same check again\n"
    assert run(PROSE + line * 40) is not None  # the same lines as prose are chanting
    assert run(PROSE + "```python\n" + line * 40 + "```\n" + PROSE) is None
    assert run(PROSE + "~~~\n" + line * 40 + "~~~\n" + PROSE) is None


def test_repeated_list_items_do_not_trip() -> None:
    line = "update the license header in the module file number 1\n"
    assert run(PROSE + line * 40) is not None
    items = "".join(f"- update the license header in the module file number {i % 3}\n" for i in range(40))
    numbered = "".join(f"{i}. update the license header in the module file\n" for i in range(40))
    assert run(PROSE + "\n" + items) is None
    assert run(PROSE + "\n" + numbered) is None


def test_repeated_table_rows_do_not_trip() -> None:
    row = "| src/parser.py | unchanged since the last run |\n"
    assert run(PROSE + row.strip("|") * 40) is not None
    table = "| file | status |\n|------|--------|\n" + row * 40
    assert run(PROSE + "\n" + table) is None


def test_prose_after_a_closed_code_block_is_tracked_again() -> None:
    code = "```\n" + "x = 1\n" * 5 + "```\n"
    assert run(PROSE + code + CHANT * 20) is not None


@pytest.mark.parametrize(
    "text",
    [
        "The average is 77." + "3" * 64 + ", so the limit holds; next I edit the parser. ",  # a repeating decimal
        "Reading the log: " + "ha" * 80 + " and that is the whole output of the joke command. ",
        "The banner prints " + "=*" * 60 + " around the title, then the usage text follows. ",
        "Checksum " + "0" * 200 + " is the empty file's, so nothing was written there. ",
    ],
)
def test_short_repeating_patterns_in_prose_are_not_chanting(text: str) -> None:
    assert run(PROSE + text + PROSE) is None


def test_a_repeated_short_sentence_still_chants() -> None:
    assert run(PROSE + "Let me try that again. " * 30) is not None  # 23 characters a repeat
