"""LangGraph's `create_react_agent` on LangChain's chat models, unchanged: ChatOpenAI (Chat Completions, and
`use_responses_api=True` streamed: LangChain needs the full Responses event sequence) and ChatAnthropic
(plain and streamed), configured by OPENAI_BASE_URL / OPENAI_API_KEY and ANTHROPIC_BASE_URL /
ANTHROPIC_API_KEY (the anthropic SDK sends the key as a Bearer token)."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import openai
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

from tests.frameworks.conftest import STOP, Notes, Observed, assert_block_shown, loop, session_id, task
from tests.gateway_harness import RunningGateway

pytestmark = pytest.mark.usefixtures("openai_env", "anthropic_env")

MODELS = {"openai-chat": "gpt-4o-mini", "openai-responses": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
MODELS["anthropic-stream"] = MODELS["anthropic"]
BLOCK_ERRORS: dict[str, type[Exception]] = {"openai-chat": openai.BadRequestError, "anthropic": anthropic.ConflictError}


def chat_model(kind: str, session: str) -> BaseChatModel:
    """The chat model of one agent run, with its own x-session-id (LangChain sends no session id)."""
    headers = {"x-session-id": session}
    if kind == "openai-chat":
        return ChatOpenAI(model=MODELS[kind], default_headers=headers)
    if kind == "openai-responses":
        return ChatOpenAI(model=MODELS[kind], use_responses_api=True, streaming=True, default_headers=headers)
    return ChatAnthropic(  # type: ignore[call-arg]
        model=MODELS[kind], default_headers=headers, streaming=kind == "anthropic-stream", max_tokens=1024
    )


def record_tool(notes: Notes) -> BaseTool:
    @tool
    def record_note(text: str) -> str:
        """Record a note and return a receipt."""
        return notes.record_note(text)

    return record_note


def run(kind: str, notes: Notes, prompt: str, session: str) -> list[Any]:
    agent = create_react_agent(chat_model(kind, session), [record_tool(notes)])
    # LangGraph's own default recursion limit is 10007 supersteps (about 5000 model calls): a stuck agent
    # without the guard would run for minutes. 25 keeps a failing test short; the guard stops far earlier.
    state = agent.invoke({"messages": [("user", prompt)]}, {"recursion_limit": 25})
    return list(state["messages"])


def answers(messages: list[Any]) -> list[AIMessage]:
    return [m for m in messages if isinstance(m, AIMessage)]


@pytest.mark.parametrize("kind", list(MODELS))
def test_task_with_a_tool(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    notes, seen, session = Notes(), Observed(gw, caplog, MODELS[kind]), session_id()
    messages = run(kind, notes, task(f"langgraph-{kind}"), session)
    assert notes.written == [f"langgraph-{kind}"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[-1].text == f"The tool returned: noted langgraph-{kind}"
    assert len(seen.lines) == len(answers(messages)) == 2  # one log line per model request
    assert seen.sessions() == {session} and seen.sources() == ["upstream", "upstream"]
    assert seen.cost > 0


@pytest.mark.parametrize("kind", MODELS)
def test_loop_is_stopped(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    notes, seen = Notes(), Observed(gw, caplog, MODELS[kind])
    started = time.monotonic()
    messages = run(kind, notes, loop(f"langgraph-loop-{kind}"), session_id())  # no GraphRecursionError
    assert time.monotonic() - started < 5
    assert messages[-1].text.startswith(STOP) and not messages[-1].tool_calls
    assert seen.sources()[-1] == "guard" and len(seen.lines) == len(answers(messages))
    assert seen.decisions() == {"nudge": 1, "stop": 1, "block": 0}
    assert 4 <= len(notes.written) < 10


@pytest.mark.parametrize("kind", ["openai-chat", "anthropic"])
def test_stopped_session_is_then_blocked(gw: RunningGateway, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    """The agent run again on its stopped session: one request, refused with the guard's reason (the SDKs
    under LangChain obey `x-should-retry: false` on the 400 / Anthropic 409), no credential wording."""
    session = session_id()
    run(kind, Notes(), loop(f"langgraph-again-{kind}"), session)  # stopped
    notes, seen = Notes(), Observed(gw, caplog, MODELS[kind])
    with pytest.raises(BLOCK_ERRORS[kind]) as raised:
        run(kind, notes, loop(f"langgraph-again-{kind}"), session)
    assert notes.written == []
    assert_block_shown(raised.value, seen)
