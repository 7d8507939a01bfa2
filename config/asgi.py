"""The project's ASGI application: Django, with the memory's MCP endpoint at /mcp/ (Streamable HTTP).

Serve it with `uvicorn config.asgi:application`: the ASGI lifespan (uvicorn's default) starts the MCP endpoint.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()
if settings.DEBUG:
    # What runserver does in development (admin's CSS and scripts); a production server serves
    # collected static files (STATIC_ROOT) itself.
    django_application = ASGIStaticFilesHandler(django_application)

# After Django is set up: the MCP server reads the tool list from the app's models and settings.
from graph_memory.api.mcp_server import with_mcp  # noqa: E402

application = with_mcp(django_application, path="/mcp/")
