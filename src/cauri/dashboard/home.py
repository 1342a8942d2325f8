"""The homes: `/dashboard/` (live) and `/dashboard/test` (test), each with the merchant's
balance per currency in its environment, today's and this month's payments, the last 30 days
as a chart drawn on the server (SVG, no script), and the alerts (cauri.team.overview)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from cauri.balance.service import merchant_balances
from cauri.dashboard.auth import SignedIn, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.team.overview import overview
from cauri.team.roles import Permission

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]


async def _home(
    request: Request, member: SignedIn, session: SessionDep, runtime: Runtime, livemode: bool
) -> Response:
    merchant = await merchants.get(session, member.merchant_id)
    now = runtime.clock.now()
    context = {
        "merchant": merchant,
        "livemode": livemode,
        "balances": await merchant_balances(session, member.merchant_id, livemode),
        "seen": await overview(session, member.merchant_id, livemode, now),
        "now": now,
    }
    return render(request, "dashboard/home.html", context)


@router.get("/")
async def live_home(
    request: Request, member: Reader, session: SessionDep, runtime: RuntimeDep
) -> Response:
    return await _home(request, member, session, runtime, livemode=True)


@router.get("/test")
@router.get("/test/")
async def test_home(
    request: Request, member: Reader, session: SessionDep, runtime: RuntimeDep
) -> Response:
    return await _home(request, member, session, runtime, livemode=False)
