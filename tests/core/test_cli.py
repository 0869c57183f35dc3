"""`cachegate serve` on the embedded default answers both SDKs offline, as a newcomer would run it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from tests.servers import free_socket


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port)],
        env={**os.environ, "REDIS_URL": ""},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "cachegate serve did not start"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


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
