"""Request bodies over 256 KiB are refused with 413 before anything reads them (DESIGN:
`payload_too_large`, decided before parsing and authentication). A route that needs more
(`POST /payout-batches`: 1,000 payouts) is given its own limit, by method and path, decided
as early: every other route keeps 256 KiB.

The declared Content-Length is believed when it is too large; otherwise the body is read
here, counting, and handed on whole. A chunked body, or one longer than it said, is cut off
as soon as it passes the limit: at most the limit and one chunk are ever held in memory.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cauri.kit.error_handlers import render
from cauri.kit.errors import PayloadTooLarge

MAX_BODY_BYTES = 256 * 1024


def declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int = MAX_BODY_BYTES,
        larger: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # (method, path) → its own limit.
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get((scope["method"], scope["path"]), self.max_bytes)
        declared = declared_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: let the app see it
                await self.app(scope, _replay([message], receive), send)
                return
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        whole: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        # No `Connection: close`: the server would close with the rest of the body unread,
        # and the reset that follows loses the response for a client still writing. Left
        # open, the server discards the rest itself without handing it to the app.
        await render(PayloadTooLarge())(scope, receive, send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`messages` first, then the client's own (a disconnect, once the response is sent)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
