"""The README's test command runs two pytest-xdist workers, one test folder each at a time
(tests/conftest.py): a Redis database that a folder's tests flush must be used by no other folder, whose
tests could be running at that moment (tests/redis_target.py numbers them)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

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
