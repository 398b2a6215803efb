"""The web pages: the players' page at ``/``, the operators' console at ``/console``, the API
documentation at ``/docs`` (Swagger UI) and ``/redoc``, and their static files (plain HTML,
CSS and JS modules, no build step). The documentation viewers' code is the one the
``fastapi-offline`` package installs, served from here: the pages need no CDN.

The players' page speaks only the public API: REST for accounts, the lobby and hand
histories, and the websocket protocol v1 at ``/ws`` for play (docs/protocol.md). The console
speaks only the REST back office (``/admin``, docs/operators.md) with a staff account's token.
"""

from __future__ import annotations

import functools
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, Response

WEB = Path(__file__).resolve().parents[2] / "web"
# Swagger UI's and ReDoc's files, as installed with the fastapi-offline package.
DOCS_FILES = Path(fastapi_offline.__file__).resolve().parent / "static"
DOCS_FILE_NAMES = frozenset(("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"))
REDOC_PATH = "/redoc"
REDOC_FILE = "redoc.standalone.js"
REDOCLY_LOGO_URL = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
NO_CACHE = {"Cache-Control": "no-cache"}

router = APIRouter(tags=["web"], include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    return FileResponse(WEB / "index.html", media_type=MEDIA_TYPES[".html"], headers=NO_CACHE)


@router.get("/console")
async def console() -> FileResponse:
    return FileResponse(WEB / "console.html", media_type=MEDIA_TYPES[".html"], headers=NO_CACHE)


@router.get("/docs")
async def swagger_ui() -> FileResponse:
    return FileResponse(WEB / "docs.html", media_type=MEDIA_TYPES[".html"], headers=NO_CACHE)


@router.get(REDOC_PATH)
async def redoc() -> FileResponse:
    return FileResponse(WEB / "redoc.html", media_type=MEDIA_TYPES[".html"], headers=NO_CACHE)


@router.get("/favicon.ico")
async def favicon() -> FileResponse:
    """The site's icon, an SVG (the pages link it; browsers that ask by name get it too)."""
    return FileResponse(WEB / "favicon.svg", media_type=MEDIA_TYPES[".svg"])


@router.get("/docs-files/{name}")
async def docs_file(name: str) -> Response:
    """One of the documentation viewers' installed files, by its exact name (ReDoc's with
    its one outside address made this server's)."""
    if name not in DOCS_FILE_NAMES:
        raise HTTPException(status_code=404, detail=f"no file {name!r}")
    path = DOCS_FILES / name
    if name == REDOC_FILE:
        return Response(_redoc_bundle(), media_type=MEDIA_TYPES[path.suffix])
    return FileResponse(path, media_type=MEDIA_TYPES[path.suffix])


@functools.cache
def _redoc_bundle() -> bytes:
    """ReDoc's bundle, whose menu ends with Redocly's logo fetched from their site on every
    load (refused by the page's policy, an error in the console each time): the logo is
    this server's icon instead, so the page asks nothing of another host."""
    bundle = (DOCS_FILES / REDOC_FILE).read_bytes()
    return bundle.replace(REDOCLY_LOGO_URL, b"/web/favicon.svg")


@router.get("/web/{name}")
async def static_file(name: str) -> FileResponse:
    """One file of server/web: a plain name (no folders), of a known type."""
    path = WEB / name
    media_type = MEDIA_TYPES.get(path.suffix)
    if "/" in name or name.startswith(".") or media_type is None or not path.is_file():
        raise HTTPException(status_code=404, detail=f"no file {name!r}")
    return FileResponse(path, media_type=media_type, headers=NO_CACHE)
