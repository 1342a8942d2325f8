from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from cauri.balance.schemas import BalanceObject, balance_object
from cauri.balance.service import merchant_balances
from cauri.http import SessionDep, UnitOfWorkRoute, ok
from cauri.kit.openapi import answers
from cauri.merchants.auth import CallerDep

router = APIRouter(route_class=UnitOfWorkRoute, tags=["balance"])


@router.get("/balance", responses=answers(list[BalanceObject]))
async def get_balance(caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """The balance of the key's environment, one entry per currency."""
    rows = await merchant_balances(session, caller.merchant_id, caller.livemode)
    return ok([balance_object(row, caller.livemode) for row in rows])
