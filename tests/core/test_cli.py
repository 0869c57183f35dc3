"""`cachegate serve` on the embedded default answers both SDKs offline, as a newcomer would run it."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from tests.deploy.processes import answers_http, cachegate, free_port, spawned


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with spawned("serve", cachegate("serve", "--port", str(port)), tmp_path_factory.mktemp("serve")) as process:
        process.wait_until(answers_http(f"{url}/healthz"))
        yield url


def test_serve_embedded_default(served: str) -> None:
    oai = openai.OpenAI(base_url=f"{served}/v1", api_key="sk-cachegate-dev", max_retries=0)
    reply = oai.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hello!"}])
    assert reply.choices[0].message.content
    ant = anthropic.Anthropic(base_url=served, api_key="sk-cachegate-dev", max_retries=0)
    message = ant.messages.create(
        model="claude-sonnet-4-5", max_tokens=20, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.content[0].type == "text"
    assert httpx.get(f"{served}/readyz").json()["status"] == "ready"
