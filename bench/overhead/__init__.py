"""Gateway request-path overhead against calling the upstream directly, and against LiteLLM's proxy.

    python -m bench.overhead [--quick]

Every server is its own process (uvicorn, one worker, uvloop + httptools); the load generator too.
"""
