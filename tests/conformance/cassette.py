"""Recorded exchanges of the real provider APIs (VCR cassettes, see build_corpus.py), as replay cases.

One `Exchange` is one request a client sent to a provider and the answer it got, on one of the wires the
gateway serves: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini generateContent.
Other calls in a cassette (file uploads, count_tokens, third-party hosts) are not replayed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

CASSETTES = Path(__file__).parent / "cassettes"
GEMINI_PATH = re.compile(r"/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)")
WIRE_BY_PATH = {"/v1/chat/completions": "openai", "/v1/responses": "responses", "/v1/messages": "anthropic"}
PROVIDER_BY_WIRE = {"openai": "openai", "responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}


@dataclass(frozen=True)
class Exchange:
    cassette: str
    index: int
    wire: str
    model: str
    stream: bool
    request: dict[str, Any]
    status: int
    content_type: str
    response: bytes

    @property
    def name(self) -> str:
        return f"{self.cassette}#{self.index}"

    def response_json(self) -> Any:
        return json.loads(self.response)


def _body_bytes(side: dict[str, Any]) -> bytes:
    if "parsed_body" in side:
        return json.dumps(side["parsed_body"]).encode()
    body = side.get("body")
    text = body.get("string", "") if isinstance(body, dict) else (body or "")
    return text.encode() if isinstance(text, str) else bytes(text)


def _header(side: dict[str, Any], name: str) -> str:
    values = (side.get("headers") or {}).get(name) or [""]
    return str(values[0])


def _wire_and_model(uri: str, body: dict[str, Any]) -> tuple[str, str, bool] | None:
    parts = urlsplit(uri)
    if match := GEMINI_PATH.fullmatch(parts.path):
        return "gemini", match.group(1), match.group(2) == "streamGenerateContent"
    if parts.hostname in ("api.openai.com", "api.anthropic.com") and parts.path in WIRE_BY_PATH:
        return WIRE_BY_PATH[parts.path], str(body.get("model")), bool(body.get("stream"))
    return None


def load(path: Path) -> list[Exchange]:
    recorded = yaml.safe_load(path.read_text())
    name = str(path.relative_to(CASSETTES).with_suffix(""))
    exchanges: list[Exchange] = []
    for index, interaction in enumerate(recorded.get("interactions", [])):
        request, response = interaction["request"], interaction["response"]
        body = request.get("parsed_body")
        if request.get("method") != "POST" or not isinstance(body, dict):
            continue
        found = _wire_and_model(request["uri"], body)
        if found is None:
            continue
        wire, model, stream = found
        exchanges.append(
            Exchange(
                cassette=name,
                index=index,
                wire=wire,
                model=model,
                stream=stream,
                request=body,
                status=int(response["status"]["code"]),
                content_type=_header(response, "content-type") or "application/json",
                response=_body_bytes(response),
            )
        )
    return exchanges


def corpus() -> list[Exchange]:
    return [exchange for path in sorted(CASSETTES.rglob("*.yaml")) for exchange in load(path)]
