"""A body's other top-level values (tools, a system prompt) have facts like its messages (gateway/history/
view.py `part_facts`): the facts of their content in their field, found with no serialization when the
session's previous body had the same bytes around its history, and looked up again whenever anything
there changed (issue 28: an agent CLI sends tens of kilobytes of them, unchanged, on every request)."""

from __future__ import annotations

import json
from typing import Any

import orjson

from gateway.history.facts import FactMemo, MessageFacts, content_digest
from gateway.history.prefix import SessionBodies
from gateway.history.view import HistoryView, RawHistory
from gateway.pacing import finish

TOOLS = [
    {"name": "Bash", "description": "Runs a shell command. " * 200, "input_schema": {"type": "object"}},
    {"name": "Read", "description": "Reads a file. " * 200, "input_schema": {"type": "object"}},
]
SYSTEM = [{"type": "text", "text": "You are a coding agent. " * 300}]


class CountingMemo(FactMemo):
    """Counts the values serialized and hashed to find their facts, by kind ("" for messages)."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: list[bytes] = []

    def facts(self, data: bytes, kind: bytes = b"") -> MessageFacts:
        self.kinds.append(kind)
        return super().facts(data, kind)


def expected(field: str, value: Any) -> bytes:
    """The facts' digest when the value is serialized: its content, in its field."""
    return content_digest(orjson.dumps(value), f"part:{field}".encode())


class Session:
    """Requests of one session as the gateway sees them: parsed from their bytes, one view each."""

    def __init__(self, memo: CountingMemo, bodies: SessionBodies, session: str | None = "s1") -> None:
        self.memo, self.bodies, self.session = memo, bodies, session

    def request(self, body: dict[str, Any]) -> tuple[HistoryView, dict[str, Any]]:
        raw = json.dumps(body, separators=(",", ":")).encode()  # compact, as the SDKs send
        parsed = orjson.loads(raw)
        scope = ("acme", self.session) if self.session else None
        view = HistoryView(self.memo, RawHistory.of(raw, parsed, "messages"), scope, self.bodies)
        finish(view.facts_steps(parsed["messages"]))  # the parse stage's lookup comes first
        return view, parsed

    def parts(self, body: dict[str, Any]) -> tuple[MessageFacts, MessageFacts]:
        """The request's tools' and system's facts, checked against serializing them."""
        view, parsed = self.request(body)
        tools, system = view.part_facts("tools", parsed["tools"]), view.part_facts("system", parsed["system"])
        assert tools.digest == expected("tools", parsed["tools"])
        assert system.digest == expected("system", parsed["system"])
        assert view.part_facts("tools", parsed["tools"]) is tools  # asked again: the same, no lookup
        return tools, system


def turns(count: int, tools: list[Any] = TOOLS) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug"}]
    bodies = []
    for step in range(count):
        history = [
            *history,
            {"role": "assistant", "content": f"step {step}"},
            {"role": "user", "content": f"ok {step}"},
        ]
        bodies.append({"model": "m", "system": SYSTEM, "messages": history, "tools": tools, "stream": True})
    return bodies


def test_a_session_serializes_its_parts_once() -> None:
    memo, bodies = CountingMemo(), SessionBodies()
    session = Session(memo, bodies)
    found = {session.parts(body) for body in turns(6)}
    assert len(found) == 1  # the same facts objects on every request
    assert memo.kinds.count(b"part:tools") == 1 and memo.kinds.count(b"part:system") == 1


def test_changed_parts_are_looked_up_again() -> None:
    """A tool added mid-session (an MCP server connected): the bytes around the history differ, so the
    previous body vouches for nothing there; the new tools' facts are their own, then kept again."""
    memo, bodies = CountingMemo(), SessionBodies()
    session = Session(memo, bodies)
    more = [*TOOLS, {"name": "mcp__search", "description": "Searches.", "input_schema": {"type": "object"}}]
    first = session.parts(turns(2)[0])
    later = turns(6, more)
    changed = session.parts(later[1])
    assert changed[0] is not first[0] and changed[0].digest != first[0].digest
    assert changed[1] is first[1]  # the system's content did not change: the memo's entry
    assert session.parts(later[2]) == changed and session.parts(later[3]) == changed
    assert memo.kinds.count(b"part:tools") == 2 and memo.kinds.count(b"part:system") == 2


def test_values_not_parsed_from_the_body_are_serialized() -> None:
    """A value a stage made (a copy, the retrieval tool added) is looked up by its own content; the same
    content in another field is another entry."""
    memo, bodies = CountingMemo(), SessionBodies()
    session = Session(memo, bodies)
    for body in turns(2):
        view, parsed = session.request(body)
        view.part_facts("tools", parsed["tools"])
        made = [*parsed["tools"], {"name": "retrieve", "input_schema": {"type": "object"}}]
        assert view.part_facts("tools", made).digest == expected("tools", made)
        copy = orjson.loads(orjson.dumps(parsed["tools"]))
        assert view.part_facts("tools", copy).digest == expected("tools", copy)
        assert view.part_facts("system", parsed["tools"]).digest == expected("system", parsed["tools"])
    assert memo.kinds.count(b"part:tools") == 1 + 2 * 2  # the body's once, the made and the copy each time


def test_requests_without_a_session_look_their_parts_up() -> None:
    memo = CountingMemo()
    session = Session(memo, SessionBodies(), session=None)
    found = {session.parts(body) for body in turns(3)}
    assert len(found) == 1  # by content: the same entries
    assert memo.kinds.count(b"part:tools") == 3
