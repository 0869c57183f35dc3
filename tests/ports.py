"""Ports for the processes a test starts and tells where to listen (`--port N`).

A port found free by binding port 0 and closing the socket is free for anyone until the process binds it:
the other xdist worker's process took one such port first in CI, answered this worker's readiness check,
and the two workers' deployment tests then talked to each other's replicas. So each worker hands out ports
from a block of its own, below the kernel's ephemeral range where neither a bind to port 0 nor an outgoing
connection lands, and never the same port twice in a run.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
from pathlib import Path

BLOCK_SIZE = 1_500  # a worker's share, the blocks stacked down from the ephemeral range; a suite takes ~100
LOWEST_PORT = 10_000  # below: well-known services
DEFAULT_EPHEMERAL_FLOOR = 32_768
# A random start, so two suites run side by side on one machine (by hand) rarely meet either.
_offsets = itertools.count(random.randrange(BLOCK_SIZE))


def _worker_index() -> int:
    digits = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return int(digits) if digits.isdigit() else 0


def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_EPHEMERAL_FLOOR


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as the servers bind theirs: a port a finished test's connections left in TIME_WAIT is usable
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def spawn_port() -> int:
    """A loopback port free now that no other worker of this run hands out, nor this one again."""
    start = _ephemeral_floor() - (_worker_index() + 1) * BLOCK_SIZE
    if start < LOWEST_PORT:
        raise RuntimeError(f"no block of {BLOCK_SIZE} ports for this worker below the ephemeral range")
    for _ in range(BLOCK_SIZE):
        port = start + next(_offsets) % BLOCK_SIZE
        if _bindable(port):
            return port
    raise RuntimeError(f"no free port left in {start}..{start + BLOCK_SIZE - 1}")
