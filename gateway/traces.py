"""Agent traces (real SWE-bench sessions in OpenAI tool-call format), for replay.

Two sources: the full shared traces (107 sessions, for the benchmarks and tests; in the project's
shared/ folder beside the repository, or where CACHEGATE_SHARED_DIR points), and the demo's own small
set shipped inside the package (`demo_traces()`: 6 of those sessions, gateway/demo/sessions.jsonl), so
`cachegate demo` works from a fresh clone or an installed wheel with nothing beside it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO, Any

DEMO_TRACES = "sessions.jsonl"  # package data of gateway.demo (pyproject's package-data)

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    configured = os.environ.get("CACHEGATE_SHARED_DIR")
    return Path(configured) if configured else REPO_ROOT.parent / "shared"


def default_traces() -> Path:
    return shared_dir() / "data" / "agent-traces" / "swebench-dev.jsonl.gz"


def demo_traces() -> Traversable:
    """The demo's sessions, read from the installed package (never from shared/)."""
    return resources.files("gateway.demo").joinpath(DEMO_TRACES)


def read_sessions(path: Path | Traversable | None = None) -> Iterator[dict[str, Any]]:
    """Each session: id, resolved, exit_status, tools, messages (request k carries messages[:k])."""
    source = path or default_traces()
    with source.open("rb") as raw, _text(raw, gzipped=source.name.endswith(".gz")) as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _text(raw: IO[bytes], *, gzipped: bool) -> IO[str]:
    return gzip.open(raw, "rt", encoding="utf-8") if gzipped else io.TextIOWrapper(raw, encoding="utf-8")


def assistant_turns(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes k where messages[k] is an assistant message: the requests an agent sent (messages[:k])."""
    return [k for k, message in enumerate(messages) if message.get("role") == "assistant" and k > 0]
