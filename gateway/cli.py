"""The `cachegate` command."""

from __future__ import annotations

import argparse
import logging
import sys

import gateway  # noqa: F401  (offline defaults before anything imports litellm)


def serve(args: argparse.Namespace) -> None:
    import uvicorn

    from gateway.app import create_app
    from gateway.config import load_settings

    overrides = {k: v for k, v in {"host": args.host, "port": args.port}.items() if v is not None}
    settings = load_settings(args.config, **overrides)
    # One line per request from the telemetry stage (ids, counts, cost; never keys or content).
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.getLogger("cachegate").addHandler(handler)
    print(
        f"cachegate listening on http://{settings.host}:{settings.port} "
        f"({'config ' + args.config if args.config else 'embedded default'})",
        file=sys.stderr,
    )
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning", access_log=False)


def sim(args: argparse.Namespace) -> None:
    from gateway.sim.server import run_sim
    from gateway.sim.settings import SimSettings

    settings = SimSettings.realistic() if args.realistic else SimSettings()
    run_sim(args.host, args.port, settings)


def demo(args: argparse.Namespace) -> None:
    from gateway.demo.runner import run_demo

    print(run_demo(args.url, args.key, sessions=args.sessions, turns=args.turns))


def hash_key(args: argparse.Namespace) -> None:
    from gateway.config import hash_key as digest

    print(digest(args.key))


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="cachegate", description="Prompt-caching LLM gateway with a loop guard")
    commands = root.add_subparsers(dest="command", required=True)

    run = commands.add_parser("serve", help="run the gateway")
    run.add_argument("--config", help="YAML config (default: the embedded default)")
    run.add_argument("--host")
    run.add_argument("--port", type=int)
    run.set_defaults(handler=serve)

    simulator = commands.add_parser("sim", help="run the provider simulator")
    simulator.add_argument("--host", default="127.0.0.1")
    simulator.add_argument("--port", type=int, default=4010)
    simulator.add_argument("--realistic", action="store_true", help="realistic latency model")
    simulator.set_defaults(handler=sim)

    demo_run = commands.add_parser("demo", help="drive realistic agent traffic through a gateway")
    demo_run.add_argument("--url", help="gateway URL (default: start the embedded default)")
    demo_run.add_argument("--key", default="sk-cachegate-dev", help="tenant key to send")
    demo_run.add_argument("--sessions", type=int, default=6, help="SWE-bench sessions to replay")
    demo_run.add_argument("--turns", type=int, default=20, help="turns per replayed session")
    demo_run.set_defaults(handler=demo)

    hasher = commands.add_parser("hash-key", help="print the hash of a virtual key for the config")
    hasher.add_argument("key")
    hasher.set_defaults(handler=hash_key)
    return root


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    args.handler(args)


if __name__ == "__main__":
    main()
