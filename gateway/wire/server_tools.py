"""Which tools of a request a route may receive: the caller's own tools always; the provider's tools only
on that provider's routes.

A tool of any other type (web search, code execution, MCP, computer use, an advisor model ...) is defined
by the provider whose API the request is written in, and is run by that provider or, on another
provider's route, by LiteLLM. LiteLLM runs some of them itself: the Anthropic `advisor_20260301` tool
makes it call the model (and api_base and key) the tool names, in a loop, outside the gateway's metering.
So such a tool reaches only a route of the provider that defines it, which runs it with its own
account; and a tool that names a model there must name one of the gateway's configured models, so a
request cannot run a model the operator never chose (nor price it as the one it routed to). Anthropic's
server-side `fallbacks` (beta) name models too: on its routes each must be a configured one, and
`"default"` (a chain the provider picks) is refused; the reply is priced as the model that answered
(usage/served.py).

Gemini requests reach a Gemini route as they are (Google runs its own tools) and any other route
converted to Chat Completions (wire/gemini_convert.py keeps only function declarations), checked as such.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from gateway.errors import GatewayError, bad_request

# The tool types each wire leaves to the caller to run (Anthropic's custom tools may omit the type).
CALLER_TOOL_TYPES: dict[str, frozenset[str | None]] = {
    "openai": frozenset({"function", "custom"}),
    "responses": frozenset({"function", "custom"}),
    "anthropic": frozenset({None, "custom"}),
}
# The provider whose public API defines each wire's other tool types.
TOOL_PROVIDER = {"openai": "openai", "responses": "openai", "anthropic": "anthropic"}
# Body fields outside `tools` that give the provider tools to run (Anthropic's MCP connector: URLs, tokens).
TOOL_FIELDS: dict[str, tuple[str, ...]] = {"anthropic": ("mcp_servers",)}
# Body fields listing models the provider may answer with in the requested model's place (on another
# provider's route LiteLLM drops them: upstream/litellm_path.LITELLM_RESERVED).
MODEL_CHAIN_FIELDS: dict[str, str] = {"anthropic": "fallbacks"}


def check_tools(wire: str, provider: str, body: Mapping[str, Any], configured_models: Collection[str]) -> None:
    """Raise a 400 naming the first tool of `body` (in `wire`'s shape) that a route of `provider` may not
    receive; `configured_models` are the provider model ids of the gateway's routes to `provider`."""
    own_provider = TOOL_PROVIDER.get(wire)
    if own_provider is None:
        return
    tools = body.get("tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else []):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind in CALLER_TOOL_TYPES[wire] or not isinstance(tool, dict):
            continue  # not a provider tool (the wire's validation judges malformed entries)
        where = f"tools[{index}]"
        if provider != own_provider:
            raise _refused(
                f"{where}: tool type {_shown(kind)} runs only on {own_provider} models; this model is not.", where
            )
        _check_model(f"{where}.model", tool.get("model"), configured_models)
    for field in TOOL_FIELDS.get(wire, ()):
        if body.get(field) and provider != own_provider:
            raise _refused(f"'{field}' runs only on {own_provider} models; this model is not.", field)
    chain_field = MODEL_CHAIN_FIELDS.get(wire)
    if chain_field is not None and body.get(chain_field) is not None and provider == own_provider:
        _check_model_chain(chain_field, body[chain_field], configured_models)


def _check_model_chain(field: str, chain: Any, configured_models: Collection[str]) -> None:
    """Every model of a fallback chain is one the gateway serves; the provider's own chain is refused."""
    if isinstance(chain, str):
        raise _refused(
            f"{field}: {_shown(chain)} lets the provider pick models this gateway does not serve; "
            "list the fallback models by name.",
            field,
        )
    for index, entry in enumerate(chain if isinstance(chain, list) else []):
        if isinstance(entry, dict):
            _check_model(f"{field}[{index}].model", entry.get("model"), configured_models)


def _check_model(where: str, model: Any, configured_models: Collection[str]) -> None:
    if model is None:
        return  # the provider's default for the tool, on the route's own model family
    if not isinstance(model, str) or model not in configured_models:
        raise _refused(f"{where}: {_shown(model)} is not a model this gateway serves.", where)


def _shown(value: Any) -> str:
    """A caller's value in an error message: short and printable."""
    return repr(value)[:64] if isinstance(value, str) else "(not a string)"


def _refused(message: str, param: str) -> GatewayError:
    error = bad_request(message, param=param)
    error.should_retry = False  # the same request is refused again
    return error
