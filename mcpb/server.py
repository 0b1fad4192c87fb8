"""The bundle's entry point: the MCP server, as ``grimoire-beholder serve-mcp`` — read-only
unless a setting turns an upkeep tool on (the manifest passes the settings as
``GRIMOIRE_BEHOLDER_ALLOW_*`` environment variables).

The host runs it inside the bundle's own uv project (``uv run --project <bundle> server.py``),
so the package and its locked dependencies are importable here.
"""

import sys

from grimoire_beholder.cli.entry import main

sys.argv[1:] = ["serve-mcp"]
main()
