"""A session's request gets the facts of the messages it repeats from the bytes it shares with the session's
previous body (gateway/history/prefix.py): the same facts as serializing and hashing every message, on
recorded agent traces and on bodies built to mislead it, and only the new messages looked up."""

from __future__ import annotations

import gzip
import json
import random
from itertools import islice
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway.history.facts import FactMemo, MessageFacts
from gateway.history.prefix import SessionBodies
from gateway.history.view import HistoryView, RawHistory
from gateway.pacing import finish

TRACES = Path("/work/shared/data/agent-traces/swebench-dev.jsonl.gz")
FIELD = "messages"


class CountingMemo(FactMemo):
    """Counts the messages serialized and hashed to find their facts."""

    def __init__(self) -> None:
        super().__init__()
        self.lookups = 0

    def facts(self, data: bytes) -> MessageFacts:
        self.lookups += 1
        return super().facts(data)


class Session:
    """Requests as the gateway sees them: parsed from their bytes, the view built as RequestContext does."""

    def __init__(self, bodies: SessionBodies | None = None, tenant: str = "acme", session: str = "s1") -> None:
        self.bodies = bodies if bodies is not None else SessionBodies()
        self.memo = CountingMemo()
        self.scope = (tenant, session)

    def facts(self, raw: bytes) -> list[bytes]:
        """The digests the raw path finds, checked against the ordinary path's on the same parsed body."""
        body = orjson.loads(raw)
        history = body.get(FIELD) if isinstance(body, dict) else None
        messages = history if isinstance(history, list) else []
        view = HistoryView(self.memo, RawHistory.of(raw, body, FIELD), self.scope, self.bodies)
        found = [f.digest for f in finish(view.facts_steps(messages))]
        expected = [f.digest for f in finish(HistoryView(FactMemo()).facts_steps(messages))]
        assert found == expected
        return found


def _compact(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()  # what httpx sends


def _trace_sessions(count: int) -> list[dict[str, Any]]:
    if not TRACES.exists():
        pytest.skip("the recorded agent traces are not on this machine")
    with gzip.open(TRACES, "rt") as lines:
        return [json.loads(line) for line in islice(lines, count)]


def test_recorded_sessions_look_up_only_their_new_messages() -> None:
    bodies = SessionBodies()
    new_messages = lookups = requests = 0
    for number, trace in enumerate(_trace_sessions(4)):
        session = Session(bodies, session=f"s{number}")
        messages = trace["messages"]
        for count in range(2, len(messages) + 1, 2):
            session.facts(_compact({"model": "m", FIELD: messages[:count], "tools": trace["tools"], "stream": True}))
            new_messages += 2 if count > 2 else count
            requests += 1
        lookups += session.memo.lookups
    # Each message is serialized and hashed once per session (the ordinary path: every message, every turn).
    assert lookups == new_messages and requests > 50


def test_formatting_the_gateway_does_not_write_falls_back() -> None:
    """Spaces after separators, escaped non-ASCII, another key order: other bytes than the serialization,
    so the ordinary path answers (and the facts are still right)."""
    trace = _trace_sessions(1)[0]
    for dump in (
        lambda b: json.dumps(b).encode(),  # ", " and ": ", \\u escapes
        lambda b: json.dumps(b, indent=1).encode(),
        lambda b: _compact({FIELD: [dict(reversed(m.items())) for m in b[FIELD]]}),
    ):
        session = Session()
        for count in (2, 4, 6):
            session.facts(dump({"model": "m", FIELD: trace["messages"][:count]}))


def _turns() -> list[list[dict[str, Any]]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    turns = []
    for step in range(4):
        history = [*history, {"role": "assistant", "content": f"a{step}"}, {"role": "user", "content": f"r{step}"}]
        turns.append(history)
    return turns


def test_a_nested_copy_or_a_duplicate_key_never_stands_for_the_history() -> None:
    """A decoy array that serializes like the history (nested, or under a key the parser drops), and a
    later body that keeps the decoy's bytes while its real history differs: facts follow the parser."""
    turns = _turns()
    real = [{"role": "user", "content": "other"}, {"role": "assistant", "content": "text"}]
    compact = orjson.dumps
    session = Session()
    for history in turns:
        decoy = compact(history).decode()
        nested = f'{{"metadata":{{"x":{decoy}}},"messages":{json.dumps(real)}}}'.encode()
        assert session.facts(nested) == session.facts(nested)
        duplicated = f'{{"messages":{decoy},"messages":{compact(real).decode()}}}'.encode()
        session.facts(duplicated)
        session.facts(f'{{"messages":{compact(real).decode()},"messages":{decoy}}}'.encode())
        # The history proved once, then a duplicate key after it takes its place (as long, or shorter).
        for replaced in (real, [{"role": "user", "content": str(n)} for n in range(len(history))]):
            session.facts(f'{{"messages":{decoy},"x":1}}'.encode())
            session.facts(f'{{"messages":{decoy},"messages":{compact(replaced).decode()}}}'.encode())
        # Bytes that look like a boundary inside a string.
        tricky = [*history[:-1], {"role": "user", "content": '"},{"role":"user","content":"x"}],"messages":['}]
        session.facts(compact({FIELD: tricky}))


def test_sessions_and_tenants_keep_their_own_bodies() -> None:
    shared = SessionBodies()
    acme, globex = Session(shared, "acme", "s"), Session(shared, "globex", "s")
    first, second = _turns()[0], _turns()[1]
    acme.facts(orjson.dumps({FIELD: first}))
    other = [{"role": "user", "content": "globex's own"}, *second[1:]]
    globex.facts(orjson.dumps({FIELD: other}))
    acme.facts(orjson.dumps({FIELD: second}))
    assert acme.memo.lookups == len(second)  # its own previous body: only the new messages
    assert len(shared) == 2


def test_random_edits_and_formats_agree_with_the_ordinary_path() -> None:
    """Appends, edits, removals and truncations of the history, in the gateway's compact form or another,
    with other fields before and after it: whatever the bytes, the facts are the ordinary path's."""
    rng = random.Random(28)
    contents: list[Any] = ["x", "y", 1, 1.0, True, None, "é", "\u2028", [{"type": "text", "text": "t"}], {"a": [1]}]
    for round_number in range(30):
        session = Session(session=f"r{round_number}")
        history: list[dict[str, Any]] = []
        for _ in range(12):
            action = rng.choice(["append", "append", "append", "edit", "drop", "truncate"])
            if action == "append" or not history:
                history.append({"role": rng.choice(["user", "assistant"]), "content": rng.choice(contents)})
            elif action == "edit":
                history[rng.randrange(len(history))] = {"role": "user", "content": rng.choice(contents)}
            elif action == "drop":
                del history[rng.randrange(len(history))]
            else:
                history = history[: rng.randrange(len(history) + 1)]
            body: dict[str, Any] = {"model": "m", FIELD: list(history)}
            if rng.random() < 0.3:
                body["tools"] = [{"name": rng.choice(["a", "b"])}]
            raw = orjson.dumps(body) if rng.random() < 0.8 else json.dumps(body).encode()
            session.facts(raw)


def test_the_gateway_keeps_a_sessions_body_from_the_bytes_it_was_sent() -> None:
    """Through the real server: a session's request is parsed from its bytes and its body kept for the next."""
    from gateway.history.view import bodies
    from tests.gateway_harness import TENANT_KEYS, running_gateway

    session = f"raw-{random.randrange(1 << 30)}"
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": session}
    with running_gateway() as gw:
        client = gw.openai()
        for history in _turns()[:2]:
            client.chat.completions.create(model="gpt-4o-mini", messages=history, extra_headers=headers)  # type: ignore[arg-type]
    assert ("acme", session) in bodies
