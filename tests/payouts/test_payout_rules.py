"""Validation, fees, the two beneficiary regimes, idempotency and isolation (spec: Payouts,
Limits, Errors; DESIGN: fees, idempotent replay)."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest

from cauri.kit.db import unit_of_work
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from tests.payments.builders import merchant_available, platform_fees, set_fee
from tests.payouts.builders import (
    PAYOUTS,
    SUCCEEDS,
    create,
    live_operator,
    set_payout_account,
    top_up,
)
from tests.support import assert_error, make_merchant, scalar


async def _platform_payout_fee(runtime: Runtime, *, percent: str, fixed: int) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(
            session,
            {"payout_fee_percent": Decimal(percent), "payout_fee_fixed": fixed},
            runtime.clock.now(),
        )


async def test_fee_is_added_on_top_and_kept_by_the_platform(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    await _platform_payout_fee(runtime, percent="1.5", fixed=25)
    payout = (await create(client, merchant.headers(), amount=1001)).json()["data"]
    # 1.5 % of 1001 = 15.015, rounded half up to 15, plus 25 fixed.
    assert (payout["amount"], payout["fee_amount"], payout["total_debited"]) == (1001, 40, 1041)
    assert await merchant_available(runtime, merchant.id) == 10_000 - 1041
    assert await platform_fees(runtime) == 40


async def test_merchant_contract_overrides_the_platform_payout_fee(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    await _platform_payout_fee(runtime, percent="1.5", fixed=25)
    await set_fee(runtime, merchant.id, "payout", percent="0", fixed=100)
    payout = (await create(client, merchant.headers(), amount=1000)).json()["data"]
    assert payout["fee_amount"] == 100
    await set_fee(runtime, merchant.id, "payout", disabled=True)
    assert_error(await create(client, merchant.headers()), 422, "invalid_request")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"amount": 9}, "amount"),
        ({"amount": 1_000_001}, "amount"),
        ({"amount": 0}, "amount"),
        ({"amount": 100.5}, "amount"),
        ({"currency": "EUR"}, "currency"),
        ({"operator": None}, "operator"),
        ({"operator": "unknown_op"}, "operator"),
        ({"operator": "VISA"}, "operator"),
        ({"operator": "mtn_cg", "phone_number": "242060000000", "currency": "XOF"}, "currency"),
        ({"currency": "XAF"}, "currency"),
        ({"phone_number": "22507000000"}, "phone_number"),
        ({"phone_number": "2299700"}, "phone_number"),
        ({"phone_number": "229-97-00-00-00"}, "phone_number"),
        ({"metadata": "not an object"}, "metadata"),
    ],
)
async def test_invalid_requests_are_422_and_take_nothing(
    client: httpx.AsyncClient, runtime: Runtime, overrides: dict[str, object], field: str
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 2_000_000)
    body = {"amount": 1000, "phone_number": SUCCEEDS, "operator": "mtn"} | overrides
    response = await client.post(
        PAYOUTS, json={k: v for k, v in body.items() if v is not None}, headers=merchant.headers()
    )
    error = assert_error(response, 422, "invalid_request")
    assert field in error["details"], error
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
    assert await merchant_available(runtime, merchant.id) == 2_000_000


async def test_bounds_include_the_fee(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 2_000_000)
    await _platform_payout_fee(runtime, percent="0", fixed=10)
    too_much = await create(client, merchant.headers(), amount=999_991)
    assert_error(too_much, 422, "invalid_request")
    at_bound = await create(client, merchant.headers(), amount=999_990)
    assert at_bound.json()["data"]["total_debited"] == 1_000_000
    at_floor = await create(client, merchant.headers(), amount=10)
    assert at_floor.status_code == 201, at_floor.text
    assert await merchant_available(runtime, merchant.id) == 2_000_000 - 1_000_000 - 20


async def test_insufficient_funds_takes_nothing_and_records_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 999)
    written = (
        "SELECT ARRAY[(SELECT count(*) FROM events), (SELECT count(*) FROM jobs), "
        "(SELECT count(*) FROM ledger_transactions)]"
    )
    before = await scalar(runtime, written)
    response = await create(client, merchant.headers(), amount=1000, external_id="big")
    assert_error(response, 402, "insufficient_funds")
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
    assert await scalar(runtime, written) == before  # no event, job or ledger transaction
    assert await merchant_available(runtime, merchant.id) == 999
    # Nothing was recorded, so the same external_id can be used once the balance covers it.
    await top_up(runtime, merchant.id, 1)
    retried = await create(client, merchant.headers(), amount=1000, external_id="big")
    assert retried.status_code == 201


async def test_own_account_needs_a_validated_payout_account(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    own = {"amount": 1000}
    none_set = await client.post(PAYOUTS, json=own, headers=merchant.headers())
    assert "phone_number" in assert_error(none_set, 422, "invalid_request")["details"]
    await set_payout_account(runtime, merchant.id, "22961000000", validated=False)
    not_validated = await client.post(PAYOUTS, json=own, headers=merchant.headers())
    assert_error(not_validated, 422, "invalid_request")
    await set_payout_account(runtime, merchant.id, "22961000000", operator="moov", validated=True)
    response = await client.post(PAYOUTS, json=own, headers=merchant.headers())
    assert response.status_code == 201, response.text
    payout = response.json()["data"]
    assert (payout["operator"], payout["phone_number"], payout["status"]) == (
        "moov",
        "2296100****",
        "succeeded",
    )
    assert await merchant_available(runtime, merchant.id) == 4000


async def test_an_own_account_payout_the_balance_does_not_cover_takes_and_records_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The own account is read in the request's transaction before the payout's statement
    runs in it: the statement's failure rolls that transaction back, and the answer is the
    402, not a 500."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 999)
    await set_payout_account(runtime, merchant.id, "22961000000", validated=True)
    response = await client.post(PAYOUTS, json={"amount": 1000}, headers=merchant.headers())
    assert_error(response, 402, "insufficient_funds")
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
    assert await merchant_available(runtime, merchant.id) == 999
    covered = await client.post(PAYOUTS, json={"amount": 999}, headers=merchant.headers())
    assert covered.status_code == 201, covered.text
    assert await merchant_available(runtime, merchant.id) == 0


async def test_external_id_makes_creation_idempotent_per_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    live_operator(runtime)
    await top_up(runtime, merchant.id, 10_000)
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    first = await create(client, merchant.headers(), external_id="salary-7")
    replay = await create(client, merchant.headers(), external_id="salary-7", amount=2000)
    assert (first.status_code, replay.status_code) == (201, 200)
    assert replay.json()["data"] == first.json()["data"]
    live = await create(client, merchant.headers(livemode=True), external_id="salary-7")
    assert live.status_code == 201
    assert live.json()["data"]["reference"] != first.json()["data"]["reference"]
    # Without external_id, two identical calls make two payouts.
    await create(client, merchant.headers())
    await create(client, merchant.headers())
    assert await merchant_available(runtime, merchant.id) == 10_000 - 3 * 1000
    assert await merchant_available(runtime, merchant.id, livemode=True) == 9000


async def test_payouts_are_private_to_their_merchant_and_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await top_up(runtime, merchant.id, 5000)
    payout = (await create(client, merchant.headers(), external_id="mine")).json()["data"]
    for headers in (other.headers(), merchant.headers(livemode=True)):
        for key in (payout["reference"], "mine"):
            assert_error(await client.get(f"{PAYOUTS}/{key}", headers=headers), 404, "not_found")
        listed = await client.get(PAYOUTS, headers=headers)
        assert listed.json()["data"] == []
