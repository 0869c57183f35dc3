"""Streams whose clients hang up while Redis stalls give their concurrency places back in Redis once it
answers again (issue 26, finding 6: the releases went to the per-replica fallback, and the key stayed at
429 "retry in 863 s" with nothing in flight)."""

from __future__ import annotations

import os
import re
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.deploy.processes import redis_server
from tests.gateway_harness import RunningGateway, running_gateway
from tests.governance.test_rate_limits import chat, limited

COOLDOWN_S = 2.0  # ResilientStore's: after a Redis timeout, the fallback serves for this long


def in_flight(gw: RunningGateway) -> float:
    found = re.search(r"^cachegate_in_flight_requests (\S+)$", gw.metrics(), re.M)
    return float(found.group(1)) if found else 0.0


def test_streams_hung_up_while_redis_stalls_give_their_places_back() -> None:
    with tempfile.TemporaryDirectory() as logs, redis_server(Path(logs)) as (server, url):
        settings = limited({"concurrent_requests": 2}, redis_url=url, redis_timeout_s=0.3)
        with running_gateway(**settings, simulator_latency="realistic") as gw, ThreadPoolExecutor(2) as pool:
            client = gw.openai()
            streams = [
                client.chat.completions.create(
                    model="gpt-4o-mini",
                    stream=True,
                    messages=[{"role": "user", "content": f"[[sim:tokens 40]] stream {i}"}],
                )
                for i in range(2)
            ]
            for stream in streams:
                next(iter(stream))  # halfway: both places held
            assert chat(gw).status_code == 429
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                assert chat(gw, "globex").status_code == 200  # its state calls time out: the fallback serves
                for stream in streams:
                    stream.close()  # the clients hang up while Redis is stalled
                deadline = time.monotonic() + 10
                while in_flight(gw) > 0:  # the two streams end (their places given back) with Redis stalled
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            time.sleep(COOLDOWN_S + 0.5)  # the replica calls Redis again (until then its fallback admits)
            deadline = time.monotonic() + 10
            while True:  # once Redis answers again, both places are free there
                codes = sorted(pool.map(lambda i: chat(gw, text=f"[[sim:tokens 40]] after {i}").status_code, range(2)))
                if codes == [200, 200]:
                    break
                assert time.monotonic() < deadline, f"a place is still held in Redis: {codes}"
                time.sleep(0.5)
