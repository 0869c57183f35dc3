"""Message validation answers the usual valid shapes without spelling a path (gateway/wire/openai.py and
anthropic.py `_valid_message`), and sends anything else to the checks that name the failure. The two must
agree: every message the fast test accepts, the detailed checks accept too (else a malformed message would
reach the stages and the provider), and the other way round (else a valid one would cost the slow walk).
Checked on every one-field mutation of messages of each role and block kind."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway.errors import GatewayError
from gateway.wire import anthropic, openai

WRONG_VALUES: list[Any] = [None, 0, 1.5, True, "x", [], {}, [{}], [{"type": 1}], {"type": "text"}]
MISSING = object()

OPENAI_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "c2", "type": "custom", "custom": {"name": "patch", "input": "diff"}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    {"role": "function", "name": "f", "content": None},
]

ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "text", "text": "running"},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a.py"}]},
            {"type": "tool_result", "tool_use_id": "t2", "content": "plain"},
            {"type": "tool_result", "tool_use_id": "t3"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
        ],
    },
]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and index path inside a message."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*path, key)
        yield from _paths(child, (*path, key))


def _mutations(message: dict[str, Any]) -> Iterator[Any]:
    """The message, then each field replaced by each wrong value or removed, then wrong whole messages."""
    yield message
    for path in list(_paths(message)):
        for value in [*WRONG_VALUES, MISSING]:
            mutated = copy.deepcopy(message)
            parent = mutated
            for key in path[:-1]:
                parent = parent[key]
            if value is MISSING:
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
            yield mutated
    yield from WRONG_VALUES


def _passes(check: Callable[[int, Any], Any], message: Any) -> bool:
    try:
        check(0, message)
    except GatewayError:
        return False
    return True


@pytest.mark.parametrize(
    ("fast", "detailed", "messages"),
    [
        (openai._valid_message, openai._check_message, OPENAI_MESSAGES),
        (anthropic._valid_message, anthropic._check_message, ANTHROPIC_MESSAGES),
    ],
    ids=["openai", "anthropic"],
)
def test_the_fast_test_and_the_detailed_checks_agree(
    fast: Callable[[Any], bool], detailed: Callable[[int, Any], Any], messages: list[dict[str, Any]]
) -> None:
    checked = 0
    for message in messages:
        for variant in _mutations(message):
            assert fast(variant) == _passes(detailed, variant), variant
            checked += 1
    assert checked > 300


def test_a_bad_field_deep_in_a_long_history_is_still_named() -> None:
    turn: list[dict[str, Any]] = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "done"},
    ]
    messages = [copy.deepcopy(message) for _ in range(40) for message in turn]
    messages[58]["tool_calls"][0]["function"]["name"] = 7
    with pytest.raises(GatewayError) as raised:
        openai.OpenAIChat().validate({"model": "m", "messages": messages})
    assert raised.value.message == "messages[58].tool_calls[0].function.name: expected a string, got an integer."
    assert raised.value.param == "messages[58].tool_calls[0].function.name"
