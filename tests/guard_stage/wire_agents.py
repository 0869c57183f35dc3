"""Stuck agents on the Responses and Gemini wires, driven through the official SDKs (openai's
`client.responses`, google-genai): the first user message holds `[[sim:loop bash {...}]]`, so the
simulator answers every tool result with the same call, and the agent feeds back the same result.

Each `step()` sends the whole history and returns an `Outcome` (tests/guard_stage/agents.py); a tool
call is appended to the history with its result, like any agent loop.
"""

from __future__ import annotations

import json
from typing import Any, cast

import openai
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai.types.responses import Response, ResponseStreamEvent

from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.guard_stage.agents import SCHEMA, TASK, Outcome

LS = {"command": "ls"}
LOOP = f"{TASK} [[sim:loop bash {json.dumps(LS)}]]"
TERMINATE = '[[sim:tool terminate {"status": "success", "reason": "the tests pass"}]]'
FINISHED = "Finished (success): the tests pass"
RESULT = "a.py b.py"
GO_ON = "Go on."
MODEL = "gpt-4o-mini"
RESPONSES_TOOLS: Any = [{"type": "function", "name": "bash", "description": "Run a command", "parameters": SCHEMA}]
GEMINI_TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(name="bash", description="Run a command", parameters_json_schema=SCHEMA)
        ]
    )
]
CLIENTS: list[genai.Client] = []  # a Client closes its connection pool when collected


class ResponsesAgent:
    def __init__(
        self, gw: RunningGateway, session: str | None, *, stream: bool = False, retries: int = 0, tenant: str = "acme"
    ) -> None:
        headers = {"x-session-id": session} if session else {}
        self.client = openai.OpenAI(
            base_url=f"{gw.url}/v1", api_key=TENANT_KEYS[tenant], max_retries=retries, default_headers=headers
        )
        self.stream = stream
        self.input: list[dict[str, Any]] = [{"role": "user", "content": LOOP}]

    def step(self) -> Outcome:
        try:
            raw = self.client.responses.with_raw_response.create(
                model=MODEL, input=cast(Any, self.input), tools=RESPONSES_TOOLS, stream=self.stream
            )
        except openai.APIStatusError as error:
            return Outcome(
                "error",
                error.response.headers.get("x-cachegate-guard"),
                status=error.status_code,
                error=error.response.json()["error"],
                exception=type(error).__name__,
                should_retry=error.response.headers.get("x-should-retry"),
            )
        response = self._final(raw.parse()) if self.stream else cast(Response, raw.parse())
        guard = raw.headers.get("x-cachegate-guard")
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:  # an answer: the user tells the agent to go on (a new request, not a resend)
            self.input += [{"role": "assistant", "content": response.output_text}, {"role": "user", "content": GO_ON}]
            return Outcome("text", guard, text=response.output_text)
        for call in calls:
            self.input.append(
                {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments}
            )
            self.input.append({"type": "function_call_output", "call_id": call.call_id, "output": RESULT})
        return Outcome("tool", guard, tool=calls[0].name)

    @staticmethod
    def _final(events: Any) -> Response:
        """The response of the stream's last event (response.completed), as the SDK parsed it."""
        final: Response | None = None
        for event in cast("openai.Stream[ResponseStreamEvent]", events):
            if event.type == "response.completed":
                final = event.response
        assert final is not None, "the stream ended without response.completed"
        return final


class GeminiAgent:
    def __init__(
        self,
        gw: RunningGateway,
        session: str | None,
        *,
        stream: bool = False,
        retries: int = 1,
        tenant: str = "acme",
        model: str = MODEL,
    ) -> None:
        self.model = model
        options = types.HttpOptions(
            base_url=gw.url,
            headers={"x-session-id": session} if session else None,
            retry_options=types.HttpRetryOptions(attempts=retries),
        )
        CLIENTS.append(genai.Client(api_key=TENANT_KEYS[tenant], http_options=options))
        self.client = CLIENTS[-1]
        self.stream = stream
        self.contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=LOOP)])]

    def step(self) -> Outcome:
        config = types.GenerateContentConfig(tools=cast(Any, GEMINI_TOOLS))
        try:
            if self.stream:
                chunks = list(
                    self.client.models.generate_content_stream(model=self.model, contents=self.contents, config=config)
                )
                assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
                headers = _headers(chunks[0])
                parts = [part for chunk in chunks for part in _parts(chunk)]
            else:
                response = self.client.models.generate_content(model=self.model, contents=self.contents, config=config)
                headers, parts = _headers(response), _parts(response)
        except genai_errors.APIError as error:
            headers = dict(error.response.headers) if error.response is not None else {}
            return Outcome(
                "error",
                headers.get("x-cachegate-guard"),
                status=error.code,
                error=error.details,
                exception=type(error).__name__,
                should_retry=headers.get("x-should-retry"),
            )
        guard = headers.get("x-cachegate-guard")
        calls = [part.function_call for part in parts if part.function_call is not None]
        if not calls:  # an answer: the user tells the agent to go on (a new request, not a resend)
            text = "".join(part.text or "" for part in parts)
            self.contents.append(types.Content(role="model", parts=[types.Part(text=text)]))
            self.contents.append(types.Content(role="user", parts=[types.Part(text=GO_ON)]))
            return Outcome("text", guard, text=text)
        self.contents.append(types.Content(role="model", parts=[types.Part(function_call=call) for call in calls]))
        answers = [
            types.Part.from_function_response(name=call.name or "", response={"output": RESULT}) for call in calls
        ]
        self.contents.append(types.Content(role="user", parts=answers))
        return Outcome("tool", guard, tool=calls[0].name)


def _headers(response: types.GenerateContentResponse) -> dict[str, str]:
    raw = response.sdk_http_response
    return dict(raw.headers or {}) if raw is not None else {}


def _parts(response: types.GenerateContentResponse) -> list[types.Part]:
    candidates = response.candidates or []
    content = candidates[0].content if candidates else None
    return list(content.parts or []) if content is not None else []


LADDER = ["continue"] * 4 + ["nudge", "stop"]


def run_to_the_stop(gw: RunningGateway, agent: ResponsesAgent | GeminiAgent) -> list[Outcome]:
    """Six steps of a stuck agent with a session: four left alone, a nudge that reaches the provider, then
    the stop, a normal text answer naming the loop."""
    outcomes = [agent.step() for _ in range(5)]
    sent = gw.sim_requests(limit=1)[-1]["body"]
    assert "[loop guard] Possible loop: `bash" in json.dumps(sent)  # the nudge reached the provider
    outcomes.append(agent.step())
    assert [o.action for o in outcomes] == LADDER
    assert [o.kind for o in outcomes] == ["tool"] * 5 + ["text"]
    assert outcomes[-1].guard == "stop; reason=LOOP; detector=identical_calls"
    assert outcomes[-1].text.startswith("Stopped by the loop guard (reason: loop")
    return outcomes


def run_without_a_session(agent: ResponsesAgent | GeminiAgent) -> None:
    """A stuck agent with no session id: nudged, then stopped from its history alone; it goes on anyway
    and is never blocked (no state to hold a block)."""
    outcomes = [agent.step() for _ in range(6)]
    assert [o.action for o in outcomes] == LADDER
    assert outcomes[-1].kind == "text" and outcomes[-1].text.startswith("Stopped by the loop guard")
    assert all(agent.step().status == 200 for _ in range(3))
