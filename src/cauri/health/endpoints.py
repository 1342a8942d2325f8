"""Liveness and readiness, for load balancers and orchestrators: outside `/api/v1`, with no
key, cheap. `/health`: the process answers. `/ready`: the database answers, its schema is the
one this code expects, and a worker has shown a sign of life lately."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from cauri.http import RuntimeDep
from cauri.kit import migrate
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
