"""Platform-wide settings (`cauri settings set`): default fees, plan creation fee, penalty."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest
from cauri.models import PlatformSettings


async def update_settings(
    session: AsyncSession, changes: dict[str, Any], now: datetime
) -> PlatformSettings:
    """Applies the given changes. The plan creation fee is a fixed amount or a percentage,
    never both: setting one clears the other, and asking for both is refused."""
    if (
        changes.get("plan_creation_fee_fixed") is not None
        and changes.get("plan_creation_fee_percent") is not None
    ):
        raise InvalidRequest(
            "Les frais de création d'un plan sont soit un montant fixe, soit un pourcentage."
        )
    for key, value in changes.items():
        if isinstance(value, int | Decimal) and value < 0:
            raise InvalidRequest.field(key, "La valeur ne peut pas être négative.")
        if key.endswith("percent") and value is not None and value > 100:
            raise InvalidRequest.field(key, "Un pourcentage ne dépasse pas 100.")
    values = dict(changes)
    if values.get("plan_creation_fee_fixed") is not None:
        values["plan_creation_fee_percent"] = None
    if values.get("plan_creation_fee_percent") is not None:
        values["plan_creation_fee_fixed"] = None
    values["updated_at"] = now
    statement = (
        insert(PlatformSettings)
        .values(id=1, **values)
        .on_conflict_do_update(index_elements=[PlatformSettings.id], set_=values)
        .returning(PlatformSettings)
    )
    return (await session.scalars(statement)).one()
