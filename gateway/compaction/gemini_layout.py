"""The Gemini shape (generateContent) for compaction.

The conversation is `contents` (roles `user` and `model`, each a list of `parts`); `systemInstruction` is
the system prompt. A model content's `functionCall` parts are answered by `functionResponse` parts in the
next user content, matched by `id` when the caller sent one, else by name (gateway/wire/gemini_convert.py
pairs them the same way on the way upstream).

A functionResponse's `response` is an object. One holding a single string field (`{"output": ...}` from
Gemini CLI, `{"result": ...}` from the SDKs' automatic function calling) is that text; any other object
is its JSON text; one with multimodal `parts` beside it is left alone. The reference goes back under the
same field (`output` for JSON objects).
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.compaction.layout import Call, Found, Layout, Message, Reply
from gateway.compaction.reference import RETRIEVAL_TOOL  # the only tool the gateway answers itself
from gateway.wire.gemini import response_text

OUTPUT_FIELD = "output"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _call_id(part: dict[str, Any]) -> str:
    return str(part.get("id") or part.get("name"))


def _text_field(response: Any) -> str | None:
    """The single string field a response object is made of, if it is."""
    if isinstance(response, dict) and len(response) == 1:
        (key, value), *_ = response.items()
        return key if isinstance(value, str) else None
    return None


def _content(function_response: dict[str, Any]) -> Any:
    """A functionResponse as compaction sees it: its text, or the object itself when it is multimodal."""
    response = function_response.get("response")
    if function_response.get("parts"):
        return function_response
    key = _text_field(response)
    if key is not None and isinstance(response, dict):
        return response[key]
    return orjson.dumps(response or {}).decode()


class GeminiLayout(Layout):
    name = "gemini"
    history_field = "contents"
    system_field = "systemInstruction"
    usage_field = "usageMetadata"

    @staticmethod
    def _parts(message: Message) -> list[Any]:
        parts = message.get("parts")
        return parts if isinstance(parts, list) else []

    def calls(self, message: Message) -> list[tuple[str, str]]:
        if message.get("role") != "model":
            return []
        return [
            (_call_id(part["functionCall"]), str(part["functionCall"].get("name")))
            for part in self._parts(message)
            if isinstance(part, dict) and isinstance(part.get("functionCall"), dict)
        ]

    def results(self, message: Message) -> list[Found]:
        if message.get("role") == "model":
            return []
        return [
            Found(position, _call_id(part["functionResponse"]), _content(part["functionResponse"]))
            for position, part in enumerate(self._parts(message))
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
        ]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        parts = list(self._parts(message))
        for position, text in contents.items():
            assert position is not None
            function_response = parts[position]["functionResponse"]
            key = _text_field(function_response.get("response")) or OUTPUT_FIELD
            parts[position] = {**parts[position], "functionResponse": {**function_response, "response": {key: text}}}
        return {**message, "parts": parts}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        return 1 if pin_first_user and messages and messages[0].get("role", "user") == "user" else 0

    def no_tool_use(self) -> dict[str, Any]:
        return {"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}

    def is_reply(self, message: Message) -> bool:
        return message.get("role") == "model"

    @staticmethod
    def user_message(text: str) -> Message:
        return {"role": "user", "parts": [{"text": text}]}

    def limit_output(self, request: dict[str, Any], body: dict[str, Any], max_tokens: int) -> None:
        config = _object(body.get("generationConfig"))
        budget = _object(config.get("thinkingConfig")).get("thinkingBudget")
        # A plain-text answer: no JSON mode, stop sequences or extra candidates from the client's config.
        kept = {k: v for k, v in config.items() if not k.startswith("response") and k not in ("stopSequences",)}
        kept.pop("candidateCount", None)
        extra = budget if isinstance(budget, int) and budget > 0 else 0
        request["generationConfig"] = {**kept, "maxOutputTokens": max_tokens + extra}

    @staticmethod
    def _reply_parts(reply: Reply) -> list[dict[str, Any]]:
        content = ((reply.get("candidates") or [{}])[0] or {}).get("content") or {}
        return [part for part in content.get("parts") or [] if isinstance(part, dict)]

    def reply_text(self, reply: Reply) -> str:
        return response_text(reply)

    def reply_calls(self, reply: Reply) -> list[Call]:
        calls = [
            part["functionCall"] for part in self._reply_parts(reply) if isinstance(part.get("functionCall"), dict)
        ]
        return [
            (
                str(call.get("id") or ""),
                str(call.get("name")),
                call["args"] if isinstance(call.get("args"), dict) else {},
            )
            for call in calls
        ]

    def reply_messages(self, reply: Reply) -> list[Message]:
        return [{"role": "model", "parts": self._reply_parts(reply)}]

    def tool_answers(self, answers: list[tuple[str, str]]) -> list[Message]:
        parts = [
            {
                "functionResponse": {
                    **({"id": call_id} if call_id else {}),
                    "name": RETRIEVAL_TOOL,
                    "response": {OUTPUT_FIELD: text},
                }
            }
            for call_id, text in answers
        ]
        return [{"role": "user", "parts": parts}]

    def without_tool(self, reply: Reply, name: str) -> Reply:
        candidates = []
        for candidate in reply.get("candidates") or []:
            content = candidate.get("content") or {}
            parts = [p for p in content.get("parts") or [] if (p.get("functionCall") or {}).get("name") != name] or [
                {"text": ""}
            ]
            candidates.append({**candidate, "content": {**content, "parts": parts}})
        return {**reply, "candidates": candidates}

    def tool_definition(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        return {
            "functionDeclarations": [{"name": name, "description": description, "parametersJsonSchema": parameters}]
        }

    def tool_names(self, tools: list[Any]) -> list[str]:
        return [
            str(declaration.get("name"))
            for tool in tools
            if isinstance(tool, dict)
            for declaration in tool.get("functionDeclarations") or []
            if isinstance(declaration, dict)
        ]
