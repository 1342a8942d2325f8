"""What a merchant's team sees first on its home, in one environment: today's and this
month's payments (how many, the volume that succeeded, the success rate over those decided),
the volume of each of the last 30 days, and what needs someone: a failing webhook endpoint,
keys expiring, payouts awaiting an approval (the team's drafts, of a payout or of a file of
payouts; the platform's holds). Days and months in UTC, as the staff's overview
(cauri.staff.overview). Each figure is one aggregate over the merchant's rows of the period
(the payments' list index)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import ColumnElement, cast, func, select
from sqlalchemy.dialects.postgresql import DATE
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.outcomes import Tally, tally_columns
from cauri.models import ApiKey, Payment, Payout
from cauri.models.payouts import APPROVAL_REQUIRED
from cauri.team import batch_drafts, drafts
from cauri.webhooks.failing import FailingEndpoint, failing_endpoints

CHART_DAYS = 30
KEYS_EXPIRING_WITHIN = timedelta(days=7)
_SUCCEEDED = Payment.status.in_(("succeeded", "refunded"))


@dataclass(frozen=True)
class Traffic(Tally):
    """A period's payments in one currency."""

    currency: str


@dataclass(frozen=True)
class DayVolume:
    day: date
    amount: int


@dataclass(frozen=True)
class Chart:
    """The volume that succeeded on each of the last `CHART_DAYS` days in `currency`,
    oldest first, days without any included."""

    currency: str
    days: Sequence[DayVolume]

    @property
    def highest(self) -> int:
        return max((day.amount for day in self.days), default=0)


@dataclass(frozen=True)
class Alerts:
    failing_endpoints: Sequence[FailingEndpoint]
    expiring_keys: Sequence[ApiKey]
    drafts_awaiting: int  # the team's, live only
    batch_drafts_awaiting: int  # the team's files of payouts, live only
    held_payouts: int  # the platform's approval

    def __bool__(self) -> bool:
        return bool(
            self.failing_endpoints
            or self.expiring_keys
            or self.drafts_awaiting
            or self.batch_drafts_awaiting
            or self.held_payouts
        )


@dataclass(frozen=True)
class Overview:
    today: Sequence[Traffic]
    month: Sequence[Traffic]
    chart: Chart
    alerts: Alerts


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def _merchant_s(merchant_id: str, livemode: bool, since: datetime) -> list[ColumnElement[bool]]:
    return [
        Payment.merchant_id == merchant_id,
        Payment.livemode == livemode,
        Payment.created_at >= since,
    ]


async def _traffic(
    session: AsyncSession, merchant_id: str, livemode: bool, since: datetime
) -> list[Traffic]:
    rows = await session.execute(
        select(*tally_columns(Payment.status, Payment.amount, _SUCCEEDED), Payment.currency)
        .where(*_merchant_s(merchant_id, livemode, since))
        .group_by(Payment.currency)
        .order_by(Payment.currency)
    )
    return [Traffic(*row) for row in rows]


async def _chart(session: AsyncSession, merchant_id: str, livemode: bool, today: date) -> Chart:
    first = today - timedelta(days=CHART_DAYS - 1)
    day = cast(func.timezone("UTC", Payment.created_at), DATE)
    rows = await session.execute(
        select(Payment.currency, day, func.sum(Payment.amount))
        .where(*_merchant_s(merchant_id, livemode, _day_start(first)), _SUCCEEDED)
        .group_by(Payment.currency, day)
    )
    by_currency: dict[str, dict[date, int]] = {}
    for currency, on, amount in rows:
        by_currency.setdefault(currency, {})[on] = int(amount)
    # The currency with the most volume (XOF when there is none).
    currency = max(by_currency, key=lambda c: sum(by_currency[c].values()), default="XOF")
    amounts = by_currency.get(currency, {})
    days = [first + timedelta(days=n) for n in range(CHART_DAYS)]
    return Chart(currency, [DayVolume(d, amounts.get(d, 0)) for d in days])


async def _alerts(session: AsyncSession, merchant_id: str, livemode: bool, now: datetime) -> Alerts:
    expiring = await session.scalars(
        select(ApiKey)
        .where(
            ApiKey.merchant_id == merchant_id,
            ApiKey.livemode == livemode,
            ApiKey.revoked_at.is_(None),
            ApiKey.expires_at > now,
            ApiKey.expires_at <= now + KEYS_EXPIRING_WITHIN,
        )
        .order_by(ApiKey.expires_at)
    )
    held = await session.scalar(
        select(func.count()).where(
            Payout.merchant_id == merchant_id,
            Payout.livemode == livemode,
            Payout.approval == APPROVAL_REQUIRED,
            Payout.status == "pending",
        )
    )
    return Alerts(
        failing_endpoints=[
            endpoint
            for endpoint in await failing_endpoints(session, now, merchant_id)
            if endpoint.livemode == livemode
        ],
        expiring_keys=expiring.all(),
        drafts_awaiting=await drafts.DRAFTS.count_awaiting(session, merchant_id) if livemode else 0,
        batch_drafts_awaiting=(
            await batch_drafts.DRAFTS.count_awaiting(session, merchant_id) if livemode else 0
        ),
        held_payouts=int(held or 0),
    )


async def overview(
    session: AsyncSession, merchant_id: str, livemode: bool, now: datetime
) -> Overview:
    today = now.astimezone(UTC).date()
    return Overview(
        today=await _traffic(session, merchant_id, livemode, _day_start(today)),
        month=await _traffic(session, merchant_id, livemode, _day_start(today.replace(day=1))),
        chart=await _chart(session, merchant_id, livemode, today),
        alerts=await _alerts(session, merchant_id, livemode, now),
    )
