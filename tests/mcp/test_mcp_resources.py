"""Resources pass through /mcp like prompts: listed across the servers a key may use, named
'<server>__<name>', with URIs that name their server ('cachegate://<server>/<its URI>', templates too),
read back from that server only; bounded like tool results."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from gateway.mcp.errors import UPSTREAM_FAILED
from tests.gateway_harness import RunningGateway
from tests.mcp.conftest import key_headers, mcp_client


async def test_resources_and_templates_are_listed_under_their_servers_names(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        resources = {r.name: r.uri for r in (await client.list_resources()).resources}
        templates = {t.name: t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert resources == {
        "files__notes": "cachegate://files/file:///notes.txt",
        "local__notes": "cachegate://local/file:///notes.txt",
    }
    assert templates == {
        "files__file": "cachegate://files/file:///{path}",
        "local__file": "cachegate://local/file:///{path}",
    }


async def test_a_resource_is_read_from_the_server_its_uri_names(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        read = await client.read_resource("cachegate://local/file:///notes.txt")
        with pytest.raises(MCPError) as too_large:  # a template's URI, expanded by the client
            await client.read_resource("cachegate://files/file:///big.txt")
    [content] = read.contents
    assert isinstance(content, types.TextResourceContents) and content.text == "hello from the file tool\n"
    assert content.uri == "cachegate://local/file:///notes.txt"
    assert too_large.value.code == UPSTREAM_FAILED and "larger than" in too_large.value.message


async def test_a_key_sees_and_reads_only_its_servers_resources(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers("globex")) as client:
        names = {r.name for r in (await client.list_resources()).resources}
        refused = []
        for uri in (
            "cachegate://local/file:///notes.txt",
            "file:///notes.txt",
            "cachegate://nowhere/x",
            "cachegate://files",
        ):
            with pytest.raises(MCPError) as error:
                await client.read_resource(uri)
            refused.append(error.value.code)
    assert names == {"files__notes"}
    assert refused == [types.INVALID_PARAMS] * 4
