"""The OpenAI Responses shape (POST /v1/responses) for compaction.

The conversation is the `input` item list (a string input is one user message); `instructions` is the
system prompt. A call item (function_call, custom_tool_call, local_shell_call, computer_call) is answered
by its `*_output` item with the same `call_id`, later in the list; parallel calls are consecutive call
items before their outputs. A reasoning item belongs to the item right after it: no cut separates them.
"""

from __future__ import annotations

from typing import Any

from gateway.compaction.layout import Call, Found, Layout, Message, Reply, arguments_of
from gateway.wire.responses import input_items, item_type, output_text

# Call item types -> the tool name to report when the item names none.
CALL_ITEMS = {"function_call": "unknown", "custom_tool_call": "unknown", "local_shell_call": "local_shell"}
CALL_ITEMS |= {"computer_call": "computer"}
OUTPUT_ITEMS = frozenset(f"{kind}_output" for kind in CALL_ITEMS)
REASONING = "reasoning"


class ResponsesLayout(Layout):
    name = "responses"
    history_field = "input"
    system_field = "instructions"

    def messages(self, body: dict[str, Any]) -> list[Message]:
        return input_items(body)

    def calls(self, message: Message) -> list[tuple[str, str]]:
        kind = item_type(message)
        if kind not in CALL_ITEMS:
            return []
        return [(str(message.get("call_id")), str(message.get("name") or CALL_ITEMS[kind]))]

    def results(self, message: Message) -> list[Found]:
        if item_type(message) not in OUTPUT_ITEMS:
            return []
        return [Found(None, str(message.get("call_id")), message.get("output"))]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        return {**message, "output": contents[None]}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        def is_message(index: int, roles: tuple[str, ...]) -> bool:
            return item_type(messages[index]) == "message" and messages[index].get("role") in roles

        index = 0
        while index < len(messages) and is_message(index, ("system", "developer")):
            index += 1
        if pin_first_user and index < len(messages) and is_message(index, ("user",)):
            index += 1
        return index

    def no_tool_use(self) -> dict[str, Any]:
        return {"tool_choice": "none"}

    def is_reply(self, message: Message) -> bool:
        return message.get("role") == "assistant" or item_type(message) in (*CALL_ITEMS, REASONING)

    def continues_calls(self, message: Message) -> bool:
        return item_type(message) in (*CALL_ITEMS, REASONING)

    def binds_to_next(self, message: Message) -> bool:
        return item_type(message) == REASONING

    def limit_output(self, request: dict[str, Any], body: dict[str, Any], max_tokens: int) -> None:
        request["max_output_tokens"] = max_tokens

    @staticmethod
    def _output(reply: Reply) -> list[dict[str, Any]]:
        return [item for item in reply.get("output") or [] if isinstance(item, dict)]

    def reply_text(self, reply: Reply) -> str:
        return output_text(reply)

    def reply_calls(self, reply: Reply) -> list[Call]:
        return [
            (str(item.get("call_id")), str(item.get("name")), arguments_of(item.get("arguments")))
            for item in self._output(reply)
            if item_type(item) == "function_call"
        ]

    def reply_messages(self, reply: Reply) -> list[Message]:
        return self._output(reply)

    def tool_answers(self, answers: list[tuple[str, str]]) -> list[Message]:
        return [{"type": "function_call_output", "call_id": call_id, "output": text} for call_id, text in answers]

    def without_tool(self, reply: Reply, name: str) -> Reply:
        output = [
            item
            for item in self._output(reply)
            if not (item_type(item) == "function_call" and item.get("name") == name)
        ]
        return {**reply, "output": output}

    def tool_definition(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "name": name, "description": description, "parameters": parameters}

    def tool_names(self, tools: list[Any]) -> list[str]:
        return [str(t.get("name")) for t in tools if isinstance(t, dict)]
