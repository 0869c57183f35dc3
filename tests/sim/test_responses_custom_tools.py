"""Custom (freeform) tools on the simulator's Responses API, as Codex's code mode offers them: its `exec`
tool, in a namespace of an `additional_tools` input item. A directed call of one is a `custom_tool_call`
carrying the directive's `input`, and its `custom_tool_call_output` is answered like a function's result,
with the OpenAI SDK reading the stream."""

from __future__ import annotations

import json
from typing import Any

import openai

SCRIPT = 'text(await tools.mcp__cachegate__files__read_file({"path": "notes.txt"}))'
EXEC = {"type": "custom", "name": "exec", "description": "Run JavaScript", "format": {"type": "text"}}
OFFERED = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [{"type": "namespace", "name": "functions", "tools": [EXEC]}],
}


def ask(sim_url: str, items: list[dict[str, Any]]) -> list[Any]:
    client = openai.OpenAI(base_url=f"{sim_url}/v1", api_key="sk-test")
    with client.responses.stream(model="gpt-4.1-mini", input=items) as stream:  # type: ignore[arg-type]
        return list(stream.get_final_response().output)


def test_a_custom_tool_is_called_with_the_directive_input_and_its_output_answered(sim_url: str) -> None:
    prompt = {"role": "user", "content": f"Read. [[sim:tool exec {json.dumps({'input': SCRIPT})}]]"}
    first = ask(sim_url, [OFFERED, prompt])
    call = next(item for item in first if item.type == "custom_tool_call")
    assert (call.name, call.input) == ("exec", SCRIPT)
    output = {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "hello from the file tool"}
    echoed = {"type": "custom_tool_call", "call_id": call.call_id, "name": "exec", "input": SCRIPT}
    second = ask(sim_url, [OFFERED, prompt, echoed, output])
    assert [item.type for item in second] == ["message"]
    assert "hello from the file tool" in second[0].content[0].text
