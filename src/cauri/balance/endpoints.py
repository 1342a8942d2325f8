from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cauri.balance import transactions
from cauri.balance.schemas import (
    BalanceObject,
    BalanceTransactionObject,
    BalanceTransactionType,
    balance_object,
    balance_transaction_object,
)
from cauri.balance.service import merchant_balances
from cauri.http import SessionDep, UnitOfWorkRoute, ok
from cauri.kit.money import Currency
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep

router = APIRouter(route_class=UnitOfWorkRoute, tags=["balance"])


@router.get("/balance", responses=answers(list[BalanceObject]))
async def get_balance(caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """The balance of the key's environment, one entry per currency."""
    rows = await merchant_balances(session, caller.merchant_id, caller.livemode)
    return ok([balance_object(row, caller.livemode) for row in rows])


@router.get("/balance/transactions", responses=answers(ListEnvelope[BalanceTransactionObject]))
async def list_balance_transactions(
    asked: ListRequestDep,
    period: PeriodDep,
    type: Annotated[BalanceTransactionType | None, Query()] = None,
    currency: Annotated[Currency | None, Query()] = None,
) -> dict[str, Any]:
    """Every movement of the key's environment's balance, newest first, from the ledger:
    what reconciles your books line by line (a month's lines add up to its statement)."""
    caller = asked.caller
    found = await transactions.listed(
        asked.session,
        caller.merchant_id,
        caller.livemode,
        asked.page,
        period=period,
        kind=type,
        currency=None if currency is None else currency.value,
    )
    return asked.answer(found, lambda line: balance_transaction_object(line, caller.livemode))
