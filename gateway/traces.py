"""The shared agent traces (real SWE-bench sessions in OpenAI tool-call format), for replay.

Used by the simulator's replay mode, the benchmarks and `cachegate demo`. The data lives in the
project's shared/ folder beside the repository, or where CACHEGATE_SHARED_DIR points.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    configured = os.environ.get("CACHEGATE_SHARED_DIR")
    return Path(configured) if configured else REPO_ROOT.parent / "shared"


def default_traces() -> Path:
    return shared_dir() / "data" / "agent-traces" / "swebench-dev.jsonl.gz"


def read_sessions(path: Path | None = None) -> Iterator[dict[str, Any]]:
    """Each session: id, resolved, exit_status, tools, messages (request k carries messages[:k])."""
    source = path or default_traces()
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def assistant_turns(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes k where messages[k] is an assistant message: the requests an agent sent (messages[:k])."""
    return [k for k, message in enumerate(messages) if message.get("role") == "assistant" and k > 0]
