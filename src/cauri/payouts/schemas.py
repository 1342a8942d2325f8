"""The payout request, the payout object (spec: Payout) and the list's period filter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from cauri.kit.errors import InvalidRequest
from cauri.kit.metadata import Metadata
from cauri.kit.money import Amount, to_major
from cauri.kit.phone import mask
from cauri.models import Payout

Text255 = Annotated[str, StringConstraints(max_length=255)]


class PayoutCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    amount: Amount
    # Payouts are Mobile Money, in the operator's currency; None: that currency (DESIGN).
    currency: Literal["XOF", "XAF"] | None = None
    phone_number: Annotated[str, StringConstraints(max_length=32)] | None = None
    operator: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    beneficiary_name: Text255 | None = None
    reason: Text255 | None = None
    metadata: Metadata | None = None


def payout_object(payout: Payout) -> dict[str, Any]:
    currency = payout.currency
    return {
        "reference": payout.reference,
        "status": payout.status,
        "amount": to_major(payout.amount, currency),
        "fee_amount": to_major(payout.fee_amount, currency),
        "total_debited": to_major(payout.total_debited, currency),
        "currency": currency,
        "operator": payout.operator,
        "phone_number": mask(payout.phone_number),
        "beneficiary_name": payout.beneficiary_name,
        "reason": payout.reason,
        "external_id": payout.external_id,
        "metadata": payout.metadata_,
        "livemode": payout.livemode,
        "completed_at": payout.completed_at.isoformat() if payout.completed_at else None,
        "created_at": payout.created_at.isoformat(),
    }


@dataclass(frozen=True)
class Period:
    """`from` and `to` of a payout list (DESIGN: ISO 8601 dates or timestamps). A date
    covers its whole day in UTC; a timestamp without an offset is UTC. `end` is exclusive."""

    start: datetime | None = None
    end: datetime | None = None

    @classmethod
    def parse(cls, start: str | None, end: str | None) -> Period:
        return cls(
            None if start is None else _instant(start, "from", day_end=False),
            None if end is None else _instant(end, "to", day_end=True),
        )


def _instant(value: str, field: str, *, day_end: bool) -> datetime:
    try:
        return _parsed_instant(value, field, day_end=day_end).astimezone(UTC)
    except OverflowError:
        # 9999-12-31 has no next day; 0001-01-01T00:00+01:00 is no UTC instant.
        raise InvalidRequest.field(
            field, f"« {value} » est hors de l'intervalle des dates admises."
        ) from None


def _parsed_instant(value: str, field: str, *, day_end: bool) -> datetime:
    try:
        day = date.fromisoformat(value)
    except ValueError:
        pass
    else:
        midnight = datetime.combine(day, time(), tzinfo=UTC)
        return midnight + timedelta(days=1) if day_end else midnight
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidRequest.field(
            field, f"« {value} » n'est ni une date ni un horodatage ISO 8601."
        ) from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    # Timestamps are stored to the microsecond: `to` includes its own instant.
    return instant + timedelta(microseconds=1) if day_end else instant
