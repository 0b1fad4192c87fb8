"""The bundle's entry point: the read-only MCP server, as ``grimoire-beholder serve-mcp``.

The host runs it inside the bundle's own uv project (``uv run --project <bundle> server.py``),
so the package and its locked dependencies are importable here.
"""

import sys

from grimoire_beholder.cli import main

sys.argv[1:] = ["serve-mcp"]
main()
