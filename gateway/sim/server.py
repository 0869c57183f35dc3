"""Running the simulator as a server (used by `cachegate sim`)."""

from __future__ import annotations

import uvicorn

from gateway.sim.app import create_sim_app
from gateway.sim.settings import SimSettings


def run_sim(host: str = "127.0.0.1", port: int = 8900, settings: SimSettings | None = None) -> None:
    """Serve the simulator until interrupted; clients use base_url http://host:port/v1 (OpenAI) or
    http://host:port (Anthropic)."""
    uvicorn.run(create_sim_app(settings), host=host, port=port, log_level="warning")
