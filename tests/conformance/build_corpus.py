"""Copy the recorded exchanges listed in corpus.txt from a checkout of pydantic-ai into cassettes/.

    python -m tests.conformance.build_corpus /path/to/pydantic-ai   # a git clone; the commit below is read

The cassettes are VCR recordings of the real OpenAI, Anthropic and Google APIs that pydantic-ai's own
test suite replays (MIT licence). They are copied byte for byte; nothing here edits a recording.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SOURCE_REPOSITORY = "https://github.com/pydantic/pydantic-ai"
SOURCE_COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
SOURCE_PREFIX = "tests/models/cassettes/"
HERE = Path(__file__).parent


def listed() -> list[str]:
    lines = (HERE / "corpus.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def main(checkout: str) -> None:
    out = HERE / "cassettes"
    for number, name in enumerate(listed(), 1):
        blob = subprocess.run(
            ["git", "-C", checkout, "show", f"{SOURCE_COMMIT}:{SOURCE_PREFIX}{name}"],
            check=True,
            capture_output=True,
        ).stdout
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        print(f"[{number}] {name} ({len(blob):,} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
