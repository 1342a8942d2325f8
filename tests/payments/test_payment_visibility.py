"""What a payment object tells beyond the spec's fields: `amount_refunded`, why it failed
(`failure_code`, `failure_message`, null unless failed) and, for Mobile Money, the number
actually debited (`customer.phone_number`)."""

from __future__ import annotations

import httpx

from cauri.kit.failures import MESSAGES
from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS, events_of, pay
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, momo_body


async def _payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, object]:
    response = await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()["data"]
    return data


async def test_a_succeeded_payment_has_no_failure_and_nothing_refunded(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body())).json()["data"]
    assert payment["status"] == "succeeded"
    assert (payment["failure_code"], payment["failure_message"]) == (None, None)
    assert payment["amount_refunded"] == 0


async def test_a_refused_payment_says_why(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(phone_number="22997000001", external_id="refused")
    assert_error(await pay(client, merchant.headers(), body), 402, "payment_failed")
    failed = await _payment(client, merchant, "refused")
    assert (failed["status"], failed["failure_code"]) == ("failed", "refused_at_initiation")
    assert failed["failure_message"] == MESSAGES["refused_at_initiation"]
    [(kind, data)] = await events_of(runtime, str(failed["reference"]))
    assert (kind, data["failure_code"]) == ("payment.failed", "refused_at_initiation")


async def test_a_payment_failed_by_the_test_helper_says_so(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), card_body())).json()["data"]
    assert (payment["status"], payment["failure_code"]) == ("pending", None)
    failed = await client.post(
        f"/api/v1/test-helpers/payments/{payment['reference']}/fail", headers=merchant.headers()
    )
    assert failed.json()["data"]["failure_code"] == "test_helper"
    assert failed.json()["data"]["failure_message"] == MESSAGES["test_helper"]


async def test_mobile_money_shows_the_number_debited(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(
        phone_number="+22997000000", customer={"firstname": "Kofi", "phone_number": "22990000000"}
    )
    payment = (await pay(client, merchant.headers(), body)).json()["data"]
    assert payment["customer"] == {
        "firstname": "Kofi",
        "lastname": None,
        "email": None,
        "phone_number": "22997000000",
    }
    [(_, event)] = await events_of(runtime, payment["reference"])
    assert event["customer"]["phone_number"] == "22997000000"


async def test_a_card_payment_shows_the_customer_as_given(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    customer = {"firstname": "Awa", "lastname": "Diallo", "email": "awa@example.com"}
    given = card_body(customer=customer | {"phone_number": "22990000000"})
    payment = (await pay(client, merchant.headers(), given)).json()["data"]
    assert payment["customer"] == customer | {"phone_number": "22990000000"}
    plain = (await pay(client, merchant.headers(), card_body())).json()["data"]
    assert plain["customer"]["phone_number"] is None
