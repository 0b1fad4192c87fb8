"""The MCP adapter: one FastMCP server over the ``Library``, its tools grouped by family."""
