"""The same incoming history gives byte-identical upstream bodies on every later turn."""

from __future__ import annotations

import json

from tests.compaction.conftest import sent_bodies
from tests.compaction.sessions import TOOLS_OPENAI, openai_history
from tests.gateway_harness import RunningGateway


def _send(gw: RunningGateway, steps: int, session: str) -> tuple[str, str]:
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="small",
        messages=openai_history(steps),
        tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        extra_headers={"x-session-id": session},
    )
    return raw.headers["x-cachegate-compaction"], json.dumps(sent_bodies(gw, 1)[0]["messages"])


def test_prefix_is_stable_between_compaction_events(gw: RunningGateway) -> None:
    previous: list[dict[str, object]] | None = None
    events = 0
    for steps in range(1, 30):
        action, sent_json = _send(gw, steps, "determinism")
        sent = json.loads(sent_json)
        if previous is not None and action in ("none", "reapplied"):
            # Nothing new was compacted: last turn's request is a byte-identical prefix of this one.
            assert json.dumps(sent[: len(previous)]) == json.dumps(previous)
        events += action in ("compacted", "summarized")
        previous = sent
    assert 0 < events < 29 // 2 + 2


def test_resending_a_history_sends_the_same_bytes(gw: RunningGateway) -> None:
    for steps in range(1, 22):
        _send(gw, steps, "resend")
    first = _send(gw, 21, "resend")
    again = _send(gw, 21, "resend")
    assert first == again and first[0] in ("reapplied", "compacted", "summarized")


def test_session_without_id_is_recognised_by_its_start(gw: RunningGateway) -> None:
    actions = []
    for steps in range(1, 16):
        raw = gw.openai().chat.completions.with_raw_response.create(
            model="small",
            messages=openai_history(steps, words=9),
            tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        )
        actions.append(raw.headers["x-cachegate-compaction"])
    assert "reapplied" in actions  # the record was found again without any session id


def test_streaming_requests_are_compacted_the_same_way(gw: RunningGateway) -> None:
    for steps in range(1, 12):
        _send(gw, steps, "stream-same")
    _, plain = _send(gw, 12, "stream-same")
    stream = gw.openai().chat.completions.create(
        model="small",
        messages=openai_history(12),
        tools=TOOLS_OPENAI,
        stream=True,  # type: ignore[arg-type]
        extra_headers={"x-session-id": "stream-same"},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)  # type: ignore[union-attr,attr-defined]
    assert json.dumps(sent_bodies(gw, 1)[0]["messages"]) == plain
