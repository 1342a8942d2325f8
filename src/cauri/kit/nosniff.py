"""`X-Content-Type-Options: nosniff` on every response, errors and refusals included, so that
no browser runs a JSON or error body as a script or a page of another type."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = (b"x-content-type-options", b"nosniff")


class NoSniffMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append(NOSNIFF)
            await send(message)

        await self.app(scope, receive, send_with_nosniff)
