"""Detectors: each with a positive case and near misses that must not trip."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_runtime.guard import (
    GuardThresholds,
    Step,
    StopReason,
    detect,
    detect_cycle,
    detect_identical_calls,
    detect_long_polling,
    detect_malformed,
    detect_monologue,
    detect_no_progress,
    detect_repeated_errors,
    make_empty_step,
    make_malformed_step,
    make_text_step,
    make_tool_step,
)
from tests.guard.conftest import bash


def work(n: int) -> list[Step]:
    """``n`` distinct productive steps, as a prefix."""
    return [bash(f"cat file{i}.py", f"content {i}") for i in range(n)]


def test_identical_calls_trip_at_the_third_repeat() -> None:
    steps = [*work(3), *[bash("ls", "a.py")] * 4]
    detection = detect_identical_calls(steps)
    assert detection is not None
    assert (detection.reason, detection.count, detection.start) == (StopReason.LOOP, 4, 3)
    assert '`bash {"command":"ls"}`' in detection.detail
    assert detect_identical_calls(steps[:-1]) is None


def test_polling_with_changing_output_is_progress() -> None:
    steps = [bash("make status", f"building {p}%") for p in range(0, 100, 5)]
    assert detect_identical_calls(steps) is None
    assert detect_cycle(steps) is None
    assert detect_no_progress(steps) is None
    assert detect_repeated_errors(steps) is None


def test_batch_edits_of_different_files_do_not_trip() -> None:
    steps = [make_tool_step("edit", {"path": f"src/m{i}.py", "old": "a", "new": "b"}, "ok") for i in range(30)]
    assert detect_identical_calls(steps) is None
    assert detect_cycle(steps) is None
    assert detect_no_progress(steps) is None


def test_retries_with_changed_args_do_not_trip() -> None:
    steps = [bash(f"pip install pkg=={v}", "ERROR: no matching version", code=1) for v in range(8)]
    assert detect_repeated_errors(steps) is None
    assert detect_identical_calls(steps) is None
    assert detect_no_progress(steps) is None


def test_text_steps_between_calls_are_transparent() -> None:
    steps = [bash("ls", "a"), make_text_step("format error retry", "use one block"), *[bash("ls", "a")] * 3]
    detection = detect_identical_calls(steps)
    assert detection is not None and detection.count == 4 and detection.start == 0


def test_identical_calls_need_identical_results() -> None:
    steps = [bash("ls", "a"), bash("ls", "a"), bash("ls", "b"), bash("ls", "a")]
    assert detect_identical_calls(steps, min_repeats=2) is None


def test_cycle_of_two_trips_after_three_repeated_steps() -> None:
    a, b = bash("cat x.py", "X"), bash("python t.py", "FAIL")
    steps = [*work(2), a, b, a, b, a]
    detection = detect_cycle(steps)
    assert detection is not None
    assert (detection.count, detection.start) == (5, 2)
    assert '`bash {"command":"cat x.py"}` -> `bash {"command":"python t.py"}`' in detection.detail
    assert detect_cycle(steps[:-1]) is None


def test_cycle_of_five_is_found_once_it_came_round_in_full() -> None:
    five = [bash(f"step {i}", str(i)) for i in range(5)]
    assert detect_cycle([*five, *five[:4]]) is None  # a second pass over five checks: not yet a loop
    detection = detect_cycle([*five, *five])
    assert detection is not None and detection.count == 10
    assert detect_cycle([bash("ls")] * 9) is None


def test_a_short_cycle_is_found_at_its_third_repeated_step() -> None:
    three = [bash(f"step {i}", str(i)) for i in range(3)]
    assert detect_cycle([*three, *three[:2]]) is None
    assert detect_cycle([*three, *three]) is not None
    assert detect_cycle([bash("a", "1"), bash("b", "2")] * 2 + [bash("a", "1")]) is not None


def test_cycle_with_a_changed_result_is_progress() -> None:
    a, b = bash("cat x.py", "X"), bash("python t.py", "FAIL")
    assert detect_cycle([a, b, a, bash("python t.py", "PASS"), a]) is None


def test_no_progress_catches_irregular_revisiting() -> None:
    a, b, c = bash("git status", "clean"), bash("git diff", ""), bash("ls", "a.py")
    steps = [a, b, c, b, a, c, a]
    detection = detect_no_progress(steps)
    assert detection is not None
    assert detection.reason is StopReason.NO_PROGRESS and detection.count == 4 and detection.start == 3
    assert detect_no_progress([a, b, c, b, a, bash("pytest", "1 failed"), c]) is None


def test_repeated_errors_accept_changing_error_text() -> None:
    steps = [bash("pytest", f"FAILED at 12:00:0{i}", code=1) for i in range(4)]
    detection = detect_repeated_errors(steps)
    assert detection is not None and detection.count == 4
    assert "failed 4 times" in detection.detail
    assert detect_identical_calls(steps) is None
    # a success in between breaks the run
    assert detect_repeated_errors([*steps[:2], bash("pytest", "ok"), *steps[2:]]) is None


def test_monologue_same_text_same_reply() -> None:
    said = "I will now fix the bug."
    steps = [make_text_step(said, "continue"), make_text_step(said, "continue"), make_text_step(said)]
    detection = detect_monologue(steps)
    assert detection is not None and detection.count == 3
    assert detect_monologue(steps[:2]) is None


def test_monologue_needs_the_same_reply_and_no_tool_calls() -> None:
    said = "I can't help with that."
    assert detect_monologue([make_text_step(said, f"question {i}") for i in range(5)]) is None
    steps = [make_text_step(said, "go"), bash("ls"), make_text_step(said, "go"), make_text_step(said, "go")]
    assert detect_monologue(steps) is None


def test_consecutive_empty_or_malformed_responses() -> None:
    steps = [*work(2), make_empty_step("retry"), make_malformed_step("<tool_call>{"), make_empty_step()]
    detection = detect_malformed(steps)
    assert detection is not None
    assert (detection.reason, detection.count, detection.start) == (StopReason.FAILURE, 3, 2)
    broken = [make_empty_step(), make_text_step("fine answer", "ok"), make_empty_step(), make_empty_step()]
    assert detect_malformed(broken) is None


POLLS = [  # an honest agent waiting for a build: the status does not change while it runs
    [make_tool_step("shell", {"cmd": "sleep 30 && ci status 42"}, "build running")] * 8,
    [bash("ci status 42", "build running"), bash("sleep 30", "")] * 6,
    [
        make_tool_step("get_job", {"id": 42, "wait_seconds": 30}, "running"),
        make_tool_step("get_job", {"id": 42, "wait_seconds": 30}, "running"),
    ]
    * 4,
    [make_tool_step("check_build", {"id": 42}, "running"), make_tool_step("wait_for", {"seconds": 60}, "")] * 6,
]


@pytest.mark.parametrize("steps", POLLS)
def test_polling_that_waits_is_not_a_loop(steps: list[Step]) -> None:
    assert detect(steps, GuardThresholds()) is None


def test_a_loop_without_waiting_still_trips() -> None:
    assert detect([bash("ci status 42", "build running")] * 4, GuardThresholds()) is not None
    unwaited = [bash("ci status 42", "build running"), bash("cat log.txt", "same")] * 6
    assert detect(unwaited, GuardThresholds()) is not None


def test_checks_re_run_after_a_new_change_are_verification_not_revisits() -> None:
    checks = [bash("python repro.py", "ValueError"), bash("pytest -x", "1 failed"), bash("cat src/x.py", "x")]
    edit = bash("sed -i s/int/float/ src/x.py", "")
    assert edit.changes and not any(check.changes for check in checks)
    assert detect_no_progress([*checks, *checks, *checks]) is not None  # no change between: revisits
    assert detect_no_progress([*checks, edit, *checks, bash("git log -1", "abc"), *checks]) is None
    assert detect_no_progress([*checks, edit, *checks, *checks, *checks]) is not None  # since the change
    assert detect_no_progress([*checks, edit, *checks, edit, *checks]) is not None  # the same edit again: no change


def test_what_counts_as_a_change() -> None:
    changing = [
        ("bash", {"command": "sed -i 's/a/b/' f.py"}),
        ("bash", {"command": "cat > f.py <<'EOF'\nx = 1\nEOF"}),
        ("shell", {"command": ["bash", "-lc", "echo x >> notes.txt"]}),
        ("apply_patch", {"input": "*** Begin Patch"}),
        ("Edit", {"file_path": "f.py", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "f.py", "content": "x"}),
        ("str_replace_editor", {"command": "str_replace", "path": "f.py"}),
        ("bash", {"command": "pip install -e ."}),
        ("bash", {"command": "git checkout -- f.py"}),
    ]
    reading = [
        ("bash", {"command": "python repro.py 2>&1"}),
        ("bash", {"command": "pytest -q > /dev/null; echo $?"}),
        ("bash", {"command": "grep -rn foo src | head"}),
        ("str_replace_editor", {"command": "view", "path": "f.py"}),
        ("read_file", {"path": "f.py"}),
        ("get_build_status", {"id": 42}),
    ]
    assert all(make_tool_step(tool, args, "").changes for tool, args in changing)
    assert not any(make_tool_step(tool, args, "").changes for tool, args in reading)


def test_long_polling_is_capped_by_the_wall_clock() -> None:
    poll = make_tool_step("check_build", {"id": 42}, "running")
    waiting = [replace(poll, waits=True, at=60.0 * minute) for minute in range(40)]
    assert detect_no_progress(waiting) is None and detect_long_polling(waiting[:30]) is None
    found = detect_long_polling(waiting[:31])
    assert found is not None and found.detector == "long_polling" and "30 minutes" in found.detail
    assert detect_long_polling([replace(step, waits=False) for step in waiting]) is None  # a loop: other detectors
    assert detect_long_polling([replace(step, at=None) for step in waiting]) is None  # times unknown
