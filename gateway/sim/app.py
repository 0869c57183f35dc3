"""The simulator's ASGI application."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.sim import admin
from gateway.sim.anthropic_api import count_tokens, messages
from gateway.sim.faults import SimulatedDisconnect
from gateway.sim.gemini_api import generate_content
from gateway.sim.openai_api import chat_completions
from gateway.sim.openai_extras import completions, embeddings
from gateway.sim.openai_responses import responses
from gateway.sim.settings import SimSettings
from gateway.sim.state import SimState


class _DropOnDisconnectFault:
    """Ends the ASGI call without completing the response, so the server closes the connection mid-body
    (what a provider disconnect looks like) instead of logging a traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except SimulatedDisconnect:
            return
        except BaseExceptionGroup as group:
            _, rest = group.split(SimulatedDisconnect)
            if rest is not None:
                raise rest from None


def create_sim_app(settings: SimSettings | None = None) -> Starlette:
    """An OpenAI + Anthropic + Gemini compatible provider with its own caches, counters and faults."""
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/v1beta/models/{target}", generate_content, methods=["POST"]),
            Route("/v1/models", admin.list_models, methods=["GET"]),
            Route("/healthz", admin.healthz, methods=["GET"]),
            Route("/sim/stats", admin.stats, methods=["GET"]),
            Route("/sim/requests", admin.recent_requests, methods=["GET"]),
            Route("/sim/reset", admin.reset, methods=["POST"]),
            Route("/sim/faults", admin.queue_faults, methods=["POST"]),
        ]
    )
    app.add_middleware(_DropOnDisconnectFault)
    app.state.sim = SimState(settings or SimSettings())
    return app
