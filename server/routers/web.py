"""The web pages: the players' page at ``/``, the operators' console at ``/console``, and
their static files (plain HTML, CSS and JS modules, no build step).

The players' page speaks only the public API: REST for accounts, the lobby and hand
histories, and the websocket protocol v1 at ``/ws`` for play (docs/protocol.md). The console
speaks only the REST back office (``/admin``, docs/operators.md) with a staff account's token.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

WEB = Path(__file__).resolve().parent.parent / "web"
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


@router.get("/web/{name}")
async def static_file(name: str) -> FileResponse:
    """One file of server/web: a plain name (no folders), of a known type."""
    path = WEB / name
    media_type = MEDIA_TYPES.get(path.suffix)
    if "/" in name or name.startswith(".") or media_type is None or not path.is_file():
        raise HTTPException(status_code=404, detail=f"no file {name!r}")
    return FileResponse(path, media_type=media_type, headers=NO_CACHE)
