"""The OpenAI Agents SDK, unchanged: its default model (gpt-5.6-luna on the Responses API, routed by the
`gpt-*` alias) and OpenAIChatCompletionsModel, configured by OPENAI_BASE_URL / OPENAI_API_KEY with
tracing off (OPENAI_AGENTS_DISABLE_TRACING=1: the SDK would otherwise post traces to api.openai.com)."""

from __future__ import annotations

import time

import openai
import pytest
from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from agents.models.interface import Model
from openai import AsyncOpenAI

from tests.frameworks.conftest import STOP, Notes, Observed, assert_block_shown, loop, session_id, task
from tests.gateway_harness import RunningGateway

pytestmark = pytest.mark.usefixtures("openai_env")

DEFAULT_ROUTE = "gpt-4.1-mini"  # where the embedded default's `gpt-*` alias sends gpt-5.6-luna


def model(kind: str) -> Model | None:
    """None: the SDK's default model (Responses API); "chat": Chat Completions on the same client setup."""
    if kind == "default":
        return None
    return OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())


def route(kind: str) -> str:
    return DEFAULT_ROUTE if kind == "default" else "gpt-4o-mini"


def agent(kind: str, notes: Notes) -> Agent:
    @function_tool
    def record_note(text: str) -> str:
        """Record a note and return a receipt."""
        return notes.record_note(text)

    built = model(kind)
    if built is None:
        return Agent(name="notes", instructions="Use the tools.", tools=[record_note])
    return Agent(name="notes", instructions="Use the tools.", tools=[record_note], model=built)


def per_run_session(session: str) -> RunConfig:
    """The recommended setup: one x-session-id per agent run (the SDK sends no session id)."""
    return RunConfig(model_settings=ModelSettings(extra_headers={"x-session-id": session}))


@pytest.mark.parametrize("kind", ["default", "chat"])
def test_task_with_a_tool(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    notes, seen = Notes(), Observed(gw, caplog, route(kind))
    session = session_id()
    result = Runner.run_sync(agent(kind, notes), task(f"agents-{kind}"), run_config=per_run_session(session))
    assert notes.written == [f"agents-{kind}"]  # the SDK called the Python tool once
    assert result.final_output == f"The tool returned: noted agents-{kind}"
    assert len(result.raw_responses) == 2 and len(seen.lines) == 2  # one log line per model request
    assert seen.sessions() == {session} and seen.sources() == ["upstream", "upstream"]
    assert seen.cost > 0


def _loop_stopped(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str, config: RunConfig) -> None:
    notes, seen = Notes(), Observed(gw, caplog, route(kind))
    started = time.monotonic()
    result = Runner.run_sync(agent(kind, notes), loop(f"agents-loop-{kind}"), run_config=config, max_turns=10)
    assert time.monotonic() - started < 5
    assert result.final_output.startswith(STOP)  # the run ended on the guard's stop reply, not MaxTurnsExceeded
    assert seen.sources()[-1] == "guard" and len(seen.lines) == len(result.raw_responses)
    decisions = seen.decisions()
    assert decisions["nudge"] >= 1 and decisions["stop"] == 1 and decisions["block"] == 0
    assert 4 <= len(notes.written) < 10


@pytest.mark.parametrize("kind", ["default", "chat"])
def test_loop_is_stopped(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    _loop_stopped(gw, caplog, kind, per_run_session(session_id()))


def test_stopped_session_is_then_blocked(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    """The rest of the ladder: the same session (the agent run again after its stop) is refused at once,
    with one request (400, x-should-retry: false: the openai client's default retries do not resend it)."""
    config = per_run_session(session_id())
    _loop_stopped(gw, caplog, "chat", config)
    notes, seen = Notes(), Observed(gw, caplog, "gpt-4o-mini")
    with pytest.raises(openai.BadRequestError) as raised:
        Runner.run_sync(agent("chat", notes), loop("agents-again"), run_config=config)
    assert raised.value.code == "LOOP" and notes.written == []
    assert "status=400 error=agent_loop_stopped" in seen.lines[0]
    assert_block_shown(raised.value, seen)


@pytest.mark.parametrize("kind", ["chat"])
def test_sessionless_loop_is_stopped(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    _loop_stopped(gw, caplog, kind, RunConfig())
