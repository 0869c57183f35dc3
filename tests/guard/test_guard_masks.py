"""The quick checks in front of the result / argument masks and the wait heuristic skip a scan only where
it would find nothing: every text hashes as the masks applied unconditionally would, on the recorded
sessions' outputs and arguments and on texts made to sit on the checks' edges (label spellings, case,
characters that fold to ASCII letters under IGNORECASE)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from agent_runtime.guard import content_text
from agent_runtime.guard.steps import (
    _DURATION,
    _NONCE,
    _SPACE,
    _UUID,
    _VOLATILE_VALUE,
    _WAIT_ARGS,
    _WAIT_TOOL,
    _args_text,
    stable_args_text,
    stable_result_text,
    waits,
)
from tests.guard.test_guard_traces import TRACES, pytestmark, sessions  # noqa: F401 (skip w/o traces)

PIECES = [
    "pid", "PID", "Pid", "pgid", "chunk id", "Chunk ID", "process id", "wall time", "Wall Time", "elapsed",
    "elapsed time", "duration", "time taken", "took", "tooK", "toₖ", "request id", "trace id", "İD", "ıd",
    ": ", "=", " = ", ":", "\t", "\n", "\\n", " ", "  ", "12", "0.004", "3.5", "s", "ms", "µs", "sec", "secs",
    "seconds", "milliseconds", "ns", "us", "st", "123e4567-e89b-12d3-a456-426614174000", "DEADBEEF", "-abcd-",
    "deadbeefdeadbeef00", "1700000000", "٠١٢٣٤٥٦٧٨٩", "sleep", "ſleep", "SLEEP", "watch -n", "--watch",
    '"wait_s": 5', '"Delay": 1', '"poll_interval":', "interval", "x", "abc", '"', ",",
]  # fmt: skip


def made_texts(rng: random.Random, count: int) -> Iterator[str]:
    for _ in range(count):
        yield "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))


def recorded_texts() -> Iterator[str]:
    for session in sessions()[:40]:
        for message in session["messages"]:
            if message["role"] == "tool":
                yield content_text(message["content"])
            for call in message.get("tool_calls") or []:
                yield _args_text(call["function"]["arguments"])[0]


def every_mask(text: str) -> str:
    """``stable_result_text`` without its quick checks."""
    for mask, replacement in ((_VOLATILE_VALUE, r"\1#"), (_UUID, "#uuid"), (_DURATION, "#s")):
        text = mask.sub(replacement, text)
    return text


def every_args_mask(text: str) -> str:
    """``stable_args_text`` without its quick check."""
    text = _NONCE.sub("#", _UUID.sub("#", text))
    return _SPACE.sub(" ", text).replace('" ', '"').replace(' "', '"')


def test_quick_checks_never_skip_a_match() -> None:
    texts = [*recorded_texts(), *made_texts(random.Random(3), 20_000)]
    masked = 0
    for text in texts:
        assert stable_result_text(text) == every_mask(text), text
        assert stable_args_text(text) == every_args_mask(text), text
        assert waits("bash", text) == bool(_WAIT_ARGS.search(text)), text
        masked += stable_result_text(text) != text
    for tool in ("sleep", "wait_for_job", "bash", "ſleep"):
        assert waits(tool, "{}") == bool(_WAIT_TOOL.search(tool))
    assert masked > 1000  # the masks do act on these texts
