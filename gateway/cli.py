"""The `cachegate` command."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

import gateway  # first: offline defaults before anything imports litellm

if TYPE_CHECKING:
    import httpx

    from gateway.config import Settings


def serve(args: argparse.Namespace) -> None:
    # The app's imports (litellm) take seconds: only after the checks, so a mistake is told at once.
    from gateway.config import load_settings
    from gateway.config.loading import ConfigError
    from gateway.preflight import PortUnavailable, check_port_free, redis_unreachable
    from gateway.workers import WorkersRefused, run_workers, server_options, worker_count

    overrides = {k: v for k, v in {"host": args.host, "port": args.port}.items() if v is not None}
    try:
        settings = load_settings(args.config, **overrides)
    except ConfigError as mistake:
        sys.exit(f"cachegate: {mistake}")
    if not settings.tenants:
        print(f"cachegate: {args.config} has no tenants: every request will be refused (401)", file=sys.stderr)
    # One line per request from the telemetry stage (ids, counts, cost; never keys or content).
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.getLogger("cachegate").addHandler(handler)
    refuse_or_warn_exposure(settings, insecure=args.insecure)
    try:
        workers = worker_count(args.workers, settings)
    except WorkersRefused as refused:
        sys.exit(f"cachegate: {refused}")
    try:
        check_port_free(settings.host, settings.port)
    except PortUnavailable as taken:
        sys.exit(f"cachegate: {taken}")
    if settings.redis_url and (redis_down := redis_unreachable(settings.redis_url, settings.redis_timeout_s)):
        print(f"cachegate: {redis_down}", file=sys.stderr)
    print(
        f"cachegate listening on http://{settings.host}:{settings.port} "
        f"({'config ' + args.config if args.config else 'embedded default'}; "
        f"{workers} worker{'s' if workers > 1 else ''})",
        file=sys.stderr,
    )
    if workers > 1:
        run_workers(settings, args.config, workers)
        return
    import uvicorn

    from gateway import collector
    from gateway.app import create_app

    app = create_app(settings, args.config)  # reloaded on SIGHUP and when it changes (gateway/live/)
    collector.take_over(app)
    uvicorn.run(app, **server_options(settings))


def refuse_or_warn_exposure(settings: Settings, *, insecure: bool) -> None:
    """Exit before binding a non-loopback address with a configuration anyone could abuse, unless the
    operator said --insecure; then warn on every start."""
    from gateway.exposure import exposure_problems

    problems = exposure_problems(settings)
    if not problems:
        return
    listed = "".join(f"\n  - {problem}" for problem in problems)
    if not insecure:
        sys.exit(
            f"cachegate: refusing to serve on {settings.host}, which is not a loopback address:{listed}\n"
            "Fix these, bind to 127.0.0.1, or pass --insecure to serve anyway."
        )
    logging.getLogger("cachegate.exposure").warning(
        "--insecure: serving on %s, which is not a loopback address, although:%s", settings.host, listed
    )


def sim(args: argparse.Namespace) -> None:
    from gateway.config import hash_key as digest
    from gateway.sim.server import run_sim
    from gateway.sim.settings import SimSettings

    # The controls (/sim/stats, /sim/requests, /sim/reset, /sim/faults) need this key; without one they
    # answer 403 to everyone. The environment variable keeps the key out of the process list.
    admin_key = args.admin_key or os.environ.get("CACHEGATE_SIM_ADMIN_KEY")
    options = {"admin_key_hashes": [digest(admin_key)] if admin_key else [], "record_requests": args.record_requests}
    settings = SimSettings.realistic(**options) if args.realistic else SimSettings.model_validate(options)
    run_sim(args.host, args.port, settings)


def demo(args: argparse.Namespace) -> None:
    import httpx

    from gateway.demo.runner import run_demo

    try:
        if args.url:
            check_tenant_key(args.url, args.key)
        print(run_demo(args.url, args.key, sessions=args.sessions, turns=args.turns, metrics_key=args.metrics_key))
    except httpx.HTTPError as exc:
        sys.exit(unreachable("cachegate demo", args.url, exc))


def check_tenant_key(url: str, key: str) -> None:
    """Exit if the gateway refuses the key, before a whole run of 401s: a request with no model is answered
    400 by the gateway itself once the key is accepted, and nothing reaches a provider."""
    import httpx

    headers = {"authorization": f"Bearer {key}"}
    response = httpx.post(f"{url.rstrip('/')}/v1/chat/completions", json={}, headers=headers)
    if response.status_code in (401, 403):
        sys.exit(f"cachegate demo: the gateway at {url} refused the key ({response.status_code}): pass a tenant key")


def unreachable(command: str, url: str | None, exc: Exception) -> str:
    """One line for a gateway that did not answer (down, wrong URL, timeout)."""
    return f"{command}: cannot reach the gateway at {url}: {exc or type(exc).__name__}"


def hash_key(args: argparse.Namespace) -> None:
    from gateway.config import hash_key as digest

    print(digest(args.key))


def keys(args: argparse.Namespace) -> None:
    """Managed keys through a running gateway's admin API."""
    import json

    import httpx

    admin_key = args.admin_key or os.environ.get("CACHEGATE_ADMIN_KEY")
    if not admin_key:
        sys.exit("cachegate keys: give --admin-key or set CACHEGATE_ADMIN_KEY")
    base = args.url.rstrip("/") + "/admin/keys"
    headers = {"authorization": f"Bearer {admin_key}"}
    try:
        response = admin_request(args, base, headers)
    except httpx.HTTPError as exc:
        sys.exit(unreachable(f"cachegate keys {args.action}", args.url, exc))
    if response.status_code in (401, 403):
        sys.exit(
            f"cachegate keys {args.action}: the gateway refused the admin key ({response.status_code}): "
            "pass one of its admin keys with --admin-key or CACHEGATE_ADMIN_KEY"
        )
    if response.status_code >= 400:
        sys.exit(f"cachegate keys {args.action}: {response.status_code} {response.text[:300]}")
    print(json.dumps(response.json(), indent=2))


def admin_request(args: argparse.Namespace, base: str, headers: dict[str, str]) -> httpx.Response:
    import json

    import httpx

    if args.action == "create":
        body = {"tenant": args.tenant, "name": args.name or "", "allowed_models": args.models, "expires_at": None}
        for field in ("limits", "policy"):
            if getattr(args, field) is not None:
                try:
                    body[field] = json.loads(getattr(args, field))
                except json.JSONDecodeError as exc:
                    sys.exit(f"cachegate keys create: --{field} is not valid JSON: {exc}")
        if args.expires_in is not None:
            import time

            body["expires_at"] = time.time() + args.expires_in
        response = httpx.post(base, json=body, headers=headers)
    elif args.action == "list":
        response = httpx.get(base, params={"tenant": args.tenant} if args.tenant else None, headers=headers)
    elif args.action == "rotate":
        response = httpx.post(f"{base}/{args.id}/rotate", headers=headers)
    else:
        response = httpx.delete(f"{base}/{args.id}", headers=headers)
    return response


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="cachegate", description="Prompt-caching LLM gateway with a loop guard")
    root.add_argument("--version", action="version", version=f"%(prog)s {gateway.__version__}")
    commands = root.add_subparsers(dest="command", required=True)

    run = commands.add_parser("serve", help="run the gateway")
    run.add_argument("--config", help="YAML config (default: the embedded default)")
    run.add_argument("--host")
    run.add_argument("--port", type=int)
    run.add_argument(
        "--insecure",
        action="store_true",
        help="serve on a non-loopback address despite the embedded simulator, well-known keys or an open "
        "/metrics (logs a warning on every start)",
    )
    run.add_argument(
        "--workers",
        type=int,
        help="gateway processes on the port (default: one per core when redis_url is set, else 1; "
        "more than 1 needs redis_url)",
    )
    run.set_defaults(handler=serve)

    simulator = commands.add_parser("sim", help="run the provider simulator")
    simulator.add_argument("--host", default="127.0.0.1")
    simulator.add_argument("--port", type=int, default=4010)
    simulator.add_argument("--realistic", action="store_true", help="realistic latency model")
    simulator.add_argument(
        "--admin-key", help="key for the /sim/* controls (default: $CACHEGATE_SIM_ADMIN_KEY; none: controls closed)"
    )
    simulator.add_argument(
        "--record-requests", action="store_true", help="keep recent request bodies for GET /sim/requests"
    )
    simulator.set_defaults(handler=sim)

    demo_run = commands.add_parser("demo", help="drive realistic agent traffic through a gateway")
    demo_run.add_argument("--url", help="gateway URL (default: start the embedded default)")
    demo_run.add_argument("--key", default="sk-cachegate-dev", help="tenant key to send")
    demo_run.add_argument("--metrics-key", help="metrics token or admin key, where /metrics is not open")
    demo_run.add_argument("--sessions", type=int, default=6, help="SWE-bench sessions to replay (6 ship)")
    demo_run.add_argument("--turns", type=int, default=20, help="turns per replayed session")
    demo_run.set_defaults(handler=demo)

    managed = commands.add_parser("keys", help="issue, list, rotate and revoke managed keys of a running gateway")
    managed.add_argument("--url", default="http://127.0.0.1:4000", help="the gateway")
    managed.add_argument("--admin-key", help="an admin key (default: $CACHEGATE_ADMIN_KEY)")
    actions = managed.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="a new key; its secret is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--name")
    create.add_argument("--models", nargs="+", help="route names the key may use (within the tenant's)")
    create.add_argument("--expires-in", type=float, help="seconds until the key expires")
    create.add_argument(
        "--limits", help='JSON, e.g. \'{"requests_per_minute": 60, "budgets": [{"window": "day", "usd": 5}]}\''
    )
    create.add_argument(
        "--policy", help='JSON policy overrides, e.g. \'{"guard": {"limits": {"max_llm_calls": 100}}}\''
    )
    listing = actions.add_parser("list", help="the managed keys (never their secrets)")
    listing.add_argument("--tenant")
    for action, text in (("rotate", "a new secret; the old one stops working"), ("revoke", "end a key")):
        actions.add_parser(action, help=text).add_argument("id")
    managed.set_defaults(handler=keys)

    hasher = commands.add_parser("hash-key", help="print the hash of a virtual key for the config")
    hasher.add_argument("key")
    hasher.set_defaults(handler=hash_key)
    return root


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    args.handler(args)


if __name__ == "__main__":
    main()
