"""Congo, end to end in XAF (issue 8; DESIGN: the currency defaults to the operator's):
a payment, the balance, a payout and a refund, all without naming the currency."""

from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from tests.payments.builders import merchant_available, platform_fees, set_platform_fees
from tests.payouts.builders import BALANCE, PAYOUTS
from tests.support import assert_error, make_merchant, momo_body

CONGO = {"operator": "mtn_cg", "phone_number": "242060000000"}


async def test_mtn_congo_pays_balances_pays_out_and_refunds_in_xaf(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    await set_platform_fees(runtime, percent="0", fixed=25)  # XOF, which XAF shares at par
    paid = await client.post(
        "/api/v1/payments", json=momo_body(amount=5000, **CONGO), headers=headers
    )
    assert paid.status_code == 201, paid.text
    payment = paid.json()["data"]
    assert (payment["currency"], payment["status"], payment["fee_amount"]) == (
        "XAF",
        "succeeded",
        25,
    )
    second = await client.post(
        "/api/v1/payments", json=momo_body(amount=2000, **CONGO), headers=headers
    )
    assert second.status_code == 201, second.text

    rows = (await client.get(BALANCE, headers=headers)).json()["data"]
    xaf = next(row for row in rows if row["currency"] == "XAF")
    assert (xaf["available"], xaf["escrowed"], xaf["pending_payouts"]) == (7000, 0, 0)

    payout = await client.post(PAYOUTS, json={"amount": 1000, **CONGO}, headers=headers)
    assert payout.status_code == 201, payout.text
    assert (payout.json()["data"]["currency"], payout.json()["data"]["status"]) == (
        "XAF",
        "succeeded",
    )
    refund = await client.post(
        f"/api/v1/payments/{second.json()['data']['reference']}/refund", headers=headers
    )
    assert refund.status_code == 201, refund.text
    assert (refund.json()["data"]["currency"], refund.json()["data"]["status"]) == (
        "XAF",
        "succeeded",
    )
    assert await merchant_available(runtime, merchant.id, currency="XAF") == 7000 - 1000 - 2000
    assert await merchant_available(runtime, merchant.id) == 0  # nothing in XOF
    assert await platform_fees(runtime, currency="XAF") == 25 + 25

    # An XOF payout through a Congolese operator, or a payout beyond the XAF balance, is refused.
    wrong = await client.post(
        PAYOUTS, json={"amount": 1000, "currency": "XOF", **CONGO}, headers=headers
    )
    assert "currency" in assert_error(wrong, 422, "invalid_request")["details"]
    too_much = await client.post(PAYOUTS, json={"amount": 5000, **CONGO}, headers=headers)
    assert_error(too_much, 402, "insufficient_funds")
