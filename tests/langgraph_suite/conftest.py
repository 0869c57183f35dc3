"""LangGraph's copied tests (upstream/) and the shim (shim/) only run in their own pytest process
(run_suite.py): the normal run collects test_langgraph_suite_selection.py alone, which starts it."""

collect_ignore = ["upstream", "shim", "stubs", "run_suite.py"]
