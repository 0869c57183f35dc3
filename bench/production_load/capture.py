"""An agent CLI's tools and system prompt, for the agent workload's --parts (bench/production_load/agent.py).

    python -m bench.production_load.capture OUT.json   # needs tests/agent_clis/npm installed (npm ci there)

Runs Claude Code headless (`claude -p`, as tests/agent_clis runs it) against a loopback server that
records its first request and answers it with a one-word reply, then writes that request's `tools` and
`system` to OUT.json. Nothing leaves the machine; the file is the installed CLI's own text (kept out of
the repository: capture it where you measure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CLI = Path(__file__).resolve().parents[2] / "tests" / "agent_clis" / "npm" / "node_modules" / ".bin" / "claude"
REPLY = [
    {"type": "message_start", "message": {"id": "msg_capture", "type": "message", "role": "assistant",
     "model": "claude", "content": [], "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]  # fmt: skip


def _recorder(requests: list[dict[str, Any]]) -> type[BaseHTTPRequestHandler]:
    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            requests.append(json.loads(self.rfile.read(int(self.headers.get("content-length", 0)))))
            events = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in REPLY).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(events)))
            self.end_headers()
            self.wfile.write(events)

        def log_message(self, *_: object) -> None:
            pass

    return Recorder


def capture() -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _recorder(requests))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as home:
            env = {
                **os.environ, "HOME": home, "ANTHROPIC_API_KEY": "sk-capture", "IS_SANDBOX": "1",
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }  # fmt: skip
            argv = [str(CLI), "-p", "--dangerously-skip-permissions", "say hi"]
            subprocess.run(
                argv, env=env, cwd=home, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=120, check=True
            )
    finally:
        server.shutdown()
    first = next(r for r in requests if r.get("tools"))
    return {"source": "claude-code", "tools": first["tools"], "system": first.get("system", "")}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    parts = capture()
    Path(sys.argv[1]).write_text(json.dumps(parts))
    size = len(json.dumps(parts["tools"])) + len(json.dumps(parts["system"]))
    print(f"{len(parts['tools'])} tools and a system prompt, {size / 1024:.0f} KB, in {sys.argv[1]}")


if __name__ == "__main__":
    main()
