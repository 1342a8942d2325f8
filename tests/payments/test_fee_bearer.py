"""Issue 12, fee bearer: with `merchant`, the customer is debited `amount` and the merchant is
credited `amount − fee_amount`; with `customer` (the default) the customer is debited
`amount + fee_amount` and the merchant credited `amount`. A payment keeps the bearer of its
creation; a plan's instalments always charge their customer the commission."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from cauri.kit.db import unit_of_work
from cauri.merchants.contract import FeeBearer
from cauri.merchants.service import merchants
from cauri.models import Payment
from cauri.payments import rules
from cauri.runtime import Runtime
from tests.foundation.builders import KEYED, run_cli
from tests.payments.builders import merchant_available, pay, platform_fees, set_fee
from tests.plans.builders import create_plan
from tests.plans.builders import pay as pay_instalment
from tests.support import assert_error, card_body, make_merchant, momo_body, scalar


async def set_bearer(runtime: Runtime, merchant_id: str, bearer: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee_bearer(session, merchant_id, bearer)


async def test_merchant_bearer_debits_amount_and_credits_amount_less_fee(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2.5", fixed=0)
    await set_bearer(runtime, merchant.id, "merchant")
    response = await pay(client, merchant.headers(), momo_body(amount=1010))
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["status"] == "succeeded"
    assert (payment["amount"], payment["fee_amount"], payment["total_amount"]) == (1010, 25, 1010)
    assert (payment["fee_bearer"], payment["net_amount"]) == ("merchant", 985)
    assert await merchant_available(runtime, merchant.id) == 985
    assert await platform_fees(runtime) == 25
    # What left the operator's side is what the customer was debited: the amount.
    cleared = await scalar(
        runtime,
        "SELECT -sum(p.amount) FROM ledger_postings p JOIN ledger_transactions t "
        "ON t.id = p.transaction_id WHERE t.reference = :ref AND p.account LIKE 'operator:%'",
        ref=payment["reference"],
    )
    assert cleared == 1010


async def test_customer_bearer_is_the_default(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2.5", fixed=0)
    payment = (await pay(client, merchant.headers(), momo_body(amount=1010))).json()["data"]
    assert (payment["fee_bearer"], payment["total_amount"], payment["net_amount"]) == (
        "customer",
        1035,
        1010,
    )
    assert await merchant_available(runtime, merchant.id) == 1010


async def test_a_payment_keeps_the_bearer_of_its_creation(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="10", fixed=0)
    await set_bearer(runtime, merchant.id, "merchant")
    # Ending 0002: pending, settled later by the test helper.
    created = await pay(client, merchant.headers(), momo_body(phone_number="22997000002"))
    reference = created.json()["data"]["reference"]
    await set_bearer(runtime, merchant.id, "customer")
    succeeded = await client.post(
        f"/api/v1/test-helpers/payments/{reference}/succeed", headers=merchant.headers()
    )
    assert succeeded.status_code == 200, succeeded.text
    payment = succeeded.json()["data"]
    assert (payment["fee_bearer"], payment["total_amount"], payment["net_amount"]) == (
        "merchant",
        1000,
        900,
    )
    assert await merchant_available(runtime, merchant.id) == 900


async def test_a_fee_that_leaves_the_merchant_nothing_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="0", fixed=100)
    await set_bearer(runtime, merchant.id, "merchant")
    response = await pay(client, merchant.headers(), momo_body(amount=100))
    body = assert_error(response, 422, "invalid_request")
    assert "amount" in body["details"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


async def test_mobile_money_bounds_apply_to_what_the_customer_is_debited(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="1", fixed=0)
    # 1,000,000 + 1 % is over the Mobile Money cap when the customer pays the fee...
    refused = await pay(client, merchant.headers(), momo_body(amount=1_000_000))
    assert_error(refused, 422, "invalid_request")
    # ...and exactly the cap when the merchant does.
    await set_bearer(runtime, merchant.id, "merchant")
    accepted = await pay(client, merchant.headers(), momo_body(amount=1_000_000))
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["data"]["net_amount"] == 990_000


async def test_instalments_charge_their_customer_the_fee_whatever_the_bearer(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2", fixed=0)
    await set_bearer(runtime, merchant.id, "merchant")
    plan = await create_plan(client, merchant, target_amount=10_000)
    response = await pay_instalment(client, merchant, plan["reference"], amount=5000)
    assert response.status_code == 201, response.text
    instalment = response.json()["data"]
    assert (instalment["fee_bearer"], instalment["total_amount"]) == ("customer", 5100)


async def test_the_card_page_shows_no_commission_to_a_customer_who_does_not_pay_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "visa", percent="3", fixed=0)
    await set_bearer(runtime, merchant.id, "merchant")
    payment = (await pay(client, merchant.headers(), card_body(amount=5000))).json()["data"]
    page = await client.get(f"/pay/{payment['reference']}")
    assert page.status_code == 200
    assert "Frais" not in page.text


async def test_set_fee_bearer_cli(client: httpx.AsyncClient, database_url: str) -> None:
    created = (
        await run_cli(
            database_url, "merchants", "create", "--name", "Boutique", "--json", env_vars=KEYED
        )
    ).json()
    result = await run_cli(
        database_url, "merchants", "set-fee-bearer", created["id"], "merchant", "--json"
    )
    assert result.json() == {"id": created["id"], "fee_bearer": "merchant"}
    refused = await run_cli(database_url, "merchants", "set-fee-bearer", created["id"], "platform")
    assert refused.error()["code"] == "invalid_request"


@settings(max_examples=300, deadline=None)
@given(
    amount=st.integers(min_value=1, max_value=10**12),
    fee=st.integers(min_value=0, max_value=10**12),
    bearer=st.sampled_from(list(FeeBearer)),
)
def test_what_the_customer_pays_is_what_the_merchant_and_platform_get(
    amount: int, fee: int, bearer: FeeBearer
) -> None:
    payment = Payment(amount=amount, fee_amount=fee, fee_bearer=bearer.value)
    assert payment.total_amount == rules.debited(amount, fee, bearer)
    assert payment.total_amount == payment.net_amount + fee
    assert payment.total_amount == (amount if bearer is FeeBearer.MERCHANT else amount + fee)
