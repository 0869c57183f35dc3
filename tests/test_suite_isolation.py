"""The README's test command runs two pytest-xdist workers, one test folder each at a time
(tests/conftest.py): a Redis database that a folder's tests flush must be used by no other folder, whose
tests could be running at that moment (tests/redis_target.py numbers them); a port handed to a spawned
process is likewise the worker's own (tests/ports.py)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from tests.ports import spawn_port

TESTS = Path(__file__).parent
DATABASE = re.compile(r"redis_url\((\d+)\)")
FLUSHES = re.compile(r"\bflush\(")  # tests/redis_target.py's flush of a whole database
SKIPPED = ("agent_clis/npm", "langgraph_suite/upstream")


def databases() -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """Each database number: the folders that use it, and those that flush it."""
    used: dict[int, set[str]] = defaultdict(set)
    flushed: dict[int, set[str]] = defaultdict(set)
    for path in TESTS.rglob("*.py"):
        relative = path.relative_to(TESTS)
        if any(part in relative.as_posix() for part in SKIPPED) or path == Path(__file__):
            continue
        # A module at the top (the gateway harness) serves every folder: a group of its own here.
        text, folder = path.read_text(), relative.parts[0]
        for number in {int(n) for n in DATABASE.findall(text)}:
            used[number].add(folder)
            if FLUSHES.search(text):
                flushed[number].add(folder)
    return used, flushed


def test_a_flushed_database_belongs_to_one_folder() -> None:
    used, flushed = databases()
    assert flushed, "the scan finds the folders that flush their database"
    shared = {number: sorted(used[number]) for number in flushed if len(used[number]) > 1}
    assert not shared, f"databases flushed by one folder and used by another: {shared}"


def test_each_worker_hands_out_ports_of_its_own_below_the_ephemeral_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port handed to a spawned process (tests/ports.py) is one no other worker hands out, nor this one
    again, and not one the kernel gives a bind to port 0 or an outgoing connection meanwhile."""
    handed: dict[str, set[int]] = {}
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        handed[worker] = {spawn_port() for _ in range(50)}
    assert [len(ports) for ports in handed.values()] == [50, 50]
    assert not handed["gw0"] & handed["gw1"]
    floor = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert max(handed["gw0"] | handed["gw1"]) < floor
