"""Replay of recorded agent sessions: answer a request with the trace's next assistant message.

Traces are OpenAI-format sessions (`messages`, one JSON object a line, optionally gzipped); request k
of a session carries messages[:k]. The lookup keys on the NEWEST trace message present in the request,
so it survives what a gateway does to a history:
- cache_control marks and OpenAI <-> Anthropic conversion: only role, text and tool_call_id are keyed,
  with whitespace collapsed;
- compaction of OLDER messages: only the newest messages are looked at;
- an appended nudge message: the lookup walks back over the last `_LOOKBACK` turns to the newest one
  that matches a trace message.
Keys: a tool result by (tool_call_id, text hash), falling back to tool_call_id alone (a shortened
output); a user message by its text hash. Ids such as `call_3` repeat across sessions, so ties are broken
by how many of the request's texts the candidate session contains.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.sim.conversation import Turn, TurnKind, content_text
from gateway.traces import read_sessions

_LOOKBACK = 4  # turns examined from the end: a nudge or a split Anthropic message adds one or two


@dataclass(frozen=True)
class RecordedReply:
    text: str
    tool_calls: tuple[tuple[str, str, str], ...]  # (id, name, JSON arguments)


def _text_hash(text: str) -> str:
    normalized = " ".join(text.split())
    return hashlib.blake2b(normalized.encode(), digest_size=12).hexdigest()


def _keys(turn: Turn) -> list[tuple[str, ...]]:
    if turn.kind == "tool" and turn.tool_call_id:
        return [("tool", turn.tool_call_id, _text_hash(turn.text)), ("tool-id", turn.tool_call_id)]
    if turn.kind == "user":
        return [("user", _text_hash(turn.text))]
    return []


def _recorded(message: dict[str, Any]) -> RecordedReply:
    calls = tuple(
        (call["id"], call["function"]["name"], call["function"].get("arguments") or "{}")
        for call in message.get("tool_calls") or []
    )
    return RecordedReply(content_text(message.get("content")), calls)


class ReplayIndex:
    """Maps trace messages to the assistant message recorded right after them."""

    def __init__(self, path: Path) -> None:
        self._replies: dict[tuple[str, ...], list[tuple[int, RecordedReply]]] = defaultdict(list)
        self._session_texts: list[set[str]] = []
        for number, session in enumerate(read_sessions(path)):
            messages = session["messages"]
            self._session_texts.append({_text_hash(content_text(m.get("content"))) for m in messages})
            for message, following in itertools.pairwise(messages):
                if following.get("role") != "assistant":
                    continue
                role = message.get("role")
                if role not in ("tool", "user"):
                    continue
                kind: TurnKind = "tool" if role == "tool" else "user"
                turn = Turn(kind, content_text(message.get("content")), message.get("tool_call_id"))
                for key in _keys(turn):
                    self._replies[key].append((number, _recorded(following)))

    def lookup(self, turns: list[Turn]) -> RecordedReply | None:
        """The recorded answer to the newest trace message among the last turns, if any."""
        request_texts = {_text_hash(turn.text) for turn in turns}
        for turn in reversed(turns[-_LOOKBACK:]):
            for key in _keys(turn):
                candidates = self._replies.get(key)
                if candidates:
                    best = max(candidates, key=lambda c: len(self._session_texts[c[0]] & request_texts))
                    return best[1]
        return None
