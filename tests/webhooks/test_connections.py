"""Kept connections (cauri.webhooks.connections): a connection is reused only for the same
scheme, host name, port and checked address; a name's checked addresses are kept no longer
than an idle connection, then resolved and checked again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
import pytest

from cauri.webhooks import connections, delivery, url_safety
from tests.webhooks.receiver import Receiver


@pytest.fixture
def keeping() -> Iterator[Receiver]:
    with Receiver(keep_alive=True) as running:
        yield running


async def send(url: str) -> delivery.AttemptOutcome:
    return await delivery.send(
        delivery.Notification(
            url=url, event="webhook.test", delivery_id="d", body=b"{}", secret="whsec_test"
        ),
        timestamp=int(time.time()),
        time_limit=5,
        connect_limit=3,
        reach=url_safety.Reach.PRIVATE,
    )


@asynccontextmanager
async def answering(answer: bytes) -> AsyncIterator[tuple[str, list[int]]]:
    """An endpoint that answers every request with `answer`, as raw bytes, and leaves each
    connection open; yields its URL and one entry per connection it accepted."""
    accepted: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hooks", accepted


async def test_interim_answers_are_passed_over() -> None:
    final = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with answering(b"HTTP/1.1 100 Continue\r\n\r\n" + final) as (url, _):
        assert (await send(url)).response_code == 204


@pytest.mark.parametrize(
    ("answer", "connections_used"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 1),
        (b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\noops", 1),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", 2),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 2),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + b"x" * 70_000, 2),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", 2),  # the body never comes
    ],
    ids=["chunked", "error-status", "close", "http-1.0", "too-large", "body-late"],
)
async def test_a_connection_is_kept_only_once_its_answer_is_read_whole(
    answer: bytes, connections_used: int
) -> None:
    async with answering(answer) as (url, accepted):
        codes = [(await send(url)).response_code for _ in range(2)]
    assert codes == [int(answer.split()[1])] * 2
    assert len(accepted) == connections_used


async def test_a_malformed_answer_is_a_failed_attempt() -> None:
    async with answering(b"HELLO 200\r\n\r\n") as (url, _):
        outcome = await send(url)
    assert outcome.response_code is None
    assert outcome.error is not None
    assert outcome.error.startswith("Échec de connexion : réponse HTTP invalide")


async def test_a_connection_is_reused_for_the_same_destination(keeping: Receiver) -> None:
    for _ in range(3):
        assert (await send(keeping.url)).response_code == 200
    first, second, third = await keeping.wait_for(3)
    assert first.peer == second.peer == third.peer


async def test_a_connection_never_carries_another_host_name(keeping: Receiver) -> None:
    """`localhost` and `127.0.0.1` reach the same socket, but they are two names: each gets
    its own connection, and each request names its own host."""
    by_name = f"http://localhost:{keeping.port}/hooks"
    for url in (keeping.url, by_name, keeping.url, by_name):
        assert (await send(url)).response_code == 200
    requests = await keeping.wait_for(4)
    peers: dict[str, set[tuple[str, int]]] = {}
    for request in requests:
        peers.setdefault(request.headers["host"], set()).add(request.peer)
    assert set(peers) == {f"127.0.0.1:{keeping.port}", f"localhost:{keeping.port}"}
    assert all(len(used) == 1 for used in peers.values())
    assert peers[f"127.0.0.1:{keeping.port}"] != peers[f"localhost:{keeping.port}"]


async def test_a_connection_is_only_handed_out_for_its_own_address(keeping: Receiver) -> None:
    url = httpx.URL(keeping.url)
    pinned = connections.Destination("http", "127.0.0.1", keeping.port, "127.0.0.1")
    answer = await delivery._post_to_first_reachable(
        url, ["127.0.0.1"], delivery._request(url, {}, 2), b"{}", 3
    )
    await connections.pool().release(answer)
    for elsewhere in (
        connections.Destination("http", "127.0.0.1", keeping.port, "127.0.0.2"),
        connections.Destination("https", "127.0.0.1", keeping.port, "127.0.0.1"),
        connections.Destination("http", "localhost", keeping.port, "127.0.0.1"),
    ):
        assert connections.pool().take(elsewhere) is None
    kept = connections.pool().take(pinned)
    assert kept is answer.connection
    kept.close()


async def test_an_endpoint_that_closes_connections_gets_new_ones(receiver: Receiver) -> None:
    for _ in range(2):
        assert (await send(receiver.url)).response_code == 200
    first, second = await receiver.wait_for(2)
    assert first.peer != second.peer


async def test_a_kept_connection_the_endpoint_closed_is_not_a_failed_attempt() -> None:
    """An endpoint that announces keep-alive, then closes each connection after answering
    (as a server does once its keep-alive runs out): every attempt still succeeds."""
    accepted: list[int] = []

    async def answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer_then_close, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        outcomes = [await send(f"http://127.0.0.1:{port}/hooks") for _ in range(3)]
    assert [outcome.response_code for outcome in outcomes] == [200, 200, 200]
    assert len(accepted) == 3


async def test_addresses_are_checked_again_once_kept_long_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolved: list[int] = []

    async def resolve() -> list[str]:
        resolved.append(1)
        return ["192.0.2.1"]

    pool = connections.Pool()
    assert await pool.addresses("example.org", 443, False, resolve) == ["192.0.2.1"]
    assert await pool.addresses("example.org", 443, False, resolve) == ["192.0.2.1"]
    assert len(resolved) == 1
    monkeypatch.setattr(connections, "IDLE_SECONDS", 0.0)
    await pool.addresses("example.org", 443, False, resolve)
    assert len(resolved) == 2
