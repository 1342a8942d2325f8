"""Fees (DESIGN, Decisions: fees): the account's contract, else the platform defaults;
rounded half up; the customer pays `total_amount`, the merchant gets `amount`, the platform
keeps `fee_amount`, through the ledger."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import fee_for, percent_of
from cauri.merchants.contract import Terms
from cauri.runtime import Runtime
from tests.payments.builders import (
    merchant_available,
    pay,
    platform_fees,
    set_fee,
    set_platform_fees,
)
from tests.support import card_body, make_merchant, momo_body


@pytest.mark.parametrize(
    ("percent", "amount", "fee"),
    [
        ("2.5", 1010, 25),  # 25.25 -> 25
        ("1.5", 1030, 15),  # 15.45 -> 15
        ("0.5", 1100, 6),  # 5.5 -> 6 (half up, not half even)
        ("0.5", 1300, 7),  # 6.5 -> 7 (half even would give 6)
        ("2.5", 1020, 26),  # 25.5 -> 26
        ("0", 5000, 0),
        ("3.333", 1000, 33),  # 33.33 -> 33
    ],
)
async def test_percent_fee_rounds_half_up(
    client: httpx.AsyncClient, runtime: Runtime, percent: str, amount: int, fee: int
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent=percent, fixed=0)
    response = await pay(client, merchant.headers(), momo_body(amount=amount))
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert (payment["amount"], payment["fee_amount"], payment["total_amount"]) == (
        amount,
        fee,
        amount + fee,
    )


async def test_platform_defaults_apply_without_a_contract(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2.5", fixed=10)
    payment = (await pay(client, merchant.headers(), momo_body(amount=1010))).json()["data"]
    assert payment["fee_amount"] == 35 and payment["total_amount"] == 1045


async def test_no_settings_means_no_fee(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body(amount=1010))).json()["data"]
    assert payment["fee_amount"] == 0 and payment["total_amount"] == 1010


async def test_account_contract_overrides_platform_per_mode(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await set_platform_fees(runtime, percent="2", fixed=0)
    await set_fee(runtime, merchant.id, "MTN", percent="1", fixed=3)

    mine = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    assert mine["fee_amount"] == 13
    # Another mode of the same account: the platform defaults.
    moov = (await pay(client, merchant.headers(), momo_body(operator="moov", amount=1000))).json()
    assert moov["data"]["fee_amount"] == 20
    # Another account on the same mode: the platform defaults.
    theirs = (await pay(client, other.headers(), momo_body(amount=1000))).json()["data"]
    assert theirs["fee_amount"] == 20


async def test_a_contract_is_a_whole_rule(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """An omitted percent or fixed fee of a contract is 0, not the platform's (issue 8)."""
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2", fixed=7)
    await set_fee(runtime, merchant.id, "mtn", fixed=1)
    await set_fee(runtime, merchant.id, "moov", percent="3")
    mtn = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    assert mtn["fee_amount"] == 0 + 1
    moov = (await pay(client, merchant.headers(), momo_body(operator="moov", amount=1000))).json()
    assert moov["data"]["fee_amount"] == 30 + 0
    celtiis = momo_body(operator="celtiis_bj", amount=1000)
    assert (await pay(client, merchant.headers(), celtiis)).json()["data"]["fee_amount"] == 27


CONGO = {"operator": "mtn_cg", "phone_number": "242060000000"}


async def test_fixed_fees_are_xof_shared_by_xaf_and_eur_pays_only_its_own(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """DESIGN, fixed fees: XOF amounts, applied at par to XAF; EUR and USD fixed fees are 0
    unless set for that currency."""
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="1", fixed=100)
    xof = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    xaf = (await pay(client, merchant.headers(), momo_body(amount=1000, **CONGO))).json()["data"]
    eur = (await pay(client, merchant.headers(), card_body(amount=10, currency="EUR"))).json()
    usd = (await pay(client, merchant.headers(), card_body(amount=10, currency="USD"))).json()
    assert (xof["fee_amount"], xaf["currency"], xaf["fee_amount"]) == (110, "XAF", 110)
    assert eur["data"]["fee_amount"] == 0.1 and usd["data"]["fee_amount"] == 0.1

    await set_platform_fees(runtime, percent="1", fixed="1.5", currency="EUR")
    eur = (await pay(client, merchant.headers(), card_body(amount=10, currency="EUR"))).json()
    usd = (await pay(client, merchant.headers(), card_body(amount=10, currency="USD"))).json()
    assert (eur["data"]["fee_amount"], eur["data"]["total_amount"]) == (1.6, 11.6)
    assert usd["data"]["fee_amount"] == 0.1
    # The XOF amount set before is kept.
    xof = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    assert xof["fee_amount"] == 110


async def test_a_contracts_fixed_fee_is_per_currency(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "visa", percent="2", fixed=50)
    eur = (await pay(client, merchant.headers(), card_body(amount=10, currency="EUR"))).json()
    assert eur["data"]["fee_amount"] == 0.2
    await set_fee(runtime, merchant.id, "visa", percent="2", fixed="0.35", currency="EUR")
    eur = (await pay(client, merchant.headers(), card_body(amount=10, currency="EUR"))).json()
    xof = (await pay(client, merchant.headers(), card_body(amount=1000))).json()["data"]
    # A call for EUR states the percent and the EUR amount; the XOF amount is kept.
    assert (eur["data"]["fee_amount"], xof["fee_amount"]) == (0.55, 20 + 50)
    await set_fee(runtime, merchant.id, "visa", percent="1")
    eur = (await pay(client, merchant.headers(), card_body(amount=10, currency="EUR"))).json()
    xof = (await pay(client, merchant.headers(), card_body(amount=1000))).json()["data"]
    assert (eur["data"]["fee_amount"], xof["fee_amount"]) == (0.45, 10)


async def test_a_fixed_fee_has_at_most_its_currencys_decimals(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    for currency, amount in (("XOF", "1.5"), ("EUR", "0.001")):
        with pytest.raises(InvalidRequest):
            await set_platform_fees(runtime, percent="1", fixed=amount, currency=currency)
        with pytest.raises(InvalidRequest):
            await set_fee(runtime, merchant.id, "visa", fixed=amount, currency=currency)
    with pytest.raises(InvalidRequest):
        await set_platform_fees(runtime, percent="1", fixed=1, currency="GBP")


async def test_settings_changes_apply_at_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="1")
    first = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    await set_platform_fees(runtime, percent="3")
    second = (await pay(client, merchant.headers(), momo_body(amount=1000))).json()["data"]
    assert (first["fee_amount"], second["fee_amount"]) == (10, 30)


async def test_card_fee(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "visa", percent="3.5", fixed=100)
    payment = (await pay(client, merchant.headers(), card_body(amount=5000))).json()["data"]
    assert payment["fee_amount"] == 275 and payment["total_amount"] == 5275


async def test_eur_card_fee_rounds_to_the_cent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "visa", percent="2.5", fixed=0)
    # 2.5% of 10.10 EUR = 0.2525 -> 0.25; a fixed fee is in major units of the currency.
    body = card_body(amount=10.10, currency="EUR")
    payment = (await pay(client, merchant.headers(), body)).json()["data"]
    assert payment["fee_amount"] == 0.25 and payment["total_amount"] == 10.35


async def test_succeeded_payment_credits_merchant_amount_and_platform_fee(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2.5", fixed=0)
    response = await pay(client, merchant.headers(), momo_body(amount=1010))
    payment = response.json()["data"]
    assert payment["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) == 1010
    assert await platform_fees(runtime) == 25
    # Nothing in the live environment or in another currency.
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await merchant_available(runtime, merchant.id, currency="XAF") == 0


async def test_failed_and_pending_payments_credit_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2")
    await pay(client, merchant.headers(), momo_body(phone_number="22997000001"))
    await pay(client, merchant.headers(), momo_body(phone_number="22997000002"))
    await pay(client, merchant.headers(), card_body())
    assert await merchant_available(runtime, merchant.id) == 0
    assert await platform_fees(runtime) == 0


# --- the arithmetic itself --------------------------------------------------------------------

percents = st.decimals(min_value=0, max_value=100, places=4, allow_nan=False, allow_infinity=False)
amounts = st.integers(min_value=0, max_value=10**13)
fixeds = st.integers(min_value=0, max_value=10**6)


def reference_fee(amount: int, percent: Decimal, fixed: int) -> int:
    exact = Decimal(amount) * percent / Decimal(100)
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP)) + fixed


@settings(max_examples=500, deadline=None)
@given(amount=amounts, percent=percents, fixed=fixeds)
def test_fee_arithmetic_properties(amount: int, percent: Decimal, fixed: int) -> None:
    fee = fee_for(amount, percent, fixed)
    assert isinstance(fee, int)
    variable = fee - fixed
    assert variable == percent_of(amount, percent)
    assert 0 <= variable <= Decimal(amount) * percent / 100 + Decimal("0.5")
    # Never more than half a unit away from the exact commission.
    assert abs(Decimal(variable) - Decimal(amount) * percent / 100) <= Decimal("0.5")
    assert fee == reference_fee(amount, percent, fixed)


@settings(max_examples=500, deadline=None)
@given(
    amount=amounts, extra=st.integers(min_value=0, max_value=10**9), percent=percents, fixed=fixeds
)
def test_fee_is_monotone_in_amount(amount: int, extra: int, percent: Decimal, fixed: int) -> None:
    assert fee_for(amount, percent, fixed) <= fee_for(amount + extra, percent, fixed)


@settings(max_examples=300, deadline=None)
@given(amount=amounts, percent=percents)
def test_fee_is_monotone_in_percent(amount: int, percent: Decimal) -> None:
    assert percent_of(amount, percent) <= percent_of(
        amount, min(percent + Decimal("0.01"), Decimal(100))
    )


currencies = st.sampled_from(["XOF", "XAF", "EUR", "USD"])


@settings(max_examples=300, deadline=None)
@given(
    amount=amounts,
    percent=percents,
    xof=fixeds,
    eur=st.integers(min_value=0, max_value=10**6) | st.none(),
    currency=currencies,
)
def test_terms_apply_the_fixed_fee_of_the_currency(
    amount: int, percent: Decimal, xof: int, eur: int | None, currency: str
) -> None:
    """XAF pays the XOF amount at par; EUR pays its own or none; USD, not set here, none."""
    fixed = {"XOF": xof} | ({} if eur is None else {"EUR": eur})
    terms = Terms(percent, fixed)
    expected_fixed = {"XOF": xof, "XAF": xof, "EUR": eur or 0, "USD": 0}[currency]
    assert terms.fee(amount, currency) == reference_fee(amount, percent, expected_fixed)
    assert terms.fee(amount, "XAF") == terms.fee(amount, "XOF")
