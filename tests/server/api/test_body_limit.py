"""The limit on HTTP request bodies: a body over it is refused ``413 body_too_large`` while
it is read (by its Content-Length, or as a chunked body streams in), changes nothing, and is
never held: in the app (the chunks it asked for), and in a node's process (its memory)."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import PASSWORD, error_code, login, register

from tests.server.edge.test_gateway import http_app

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients"))
from live_server import LiveServer  # noqa: E402

MiB = 1024 * 1024
LIMIT = 16 * 1024  # the default


def assert_too_large(response: httpx.Response) -> None:
    assert response.status_code == 413, response.text
    assert error_code(response) == "body_too_large"
    assert str(LIMIT) in response.json()["error"]["message"]
    # An answer like every other: the security headers are on it.
    assert response.headers["x-content-type-options"] == "nosniff"


def padded_login(username: str, size: int) -> bytes:
    """A login's JSON, right password and all, padded with spaces to ``size`` bytes."""
    body = f'{{"username": "{username}", "password": "{PASSWORD}"}}'.encode()
    return body + b" " * (size - len(body))


class Chunks:
    """A body streamed without a Content-Length (chunked), counting what was asked for."""

    def __init__(self, body: bytes, chunk: int = 4096) -> None:
        self.body, self.chunk, self.sent = body, chunk, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), self.chunk):
            self.sent += 1
            yield self.body[start : start + self.chunk]


async def test_a_body_over_the_limit_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    async with http_app(tmp_path) as c:
        assert (await register(c, "ann")).status_code == 201
        # Its Content-Length says it: refused before it is read.
        assert_too_large(
            await c.post(
                "/auth/login",
                content=padded_login("ann", LIMIT + 1),
                headers={"content-type": "application/json"},
            )
        )
        # A registration over the limit makes no account.
        big = b'{"username": "bob", "password": "a good password", "pad": "' + b"x" * LIMIT
        assert_too_large(await c.post("/auth/register", content=big + b'"}'))
        bob = await c.post("/auth/login", json={"username": "bob", "password": "a good password"})
        assert bob.status_code == 401 and error_code(bob) == "bad_credentials"
        # Up to the limit, a body is read as ever: the same login, padded to the limit.
        answer = await c.post(
            "/auth/login",
            content=padded_login("ann", LIMIT),
            headers={"content-type": "application/json"},
        )
        assert answer.status_code == 200, answer.text


async def test_a_chunked_body_is_refused_once_past_the_limit_not_read_whole(
    tmp_path: Path,
) -> None:
    async with http_app(tmp_path) as c:
        assert (await register(c, "ann")).status_code == 201
        stream = Chunks(padded_login("ann", 4 * MiB))
        answer = await c.post(
            "/auth/login", content=stream, headers={"content-type": "application/json"}
        )
        assert "content-length" not in answer.request.headers
        assert_too_large(answer)
        # The route stopped asking once the limit was past: 16 KiB is four chunks, and the
        # fifth passes it; none of the rest of the 4 MiB was taken.
        assert stream.sent == LIMIT // stream.chunk + 1
        small = Chunks(padded_login("ann", LIMIT))
        answer = await c.post(
            "/auth/login", content=small, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 200, answer.text
        assert small.sent == LIMIT // small.chunk


async def test_the_limit_is_a_setting(tmp_path: Path) -> None:
    async with http_app(tmp_path, http_body_max_bytes=64 * 1024) as c:
        assert (await register(c, "ann")).status_code == 201
        answer = await c.post(
            "/auth/login",
            content=padded_login("ann", 40 * 1024),
            headers={"content-type": "application/json"},
        )
        assert answer.status_code == 200, answer.text
        token = await login(c, "ann")
        assert token


# ---------------------------------------------------------------------- a node's process


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(Path(tmp_path_factory.mktemp("body-limit")))
    with server.running():
        yield server


def memory(pid: int) -> tuple[int, int]:
    """The process's resident memory and its peak (VmRSS, VmHWM of /proc/<pid>/status)."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def reset_peak(pid: int) -> bool:
    """Start the process's peak memory again from its present (Linux's clear_refs)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_node_refuses_20_mb_bodies_without_holding_them(node: LiveServer) -> None:
    """A 20 MB login, with a Content-Length and chunked, to a node in its own process: each
    is answered 413 and the node's memory does not grow by it, nor does its peak. (Read
    whole, two of them raised the memory by 40 MB, or raised the peak by as much when the
    allocator gave it back: the peak is checked too.)"""
    assert node.process is not None
    pid, body = node.process.pid, padded_login("nobody", 20 * MiB)
    with httpx.Client(base_url=node.url, timeout=60) as client:
        registered = client.post("/auth/register", json={"username": "ann", "password": PASSWORD})
        assert registered.status_code == 201, registered.text
        for _ in range(3):  # the code paths warm
            assert_too_large(client.post("/auth/login", content=padded_login("x", LIMIT + 1)))
        before, _ = memory(pid)
        peak_reset = reset_peak(pid)
        for _ in range(2):
            assert_too_large(client.post("/auth/login", content=body))

            def chunks() -> Iterator[bytes]:
                for start in range(0, len(body), 64 * 1024):
                    yield body[start : start + 64 * 1024]

            answer = client.post("/auth/login", content=chunks())
            assert "content-length" not in answer.request.headers
            assert_too_large(answer)
        time.sleep(0.2)
        after, peak = memory(pid)
        # The node is still itself: the right password passes on the same connection.
        right = client.post("/auth/login", json={"username": "ann", "password": PASSWORD})
        assert right.status_code == 200, right.text
    refused = "for 80 MB of bodies refused"
    assert after - before < 8 * MiB, f"the node grew by {(after - before) / MiB:.1f} MiB {refused}"
    if peak_reset:
        assert peak - before < 8 * MiB, f"its peak rose {(peak - before) / MiB:.1f} MiB {refused}"
