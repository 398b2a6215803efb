"""A server for scripted browser hands: the app in a thread of its own (uvicorn on a free
port, SQLite), every hand dealt from one stacked deck, an operator to create, pause and
resume tables. Playwright's sync API keeps the test's thread, so the server's event loop
runs beside it."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engine.cards import Deck
from server.app import create_app
from server.db import migrate
from server.db.session import make_engine
from server.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from live import serve  # noqa: E402
from server_helpers import FAST_HASHING, bearer, operator_token  # noqa: E402


class ScriptedServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url`` is the page's origin."""

    def __init__(self, directory: Path, deck: Callable[[], Deck], **settings: Any) -> None:
        self.settings = Settings(
            database_url=f"sqlite+aiosqlite:///{directory / 'scripted.db'}",
            **{**FAST_HASHING, "pause_between_hands_seconds": 0.5, **settings},
        )
        self.deck = deck
        self.url = ""
        self.operator = ""
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="scripted-server", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(30) or self._failure is not None:
            raise RuntimeError("the scripted server did not start") from self._failure

    def __enter__(self) -> ScriptedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        if self._failure is not None:
            raise self._failure

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """An operator's request; the answer's JSON, or an error on a failure status."""
        response = httpx.request(
            method, self.url + path, json=body, headers=bearer(self.operator), timeout=10
        )
        response.raise_for_status()
        return response.json()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            self._failure = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        engine = make_engine(self.settings.database_url)
        await migrate.upgrade(engine)
        await engine.dispose()
        app = create_app(self.settings)
        async with app.router.lifespan_context(app):
            app.state.cardroom.deck_factory = self.deck
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as c:
                self.operator = await operator_token(c, self.settings)
            async with serve(app) as host:
                self.url = f"http://{host}"
                self._ready.set()
                await self._stop.wait()
