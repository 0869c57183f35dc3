"""Steps: canonical hashing, the error heuristic, and both conversation parsers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_runtime.guard import (
    MessageParts,
    StepKind,
    StepParser,
    canonical_json,
    looks_like_error,
    make_text_step,
    make_tool_step,
    message_parts,
    steps_from_anthropic_messages,
    steps_from_openai_messages,
)


def test_canonical_json_sorts_keys_without_whitespace() -> None:
    assert canonical_json({"b": [1, {"d": 2, "c": 3}], "a": "é"}) == '{"a":"é","b":[1,{"c":3,"d":2}]}'


def test_args_given_as_dict_or_any_json_string_are_the_same_call() -> None:
    as_dict = make_tool_step("edit", {"path": "a.py", "line": 3}, "ok")
    as_text = make_tool_step("edit", '{ "line": 3,\n  "path": "a.py" }', "ok")
    assert as_dict.key == as_text.key
    assert as_dict.kind is StepKind.TOOL_CALL
    assert make_tool_step("edit", {"path": "b.py", "line": 3}, "ok").key != as_dict.key


def test_unparsable_args_are_malformed_and_hashed_as_text() -> None:
    broken = make_tool_step("bash", '{"command": "ls', "x")
    assert broken.kind is StepKind.MALFORMED
    assert broken.args_hash == make_tool_step("bash", '{"command": "ls', "y").args_hash
    assert broken.args_hash != make_tool_step("bash", '{"command": "pwd', "x").args_hash
    assert make_tool_step(None, {}, "x").kind is StepKind.MALFORMED
    assert make_tool_step("apply_patch", "*** Begin Patch", "ok", freeform=True).kind is StepKind.TOOL_CALL


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [65, 900, 5000, 100_000])
def test_deeply_nested_args_are_opaque_never_a_recursion_error(depth: int) -> None:
    text = "[" * depth + "]" * depth
    step = make_tool_step("bash", text, "ok")
    assert step.kind is StepKind.TOOL_CALL and step == make_tool_step("bash", text, "ok")
    assert step.args_hash != make_tool_step("bash", "[" * (depth + 1) + "]" * (depth + 1), "ok").args_hash
    steps = steps_from_openai_messages(
        [
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "bash", "arguments": text}}]},
            {"role": "tool", "tool_call_id": "c", "content": [{"type": "image", "data": nested(min(depth, 3000))}]},
        ]
    )
    assert [s.kind for s in steps] == [StepKind.TOOL_CALL]


def test_deep_values_serialise_like_shallow_ones() -> None:
    value = {"b": [1, {"d": None, "c": True}], "a": ("é", 2.5)}
    deep = nested(100)
    assert canonical_json(value) == '{"a":["é",2.5],"b":[1,{"c":true,"d":null}]}'
    assert canonical_json(deep) == "[" * 100 + "]" * 100
    assert make_tool_step("t", {"x": deep}).kind is StepKind.TOOL_CALL


def test_no_args_and_empty_string_args_are_equal() -> None:
    assert make_tool_step("now", None).args_hash == make_tool_step("now", "").args_hash


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<returncode>1</returncode>\n<output>\n</output>", True),
        ("<returncode>0</returncode>\n<output>\nError: in a file we printed\n</output>", False),
        ("building...\nExit code: 2", True),
        ("Exit code: 0\nall good", False),
        ("[Command finished with exit code 137]", True),
        ("Traceback (most recent call last):\n  File x", True),
        ("Error: no such file", True),
        ("error executing tool read_file", True),
        ("fatal: not a git repository", True),
        ("Errors found: 0", False),
        ("10 passed in 0.2s", False),
        ("", False),
    ],
)
def test_error_heuristic(text: str, expected: bool) -> None:
    assert looks_like_error(text) is expected


def test_explicit_error_flag_wins_over_heuristic() -> None:
    assert make_tool_step("t", {}, "all fine", is_error=True).is_error
    assert not make_tool_step("t", {}, "Error: expected by the test", is_error=False).is_error


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_openai_parallel_calls_pair_results_by_id_and_ignore_ids_in_identity() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [_call("c1", "read", {"path": "a"}), _call("c2", "read", {"path": "b"})],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "B"},
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
        {"role": "assistant", "content": None, "tool_calls": [_call("zz", "read", {"path": "a"})]},
        {"role": "tool", "tool_call_id": "zz", "content": [{"type": "text", "text": "A"}]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": ""},
    ]
    steps = steps_from_openai_messages(messages)
    assert [s.kind for s in steps] == [StepKind.TOOL_CALL] * 3 + [StepKind.TEXT, StepKind.EMPTY]
    assert steps[0].key == steps[2].key  # same call, same result, different ids
    assert steps[1].result_hash == make_tool_step("read", {"path": "b"}, "B").result_hash
    assert steps[0].text_hash is not None and steps[2].text_hash is None
    assert steps[3] == make_text_step("Done.", "thanks")
    assert steps[0].summary == 'read {"path":"a"}'


def test_openai_result_flags_legacy_function_call_and_pending_call() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "boom", "is_error": True},
        {"role": "assistant", "content": None, "tool_calls": [_call("c", "g", {})]},
        {"role": "tool", "tool_call_id": "c", "content": "x", "status": "error"},
        {"role": "assistant", "content": None, "tool_calls": [_call("d", "h", {})]},
    ]
    first, second, pending = steps_from_openai_messages(messages)
    assert first.tool == "f" and first.is_error
    assert second.is_error
    assert pending.result_hash is None and not pending.is_error


def test_openai_custom_tool_call_input_is_free_text() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "patch", "input": "not json"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    (step,) = steps_from_openai_messages(messages)
    assert step.kind is StepKind.TOOL_CALL and step.tool == "patch"


def test_anthropic_tool_use_and_tool_result_with_is_error() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "Running tests."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "a.py"}]},
                {"type": "tool_result", "tool_use_id": "t1", "content": "1 failed", "is_error": True},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Tests fail."}]},
        {"role": "user", "content": "try again"},
    ]
    pytest_step, ls_step, text = steps_from_anthropic_messages(messages)
    assert pytest_step.is_error and not ls_step.is_error
    assert pytest_step.key == make_tool_step("bash", '{"command":"pytest"}', "1 failed").key
    assert text == make_text_step("Tests fail.", "try again")


def test_anthropic_and_openai_agree_on_the_same_conversation() -> None:
    openai: list[dict[str, Any]] = [
        {"role": "assistant", "content": "x", "tool_calls": [_call("a", "read", {"path": "p"})]},
        {"role": "tool", "tool_call_id": "a", "content": "P"},
    ]
    anthropic: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "b", "name": "read", "input": {"path": "p"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "P"}]},
    ]
    assert [s.key for s in steps_from_openai_messages(openai)] == [
        s.key for s in steps_from_anthropic_messages(anthropic)
    ]


def test_parser_sync_feeds_only_new_messages_and_restarts_on_rewritten_history() -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    parser = StepParser("openai")
    for n in range(5):
        history += [
            {"role": "assistant", "content": None, "tool_calls": [_call(f"c{n}", "read", {"n": n})]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": str(n)},
        ]
        assert parser.sync(list(history)) == steps_from_openai_messages(history)
    assert parser.messages_seen == len(history)
    rewritten = [{"role": "user", "content": "summary"}, *history[5:]]
    assert parser.sync(rewritten) == steps_from_openai_messages(rewritten)
    with pytest.raises(ValueError):
        StepParser("gemini")


def _turns(count: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(count):
        history += [
            {"role": "assistant", "content": f"step {n}", "tool_calls": [_call(f"c{n}", "read", {"n": n})]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"out {n}"},
        ]
    return history


def test_parser_sync_reads_only_the_new_messages_and_a_resend_none() -> None:
    read: list[Any] = []

    def parts(message: Any) -> MessageParts:
        read.append(message)
        return message_parts("openai", message)

    history, parser = _turns(6), StepParser("openai")
    parser.sync(history[:11], parts=parts)
    read.clear()
    assert parser.sync(json.loads(json.dumps(history)), parts=parts) == steps_from_openai_messages(history)
    assert read == history[11:]  # two messages appended: two messages parsed (the history is a fresh copy)
    read.clear()
    assert parser.sync(list(history), parts=parts) == steps_from_openai_messages(history) and not read


def test_parser_sync_notices_an_edit_between_the_first_and_last_messages_it_was_fed() -> None:
    history, parser = _turns(6), StepParser("openai")
    parser.sync(history)
    edited = [
        *history[:4],
        {"role": "tool", "tool_call_id": "c1", "content": "[cleared]"},
        *history[5:],
        *_turns(7)[-2:],
    ]
    assert parser.sync(edited) == steps_from_openai_messages(edited)


@pytest.mark.parametrize(
    ("first", "second"),
    [  # the same command run twice by real agent harnesses: only their run-to-run noise differs
        (
            "Chunk ID: 80a625\nWall time: 0.0012 seconds\nProcess exited with code 0\nOutput:\n",
            "Chunk ID: b98c8c\nWall time: 0.0031 seconds\nProcess exited with code 0\nOutput:\n",
        ),
        (
            '{"output":"<untrusted_context>\\nOutput: (empty)\\nProcess Group PGID: 4865\\n</untrusted_context>"}',
            '{"output":"<untrusted_context>\\nOutput: (empty)\\nProcess Group PGID: 4869\\n</untrusted_context>"}',
        ),
        ("Ran 3 tests in 0.004s\n\nFAILED (failures=1)", "Ran 3 tests in 0.013s\n\nFAILED (failures=1)"),
        (
            "job 1b4e28ba-2fa1-11d2-883f-0016d3cca427 queued",
            "job 6fa459ea-ee8a-3ca4-894e-db77e160355e queued",
        ),
    ],
)
def test_run_to_run_noise_does_not_hide_a_repeat(first: str, second: str) -> None:
    one, two = make_tool_step("shell", {"cmd": "make"}, first), make_tool_step("shell", {"cmd": "make"}, second)
    assert one.result_hash == two.result_hash


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Ran 3 tests in 0.004s\n\nFAILED (failures=1)", "Ran 3 tests in 0.004s\n\nOK"),
        ("build 1234 running 45%", "build 1234 running 47%"),
        ("Process exited with code 0\nOutput:\n2 files", "Process exited with code 0\nOutput:\n3 files"),
    ],
)
def test_a_changed_outcome_is_still_progress(first: str, second: str) -> None:
    one, two = make_tool_step("shell", {"cmd": "make"}, first), make_tool_step("shell", {"cmd": "make"}, second)
    assert one.result_hash != two.result_hash


@pytest.mark.parametrize(
    "variant",
    [
        {"cmd": "make  test"},  # extra spaces
        {"cmd": "make test\n"},  # a trailing newline
        {"cmd": "make test # 3f9a2c1d8e7b6a5f"},  # a nonce comment, made fresh on every call
        {"cmd": "make test # 6fa459ea-ee8a-3ca4-894e-db77e160355e"},
        {"cmd": "make test # 1795473754"},  # a timestamp
    ],
)
def test_nonces_and_whitespace_do_not_hide_a_repeat(variant: dict[str, str]) -> None:
    plain = {"cmd": "make test" + (" # 00000000000000000" if "#" in variant["cmd"] else "")}
    assert make_tool_step("shell", variant).args_hash == make_tool_step("shell", plain).args_hash


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ({"cmd": "cat a.py"}, {"cmd": "cat b.py"}),
        ({"cmd": "git show 3f2a1b9"}, {"cmd": "git show 8c1d2e4"}),  # short commit ids are what the call does
        ({"cmd": "sleep 5"}, {"cmd": "sleep 50"}),
        ({"path": "x", "line": 10}, {"path": "x", "line": 11}),
    ],
)
def test_different_calls_stay_different(one: dict[str, Any], two: dict[str, Any]) -> None:
    assert make_tool_step("shell", one).args_hash != make_tool_step("shell", two).args_hash
