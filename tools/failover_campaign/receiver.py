"""The merchant's webhook endpoint: answers 200 to every notification and keeps each one's
`X-Service-Delivery` (the event's id, the same on every attempt)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self) -> None:
        self.received: Counter[str] = Counter()
        self._lock = threading.Lock()
        receiver = self

        class Notified(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # kept alive between notifications, as Cauri does

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.received[self.headers.get("X-Service-Delivery", "")] += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                """Silent: thousands of notifications."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Notified)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/webhooks/cauri"

    def delivered(self) -> set[str]:
        with self._lock:
            return set(self.received)


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver answering on a free port of loopback while the block runs."""
    receiver = Receiver()
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
