"""JSON mode: a request asking for JSON output gets a minimal instance of its schema as the reply text
(Chat `response_format`, Responses `text.format`, Anthropic `output_format`); directives still win, but a
tool directive cannot call a tool a JSON-mode request does not offer."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import jsonschema
import openai
import pytest

from gateway.sim.json_mode import minimal_instance

ROUTER = {  # Gemini CLI's model router, as gateway/wire/gemini_convert.py passes it on (Gemini's type names)
    "type": "OBJECT",
    "properties": {
        "complexity_reasoning": {"type": "STRING", "description": "Brief explanation for the score."},
        "complexity_score": {"type": "INTEGER", "description": "Complexity score from 1-100."},
    },
    "required": ["complexity_reasoning", "complexity_score"],
}
PLAN = {  # pydantic-style: $defs, refs, enums, bounds, nullable unions, nested arrays
    "$defs": {
        "Step": {
            "type": "object",
            "properties": {
                "kind": {"enum": ["shell", "edit"]},
                "tries": {"type": "integer", "minimum": 3},
                "note": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
            },
            "required": ["kind", "tries", "note"],
            "additionalProperties": False,
        }
    },
    "type": "object",
    "properties": {
        "steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}, "minItems": 2},
        "done": {"type": "boolean"},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "tag": {"const": "v1"},
        "owner": {"allOf": [{"$ref": "#/$defs/Step"}]},
    },
    "required": ["steps", "done", "ratio", "tag", "owner"],
    "additionalProperties": False,
}
TREE = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}, "required": ["name"]}


def lowered(schema: Any) -> Any:
    """Gemini's upper-case type names as JSON Schema spells them, to validate with jsonschema."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else lowered(v)) for k, v in schema.items()}
    return schema


@pytest.mark.parametrize("schema", [ROUTER, PLAN, TREE, {}], ids=["router", "plan", "recursive", "any object"])
def test_minimal_instance_is_valid(schema: dict[str, Any]) -> None:
    instance = minimal_instance(schema, schema)
    jsonschema.validate(instance, lowered(schema))
    if schema is ROUTER:
        assert instance["complexity_score"] >= 1  # Gemini CLI rejects 0 (its bound is only in the description)


def test_chat_response_format(oai: openai.OpenAI) -> None:
    answer = oai.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "plan it"}],
        response_format={"type": "json_schema", "json_schema": {"name": "plan", "schema": PLAN, "strict": True}},
    )
    jsonschema.validate(json.loads(answer.choices[0].message.content or ""), PLAN)
    as_object = oai.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "any"}], response_format={"type": "json_object"}
    )
    assert json.loads(as_object.choices[0].message.content or "") == {}


def test_responses_text_format(sim_url: str) -> None:
    body = {
        "model": "gpt-4o-mini",
        "input": "route this",
        "text": {"format": {"type": "json_schema", "name": "route", "schema": lowered(ROUTER)}},
    }
    response = httpx.post(f"{sim_url}/v1/responses", json=body, headers={"authorization": "Bearer sk-test"})
    text = response.raise_for_status().json()["output"][0]["content"][0]["text"]
    jsonschema.validate(json.loads(text), lowered(ROUTER))


def test_anthropic_output_format(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=200,
        messages=[{"role": "user", "content": "plan it"}],
        extra_body={"output_format": {"type": "json_schema", "schema": PLAN}},
    )
    jsonschema.validate(json.loads(message.content[0].text), PLAN)  # type: ignore[union-attr]


def test_directives_still_win_but_call_only_offered_tools(oai: openai.OpenAI) -> None:
    json_mode: Any = {"type": "json_schema", "json_schema": {"name": "route", "schema": ROUTER}}
    ask = [{"role": "user", "content": "[[sim:text not json]]"}]
    text = oai.chat.completions.create(model="gpt-4o-mini", messages=ask, response_format=json_mode)
    assert text.choices[0].message.content == "not json"
    # A side call holding the user's prompt (Gemini CLI's router): it offers no tool, so JSON it is.
    ask = [{"role": "user", "content": '[[sim:tool bash {"command": "ls"}]]'}]
    side = oai.chat.completions.create(model="gpt-4o-mini", messages=ask, response_format=json_mode)
    jsonschema.validate(json.loads(side.choices[0].message.content or ""), lowered(ROUTER))
    bash: Any = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    turn = oai.chat.completions.create(model="gpt-4o-mini", messages=ask, response_format=json_mode, tools=bash)
    assert turn.choices[0].message.tool_calls and turn.choices[0].message.tool_calls[0].function.name == "bash"
