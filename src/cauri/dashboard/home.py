"""The homes: `/dashboard/` (live) and `/dashboard/test` (test), each with the merchant's
balance per currency in its environment."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from cauri.balance.service import merchant_balances
from cauri.dashboard.auth import SignedIn, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import SessionDep
from cauri.merchants.service import merchants
from cauri.team.roles import Permission

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]


async def _home(
    request: Request, member: SignedIn, session: SessionDep, livemode: bool
) -> Response:
    merchant = await merchants.get(session, member.merchant_id)
    context = {
        "merchant": merchant,
        "livemode": livemode,
        "balances": await merchant_balances(session, member.merchant_id, livemode),
    }
    return render(request, "dashboard/home.html", context)


@router.get("/")
async def live_home(request: Request, member: Reader, session: SessionDep) -> Response:
    return await _home(request, member, session, livemode=True)


@router.get("/test")
@router.get("/test/")
async def test_home(request: Request, member: Reader, session: SessionDep) -> Response:
    return await _home(request, member, session, livemode=False)
