"""A payout its operator pays offline is written in one statement with its debit and event
(`_paid_at_once`); the same payout recorded first and then sent (`_record`, `_initiate`: the
path of payouts under caps or approval, and of every live one) must write the same row,
money and event. Only success takes the one-statement path: the rest is the second path's."""

from __future__ import annotations

import httpx

from cauri.kit.db import unit_of_work
from cauri.merchants.caller import Caller
from cauri.operators import catalogue
from cauri.payouts.schemas import PayoutCreate
from cauri.payouts.service import Beneficiary, _row, payouts
from cauri.runtime import Runtime
from tests.payouts.builders import SUCCEEDS, top_up
from tests.support import make_merchant
from tests.webhooks.builders import set_endpoint
from tests.write_paths import written


async def test_both_write_paths_write_the_same_payout(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, "https://hooks.example.com/cauri")
    await top_up(runtime, merchant.id, 10_000)
    caller = Caller(merchant_id=merchant.id, livemode=False)
    body = PayoutCreate.model_validate(
        {
            "amount": 1000,
            "operator": "mtn",
            "phone_number": SUCCEEDS,
            "beneficiary_name": "Koffi Mensah",
            "reason": "Remboursement de frais",
            "metadata": {"lot": 7},
        }
    )
    mode = catalogue.find("mtn")
    assert mode is not None
    beneficiary = Beneficiary(mode=mode, phone_number=SUCCEEDS, third_party=True)

    def row() -> dict[str, object]:
        return _row(caller, body, beneficiary, 1000, 50, runtime.clock.now())

    async with runtime.sessionmaker() as session:  # as the route runs it: no transaction
        paid = await payouts._paid_at_once(session, runtime, caller, row())
        await session.commit()
    assert paid is not None
    at_once = await written(runtime, "payouts", paid[0].reference)

    async with unit_of_work(runtime.sessionmaker) as session:
        recorded = await payouts._record(session, row())
        assert recorded is not None
        await payouts._initiate(session, runtime, recorded)
    assert recorded.status == "succeeded"

    assert await written(runtime, "payouts", recorded.reference) == at_once
    assert {kind for kind, _ in at_once} == {
        "row",
        "transaction",
        "posting",
        "event",
        "delivery",
        "job",
    }
