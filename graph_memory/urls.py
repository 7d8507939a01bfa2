"""URLs a host includes: `path("api/memory/", include("graph_memory.urls"))`."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, include, path, re_path

from graph_memory.api import urls as api_urls
from graph_memory.api.views import UnknownPathApi


def _without_trailing_slash(patterns: list[Any]) -> list[URLPattern]:
    """Each endpoint also without its trailing slash (`search?q=` as well as `search/?q=`).

    An assistant writing a URL by hand should not meet a 404 over a slash, and a redirect
    would make some clients drop the Authorization header. Unnamed, so `reverse()` gives
    the documented, slashed form; left out of the schema, which documents that form once.
    """
    extra = []
    for pattern in patterns:
        route = str(pattern.pattern)
        if not route.endswith("/"):
            continue
        view = pattern.callback.cls
        unlisted: Any = type(view.__name__, (view,), {"schema": None, "__module__": view.__module__})
        extra.append(path(route[:-1], unlisted.as_view(**pattern.callback.view_initkwargs)))
    return extra


urlpatterns = [
    path("", include("graph_memory.api.urls")),
    *_without_trailing_slash(api_urls.urlpatterns),
    # Last: any other path under the API answers the API's own JSON 404 (after
    # authentication), not the host's HTML page, so a client never has to
    # parse two error formats.
    re_path(r"^", UnknownPathApi.as_view(), name="graph-memory-unknown"),
]
