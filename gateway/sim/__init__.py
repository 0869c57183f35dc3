"""Provider simulator: an OpenAI- and Anthropic-compatible HTTP server with faithful prompt caching.

Stands in for the real providers in tests, benchmarks and the demo; see `create_sim_app` and `run_sim`.
"""

from gateway.sim.app import create_sim_app
from gateway.sim.server import run_sim
from gateway.sim.settings import FaultKind, SimSettings

__all__ = ["FaultKind", "SimSettings", "create_sim_app", "run_sim"]
