"""The staff's reads: a merchant's whole account, the payouts held for approval, what an
external_id names (a payment with what followed it: payment_overview.py). Read-only:
nothing here writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import String, cast, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.balance.service import CurrencyBalance, merchant_balances
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.period import Period
from cauri.merchants.service import merchants as merchant_service
from cauri.models import (
    ApiKey,
    FeeRule,
    Merchant,
    Payment,
    Payout,
    PlatformSettings,
    Refund,
    WebhookEndpoint,
)
from cauri.models.merchants import MERCHANT_STATUSES
from cauri.models.payouts import PAYOUT_STATUSES
from cauri.payouts.service import REQUIRED


@dataclass(frozen=True)
class EnvironmentBalance:
    livemode: bool
    balance: CurrencyBalance


@dataclass(frozen=True)
class MerchantOverview:
    merchant: Merchant
    keys: Sequence[ApiKey]
    fee_rules: Sequence[FeeRule]
    balances: Sequence[EnvironmentBalance]  # test first, then live; XOF always in each
    endpoints: Sequence[WebhookEndpoint]  # test first, then live


@dataclass(frozen=True)
class PayoutFilter:
    merchant_id: str | None = None
    awaiting_approval: bool = False
    status: str | None = None
    livemode: bool | None = None
    period: Period = field(default_factory=Period)
    limit: int = 50


async def merchants(
    session: AsyncSession, status: str | None = None, text: str | None = None
) -> Sequence[Merchant]:
    """Every merchant, newest first; `text`: those whose id is it or whose name holds it
    (whatever the case)."""
    statement = select(Merchant).order_by(Merchant.created_at.desc(), Merchant.id.desc())
    if text is not None and text.strip():
        wanted = text.strip()
        # autoescape: a `%` or `_` typed is that character, not a wildcard.
        statement = statement.where(
            or_(Merchant.id == wanted, Merchant.name.icontains(wanted, autoescape=True))
        )
    if status is not None:
        if status not in MERCHANT_STATUSES:
            raise InvalidRequest.field("status", f"Statut inconnu : {status}.")
        statement = statement.where(Merchant.status == status)
    return (await session.scalars(statement)).all()


async def merchant_overview(session: AsyncSession, merchant_id: str) -> MerchantOverview:
    merchant = await merchant_service.get(session, merchant_id)
    rules = await session.scalars(
        select(FeeRule).where(FeeRule.merchant_id == merchant_id).order_by(FeeRule.mode)
    )
    balances = [
        EnvironmentBalance(livemode, balance)
        for livemode in (False, True)
        for balance in await merchant_balances(session, merchant_id, livemode)
    ]
    return MerchantOverview(
        merchant=merchant,
        keys=await merchant_service.list_keys(session, merchant_id),
        fee_rules=rules.all(),
        balances=balances,
        endpoints=(
            await session.scalars(
                select(WebhookEndpoint)
                .where(WebhookEndpoint.merchant_id == merchant_id)
                .order_by(WebhookEndpoint.livemode)
            )
        ).all(),
    )


async def platform_settings(session: AsyncSession) -> PlatformSettings | None:
    """The one row; none until a setting was first set (the columns' defaults apply)."""
    return await session.get(PlatformSettings, 1)


async def by_external_id(
    session: AsyncSession, merchant_id: str, external_id: str, livemode: bool | None
) -> str:
    """The reference of the merchant's payment, payout or refund that has this external_id,
    as the API reads it. An external_id is unique within one environment of one merchant:
    when both environments have one, `livemode` chooses (else a 422 says so)."""
    await merchant_service.get(session, merchant_id)
    found: list[tuple[str, bool]] = []
    for reference, model in (
        (cast(Payment.id, String), Payment),
        (Payout.reference, Payout),
        (Refund.reference, Refund),
    ):
        conditions = [model.merchant_id == merchant_id, model.external_id == external_id]
        if livemode is not None:
            conditions.append(model.livemode == livemode)
        found += (await session.execute(select(reference, model.livemode).where(*conditions))).all()
    if not found:
        raise NotFound(f"Rien de {merchant_id} sous l'external_id {external_id}.")
    if len(found) > 1:
        # The same external_id for a payment and its refund, say: name them all.
        named = ", ".join(f"{ref} ({'live' if live else 'test'})" for ref, live in found)
        raise InvalidRequest.field(
            "external_id",
            f"{external_id} nomme plusieurs ressources : {named} ; donnez sa référence "
            "(ou --mode).",
        )
    return found[0][0]


async def payouts(session: AsyncSession, wanted: PayoutFilter) -> Sequence[Payout]:
    """Newest first; `awaiting_approval`: held until `cauri payouts approve` or `reject`."""
    conditions = wanted.period.conditions(Payout.created_at)
    if wanted.merchant_id is not None:
        await merchant_service.get(session, wanted.merchant_id)
        conditions.append(Payout.merchant_id == wanted.merchant_id)
    if wanted.awaiting_approval:
        conditions.append(Payout.approval == REQUIRED)
    if wanted.status is not None:
        if wanted.status not in PAYOUT_STATUSES:
            raise InvalidRequest.field("status", f"Statut inconnu : {wanted.status}.")
        conditions.append(Payout.status == wanted.status)
    if wanted.livemode is not None:
        conditions.append(Payout.livemode == wanted.livemode)
    statement = (
        select(Payout)
        .where(*conditions)
        .order_by(Payout.created_at.desc(), Payout.reference.desc())
        .limit(wanted.limit)
    )
    return (await session.scalars(statement)).all()
