"""LangGraph's copied tests (upstream/) and the shim (shim/) only run in their own pytest process
(run_suite.py): the normal run collects test_langgraph_suite_selection.py alone, which reads its outcome.

That process is started at collection when the test is selected (in a run without pytest-xdist workers),
at a lower CPU priority: its minute and more of work overlaps the rest of the suite instead of adding to it."""

from __future__ import annotations

import pytest

from tests.langgraph_suite.test_langgraph_suite_selection import SUITE, SuiteRun

collect_ignore = ["upstream", "shim", "stubs", "run_suite.py"]
SLOW_TEST = "test_expected_langgraph_tests_pass_on_agent_runtime"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under pytest-xdist every worker collects every test but runs only some: the test starts it, the
    # other worker being the overlap then.
    if any(item.name == SLOW_TEST for item in items) and not hasattr(config, "workerinput"):
        config.stash[SUITE] = SuiteRun.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """A run cut short leaves no suite process behind."""
    run = config.stash.get(SUITE, None)
    if run is not None and run.process.poll() is None:
        run.process.kill()
        run.process.wait()
