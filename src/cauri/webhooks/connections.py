"""Keep-alive HTTP/1.1 connections for deliveries, each pinned to one checked address.

A connection is kept for reuse under its `Destination`: scheme, the URL's host name (the Host
header and, over TLS, the server name whose certificate was verified), port, and the address
the socket went to, which url_safety checked. A connection is therefore only ever reused for
the same name at the same checked address: a TLS session validated for one name never
carries another's notification, and a name that now resolves elsewhere gets new sockets.
The checked addresses of a name are kept as long as an idle connection (`IDLE_SECONDS`);
then the name is resolved and checked again.

The protocol is h11's: it frames the request and the answer (Content-Length or chunked),
passes over interim 1xx answers, refuses malformed ones, and says whether the connection may
carry another request. After the status, the rest of the answer is read for reuse only when
it is small and comes at once; otherwise the connection is closed. Pools are per event loop.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import h11

from cauri.webhooks.url_safety import Reach

# Below the 5 s keep-alive of common servers, so that an idle connection is dropped here
# before the endpoint closes it under a request.
IDLE_SECONDS = 4.0
MAX_IDLE_PER_DESTINATION = 32
# The rest of an answer is read (to reuse the connection) only this large and only if it
# comes at once; the attempt's outcome never waits for it.
MAX_DRAINED = 65_536
DRAIN_SECONDS = 0.05
MAX_HEAD = 65_536
READ_SIZE = 65_536


class ConnectTimeout(Exception):
    """The TCP (and TLS) handshake did not complete within the connect limit."""


class ConnectFailed(Exception):
    """The connection could not be made (refused, unreachable, TLS handshake or certificate):
    nothing was sent."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(f"{type(cause).__name__} {cause}".strip())


class MalformedResponse(Exception):
    """The endpoint's answer is not HTTP/1.x (h11 refused it)."""


class Disconnected(ConnectionError):
    """The endpoint closed the connection before its answer: on a kept connection, what a
    server does once its keep-alive runs out while the connection is idle."""

    def __init__(self) -> None:
        super().__init__("connexion fermée par l'endpoint avant sa réponse")


@dataclass(frozen=True)
class Destination:
    scheme: str
    host: str  # as in the URL (IDNA-encoded): Host header and TLS server name
    port: int
    address: str  # the checked address the socket connects to


def _client() -> h11.Connection:
    return h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)


@dataclass
class Connection:
    destination: Destination
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: h11.Connection = field(default_factory=_client)
    idle_since: float = field(default_factory=time.monotonic)

    def reusable(self, now: float) -> bool:
        return (
            now - self.idle_since < IDLE_SECONDS
            and not self.writer.is_closing()
            and not self.reader.at_eof()
        )

    def close(self) -> None:
        self.writer.close()

    async def receive(self) -> h11.Event:
        """The answer's next event, reading from the socket as h11 needs (NEED_DATA; its
        other sentinel, PAUSED, comes only past the answer's end, where callers stop)."""
        while True:
            event = self.protocol.next_event()
            if isinstance(event, h11.Event):
                return event
            data = await self.reader.read(READ_SIZE)
            if not data and self.protocol.their_state is h11.SEND_RESPONSE:
                raise Disconnected
            self.protocol.receive_data(data)

    async def drained(self) -> bool:
        """Reads the rest of the answer if small and there at once; True when the connection
        may then carry another request (h11: both sides done, no `Connection: close`, not
        HTTP/1.0)."""
        read = 0
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                while type(event := await self.receive()) is not h11.EndOfMessage:
                    if isinstance(event, h11.Data):
                        read += len(event.data)
                        if read > MAX_DRAINED:
                            return False
        except (TimeoutError, OSError, h11.RemoteProtocolError):
            return False
        if self.protocol.our_state is not h11.DONE or self.protocol.their_state is not h11.DONE:
            return False
        self.protocol.start_next_cycle()
        return True


@dataclass(frozen=True)
class Answer:
    status: int
    connection: Connection  # the rest of the answer may still be on its way


Resolver = Callable[[], Awaitable[list[str]]]


class Pool:
    def __init__(self) -> None:
        self._idle: dict[Destination, list[Connection]] = {}
        self._addresses: dict[tuple[str, int, Reach], tuple[float, list[str]]] = {}

    async def addresses(self, host: str, port: int, reach: Reach, resolve: Resolver) -> list[str]:
        """`resolve()`'s checked answer, kept IDLE_SECONDS."""
        key, now = (host, port, reach), time.monotonic()
        kept = self._addresses.get(key)
        if kept is not None and now - kept[0] < IDLE_SECONDS:
            return kept[1]
        found = await resolve()
        self._addresses[key] = (now, found)
        return found

    def take(self, destination: Destination) -> Connection | None:
        idle, now = self._idle.get(destination), time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable(now):
                return connection
            connection.close()
        return None

    def give_back(self, connection: Connection) -> None:
        idle = self._idle.setdefault(connection.destination, [])
        now = time.monotonic()
        # The oldest are at the front: drop those past their time, and any beyond the cap.
        while idle and (len(idle) >= MAX_IDLE_PER_DESTINATION or not idle[0].reusable(now)):
            idle.pop(0).close()
        connection.idle_since = now
        idle.append(connection)

    async def release(self, answer: Answer) -> None:
        """Keeps the answer's connection for the next request if the rest of the answer is
        read at once; closes it otherwise. Never raises."""
        connection = answer.connection
        if await connection.drained():
            self.give_back(connection)
        else:
            connection.close()


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


def pool() -> Pool:
    """The running loop's pool (a connection belongs to the loop that opened it)."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        found = _pools[loop] = Pool()
    return found


async def connect(
    destination: Destination, tls: ssl.SSLContext | None, connect_limit: float
) -> Connection:
    try:
        async with asyncio.timeout(connect_limit):
            reader, writer = await asyncio.open_connection(
                destination.address,
                destination.port,
                ssl=tls,
                server_hostname=destination.host if tls is not None else None,
            )
    except TimeoutError:
        raise ConnectTimeout from None
    except OSError as exc:
        raise ConnectFailed(exc) from exc
    return Connection(destination, reader, writer)


async def post(connection: Connection, request: h11.Request, body: bytes) -> Answer:
    """Sends one request with its body and reads the answer up to its final status."""
    protocol = connection.protocol
    sent = (protocol.send(event) for event in (request, h11.Data(data=body), h11.EndOfMessage()))
    connection.writer.write(b"".join(frame for frame in sent if frame))
    await connection.writer.drain()
    try:
        while not isinstance(event := await connection.receive(), h11.Response):
            pass  # an interim answer (1xx); the final one follows
    except h11.RemoteProtocolError as exc:
        raise MalformedResponse(f"réponse HTTP invalide ({exc})") from None
    return Answer(event.status_code, connection)
