"""Provider-side state on a shared provider account: ids that name it are refused, and nothing is stored.

Every tenant without its own provider key calls the provider with the same account, where a stored
response, conversation, prompt template, container, message or context cache is open to anyone holding
its id. So for those tenants the gateway stores nothing there (`store` is forced off: the gateway keeps
Responses state itself, gateway/responses_store.py, and `previous_response_id` never leaves it) and
refuses a request that names such an id. Refused, not namespaced: the provider mints these ids (the
gateway does not proxy the endpoints that create them), so namespacing would need a table of the
gateway's own, and an id a tenant did not get from its own request is another tenant's or the operator's.
A tenant with its own key for the route owns that account and keeps the provider's API whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gateway.errors import GatewayError, bad_request

# Wires whose provider keeps what `store` asks for (Chat Completions off by default, Responses on).
STORE_DEFAULT_ON = {"openai": False, "responses": True}


def shared_account_body(wire: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """`body` as a tenant on the shared account may send it: no provider-side id, `store` off.
    Raises a 400 naming the first id field."""
    if (where := next(_provider_ids(wire, body), None)) is not None:
        raise _refused(where)
    sent = dict(body)
    if wire in STORE_DEFAULT_ON and (STORE_DEFAULT_ON[wire] or "store" in body):
        sent["store"] = False
    if wire == "responses" and isinstance(items := body.get("input"), list):
        sent["input"] = [item for item in items if not _stored_reasoning(item)]
    return sent


def _stored_reasoning(item: Any) -> bool:
    """A reasoning item without its encrypted content: the provider looks it up in its store by id (another
    tenant's, or not found with `store` off). Dropped: the model answers without that earlier reasoning,
    as the provider suggests ("remove this item from your input"), and the gateway's replay keeps working."""
    return isinstance(item, dict) and item.get("type") == "reasoning" and not item.get("encrypted_content")


def _refused(where: str) -> GatewayError:
    error = bad_request(
        f"'{where}' names state kept at the provider account, which this gateway's tenants share: "
        "send the content itself.",
        param=where,
    )
    error.should_retry = False  # the same request is refused again
    return error


def _provider_ids(wire: str, body: Mapping[str, Any]) -> Iterator[str]:
    if wire == "responses":
        yield from _responses_ids(body)
    elif wire == "anthropic":
        yield from _anthropic_ids(body)
    elif wire == "gemini" and body.get("cachedContent") is not None:
        yield "cachedContent"  # a context cache of the account ("cachedContents/..."): its prompt


def _responses_ids(body: Mapping[str, Any]) -> Iterator[str]:
    if body.get("conversation") is not None:
        yield "conversation"
    prompt = body.get("prompt")
    if isinstance(prompt, dict) and prompt.get("id") is not None:
        yield "prompt.id"
    items = body.get("input")
    for index, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("type") == "item_reference":
            yield f"input[{index}]"
    tools = body.get("tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else []):
        # A code interpreter's container is "auto"/an object (new) or a string: a container's id.
        if isinstance(tool, dict) and tool.get("type") == "code_interpreter" and isinstance(tool.get("container"), str):
            yield f"tools[{index}].container"


def _anthropic_ids(body: Mapping[str, Any]) -> Iterator[str]:
    container = body.get("container")
    if isinstance(container, str) or (isinstance(container, dict) and container.get("id") is not None):
        yield "container"
    diagnostics = body.get("diagnostics")
    if isinstance(diagnostics, dict) and diagnostics.get("previous_message_id") is not None:
        yield "diagnostics.previous_message_id"
