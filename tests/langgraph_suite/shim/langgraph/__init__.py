"""`langgraph` mapped to agent_runtime, for running LangGraph's own tests (tests/langgraph_suite).

Only put on sys.path by tests/langgraph_suite/run_suite.py's subprocess: never installed."""

from langgraph import _shim

_shim.install()
__getattr__ = _shim.module_getattr(__name__)
