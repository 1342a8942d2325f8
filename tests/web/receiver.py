"""The merchant's side of a redirect: a tiny HTTP server that serves a thank-you page on
`/merci` and records each query it was reached with."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

THANKS = (
    b'<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>Merci</title></head>'
    b"<body><h1>Merci pour votre commande</h1></body></html>"
)


class ReturnPage:
    def __init__(self) -> None:
        self.visits: list[dict[str, list[str]]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != "/merci":
                    self.send_error(404)
                    return
                receiver.visits.append(parse_qs(parts.query))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(THANKS)))
                self.end_headers()
                self.wfile.write(THANKS)

            def log_message(self, *_: object) -> None:  # keep pytest's output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/merci"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ReturnPage:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
