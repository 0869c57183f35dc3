"""The serving process's collector (gateway/collector.py), in fresh interpreters running the real gateway
app's lifespan: the test process's own collector is left as it is."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import asyncio, gc, json, time, weakref
from gateway import collector
from gateway.app import create_app

class Node:
    pass

async def main():
    app = create_app()
    collector.take_over(app, young_every_s=0.01, full_every_s=0.3)
    found = {"frozen": gc.get_freeze_count() > 0, "threshold_before": gc.get_threshold()}
    before = [s["collections"] for s in gc.get_stats()]
    async with app.router.lifespan_context(app):
        found["threshold_serving"] = gc.get_threshold()
        # A cycle that dies while the process makes few new objects: CPython alone would leave it until
        # 700 more net allocations; the pacer frees it within a pass or two.
        first, second = Node(), Node()
        first.other, second.other = second, first
        gone = weakref.ref(first)
        del first, second
        await asyncio.sleep(0.05)
        found["cycle_freed_in_50ms"] = gone() is None
        await asyncio.sleep(0.9)
        after = [s["collections"] for s in gc.get_stats()]
    found["young_passes"] = after[1] - before[1]
    found["full_passes"] = after[2] - before[2]
    found["threshold_after"] = gc.get_threshold()
    print(json.dumps(found))

asyncio.run(main())
"""


def test_a_serving_process_freezes_its_startup_heap_and_collects_on_the_clock() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["frozen"]
    assert found["cycle_freed_in_50ms"]
    # ~95 passes in 0.95 s at 10 ms; a loaded test machine stretches the sleeps, never shortens them.
    assert 30 <= found["young_passes"] <= 100
    # Full passes only on their own clock (0.3 s here): CPython's, after every 10 middle passes, are off.
    assert 1 <= found["full_passes"] <= 3
    assert found["threshold_serving"][2] > 1_000_000
    assert found["threshold_after"] == found["threshold_before"]
