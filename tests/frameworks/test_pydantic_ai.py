"""pydantic-ai, unchanged: `openai:` models (the Responses API), OpenAIChatModel (Chat Completions) and
`anthropic:` models (streamed Messages even for a plain run), configured by OPENAI_BASE_URL /
OPENAI_API_KEY and ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY."""

from __future__ import annotations

import time

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from tests.frameworks.conftest import STOP, Notes, Observed, assert_block_shown, loop, session_id, task
from tests.gateway_harness import RunningGateway

pytestmark = pytest.mark.usefixtures("openai_env", "anthropic_env")

# pydantic-ai-slim 2.31.1 (the newest that installs beside litellm's openai<3) predates anthropic 2.x: it
# hands the SDK an httpx.AsyncClient (anthropic 2 runs on httpx2) and instantiates BetaMessageParam (a
# Union since anthropic 2). Nothing reaches the gateway; the recipe was captured with pydantic-ai 2.68
# (docs/design/clients.md). The xfail turns into a failure once the versions fit, so the test is enabled.
SDK_MISMATCH = pytest.mark.xfail(strict=True, raises=TypeError, reason="pydantic-ai 2.31 vs anthropic 2.x")
ROUTES = {"openai": "gpt-4o-mini", "openai-chat": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
MARKS = {"anthropic": [SDK_MISMATCH]}
# The framework's own cap (pydantic-ai's default is 50 requests): keeps a failing loop test short.
LIMITS = UsageLimits(request_limit=12)


def model(kind: str) -> Model | str:
    if kind == "openai-chat":
        return OpenAIChatModel(ROUTES[kind])  # the default provider reads OPENAI_BASE_URL / OPENAI_API_KEY
    return f"{kind}:{ROUTES[kind]}"


def agent(kind: str, notes: Notes) -> Agent[None, str]:
    built: Agent[None, str] = Agent(model(kind), instructions="Use the tools.")

    @built.tool_plain
    def record_note(text: str) -> str:
        """Record a note and return a receipt."""
        return notes.record_note(text)

    return built


def per_run_session(session: str) -> ModelSettings:
    """The recommended setup: one x-session-id per agent run (pydantic-ai sends no session id)."""
    return ModelSettings(extra_headers={"x-session-id": session})


def responses(messages: list[object]) -> int:
    return sum(isinstance(m, ModelResponse) for m in messages)


@pytest.mark.parametrize("kind", [pytest.param(k, marks=[SDK_MISMATCH] if k == "anthropic" else []) for k in ROUTES])
def test_task_with_a_tool(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    notes, seen, session = Notes(), Observed(gw, caplog, ROUTES[kind]), session_id()
    result = agent(kind, notes).run_sync(task(f"pydantic-{kind}"), model_settings=per_run_session(session))
    assert notes.written == [f"pydantic-{kind}"]
    assert result.output == f"The tool returned: noted pydantic-{kind}"
    assert len(seen.lines) == responses(result.all_messages()) == 2  # one log line per model request
    assert seen.sessions() == {session} and seen.sources() == ["upstream", "upstream"]
    assert seen.cost > 0


@pytest.mark.parametrize("kind", [pytest.param(k, marks=MARKS.get(k, [])) for k in ROUTES])
def test_loop_is_stopped(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    notes, seen = Notes(), Observed(gw, caplog, ROUTES[kind])
    started = time.monotonic()
    result = agent(kind, notes).run_sync(  # no UsageLimitExceeded: the guard's stop is the final answer
        loop(f"pydantic-loop-{kind}"), model_settings=per_run_session(session_id()), usage_limits=LIMITS
    )
    assert time.monotonic() - started < 5
    assert result.output.startswith(STOP)
    assert seen.sources()[-1] == "guard" and len(seen.lines) == responses(result.all_messages())
    assert seen.decisions() == {"nudge": 1, "stop": 1, "block": 0}
    assert 4 <= len(notes.written) < 10


@pytest.mark.parametrize("kind", [pytest.param(k, marks=MARKS.get(k, [])) for k in ROUTES])
def test_stopped_session_is_then_blocked(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    """The agent run again on its stopped session: one request, raised as the HTTP error it is (a 400 /
    Anthropic 409; a 401/403 would be ModelAuthenticationError in newer pydantic-ai), with the reason."""
    settings = per_run_session(session_id())
    agent(kind, Notes()).run_sync(loop(f"pydantic-again-{kind}"), model_settings=settings, usage_limits=LIMITS)
    notes, seen = Notes(), Observed(gw, caplog, ROUTES[kind])
    with pytest.raises(ModelHTTPError) as raised:
        agent(kind, notes).run_sync(loop(f"pydantic-again-{kind}"), model_settings=settings, usage_limits=LIMITS)
    assert raised.value.status_code == (409 if kind == "anthropic" else 400) and notes.written == []
    assert_block_shown(raised.value, seen)
