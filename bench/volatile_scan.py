"""CPU of masking volatile content (gateway/prompt_cache/volatile.py) in recorded agent messages: the
prompt cache's scan against the combined pattern run over each whole text, in one run (issue 28).

    python -m bench.volatile_scan [--traces FILE] [--rounds 5] --out DIR

Every message of every session of the traces (default shared/data/agent-traces), as the JSON the prompt
cache masks, is masked by `volatile.mask` and by `_COMBINED.sub` over the whole text (the semantics the
scan keeps: tests/prompt_cache/test_volatile_scan.py). The two alternate in rounds; reported: seconds per
pass over all messages (process time, median over rounds), microseconds per message and the ratio.
Output: DIR/volatile_scan.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.shared_data import require
from gateway.prompt_cache import volatile
from gateway.traces import default_traces, read_sessions


def whole_pattern(text: str) -> str:
    return volatile._COMBINED.sub(lambda match: f"<{match.lastgroup}>", text)


SIDES: dict[str, Callable[[str], str]] = {"whole pattern": whole_pattern, "scan": volatile.mask}


def texts(traces: Path) -> list[str]:
    return [orjson.dumps(message).decode() for session in read_sessions(traces) for message in session["messages"]]


def one_pass(mask: Callable[[str], str], messages: list[str]) -> float:
    started = time.process_time()
    for text in messages:
        mask(text)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=Path, default=None, help="session traces (JSONL, gzip or not)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True, help="folder for volatile_scan.json")
    args = parser.parse_args()
    messages = texts(require(args.traces or default_traces(), "--traces"))
    assert all(volatile.mask(text) == whole_pattern(text) for text in messages), "the scan must mask as the pattern"
    seconds: dict[str, list[float]] = {side: [] for side in SIDES}
    for number in range(args.rounds):
        for side, mask in SIDES.items():
            seconds[side].append(one_pass(mask, messages))
        print(f"  round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)
    median = {side: statistics.median(values) for side, values in seconds.items()}
    report = {
        "messages": len(messages),
        "megabytes": round(sum(map(len, messages)) / 1e6, 2),
        "seconds_per_pass": {side: round(value, 4) for side, value in median.items()},
        "us_per_message": {side: round(value / len(messages) * 1e6, 2) for side, value in median.items()},
        "scan_over_whole_pattern": round(median["scan"] / median["whole pattern"], 3),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "volatile_scan.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
