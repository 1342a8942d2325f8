"""The API's refusals of a merchant's requests, kept for its developers (the dashboard's
"last API errors"): method, route template, status, error code and time; nothing of the
request itself. Not the refusals that record their resource (a payment or payout refused
by its operator: `keeps_writes`), whose object tells the story and whose path stays as short
as it was. A refusal is the merchant's once its key was recognized (a revoked or
expired key too: `request.state.caller`, set by cauri.merchants.auth); a request without a
known key is nobody's. Written in a session of its own (the request's rolls back with the
refusal), and the account's oldest beyond `KEPT` are dropped as it goes."""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from fastapi import Request
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.access import RouteTemplates
from cauri.kit.errors import CauriError
from cauri.merchants.caller import Caller
from cauri.models import ApiError
from cauri.runtime import Runtime

KEPT = 100
log = structlog.get_logger("cauri.api_errors")


def _template(request: Request) -> str:
    """The route's whole template, its prefix included (as the access log names it)."""
    state = request.app.state
    if getattr(state, "route_templates", None) is None:
        state.route_templates = RouteTemplates(request.app.router.routes)
    return str(state.route_templates.of(request.scope))


async def record(request: Request, error: CauriError) -> None:
    """Keeps the refusal if it is an account's; a failure to keep it is logged, never the
    request's failure."""
    caller = getattr(request.state, "caller", None)
    if not isinstance(caller, Caller) or error.keeps_writes:
        return
    runtime: Runtime = request.app.state.runtime
    row = {
        "merchant_id": caller.merchant_id,
        "livemode": caller.livemode,
        "method": request.method,
        "route": _template(request),
        "status": error.http_status,
        "code": error.code,
        "at": runtime.clock.now(),
    }
    account = (ApiError.merchant_id == caller.merchant_id, ApiError.livemode == caller.livemode)
    oldest_kept = (
        select(ApiError.id)
        .where(*account)
        .order_by(ApiError.id.desc())
        .offset(KEPT - 1)
        .limit(1)
        .scalar_subquery()
    )
    try:
        async with runtime.sessionmaker() as session, session.begin():
            await session.execute(insert(ApiError).values(row))
            await session.execute(delete(ApiError).where(*account, ApiError.id < oldest_kept))
    except Exception:  # the refusal is answered whatever happens here
        log.exception("api_errors.not_recorded", route=row["route"])


async def latest(
    session: AsyncSession, merchant_id: str, livemode: bool, most: int = KEPT
) -> Sequence[ApiError]:
    """The account's latest refusals in the environment, newest first."""
    statement = (
        select(ApiError)
        .where(ApiError.merchant_id == merchant_id, ApiError.livemode == livemode)
        .order_by(ApiError.id.desc())
        .limit(most)
    )
    return (await session.scalars(statement)).all()
