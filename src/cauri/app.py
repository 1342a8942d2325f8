"""The ASGI application: routers under /api/v1, the hosted page, middleware, error handlers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute

from cauri import jobs, wiring
from cauri.balance.endpoints import router as balance_router
from cauri.calls.endpoints import router as callbacks_router
from cauri.catalogue.endpoints import router as catalogue_router
from cauri.checkout.endpoints import links_router
from cauri.checkout.endpoints import router as checkout_router
from cauri.config import get_settings
from cauri.console import site as console
from cauri.dashboard import payout_batches as dashboard_batches
from cauri.dashboard import site as dashboard
from cauri.events.endpoints import router as events_router
from cauri.events.feed import Feed
from cauri.health.endpoints import router as health_router
from cauri.kit import collector, error_handlers
from cauri.kit.access import AccessMiddleware, HttpMetrics
from cauri.kit.body_limit import BodyLimitMiddleware
from cauri.kit.logging import configure as configure_logging
from cauri.kit.ratelimit import RateLimitMiddleware
from cauri.merchants import api_errors
from cauri.openapi import document as openapi_document
from cauri.openapi import page as openapi_page
from cauri.payments.endpoints import router as payments_router
from cauri.payments.endpoints import test_helpers as payment_test_helpers
from cauri.payout_batches import endpoints as batch_endpoints
from cauri.payout_batches import schemas as batch_schemas
from cauri.payouts.endpoints import router as payouts_router
from cauri.payouts.endpoints import test_helpers as payout_test_helpers
from cauri.plans.endpoints import router as plans_router
from cauri.plans.endpoints import test_helpers as plan_test_helpers
from cauri.refunds.endpoints import router as refunds_router
from cauri.runtime import Runtime
from cauri.web.checkout import router as checkout_page_router
from cauri.web.endpoints import router as web_router
from cauri.web.payment_links import router as link_page_router
from cauri.webhooks.endpoints import router as webhooks_router
from cauri.worker.runner import Worker

API_PREFIX = "/api/v1"
OPENAPI_URL = f"{API_PREFIX}/openapi.json"


def create_app(runtime: Runtime, *, run_worker: bool = False) -> FastAPI:
    wiring.wire()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = asyncio.Event()
        worker_task = None
        if run_worker:
            await jobs.started(runtime)
            worker = Worker(runtime, jobs.handlers())
            worker_task = asyncio.create_task(worker.run_forever(stop))
        try:
            yield
        finally:
            stop.set()
            if worker_task is not None:
                await worker_task
            await runtime.close()

    app = FastAPI(
        title="Cauri",
        version="1.0.0",
        lifespan=lifespan,
        openapi_url=OPENAPI_URL,
        docs_url=None,  # served by cauri.openapi.page, with its assets (no CDN)
        redoc_url=None,
        routes=_routes(),
    )
    app.state.runtime = runtime
    app.state.event_feed = Feed(runtime.sessionmaker)
    app.state.console_menu = console.MENU
    error_handlers.install(app, api_errors.record)
    openapi_document.install(app)
    # Outermost last. The body limit runs after the rate limit (a flood of large bodies is
    # still counted) and before routing, parsing and authentication.
    batches = (API_PREFIX + batch_endpoints.PATH, *dashboard_batches.UPLOADS)
    app.add_middleware(
        BodyLimitMiddleware,
        larger={("POST", path): batch_schemas.MAX_BODY_BYTES for path in batches},
    )
    app.add_middleware(RateLimitMiddleware, settings=runtime.settings)
    # Request id, nosniff, crash answer, access line and metrics: outside the rate limit
    # (sees its refusals).
    app.state.http_metrics = HttpMetrics()
    app.add_middleware(AccessMiddleware, metrics=app.state.http_metrics)
    return app


@cache
def _routes() -> list[BaseRoute]:
    """Every address the app answers, assembled once per process. A route keeps nothing of
    an app (it reads the runtime from its request's app), and FastAPI builds its view of an
    included router on that router's first request and keeps it: the apps made from these
    routes share that work (a test makes an app per test: it was most of a short test's
    time)."""
    router = APIRouter()
    for api in (
        catalogue_router,
        payments_router,
        payment_test_helpers,
        plans_router,
        plan_test_helpers,
        payouts_router,
        batch_endpoints.router,
        payout_test_helpers,
        refunds_router,
        checkout_router,
        links_router,
        balance_router,
        webhooks_router,
        events_router,
        callbacks_router,
    ):
        router.include_router(api, prefix=API_PREFIX)
    for page in (web_router, checkout_page_router, link_page_router, health_router):
        router.include_router(page)
    console.install(router)
    dashboard.install(router)
    openapi_page.install(router, f"{API_PREFIX}/docs", OPENAPI_URL)
    return router.routes


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` (one per server process)."""
    settings = get_settings()
    configure_logging(settings.log_json)
    app = create_app(Runtime.build(settings), run_worker=settings.run_worker)
    collector.spare_what_lives_on()
    return app
