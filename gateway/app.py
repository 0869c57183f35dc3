"""The gateway's ASGI application."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.telemetry import TelemetryConfig
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from gateway.api import (
    admin,
    admin_budgets,
    admin_cache,
    admin_config,
    admin_guard,
    admin_keys,
    admin_spend,
    admin_state,
    context_retrieval,
    docs,
    endpoints,
    health,
    not_found,
    proxy,
    requests_log,
    responses,
)
from gateway.api.openapi import CHAT_COMPLETIONS_BODY, MESSAGES_BODY, RESPONSES_BODY, request_body
from gateway.config import Settings, load_settings
from gateway.dashboard import routes as dashboard_routes
from gateway.live.sync import LiveConfigSync, reload_on_hangup
from gateway.mcp.endpoint import mount_mcp
from gateway.services import Services, create_services
from gateway.stages import build_pipeline


def mount_simulator(app: FastAPI, settings: Settings) -> None:
    from gateway.sim.app import create_sim_app
    from gateway.sim.settings import SimSettings

    # The gateway's admin keys guard the simulator's controls; its provider endpoints take any key.
    options = {
        "replay_file": settings.simulator_replay_file,
        "record_requests": settings.simulator_record_requests,
        "admin_key_hashes": settings.admin_keys,
    }
    realistic = settings.simulator_latency == "realistic"
    sim_settings = SimSettings.realistic(**options) if realistic else SimSettings.model_validate(options)
    app.mount("/sim", create_sim_app(sim_settings))


def create_app(settings: Settings | None = None, config_file: str | Path | None = None) -> FastAPI:
    """`config_file`: where `settings` were read, reloaded on SIGHUP and when it changes (gateway/live/)."""
    settings = settings or load_settings()
    services: Services = create_services(settings)
    services.pipeline = build_pipeline(services)
    live = LiveConfigSync(services, Path(config_file) if config_file else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        keys = asyncio.create_task(services.managed_keys.run())  # runtime keys, reloaded on every change
        records = asyncio.create_task(services.requests.run())  # request records, off the request path
        alerts = asyncio.create_task(services.alerts.run())  # alert webhooks (gateway/alerts/)
        tasks = [keys, records, alerts, asyncio.create_task(live.follow_store())]  # live config (gateway/live/)
        if live.config_file is not None and settings.config_watch_s > 0:
            tasks.append(asyncio.create_task(live.watch_file(settings.config_watch_s)))
        for extra in services.extras.values():  # stage-owned work that starts with the app (e.g. MCP upstreams)
            if (start := getattr(extra, "start", None)) is not None:
                tasks.append(asyncio.create_task(start()))
        reload_on_hangup(live)
        if services.ledger is not None and services.budget_seeder is not None:
            await services.ledger.start()  # the spend ledger (gateway/ledger/), then budgets seeded from it
            await services.budget_seeder.start()
        yield
        for task in tasks:
            task.cancel()
        await services.close()

    # FastAPI's own OpenTelemetry off: the gateway makes its spans itself (gateway/tracing.py), and the
    # check FastAPI runs on every request for a configured provider costs ~5% of the gateway's CPU.
    no_telemetry: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}
    # The OpenAPI document and the docs page need an admin key (gateway/api/docs.py): FastAPI's are open.
    app = FastAPI(
        title="cachegate",
        version="0.1.0",
        lifespan=lifespan,
        telemetry=no_telemetry,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.services = services
    app.state.live_config = live
    logging.getLogger("cachegate").setLevel(settings.log_level.upper())

    app.add_api_route(
        "/v1/chat/completions",
        proxy.chat_completions,
        methods=["POST"],
        openapi_extra=request_body(CHAT_COMPLETIONS_BODY),
    )
    app.add_api_route("/v1/messages", proxy.messages, methods=["POST"], openapi_extra=request_body(MESSAGES_BODY))
    app.add_api_route("/v1/messages/count_tokens", endpoints.count_tokens, methods=["POST"])
    app.add_api_route("/v1/embeddings", endpoints.embeddings, methods=["POST"])
    app.add_api_route("/v1/completions", endpoints.completions, methods=["POST"])
    app.add_api_route("/v1/responses", proxy.responses, methods=["POST"], openapi_extra=request_body(RESPONSES_BODY))
    app.add_api_route("/v1/responses/{response_id}", responses.get_response, methods=["GET"])
    app.add_api_route("/v1/responses/{response_id}", responses.delete_response, methods=["DELETE"])
    app.add_api_route("/v1/models", health.models, methods=["GET"])
    app.add_api_route("/healthz", health.healthz, methods=["GET"])
    app.add_api_route("/readyz", health.readyz, methods=["GET"])
    app.add_api_route("/metrics", health.metrics, methods=["GET"])
    app.add_api_route(docs.OPENAPI_PATH, docs.openapi_document, methods=["GET"], include_in_schema=False)
    app.add_api_route(docs.DOCS_PATH, docs.swagger_ui, methods=["GET"], include_in_schema=False)
    app.include_router(admin.router)
    app.include_router(dashboard_routes.router)
    app.include_router(admin_cache.router)
    app.include_router(admin_state.router)
    app.include_router(admin_guard.router)
    app.include_router(admin_keys.router)
    app.include_router(admin_budgets.router)
    app.include_router(admin_config.router)
    app.include_router(admin_spend.router)
    app.include_router(requests_log.router)
    app.include_router(context_retrieval.router)
    mount_mcp(app, services)  # /mcp, when upstream MCP servers are configured (gateway/mcp/)

    app.add_exception_handler(StarletteHTTPException, not_found.route_miss)

    @app.exception_handler(RequestValidationError)
    async def invalid_admin_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            {"error": {"type": "invalid_request_error", "message": str(exc.errors())[:1000]}}, status_code=400
        )

    app.add_middleware(proxy.DirectRoutes)  # before CORS, so that CORS still wraps the proxy endpoints
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["*"], allow_headers=["*"]
        )
    if settings.embedded_simulator:
        mount_simulator(app, settings)
    return app
