"""The outermost layer of the app: every request gets an id (X-Request-Id, bound to its log
lines), every response says nosniff (no browser runs a JSON or error body as a script or a
page of another type), a crash is answered here, and every request is observed once, on
its way out: one access log line and the HTTP metrics. One layer, not one per concern: each
layer is a call and a `send` wrapper more on every request.

A request is named by its route's template (`/api/v1/payments/{reference}`), never by its
path: a path carries references and, in the hosted page's, a customer's payment; the
template also keeps the metrics' label values few. Nothing else of the request is kept: no
query string, no header, no address, no body.

The metrics are this process's own (a `cauri serve --workers N` has N sets; each scrape
reads the process that answers it): they are not registered in prometheus-client's global
registry, so that every app, in tests too, counts apart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import structlog
from fastapi.routing import iter_route_contexts
from prometheus_client import Counter, Histogram
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cauri.kit import error_handlers
from cauri.kit.redaction import Clean

log = structlog.get_logger("cauri.access")

# Requests that match no route (404s of unknown addresses) share one label value, and so do
# methods no route answers: a client must not grow the metrics with made-up values. Every
# value of the access line is Cauri's own (`Clean`): the redaction has nothing to search.
UNMATCHED = Clean("unmatched")
METHODS = {
    method: Clean(method) for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
}
OTHER_METHOD = Clean("OTHER")
ACCESS_EVENT = Clean("http.request")
NOSNIFF = (b"x-content-type-options", b"nosniff")


class HttpMetrics:
    def __init__(self) -> None:
        self.requests = Counter(
            "cauri_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=None,
        )
        self.duration = Histogram(
            "cauri_http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            registry=None,
        )

    def collectors(self) -> tuple[Counter, Histogram]:
        return self.requests, self.duration


class RouteTemplates:
    """The full template of each route of an app, its prefix included (a router's own routes
    know only their part of the path)."""

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self.contexts = [
            (c, Clean(c.path)) for c in iter_route_contexts(routes) if isinstance(c.path, str)
        ]
        self.by_route = {id(c.original_route): path for c, path in self.contexts}

    def of(self, scope: Scope) -> Clean:
        """The template of the route that answered; for a request refused before routing
        (rate limit, body limit), of the route it was meant for."""
        route = scope.get("route")
        if route is not None and id(route) in self.by_route:
            return self.by_route[id(route)]
        for context, path in self.contexts:
            match, _ = context.matches(scope)
            if match is not Match.NONE:
                return path
        return UNMATCHED


class AccessMiddleware:
    """Outermost, so that every line of the request, the access line included, carries its
    id, and that the rate limit's and body limit's refusals are seen too.

    It also answers crashes: Starlette's last-resort handler sits outside every middleware,
    so its 500 would carry no request id and be logged after the id is unbound. A crash is
    counted and logged as that 500."""

    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics
        # Read at the first request, when every route of the app is in.
        self.templates: RouteTemplates | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = Clean(os.urandom(16).hex())
        structlog.contextvars.bind_contextvars(request_id=request_id)
        tags = [(b"x-request-id", request_id.encode()), NOSNIFF]
        status = 0  # no response started yet

        async def send_observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).extend(tags)
            await send(message)

        try:
            await self.app(scope, receive, send_observed)
        except Exception as exc:
            if status:  # too late for an envelope: let the server drop the connection
                raise
            await error_handlers.crashed(scope, receive, send_observed, exc)
        finally:
            self._observe(scope, status or 500, time.perf_counter() - started)
            structlog.contextvars.unbind_contextvars("request_id")

    def _observe(self, scope: Scope, status: int, elapsed: float) -> None:
        method = METHODS.get(scope["method"], OTHER_METHOD)
        if self.templates is None:
            self.templates = RouteTemplates(scope["app"].router.routes)
        route = self.templates.of(scope)
        self.metrics.requests.labels(method, route, str(status)).inc()
        self.metrics.duration.labels(method, route).observe(elapsed)
        log.info(
            ACCESS_EVENT,
            method=method,
            route=route,
            status=status,
            duration_ms=round(elapsed * 1000, 1),
        )
