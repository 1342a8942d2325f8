"""Instalments (spec: POST /installment-plans/{reference}/payments; DESIGN: plans): the rules
checked before any operator, escrow, completion, and the creation fee."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.plans.builders import (
    PLANS,
    SETTLE_DELAY,
    assert_plan_reconciles,
    available,
    count,
    create_plan,
    escrow,
    fetch,
    pay,
    platform,
    set_plan_settings,
)
from tests.support import assert_error, card_body, make_merchant, momo_body

PENDING_NUMBER = "22997001234"  # pending, then succeeded after the settle delay
FAILING_NUMBER = "22997000003"  # pending, then failed after the settle delay


async def written(runtime: Runtime) -> tuple[int, int, int]:
    """Payments, ledger transactions and events: what a rejected instalment must not add."""
    return (
        await count(runtime, "SELECT count(*) FROM payments"),
        await count(runtime, "SELECT count(*) FROM ledger_transactions"),
        await count(runtime, "SELECT count(*) FROM events"),
    )


async def settle_delayed(clock: ManualClock, worker: Worker) -> None:
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()


async def test_first_instalment_below_the_creation_fee_is_refused_before_the_operator(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500)
    plan = await create_plan(client, merchant, target_amount=10_000)
    error = assert_error(
        await pay(client, merchant, plan["reference"], amount=499), 422, "invalid_request"
    )
    assert "amount" in error["details"]
    assert await written(runtime) == (0, 0, 0)
    # Exactly the fee is a valid first instalment: it counts nothing toward the target.
    response = await pay(client, merchant, plan["reference"], amount=500)
    assert response.status_code == 201, response.text
    fetched = await fetch(client, merchant, plan["reference"])
    assert fetched["paid_amount"] == 0 and fetched["remaining_amount"] == 10_000
    assert await platform(runtime, "plan_fees") == 500
    assert await escrow(runtime, merchant.id, plan["reference"]) == 0
    await assert_plan_reconciles(runtime, plan["reference"])


async def test_one_instalment_of_target_plus_fee_pays_the_plan_off(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500, fee_percent="1")
    plan = await create_plan(client, merchant, target_amount=10_000)
    assert_error(
        await pay(client, merchant, plan["reference"], amount=10_501), 422, "invalid_request"
    )
    response = await pay(client, merchant, plan["reference"], amount=10_500)
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["status"] == "succeeded"
    assert (payment["amount"], payment["fee_amount"], payment["total_amount"]) == (
        10_500,
        105,
        10_605,
    )
    fetched = await fetch(client, merchant, plan["reference"])
    assert fetched["status"] == "succeeded"
    assert fetched["paid_amount"] == 10_000 and fetched["remaining_amount"] == 0
    assert fetched["completed_at"] is not None
    assert await escrow(runtime, merchant.id, plan["reference"]) == 0
    assert await available(runtime, merchant.id) == 10_000
    assert await platform(runtime, "plan_fees") == 500
    assert await platform(runtime, "fees") == 105
    # The escrow goes to the balance in one transfer of two postings.
    assert (
        await count(
            runtime,
            "SELECT count(*) FROM ledger_transactions "
            "WHERE kind = 'plan_release' AND reference = :plan",
            plan=plan["reference"],
        )
        == 1
    )
    assert (
        await count(
            runtime,
            "SELECT count(*) FROM ledger_postings p JOIN ledger_transactions t "
            "ON t.id = p.transaction_id WHERE t.kind = 'plan_release'",
        )
        == 2
    )
    await assert_plan_reconciles(runtime, plan["reference"])


async def test_instalments_stay_in_escrow_until_the_target_is_reached(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500)
    plan = await create_plan(client, merchant, target_amount=5_000)
    reference = plan["reference"]
    for amount in (1_500, 2_000):  # the first counts 1,000; the second in full
        assert (await pay(client, merchant, reference, amount=amount)).status_code == 201
        await assert_plan_reconciles(runtime, reference)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"], fetched["remaining_amount"]) == (
        "pending",
        3_000,
        2_000,
    )
    assert await escrow(runtime, merchant.id, reference) == 3_000
    assert await available(runtime, merchant.id) == 0
    error = assert_error(
        await pay(client, merchant, reference, amount=2_001), 422, "invalid_request"
    )
    assert "amount" in error["details"]
    assert (await pay(client, merchant, reference, amount=2_000)).status_code == 201
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 5_000)
    assert await escrow(runtime, merchant.id, reference) == 0
    assert await available(runtime, merchant.id) == 5_000
    await assert_plan_reconciles(runtime, reference)


async def test_pending_instalments_reserve_what_they_will_count(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=5_000)
    reference = plan["reference"]
    first = await pay(client, merchant, reference, amount=3_000, phone_number=PENDING_NUMBER)
    assert first.json()["data"]["status"] == "pending"
    assert_error(
        await pay(client, merchant, reference, amount=2_001, phone_number=PENDING_NUMBER),
        422,
        "invalid_request",
    )
    second = await pay(client, merchant, reference, amount=2_000, phone_number=PENDING_NUMBER)
    assert second.status_code == 201
    assert_error(await pay(client, merchant, reference, amount=1), 422, "invalid_request")
    fetched = await fetch(client, merchant, reference)
    assert fetched["paid_amount"] == 0  # pending instalments count only once they succeed
    await settle_delayed(clock, worker)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 5_000)
    assert [p["status"] for p in fetched["payments"]] == ["succeeded", "succeeded"]
    await assert_plan_reconciles(runtime, reference)


async def test_failed_instalments_count_nothing_and_free_their_reservation(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=5_000)
    reference = plan["reference"]
    refused = await pay(client, merchant, reference, amount=1_000, phone_number="22997000001")
    assert_error(refused, 402, "payment_failed")
    late = await pay(client, merchant, reference, amount=5_000, phone_number=FAILING_NUMBER)
    assert late.json()["data"]["status"] == "pending"
    assert_error(await pay(client, merchant, reference, amount=1), 422, "invalid_request")
    await settle_delayed(clock, worker)
    fetched = await fetch(client, merchant, reference)
    assert fetched["paid_amount"] == 0
    assert [p["status"] for p in fetched["payments"]] == ["failed", "failed"]
    assert (await pay(client, merchant, reference, amount=5_000)).status_code == 201
    assert (await fetch(client, merchant, reference))["status"] == "succeeded"
    await assert_plan_reconciles(runtime, reference)


async def test_the_next_instalment_carries_the_fee_when_the_first_fails(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500)
    plan = await create_plan(client, merchant, target_amount=5_000)
    reference = plan["reference"]
    # Carries the fee while pending; the next one counts in full.
    await pay(client, merchant, reference, amount=1_500, phone_number=FAILING_NUMBER)
    assert (await pay(client, merchant, reference, amount=1_000)).status_code == 201
    await settle_delayed(clock, worker)
    assert (await fetch(client, merchant, reference))["paid_amount"] == 1_000
    assert await platform(runtime, "plan_fees") == 0
    # The fee is still due: the next instalment must cover it, and counts the rest.
    assert_error(await pay(client, merchant, reference, amount=499), 422, "invalid_request")
    assert (await pay(client, merchant, reference, amount=1_500)).status_code == 201
    assert (await fetch(client, merchant, reference))["paid_amount"] == 2_000
    assert await platform(runtime, "plan_fees") == 500
    await assert_plan_reconciles(runtime, reference)


async def test_a_plan_completes_only_once_its_creation_fee_is_paid(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=100)
    plan = await create_plan(client, merchant, target_amount=1_000)
    reference = plan["reference"]
    await pay(client, merchant, reference, amount=100, phone_number=FAILING_NUMBER)  # fee only
    assert (await pay(client, merchant, reference, amount=1_000)).status_code == 201
    await settle_delayed(clock, worker)  # the fee carrier fails
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"], fetched["remaining_amount"]) == (
        "pending",
        1_000,
        0,
    )
    assert await available(runtime, merchant.id) == 0
    assert_error(await pay(client, merchant, reference, amount=101), 422, "invalid_request")
    assert (await pay(client, merchant, reference, amount=100)).status_code == 201
    fetched = await fetch(client, merchant, reference)
    assert fetched["status"] == "succeeded"
    assert await available(runtime, merchant.id) == 1_000
    await assert_plan_reconciles(runtime, reference)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"operator": "inconnu"}, "operator"),
        ({"operator": "orange_sn", "phone_number": "221770000000"}, "otp"),
        ({"operator": "free_sn", "phone_number": "221760000000"}, "return_url"),
        ({"phone_number": "2299"}, "phone_number"),
        ({"phone_number": None}, "phone_number"),
        ({"amount": 10.5}, "amount"),
        ({"amount": 5}, "amount"),  # Mobile Money total below 10
        ({"amount": 1_000_001}, "amount"),  # Mobile Money total above 1,000,000
        ({"currency": "XAF"}, "currency"),  # not the plan's currency
        ({"amount": 0}, "amount"),
    ],
)
async def test_payment_rules_apply_to_instalments_and_nothing_is_written(
    client: httpx.AsyncClient, runtime: Runtime, overrides: dict[str, Any], field: str
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=5_000_000)
    body = {key: value for key, value in momo_body(**overrides).items() if value is not None}
    response = await client.post(
        f"{PLANS}/{plan['reference']}/payments", json=body, headers=merchant.headers()
    )
    assert field in assert_error(response, 422, "invalid_request")["details"]
    assert await written(runtime) == (0, 0, 0)


async def test_card_instalment_needs_the_holder_and_returns_a_payment_url(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=100.50, currency="EUR")
    reference = plan["reference"]
    url = f"{PLANS}/{reference}/payments"
    anonymous = card_body(amount=100.50, customer={})
    details = assert_error(
        await client.post(url, json=anonymous, headers=merchant.headers()), 422, "invalid_request"
    )["details"]
    assert {"customer.firstname", "customer.lastname", "customer.email"} <= set(details)
    response = await client.post(url, json=card_body(amount=100.50), headers=merchant.headers())
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["status"] == "pending"
    assert payment["currency"] == "EUR"  # the plan's, without asking
    assert payment["payment_url"].endswith(f"/pay/{payment['reference']}")
    decided = await client.post(
        f"/api/v1/test-helpers/payments/{payment['reference']}/succeed", headers=merchant.headers()
    )
    assert decided.status_code == 200, decided.text
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 100.5)
    assert await available(runtime, merchant.id, "EUR") == 10_050
    await assert_plan_reconciles(runtime, reference)


async def test_instalment_is_a_payment_object_described_by_the_service(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    # Not an instalment's fields (spec): refused, not ignored (issue 12), since an external_id
    # taken for an idempotency key that it is not would let a retry pay twice.
    refused = await pay(
        client, merchant, plan["reference"], amount=2_000, description="d", external_id="e"
    )
    assert set(assert_error(refused, 422, "invalid_request")["details"]) == {
        "description",
        "external_id",
    }
    response = await pay(
        client,
        merchant,
        plan["reference"],
        amount=2_000,
        customer={"firstname": "Awa"},
        metadata={"panier": 7},
    )
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["external_id"] is None
    assert payment["description"] == f"Versement du plan {plan['reference']}"
    assert payment["metadata"] == {"panier": 7}
    assert payment["customer"]["firstname"] == "Awa"
    assert payment["payment_mode"]["operator"] == "mtn"
    assert payment["payment_url"] is None
    fetched = await client.get(
        f"/api/v1/payments/{payment['reference']}", headers=merchant.headers()
    )
    assert fetched.json()["data"] == payment


async def test_instalments_emit_payment_events(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    ok = (await pay(client, merchant, plan["reference"], amount=1_000)).json()["data"]
    await pay(client, merchant, plan["reference"], amount=1_000, phone_number="22997000001")
    async with runtime.sessionmaker() as session:
        rows = (await session.execute(text("SELECT type, data FROM events ORDER BY type"))).all()
    assert [kind for kind, _ in rows] == ["payment.failed", "payment.succeeded"]
    assert rows[1][1]["reference"] == ok["reference"]
    assert rows[1][1]["description"] == f"Versement du plan {plan['reference']}"
    assert rows[1][1]["payment_mode"]["country_code"] == "BJ"


async def test_unknown_plan_is_404_and_writes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    for reference in ("inconnu", "5b0d1f4e-6a8e-4c8e-9a59-3f1d8f0b2c11"):
        assert_error(await pay(client, merchant, reference), 404, "not_found")
    assert await written(runtime) == (0, 0, 0)


async def test_platform_fee_is_not_counted_toward_the_target(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, fee_fixed=50)
    plan = await create_plan(client, merchant, target_amount=1_000)
    payment = (await pay(client, merchant, plan["reference"], amount=1_000)).json()["data"]
    assert payment["total_amount"] == 1_050
    assert (await fetch(client, merchant, plan["reference"]))["status"] == "succeeded"
    assert await platform(runtime, "fees") == 50
    assert await available(runtime, merchant.id) == 1_000
    await assert_plan_reconciles(runtime, plan["reference"])
