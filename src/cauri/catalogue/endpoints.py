from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.merchants.auth import CallerDep
from cauri.merchants.contract import open_modes
from cauri.operators.catalogue import COUNTRY_NAMES, ModeType, filtered

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payment modes"])

# Case-insensitive, like operator codes.
CountryCode = Annotated[str, Query(pattern="(?i)^(" + "|".join(COUNTRY_NAMES) + ")$")]


@router.get("/payment-modes")
async def list_payment_modes(
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    type: Annotated[ModeType | None, Query()] = None,
    country: CountryCode | None = None,
) -> dict[str, Any]:
    """The platform's modes open to this account in the key's environment, with the
    account's own fees (spec: the fees shown are those applied to that account)."""
    modes = await open_modes(
        session,
        caller.merchant_id,
        caller.livemode,
        filtered(type, country.upper() if country else None),
        runtime.operators,
    )
    return ok(
        [
            {
                "id": mode.id,
                "name": mode.name,
                "type": mode.type.value,
                "operator": mode.operator,
                "country": mode.country,
                "country_code": mode.country_code,
                "requires_otp": mode.requires_otp,
                "fees": {"percent": float(terms.percent), "fixed": terms.fixed_major("XOF")},
            }
            for mode, terms in modes
        ]
    )
