"""The MCP gateway: /mcp fronts the configured upstream MCP servers under the caller's cachegate key,
its per-tenant and per-key tool access, and the loop guard shared with the model side (docs/mcp.md)."""
