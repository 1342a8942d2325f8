"""Every request observed once, on its way out: one access log line and the HTTP metrics.

A request is named by its route's template (`/api/v1/payments/{reference}`), never by its
path: a path carries references and, in the hosted page's, a customer's payment; the
template also keeps the metrics' label values few. Nothing else of the request is kept: no
query string, no header, no address, no body.

The metrics are this process's own (a `cauri serve --workers N` has N sets; each scrape
reads the process that answers it): they are not registered in prometheus-client's global
registry, so that every app, in tests too, counts apart.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import structlog
from fastapi.routing import iter_route_contexts
from prometheus_client import Counter, Histogram
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("cauri.access")

# Requests that match no route (404s of unknown addresses) share one label value, and so do
# methods no route answers: a client must not grow the metrics with made-up values.
UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


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
        self.contexts = [c for c in iter_route_contexts(routes) if isinstance(c.path, str)]
        self.by_route = {id(c.original_route): c.path for c in self.contexts}

    def of(self, scope: Scope) -> str:
        """The template of the route that answered; for a request refused before routing
        (rate limit, body limit), of the route it was meant for."""
        route = scope.get("route")
        if route is not None and id(route) in self.by_route:
            return str(self.by_route[id(route)])
        for context in self.contexts:
            match, _ = context.matches(scope)
            if match is not Match.NONE:
                return str(context.path)
        return UNMATCHED


class AccessMiddleware:
    """Sits inside RequestIdMiddleware, so that its line carries the request id, and outside
    the rate limit, so that refusals are seen too. A crash is counted as the 500 that
    RequestIdMiddleware then answers."""

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
        status = 500

        async def send_observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_observed)
        finally:
            elapsed = time.perf_counter() - started
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            if self.templates is None:
                self.templates = RouteTemplates(scope["app"].router.routes)
            route = self.templates.of(scope)
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.duration.labels(method, route).observe(elapsed)
            log.info(
                "http.request",
                method=method,
                route=route,
                status=status,
                duration_ms=round(elapsed * 1000, 1),
            )
