"""A real HTTP receiver on loopback, in a thread: records every request as received (raw
body and headers) and answers as told: a status, after a delay, or never (until stopped)."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    delay: float = 0.0
    hang: bool = False  # keep the connection open without answering until the receiver stops


@dataclass(frozen=True)
class Received:
    body: bytes
    headers: dict[str, str]  # names lower-cased
    path: str
    at: float  # time.monotonic() on arrival
    peer: tuple[str, int] = ("", 0)  # the client's address and port: one per connection


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 drops bursts of connections

    def handle_error(self, *_: Any) -> None:
        # A client that gave up (the service's timeout) leaves a broken pipe: expected here.
        pass


class Receiver:
    def __init__(
        self,
        default: Answer | None = None,
        tls: ssl.SSLContext | None = None,
        *,
        keep_alive: bool = False,
    ) -> None:
        self.requests: list[Received] = []
        self.server_names: list[str | None] = []  # the SNI of each TLS handshake
        self.default = default or Answer()
        self._plan: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.keep_alive = keep_alive
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self.scheme = "http"
        if tls is not None:
            tls.sni_callback = lambda _socket, name, _context: self.server_names.append(name)
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/hooks"

    def answer(self, *answers: Answer | int) -> None:
        """The answers to the next requests, in order; then `default`."""
        with self._lock:
            self._plan.extend(a if isinstance(a, Answer) else Answer(a) for a in answers)

    def _next_answer(self) -> Answer:
        with self._lock:
            return self._plan.popleft() if self._plan else self.default

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)

    async def wait_for(self, count: int, within: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + within
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.requests)} requests received, {count} expected")
            await asyncio.sleep(0.02)
        return list(self.requests)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                receiver._record(
                    Received(
                        body=body,
                        headers={k.lower(): v for k, v in self.headers.items()},
                        path=self.path,
                        at=time.monotonic(),
                        peer=self.client_address[:2],
                    )
                )
                answer = receiver._next_answer()
                if answer.hang:
                    receiver._stopping.wait()
                    self.close_connection = True  # the client sees the end of the connection
                    return
                if answer.delay:
                    receiver._stopping.wait(answer.delay)
                self.send_response(answer.status)
                self.send_header("Content-Length", "2")
                if not receiver.keep_alive:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: Any) -> None:
                pass

        return Handler

    def start(self) -> Receiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
