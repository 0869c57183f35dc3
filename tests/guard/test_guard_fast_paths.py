"""The guard's fast paths decide exactly as the plain regexes they stand for (steps.py): whitespace collapsed
by str methods, nonces looked for only where a run of 9 hex digits is, the change patterns searched
alternative by alternative, the label and duration hints read backwards; and a parser's ``extends``
trusts the keys of the messages it was fed only as far as they were compared."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agent_runtime.guard import StepParser
from agent_runtime.guard import steps as s

PIECES = [
    *" \t\n\r\x0b\x0c\x1c\x85\xa0\u3000\\ntr\"'abcdefABCDEF0123456789xXsmuµecdoilk:=>&-/|;()._~$é",
    "\\n", "\\t", "\\\\n", "sed -i", "perl -pi", "git commit", "git  rm", "rm ", "mv", "cp\t", ">>", "> /dev/null",
    "2>&1", ">&2", "pip install", "npm add", "open('f', 'w')", ".write(", ".write_text(", "tee", "patch", "sleep 3",
    "watch -n", "id:", "ID =", "took = ", "Wall time: 3", "3 ms", "12s", "5 seconds", "2millisecond", "1 sec", "_s",
    "deadbeefdeadbeef", "123456789", "12345678", "٣٣٣٣٣٣٣٣٣", "ſleep", "toK:", "123e4567-e89b-12d3-a456-426614174000",
]  # fmt: skip


def texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 16))) for _ in range(count)]


def test_collapsed_whitespace_is_the_regex_substitution() -> None:
    for text in texts(30_000, 1):
        assert s._collapse_space(text) == s._SPACE.sub(" ", text), text


def test_the_nonce_hint_never_misses_a_nonce() -> None:
    for text in texts(30_000, 2):
        if s._NONCE.search(text):
            assert s._may_hold_nonce(text), text


def test_changes_searched_by_alternative_is_the_whole_pattern() -> None:
    for text in texts(30_000, 3):
        assert s.changes("bash", text) == bool(s._CHANGE_ARGS.search(text)), text


@pytest.mark.parametrize("seed", [4, 5])
def test_the_reversed_hints_are_the_forward_ones(seed: int) -> None:
    for text in texts(30_000, seed):
        assert s._has_duration(text) == bool(s._DURATION_HINT.search(text)), text
        if text.isascii():
            assert s._has_label(text) == bool(s._LABEL_END.search(text.lower())), text


def test_stable_texts_are_those_of_the_plain_regexes() -> None:
    def args_text(text: str) -> str:
        text = s._UUID.sub("#", text)
        return s._SPACE.sub(" ", s._NONCE.sub("#", text)).replace('" ', '"').replace(' "', '"')

    def result_text(text: str) -> str:
        if s._LABEL_END.search(text.lower()) if text.isascii() else s._LABEL_LETTER.search(text):
            text = s._VOLATILE_VALUE.sub(r"\1#", text)
        text = s._UUID.sub("#uuid", text)
        return s._DURATION.sub("#s", text)

    for text in texts(20_000, 6):
        assert s.stable_args_text(text) == args_text(text), text
        assert s.stable_result_text(text) == result_text(text), text


class Counted(dict[str, Any]):
    compared = 0

    def __eq__(self, other: object) -> bool:
        Counted.compared += 1
        return dict.__eq__(self, other) is True

    __hash__ = None  # type: ignore[assignment]


def conversation(n: int, edit: str = "") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [Counted(role="user", content="go")]
    for i in range(n):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "ls", "arguments": f'{{"p": {i}}}'}}
        out += [Counted(role="assistant", content="", tool_calls=[call]), Counted(role="tool", tool_call_id=f"c{i}")]
        out[-1]["content"] = f"out {i}{edit if i == 3 else ''}"
    return out


def test_equal_keys_vouch_for_the_messages_fed_without_comparing_them() -> None:
    parser = StepParser("openai")
    first = conversation(10)
    keys = [object() for _ in range(len(conversation(20)))]
    parser.feed(first, keys=keys[: len(first)])
    Counted.compared = 0
    assert parser.extends(conversation(20), 0, keys)
    assert Counted.compared == 0


def test_other_keys_fall_back_to_the_messages_then_vouch_from_where_they_were_compared() -> None:
    parser = StepParser("openai")
    parser.feed(conversation(10))  # no keys: every later check compares the messages
    keys = [object() for _ in range(len(conversation(20)))]
    assert not parser.extends(conversation(20, edit="!"), 0, keys)  # an edited past is not an extension
    Counted.compared = 0
    assert parser.extends(conversation(20), 5, keys)
    assert Counted.compared == 21 - 5
    Counted.compared = 0
    assert parser.extends(conversation(20), 5, keys)  # now the keys from 5 on vouch
    assert Counted.compared == 0
    assert not parser.extends(conversation(20, edit="!"), 0, keys)  # before 5 they were never compared


def test_a_changed_key_is_compared_by_content() -> None:
    parser = StepParser("openai")
    keys = [object() for _ in range(21)]
    parser.feed(conversation(10), keys=keys)
    other = [*keys[:7], object(), *keys[8:]]  # the same content under another key (e.g. re-serialized)
    assert parser.extends(conversation(10), 0, other)
    assert not parser.extends(conversation(10, edit="!"), 0, [object() for _ in range(21)])
