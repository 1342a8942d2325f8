"""A payment its operator decided offline is written in one statement (`_decided`); the same
payment recorded first and then given the same answer (`record`, `initiate`: the path of
every other payment) must write the same rows, money and event, for every outcome."""

from __future__ import annotations

import contextlib
import uuid

import httpx
import pytest

from cauri.kit.db import unit_of_work
from cauri.kit.errors import PaymentFailed
from cauri.merchants.caller import Caller
from cauri.operators.protocol import Collection
from cauri.payments.schemas import PaymentCreate
from cauri.payments.service import PaymentService
from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS
from tests.support import make_merchant, momo_body, scalar
from tests.webhooks.builders import set_endpoint
from tests.write_paths import written


async def _recorded_first(runtime: Runtime, caller: Caller, body: PaymentCreate) -> str:
    """The payment through `record` then `initiate`, given the simulator's answer."""
    service = PaymentService()
    payment_id = uuid.uuid4()
    async with unit_of_work(runtime.sessionmaker) as session:
        priced = await service.price(session, runtime, caller, body)
        adapter = runtime.operators.in_process(priced.checked.mode.operator, caller.livemode)
        assert adapter is not None and adapter.decides_offline
        answer = await adapter.collect(
            Collection(
                reference=str(payment_id),
                operator=priced.checked.mode.operator,
                amount=priced.debited,
                currency=priced.checked.currency,
                phone_number=priced.checked.phone_number,
                otp=None,
            )
        )
        payment = await service.record(
            session,
            runtime,
            caller,
            body,
            priced,
            None,
            description=body.description,
            external_id=body.external_id,
            payment_id=payment_id,
            answer=answer,
        )
        assert payment is not None
        # The route keeps a refused payment's writes, as this block does.
        with contextlib.suppress(PaymentFailed):
            await service.initiate(session, runtime, payment, otp=None, answer=answer)
    return str(payment_id)


@pytest.mark.parametrize(
    ("number", "status"), [("22997000000", "succeeded"), ("22997000001", "failed")]
)
@pytest.mark.parametrize("callback_url", [None, "https://merchant.example/hook"])
async def test_both_write_paths_write_the_same_payment(
    client: httpx.AsyncClient,
    runtime: Runtime,
    number: str,
    status: str,
    callback_url: str | None,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, "https://merchant.example/webhooks")
    fields = momo_body(
        phone_number=number,
        description="Commande 42",
        callback_url=callback_url,
        metadata={"order": 42},
        customer={"firstname": "Awa", "email": "awa@example.com"},
    )
    response = await client.post(PAYMENTS, json=fields, headers=merchant.headers())
    assert response.status_code == (201 if status == "succeeded" else 402), response.text
    at_once = await written(runtime, "payments", await scalar(runtime, "SELECT id FROM payments"))

    caller = Caller(merchant_id=merchant.id, livemode=False)
    first = await _recorded_first(runtime, caller, PaymentCreate.model_validate(fields))

    assert await written(runtime, "payments", first) == at_once
    kinds = {kind for kind, _ in at_once}
    assert kinds == (
        {"row", "event", "delivery", "job"}
        | ({"transaction", "posting"} if status == "succeeded" else set())
    )
