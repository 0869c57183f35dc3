"""JSON that parses but is not a valid request: a 400 in the caller's shape, never a 5xx, and nothing a
provider accepts is refused.

Every stage is on (the defaults): guard, compaction and both caches read the fields fuzzed here, and a
stage that crashes on them fails open silently, so the stage-failure counter must not move either.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway

AUTH = {
    "openai": ("/v1/chat/completions", {"authorization": f"Bearer {TENANT_KEYS['acme']}"}),
    "anthropic": ("/v1/messages", {"x-api-key": TENANT_KEYS["acme"]}),
}
STAGE_FAILURES = re.compile(r"^cachegate_stage_failures_total\{[^}]*\} (\S+)$", re.MULTILINE)
COMPACTION_FAILURES = re.compile(r"^cachegate_compaction_failures_total\{[^}]*\} (\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway() as gateway:
        yield gateway


def base(api: str) -> dict[str, Any]:
    text = f"hello {uuid.uuid4().hex}"  # unique: the response cache never answers, the provider is asked
    if api == "openai":
        return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
    return {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": text}]}


def post_raw(gw: RunningGateway, api: str, content: bytes) -> httpx.Response:
    path, headers = AUTH[api]
    return httpx.post(gw.url + path, content=content, headers={**headers, "content-type": "application/json"})


def post(gw: RunningGateway, api: str, body: dict[str, Any]) -> httpx.Response:
    return post_raw(gw, api, orjson.dumps(body))


def provider_calls(gw: RunningGateway) -> int:
    """Requests that reached the simulated provider, answered or refused."""
    stats = gw.sim_stats()
    return int(stats["totals"].get("requests", 0)) + sum(int(n) for n in stats["errors"].values())


def stage_failures(gw: RunningGateway) -> float:
    text = gw.metrics()
    return sum(float(v) for v in STAGE_FAILURES.findall(text) + COMPACTION_FAILURES.findall(text))


def error_of(api: str, response: httpx.Response) -> dict[str, Any]:
    payload = response.json()
    if api == "openai":
        assert set(payload) == {"error"} and {"message", "type", "param", "code"} <= set(payload["error"])
    else:
        assert payload["type"] == "error" and {"type", "message"} <= set(payload["error"])
    assert payload["error"]["type"] == "invalid_request_error", payload
    return dict(payload["error"])


def nested(depth: int) -> bytes:
    return b"[" * (depth - 1) + b"1" + b"]" * (depth - 1)  # depth - 1 arrays inside the body object


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("depth", [100, 255, 256, 600, 1024, 1025, 5000])
def test_deep_nesting_is_a_clear_400(gw: RunningGateway, api: str, depth: int) -> None:
    body = orjson.dumps(base(api))
    response = post_raw(gw, api, body[:-1] + b',"metadata":' + nested(depth) + b"}")
    assert response.status_code == 400, response.text
    assert "depth" in error_of(api, response)["message"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_deep_nesting_in_a_large_body_is_a_clear_400(gw: RunningGateway, api: str) -> None:
    """Large bodies have their depth checked off the event loop: the answer is the same."""
    filler = orjson.dumps("x" * (200 * 1024))  # over THREADED_DEPTH_CHECK_BYTES, under the test limit
    body = orjson.dumps(base(api))
    response = post_raw(gw, api, body[:-1] + b',"metadata":{"note":' + filler + b',"deep":' + nested(100) + b"}}")
    assert response.status_code == 400, response.text
    assert "depth" in error_of(api, response)["message"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_realistic_nesting_passes(gw: RunningGateway, api: str) -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(20):  # a tool schema 20 objects deep: deeper than real ones
        schema = {"type": "object", "properties": {"inner": schema}}
    tool = (
        {"type": "function", "function": {"name": "deep", "parameters": schema}}
        if api == "openai"
        else {"name": "deep", "input_schema": schema}
    )
    response = post(gw, api, {**base(api), "tools": [tool]})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("options", ["x", 1, [], True, {"include_usage": "yes"}])
def test_stream_options_of_the_wrong_type(gw: RunningGateway, stream: bool, options: Any) -> None:
    before = provider_calls(gw)
    response = post(gw, "openai", {**base("openai"), "stream": stream, "stream_options": options})
    assert response.status_code == 400, response.text
    assert "stream_options" in error_of("openai", response)["message"]
    assert provider_calls(gw) == before


def with_message(api: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {**base(api), "messages": list(messages)}


OPENAI_ASSISTANT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
ANTHROPIC_TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}


def anthropic_result(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}]}


MALFORMED: list[tuple[str, dict[str, Any], str]] = [
    ("openai", with_message("openai", {"role": "user", "content": [{"type": "text", "text": 5}]}), "text"),
    ("openai", with_message("openai", {"role": "user", "content": [5]}), "content"),
    ("openai", with_message("openai", {"role": "user", "content": [{"text": "no type"}]}), "type"),
    ("openai", with_message("openai", {"role": "user", "content": [{"type": 3}]}), "type"),
    (
        "openai",
        with_message("openai", {"role": "user", "content": "go"}, {**OPENAI_ASSISTANT_CALL, "tool_calls": [5]}),
        "tool_calls",
    ),
    (
        "openai",
        with_message(
            "openai",
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": 5}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
        ),
        "function",
    ),
    ("openai", {**base("openai"), "tools": {"type": "function"}}, "tools"),
    ("openai", {**base("openai"), "tool_choice": 5}, "tool_choice"),
    ("openai", {**base("openai"), "max_tokens": "10"}, "max_tokens"),
    ("openai", {**base("openai"), "temperature": [1]}, "temperature"),
    ("anthropic", with_message("anthropic", {"role": "user", "content": [{"type": "text", "text": 5}]}), "text"),
    ("anthropic", with_message("anthropic", {"role": "user", "content": [{"type": "text"}]}), "text"),
    ("anthropic", with_message("anthropic", {"role": "user", "content": [{"type": 5}]}), "type"),
    (
        "anthropic",
        with_message(
            "anthropic",
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": "{}"}]},
            anthropic_result("ok"),
        ),
        "input",
    ),
    (
        "anthropic",
        with_message(
            "anthropic",
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": 5, "input": {}}]},
            anthropic_result("ok"),
        ),
        "name",
    ),
    (
        "anthropic",
        with_message("anthropic", {"role": "user", "content": "go"}, ANTHROPIC_TOOL_USE, anthropic_result(5)),
        "content",
    ),
    (
        "anthropic",
        with_message(
            "anthropic",
            {"role": "user", "content": "go"},
            ANTHROPIC_TOOL_USE,
            anthropic_result([{"type": "text", "text": 1}]),
        ),
        "text",
    ),
    ("anthropic", {**base("anthropic"), "system": [{"type": "text", "text": 5}]}, "system"),
    ("anthropic", {**base("anthropic"), "system": ["plain string"]}, "system"),
    ("anthropic", {**base("anthropic"), "system": 5}, "system"),
    ("anthropic", {**base("anthropic"), "tool_choice": "auto"}, "tool_choice"),
    ("anthropic", {**base("anthropic"), "stream": "yes"}, "stream"),
]


@pytest.mark.parametrize(
    ("api", "body", "fragment"), MALFORMED, ids=lambda v: str(v)[:60] if isinstance(v, dict) else None
)
def test_wrongly_typed_fields_are_a_400_before_any_provider_call(
    gw: RunningGateway, api: str, body: dict[str, Any], fragment: str
) -> None:
    before = provider_calls(gw)
    response = post(gw, api, body)
    assert response.status_code == 400, response.text
    assert fragment in error_of(api, response)["message"]
    assert provider_calls(gw) == before, "a request the provider would refuse must not reach it"


ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("openai", {**base("openai"), "tools": [{"type": "custom", "custom": {"name": "grammar_tool"}}]}),
    (
        "openai",
        {
            **base("openai"),
            "tools": [
                {
                    "type": "custom",
                    "custom": {
                        "name": "sql",
                        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: /.+/"}},
                    },
                },
                {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}},
            ],
            "tool_choice": {"type": "custom", "custom": {"name": "sql"}},
        },
    ),
    (
        "openai",
        with_message(
            "openai",
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c9", "type": "custom", "custom": {"name": "sql", "input": "select 1"}}],
            },
            {"role": "tool", "tool_call_id": "c9", "content": "1"},
        ),
    ),
    (
        "openai",
        with_message(
            "openai",
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                ],
            },
        ),
    ),
    (
        "anthropic",
        {**base("anthropic"), "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]},
    ),
    (
        "anthropic",
        {
            **base("anthropic"),
            "tools": [
                {"type": "bash_20250124", "name": "bash"},
                {"name": "f", "description": "d", "input_schema": {"type": "object", "properties": {}}},
            ],
            "tool_choice": {"type": "any"},
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
        },
    ),
    (
        "anthropic",
        with_message(
            "anthropic",
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "sig"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": [1]}},
                ],
            },
            anthropic_result(
                [
                    {"type": "text", "text": "ok"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                ]
            ),
        ),
    ),
]


@pytest.mark.parametrize(("api", "body"), ACCEPTED, ids=lambda v: str(v)[:60] if isinstance(v, dict) else None)
def test_what_providers_accept_passes(gw: RunningGateway, api: str, body: dict[str, Any]) -> None:
    failures = stage_failures(gw)
    for stream in (False, True):
        response = post(gw, api, {**body, "stream": stream})
        assert response.status_code == 200, response.text
    assert stage_failures(gw) == failures


def test_anthropic_system_role_in_messages_is_left_to_the_provider(gw: RunningGateway) -> None:
    """Some clients put a `role: system` message in `messages`: the gateway forwards it untouched and
    the provider judges it (the simulator answers like the Anthropic API does today: a 400 naming the
    role, relayed in the caller's shape)."""
    before = provider_calls(gw)
    body = with_message("anthropic", {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"})
    response = post(gw, "anthropic", body)
    assert provider_calls(gw) == before + 1, "the gateway refused it itself"
    if response.status_code != 200:
        assert response.status_code == 400 and "role" in error_of("anthropic", response)["message"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
OPENAI_PART_TYPES = ["text", "image_url", "input_audio", "file", "refusal", "other"]
ANTHROPIC_BLOCK_TYPES = ["text", "image", "document", "tool_use", "tool_result", "thinking", "server_tool_use", "other"]


def shaped(types: list[str], keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """An object of a known type whose other fields are random: reaches past the first type check."""
    return st.fixed_dictionaries(
        {"type": st.sampled_from(types)}, optional={key: JSON | st.text(max_size=8) for key in keys}
    )


OPENAI_PART = shaped(OPENAI_PART_TYPES, ["text", "image_url", "input_audio", "file", "refusal"])
ANTHROPIC_BLOCK = shaped(
    ANTHROPIC_BLOCK_TYPES,
    ["text", "source", "id", "name", "input", "tool_use_id", "content", "cache_control", "thinking"],
)
OPENAI_TOOL = shaped(["function", "custom", "other"], ["function", "custom", "name"])
ANTHROPIC_TOOL = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=8)}, optional={"type": JSON, "input_schema": JSON, "cache_control": JSON}
)

Setter = Callable[[dict[str, Any], Any], None]


def field(name: str) -> Setter:
    def put(body: dict[str, Any], value: Any) -> None:
        body[name] = value

    return put


def first_message(name: str) -> Setter:
    def put(body: dict[str, Any], value: Any) -> None:
        body["messages"][0][name] = value

    return put


def content_item(body: dict[str, Any], value: Any) -> None:
    body["messages"][0]["content"] = [value]


def openai_tool_calls(body: dict[str, Any], value: Any) -> None:
    body["messages"] += [{"role": "assistant", "content": None, "tool_calls": value}, {"role": "user", "content": "on"}]


def openai_tool_call(body: dict[str, Any], value: Any) -> None:
    openai_tool_calls(body, [value])


def openai_tool_message(name: str) -> Setter:
    def put(body: dict[str, Any], value: Any) -> None:
        body["messages"] += [OPENAI_ASSISTANT_CALL, {"role": "tool", "tool_call_id": "c1", "content": "x", name: value}]

    return put


def anthropic_tool_use(body: dict[str, Any], value: Any) -> None:
    body["messages"] += [{"role": "assistant", "content": [value]}, {"role": "user", "content": "on"}]


def anthropic_result_content(body: dict[str, Any], value: Any) -> None:
    body["messages"] += [ANTHROPIC_TOOL_USE, anthropic_result(value)]


def listed(put: Setter) -> Setter:
    def put_list(body: dict[str, Any], value: Any) -> None:
        put(body, [value])

    return put_list


OPENAI_FIELDS = [
    "messages",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
    "metadata",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "user",
    "prompt_cache_key",
    "response_format",
    "seed",
    "logit_bias",
    "parallel_tool_calls",
    "reasoning_effort",
    "model",
]
ANTHROPIC_FIELDS = [
    "messages",
    "system",
    "stream",
    "tools",
    "tool_choice",
    "metadata",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "thinking",
    "model",
]
TARGETS: list[tuple[str, str, Setter, st.SearchStrategy[Any]]] = [
    *[("openai", name, field(name), JSON) for name in OPENAI_FIELDS],
    *[("anthropic", name, field(name), JSON) for name in ANTHROPIC_FIELDS],
    ("openai", "messages[0]", lambda b, v: b.__setitem__("messages", [v]), JSON),
    ("openai", "messages[0].role", first_message("role"), JSON),
    ("openai", "messages[0].content", first_message("content"), JSON),
    ("openai", "messages[0].content[0]", content_item, JSON | OPENAI_PART),
    ("openai", "messages[0].name", first_message("name"), JSON),
    ("openai", "tool_calls", openai_tool_calls, JSON),
    ("openai", "tool_calls[0]", openai_tool_call, JSON | shaped(["function", "custom"], ["id", "function", "custom"])),
    ("openai", "tools[0]", listed(field("tools")), JSON | OPENAI_TOOL),
    ("openai", "tool message tool_call_id", openai_tool_message("tool_call_id"), JSON),
    ("openai", "tool message content", openai_tool_message("content"), JSON | st.lists(OPENAI_PART, max_size=2)),
    ("anthropic", "messages[0]", lambda b, v: b.__setitem__("messages", [v]), JSON),
    ("anthropic", "messages[0].content", first_message("content"), JSON),
    ("anthropic", "messages[0].content[0]", content_item, JSON | ANTHROPIC_BLOCK),
    ("anthropic", "assistant content[0]", anthropic_tool_use, JSON | ANTHROPIC_BLOCK),
    ("anthropic", "tool_result.content", anthropic_result_content, JSON | st.lists(ANTHROPIC_BLOCK, max_size=2)),
    ("anthropic", "system[0]", listed(field("system")), JSON | ANTHROPIC_BLOCK),
    ("anthropic", "tools[0]", listed(field("tools")), JSON | ANTHROPIC_TOOL),
    ("anthropic", "metadata.user_id", lambda b, v: b.__setitem__("metadata", {"user_id": v}), JSON),
]


LONG = "line of tool output that is long enough to be worth compacting. " * 12


def agent_conversation(api: str) -> dict[str, Any]:
    """A few tool rounds, big enough for compaction (triggers lowered in `fuzz_gw`) and the guard to act."""
    body = base(api)
    task = body["messages"][0]
    if api == "openai":
        rounds: list[dict[str, Any]] = []
        for n in range(3):
            call = {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {n}}}'}}
            rounds += [
                {"role": "assistant", "content": f"step {n}", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{n}", "content": [{"type": "text", "text": f"{n} {LONG}"}]},
            ]
        body["messages"] = [{"role": "system", "content": "agent"}, task, *rounds, {"role": "user", "content": "go on"}]
        body["tools"] = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
        return body
    rounds = []
    for n in range(3):
        use = {"type": "tool_use", "id": f"t{n}", "name": "read", "input": {"n": n}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": [{"type": "text", "text": f"{n} {LONG}"}]}
        rounds += [
            {"role": "assistant", "content": [{"type": "text", "text": f"step {n}"}, use]},
            {"role": "user", "content": [result]},
        ]
    rounds[-1]["content"].append({"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}})
    body["messages"] = [task, *rounds]
    body["system"] = [{"type": "text", "text": "agent"}]
    body["tools"] = [{"name": "read", "input_schema": {"type": "object"}}]
    return body


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value (object keys and array positions), outermost first."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


@st.composite
def mutated_conversations(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    """One field anywhere in a realistic agent request replaced by a random JSON value."""
    api = draw(st.sampled_from(["openai", "anthropic"]))
    body = agent_conversation(api)
    path = draw(st.sampled_from([p for p in paths(body) if p[0] != "model"]))
    holder = body
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = draw(JSON)
    return api, ".".join(map(str, path)), body


@st.composite
def fuzzed_requests(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    api, name, put, values = draw(st.sampled_from(TARGETS))
    body = base(api)
    put(body, draw(values))
    return api, name, body


@pytest.fixture(scope="module")
def fuzz_gw() -> Iterator[RunningGateway]:
    """Every stage on, compaction acting on small conversations (absolute token triggers)."""
    compaction = {
        "compact_trigger": 300,
        "compact_target": 150,
        "summarize_trigger": 700,
        "summarize_keep": 200,
        "min_tool_result_tokens": 5,
        "keep_tool_results": 1,
        "shrink_tool_result_at": 200,
        "clear_at_least": 0,
    }
    with running_gateway(policy={"compaction": compaction}) as gateway:
        yield gateway


def assert_no_server_error(gw: RunningGateway, requests: st.SearchStrategy[tuple[str, str, dict[str, Any]]]) -> None:
    failures = stage_failures(gw)

    @given(request=requests)
    # Generation only: each example is an HTTP round trip, and the assertion names the body that failed.
    @settings(
        max_examples=100,  # ~10 s on a loaded 2-core machine; runs of 4,000 found nothing more
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        phases=[Phase.generate],
    )
    def check(request: tuple[str, str, dict[str, Any]]) -> None:
        api, name, body = request
        path, headers = AUTH[api]
        session = {"x-session-id": f"fuzz-{uuid.uuid4().hex[:6]}"}
        response = httpx.post(gw.url + path, content=orjson.dumps(body), headers={**headers, **session})
        assert response.status_code < 500, (name, body, response.text)
        if response.status_code == 400:
            error_of(api, response)
        assert stage_failures(gw) == failures, (name, body, "a stage crashed and failed open")

    check()


def test_random_values_in_known_fields_never_give_a_5xx(fuzz_gw: RunningGateway) -> None:
    assert_no_server_error(fuzz_gw, fuzzed_requests())


def test_random_values_anywhere_in_an_agent_conversation_never_give_a_5xx(fuzz_gw: RunningGateway) -> None:
    assert_no_server_error(fuzz_gw, mutated_conversations())
