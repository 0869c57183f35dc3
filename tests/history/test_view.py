"""A request's view answers a history it was asked for before without a lookup a message, and only for
the very same message objects (issue 28)."""

from __future__ import annotations

from typing import Any

from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.pacing import finish


def test_the_same_history_is_answered_again_and_another_is_looked_up() -> None:
    view = HistoryView(FactMemo())
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "one", "n": 1},
        {"role": "assistant", "content": "two"},
    ]
    first = finish(view.facts_steps(messages))
    again = finish(view.facts_steps(list(messages)))  # another list holding the same objects
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    # Equal content in another key order, or 1.0 for 1, is other bytes: other facts, never the remembered ones.
    reordered = [dict(reversed(list(messages[0].items()))), messages[1]]
    assert finish(view.facts_steps(reordered))[0] is not first[0]
    floated = [{"role": "user", "content": "one", "n": 1.0}, messages[1]]
    assert finish(view.facts_steps(floated))[0] is not first[0]
    longer = [*messages, {"role": "user", "content": "three"}]
    assert finish(view.facts_steps(longer))[:2] == first
