"""The library as a local, read-only web page for people (``grimoire-beholder web``).

An adapter like ``cli`` and ``mcp_server``: routes (``routes.py``) over the ``Library`` facade
and its result types, Jinja2 templates and static files inside the package (no CDN, no build
step), a token and Host/Origin guard (``access.py``), and the server start (``launch.py``).
"""
