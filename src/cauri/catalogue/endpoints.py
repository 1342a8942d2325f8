from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import availability
from cauri.calls.availability import Route, State
from cauri.catalogue.prediction import PORTABILITY_NOTE, Confidence, Source, predict
from cauri.catalogue.schemas import PaymentModes, Prediction
from cauri.connectors.service import connectors
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit.validation_messages import pattern
from cauri.merchants.auth import CallerDep
from cauri.merchants.contract import open_modes
from cauri.operators import catalogue
from cauri.operators.catalogue import COUNTRY_NAMES, ModeType, PaymentMode, filtered
from cauri.runtime import Runtime

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payment modes"])

# Case-insensitive, like operator codes.
_COUNTRY = pattern(
    "(?i)^(" + "|".join(COUNTRY_NAMES) + ")$",
    f"Doit être un code pays parmi {', '.join(COUNTRY_NAMES)}.",
)
CountryCode = Annotated[str, Query(pattern=_COUNTRY)]


@router.get("/payment-modes", response_model=PaymentModes)
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
    up = await _availability(session, runtime, [mode for mode, _ in modes], caller.livemode)
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
                "availability": up[mode.operator.lower()],
            }
            for mode, terms in modes
        ]
    )


# What a mode's availability speaks of: its payments, and its payouts.
_AVAILABILITY_ACTIONS = {"collection": "collect", "payout": "disburse"}


async def _availability(
    session: AsyncSession, runtime: Runtime, modes: list[PaymentMode], livemode: bool
) -> dict[str, dict[str, str]]:
    """Each mode's `availability`: test mode is always up (the simulator); live, each
    operation's route as Cauri sees it and as its connector reports it; no route: closed."""
    operators = [mode.operator.lower() for mode in modes]
    if not livemode:
        up = State.OPERATIONAL.value
        return {op: dict.fromkeys(_AVAILABILITY_ACTIONS, up) for op in operators}
    routed = {row.operator: row.connectors for row in await connectors.routes(session)}
    routes = {
        (op, shown): Route(connector, op, action)
        for op in operators
        for shown, action in _AVAILABILITY_ACTIONS.items()
        if (connector := routed.get(op, {}).get(action)) is not None
    }
    reporters = await availability.reporting(
        session, runtime, {route.connector for route in routes.values()}
    )
    if reporters:
        await session.commit()  # no transaction is held while connectors are asked
        await availability.refresh(reporters)
    found = await availability.states(session, runtime, routes.values())
    return {
        op: {
            shown: found[routes[(op, shown)]].value if (op, shown) in routes else "closed"
            for shown in _AVAILABILITY_ACTIONS
        }
        for op in operators
    }


@router.get("/payment-modes/predict", response_model=Prediction)
async def predict_payment_mode(
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    phone_number: Annotated[
        str, Query(description="8 to 15 digits with the country code.", examples=["22997000000"])
    ],
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
