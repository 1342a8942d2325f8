"""Liveness and readiness, for load balancers and orchestrators: outside `/api/v1`, with no
key, cheap. `/health`: the process answers. `/ready`: the database answers, its schema is the
one this code expects, and a worker has shown a sign of life lately. `/metrics`: Prometheus'
figures, to the holder of CAURI_METRICS_TOKEN only (cauri.health.metrics)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException

from cauri.health import metrics as figures
from cauri.http import RuntimeDep
from cauri.kit import migrate
from cauri.kit.errors import Unauthorized
from cauri.worker import heartbeat

# Not the merchants' API: left out of its OpenAPI document.
router = APIRouter(include_in_schema=False)

_STATE = text(
    "SELECT (SELECT version_num FROM alembic_version LIMIT 1), "
    "(SELECT count(*) FROM worker_heartbeats WHERE beat_at > now() - make_interval(secs => :fresh))"
)


@router.get("/health")
async def health() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/ready", response_model=None)
async def ready(runtime: RuntimeDep) -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        async with runtime.sessionmaker() as session:
            fresh = heartbeat.STALE_AFTER
            revision, workers = (await session.execute(_STATE, {"fresh": fresh})).one()
        checks["database"] = "ok"
        expected = migrate.head()
        checks["migrations"] = (
            "ok" if revision == expected else f"at {revision}, expected {expected}"
        )
        checks["worker"] = (
            "ok"
            if workers
            else f"no worker heartbeat in the last {heartbeat.STALE_AFTER:.0f} s (cauri worker)"
        )
    except (SQLAlchemyError, OSError) as error:
        checks["database"] = f"unreachable: {type(error).__name__}"
    up = all(value == "ok" for value in checks.values()) and len(checks) == 3
    return JSONResponse(
        {"status": "ready" if up else "not_ready", "checks": checks},
        status_code=200 if up else 503,
    )


@router.get("/metrics", response_model=None)
async def metrics(request: Request, runtime: RuntimeDep) -> Response:
    token = runtime.settings.metrics_token
    if not token:
        # Not configured: nothing is served here, as at any unknown address.
        raise HTTPException(status_code=404)
    if not figures.bearer_matches(request.headers.get("authorization"), token):
        raise Unauthorized(
            "Jeton des métriques absent ou invalide (Authorization: Bearer CAURI_METRICS_TOKEN).",
            headers={"WWW-Authenticate": "Bearer"},
        )
    body = await figures.exposition(runtime, request.app.state.http_metrics)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
