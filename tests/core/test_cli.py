"""`cachegate serve` on the embedded default answers both SDKs offline, as a newcomer would run it."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from gateway.workers import LISTEN_BACKLOG
from tests.deploy.processes import answers_http, cachegate, spawned
from tests.ports import spawn_port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = spawn_port()
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


def test_an_idle_connection_outlives_the_common_5_s_timeouts(served: str) -> None:
    """A balancer or SDK that reuses a connection after 5 s idle (nginx keeps them 60 s) must find it open:
    a server that closes it first resets the request sent on it."""
    host, port = served.removeprefix("http://").split(":")
    request = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(request)
        assert _one_response(conn).startswith(b"HTTP/1.1 200")
        time.sleep(6)
        conn.sendall(request)
        assert _one_response(conn).startswith(b"HTTP/1.1 200"), "the gateway closed the idle connection"


def _one_response(conn: socket.socket) -> bytes:
    """One whole response (head and content-length body), however many reads it arrives in: a body
    left unread would be taken for the next response."""
    data = b""
    while b"\r\n\r\n" not in data:
        if not (chunk := conn.recv(4096)):
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length and (chunk := conn.recv(4096)):
        body += chunk
    return data


def test_the_listen_backlog_holds_a_burst_of_connections(served: str) -> None:
    """uvicorn's 2,048 overflowed at 1,000 new connections/s (resets ~15 s later); the kernel caps ours."""
    if shutil.which("ss") is None:
        pytest.skip("needs ss (iproute2)")
    port = served.rsplit(":", 1)[1]
    listing = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True)
    backlog = int(listing.stdout.split()[2])  # State Recv-Q Send-Q ...: Send-Q is the backlog when listening
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert backlog == min(LISTEN_BACKLOG, somaxconn) > 2048 or somaxconn <= 2048
