from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cauri.catalogue.prediction import PORTABILITY_NOTE, Confidence, Source, predict
from cauri.connectors.service import connectors
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.merchants.auth import CallerDep
from cauri.merchants.contract import open_modes
from cauri.operators import catalogue
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


@router.get("/payment-modes/predict")
async def predict_payment_mode(
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    phone_number: Annotated[str, Query(description="8 to 15 digits with the country code.")],
) -> dict[str, Any]:
    """The country of a number and the operator it likely belongs to, with a confidence:
    from the numbering plan, and on a live key from pawaPay's prediction when a pawaPay
    account is configured. A hint: with number portability the customer may be elsewhere,
    and wallets (`wallets`: Wave) work on any number."""
    prediction = predict(phone_number)
    operator, source, confidence = prediction.operator, prediction.source, prediction.confidence
    # Test keys contact no operator (spec: Authentication).
    predictor = await connectors.predictor(session, runtime.operators) if caller.livemode else None
    if predictor is not None:
        await session.commit()  # no transaction is held while an operator is asked
        predicted = await predictor.predict_operator(prediction.phone_number)
        mode = catalogue.find(predicted) if predicted else None
        if mode is not None and mode.country_code == prediction.country_code:
            operator, source, confidence = mode.operator, Source.PAWAPAY, Confidence.HIGH
    mode = catalogue.find(operator) if operator else None
    return ok(
        {
            "phone_number": prediction.phone_number,
            "country_code": prediction.country_code,
            "operator": operator,
            "payment_mode_id": mode.id if mode else None,
            "confidence": confidence.value,
            "source": source.value,
            "carrier": prediction.carrier,
            "wallets": list(prediction.wallets),
            "note": PORTABILITY_NOTE,
        }
    )
