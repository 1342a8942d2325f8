"""GET /payment-modes (spec: Payment mode; Operators, countries and numbers) and the
account's contract deciding what is open (DESIGN: fees; issue 2: live with no adapter)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from cauri.connectors.registry import OperatorRegistry
from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from tests.payments.builders import (
    PAYMENT_MODES,
    FakeLiveOperator,
    count_rows,
    merchant_available,
    pay,
    platform_fees,
    set_fee,
    set_platform_fees,
)
from tests.support import assert_error, card_body, make_merchant, momo_body

# The spec's table, verbatim: (country, code, OTP required).
SPEC_OPERATORS = [
    ("BJ", "mtn", False),
    ("BJ", "moov", False),
    ("BJ", "celtiis_bj", False),
    ("BJ", "coris", True),
    ("BF", "moov_bf", False),
    ("BF", "orange_bf", True),
    ("BF", "wave_bf", True),
    ("CI", "mtn_ci", False),
    ("CI", "moov_ci", False),
    ("CI", "orange_ci", False),
    ("CI", "wave_ci", False),
    ("ML", "orange_ml", False),
    ("ML", "mobicash_ml", False),
    ("SN", "orange_sn", True),
    ("SN", "free_sn", False),
    ("SN", "wave_sn", False),
    ("TG", "togocom_tg", False),
    ("TG", "moov_tg", False),
    ("CG", "mtn_cg", False),
]


async def modes(
    client: httpx.AsyncClient, headers: dict[str, str], **params: str
) -> list[dict[str, Any]]:
    response = await client.get(PAYMENT_MODES, params=params, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["success"] is True
    data: list[dict[str, Any]] = body["data"]
    return data


async def test_catalogue_lists_every_operator_and_both_cards(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    listed = await modes(client, merchant.headers())

    mobile = [
        (m["country_code"], m["operator"], m["requires_otp"])
        for m in listed
        if m["type"] == "mobile_money"
    ]
    assert sorted(mobile) == sorted(SPEC_OPERATORS)
    cards = {m["operator"] for m in listed if m["type"] == "card"}
    assert cards == {"VISA", "MASTERCARD"}
    assert len(listed) == 21
    for mode in listed:
        assert {"id", "name", "type", "operator", "country", "country_code", "requires_otp"} <= set(
            mode
        )
        assert isinstance(mode["id"], int)
        assert isinstance(mode["name"], str) and mode["name"]
        assert isinstance(mode["requires_otp"], bool)
    assert len({m["id"] for m in listed}) == 21
    by_operator = {m["operator"]: m for m in listed}
    assert by_operator["mtn"]["country"] == "Bénin"
    assert by_operator["mtn_cg"]["country"] == "Congo"
    assert by_operator["VISA"]["requires_otp"] is False


async def test_requires_otp_exactly_for_the_four_operators(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    listed = await modes(client, merchant.headers())
    assert {m["operator"] for m in listed if m["requires_otp"]} == {
        "coris",
        "orange_bf",
        "wave_bf",
        "orange_sn",
    }


@pytest.mark.parametrize("country", ["BJ", "BF", "CI", "ML", "SN", "TG", "CG"])
async def test_country_filter(client: httpx.AsyncClient, runtime: Runtime, country: str) -> None:
    merchant = await make_merchant(runtime)
    listed = await modes(client, merchant.headers(), country=country)
    assert {m["operator"] for m in listed} == {
        code for country_code, code, _ in SPEC_OPERATORS if country_code == country
    }
    assert all(m["country_code"] == country for m in listed)


async def test_type_filter(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    cards = await modes(client, merchant.headers(), type="card")
    assert {m["operator"] for m in cards} == {"VISA", "MASTERCARD"}
    mobile = await modes(client, merchant.headers(), type="mobile_money")
    assert len(mobile) == 19 and all(m["type"] == "mobile_money" for m in mobile)
    # Valid types the platform has no mode of yet: an empty list, not an error.
    assert await modes(client, merchant.headers(), type="bank_transfer") == []
    assert await modes(client, merchant.headers(), type="e_wallet") == []


async def test_type_and_country_filters_combine(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    senegal = await modes(client, merchant.headers(), type="mobile_money", country="SN")
    assert {m["operator"] for m in senegal} == {"orange_sn", "free_sn", "wave_sn"}
    # Cards have no country: no card matches a country filter.
    assert await modes(client, merchant.headers(), type="card", country="SN") == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"type": "crypto"}, "type"),
        ({"type": ""}, "type"),
        ({"country": "FR"}, "country"),
        ({"country": "Benin"}, "country"),
        ({"type": "card", "country": "XX"}, "country"),
    ],
)
async def test_invalid_filter_is_422(
    client: httpx.AsyncClient, runtime: Runtime, params: dict[str, str], field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(PAYMENT_MODES, params=params, headers=merchant.headers())
    error = assert_error(response, 422, "invalid_request")
    assert field in error["details"]


async def test_country_filter_is_case_insensitive(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    listed = await modes(client, merchant.headers(), country="sn")
    assert {m["operator"] for m in listed} == {"orange_sn", "free_sn", "wave_sn"}


async def test_catalogue_requires_a_key(client: httpx.AsyncClient) -> None:
    assert_error(await client.get(PAYMENT_MODES), 401, "unauthorized")


async def test_mode_disabled_for_the_account_is_not_listed_nor_payable(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await set_fee(runtime, merchant.id, "MTN", disabled=True)

    listed = {m["operator"] for m in await modes(client, merchant.headers())}
    assert "mtn" not in listed and len(listed) == 20
    before = await count_rows(runtime, "payments")
    error = assert_error(await pay(client, merchant.headers(), momo_body()), 422, "invalid_request")
    assert "operator" in error["details"]
    assert await count_rows(runtime, "payments") == before
    # Another account's contract is its own.
    assert "mtn" in {m["operator"] for m in await modes(client, other.headers())}
    assert (await pay(client, other.headers(), momo_body())).status_code == 201
    # Re-opening the mode takes effect at once (the contract lives in the database).
    await set_fee(runtime, merchant.id, "mtn", disabled=False)
    assert (await pay(client, merchant.headers(), momo_body())).status_code == 201


async def test_catalogue_shows_the_account_fees(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="1.5", fixed=5)
    await set_fee(runtime, merchant.id, "wave_sn", percent="0.5", fixed=0)
    by_operator = {m["operator"]: m for m in await modes(client, merchant.headers())}
    assert by_operator["wave_sn"]["fees"] == {"percent": 0.5, "fixed": 0}
    assert by_operator["mtn"]["fees"] == {"percent": 1.5, "fixed": 5}


async def test_live_without_adapter_opens_no_mode(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    assert await modes(client, merchant.headers(livemode=True)) == []
    before = await count_rows(runtime, "payments")
    for body in (momo_body(), card_body()):
        response = await pay(client, merchant.headers(livemode=True), body)
        error = assert_error(response, 422, "invalid_request")
        assert "operator" in error["details"]
    assert await count_rows(runtime, "payments") == before
    # The test environment is untouched by the live configuration.
    assert len(await modes(client, merchant.headers())) == 21


async def test_live_adapter_opens_its_mode_and_credits_the_live_ledger(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2")
    operator = FakeLiveOperator()
    runtime.operators.live_adapters["mtn"] = operator

    live = await modes(client, merchant.headers(livemode=True))
    assert [m["operator"] for m in live] == ["mtn"]
    response = await pay(client, merchant.headers(livemode=True), momo_body(amount=1000))
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["livemode"] is True and payment["status"] == "succeeded"
    assert payment["fee_amount"] == 20 and payment["total_amount"] == 1020
    # The operator was asked for the total debited, on the normalized number.
    assert [(c.operator, c.amount, c.phone_number) for c in operator.collections] == [
        ("mtn", 1020, "22997000000")
    ]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await platform_fees(runtime, livemode=True) == 20
    assert await merchant_available(runtime, merchant.id, livemode=False) == 0
    assert await platform_fees(runtime, livemode=False) == 0
    # Live resources are invisible to the test key.
    fetched = await client.get(
        f"/api/v1/payments/{payment['reference']}", headers=merchant.headers()
    )
    assert_error(fetched, 404, "not_found")
    # Other live operators stay closed.
    assert_error(
        await pay(client, merchant.headers(livemode=True), card_body()), 422, "invalid_request"
    )


async def test_live_refusal_is_recorded_failed_and_credits_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    runtime.operators.live_adapters["mtn"] = FakeLiveOperator(outcome=Outcome.FAILED)
    body = momo_body(external_id="live-1")
    assert_error(await pay(client, merchant.headers(livemode=True), body), 402, "payment_failed")
    fetched = await client.get("/api/v1/payments/live-1", headers=merchant.headers(livemode=True))
    assert fetched.json()["data"]["status"] == "failed"
    assert fetched.json()["data"]["livemode"] is True
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await count_rows(runtime, "ledger_postings") == 0


async def test_live_on_inactive_merchant_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, status="kyc_pending")
    runtime.operators.live_adapters["mtn"] = FakeLiveOperator()
    assert_error(
        await pay(client, merchant.headers(livemode=True), momo_body()), 403, "merchant_inactive"
    )
    assert await count_rows(runtime, "payments") == 0
    assert (await pay(client, merchant.headers(), momo_body())).status_code == 201


async def test_live_adapters_are_configured_case_insensitively(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    runtime.operators = OperatorRegistry(
        runtime.operators.simulator, {"VISA": FakeLiveOperator(), "Wave_SN": FakeLiveOperator()}
    )
    live = await modes(client, merchant.headers(livemode=True))
    assert sorted(m["operator"] for m in live) == ["VISA", "wave_sn"]
