"""The rules checked before an operator is engaged (spec: Operators, countries and numbers,
rules 1–5; Cards; invariant 1). Each violation is a 422 `invalid_request` naming the field in
`details`, and writes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from cauri.runtime import Runtime
from tests.payments.builders import count_rows, pay, set_fee
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, momo_body

# One valid number per operator country, ending in 0000 (settled at once in test mode).
NUMBER = {
    "BJ": "22997000000",
    "BF": "22670000000",
    "CI": "2250700000000",
    "ML": "22370000000",
    "SN": "221770000000",
    "TG": "22890000000",
    "CG": "242060000000",
}
OPERATOR_COUNTRY = {
    "mtn": "BJ",
    "moov": "BJ",
    "celtiis_bj": "BJ",
    "coris": "BJ",
    "moov_bf": "BF",
    "orange_bf": "BF",
    "wave_bf": "BF",
    "mtn_ci": "CI",
    "moov_ci": "CI",
    "orange_ci": "CI",
    "wave_ci": "CI",
    "orange_ml": "ML",
    "mobicash_ml": "ML",
    "orange_sn": "SN",
    "free_sn": "SN",
    "wave_sn": "SN",
    "togocom_tg": "TG",
    "moov_tg": "TG",
    "mtn_cg": "CG",
}
OTP_OPERATORS = {"coris", "orange_bf", "wave_bf", "orange_sn"}


def valid_body(code: str, **overrides: Any) -> dict[str, Any]:
    """A body every rule accepts for the operator `code`."""
    country = OPERATOR_COUNTRY[code]
    body: dict[str, Any] = {
        "amount": 1000,
        "operator": code,
        "phone_number": NUMBER[country],
        "currency": "XAF" if country == "CG" else "XOF",
    }
    if code in OTP_OPERATORS:
        body["otp"] = "123456"
    if code == "free_sn":
        body["return_url"] = "https://merchant.example/return"
    return body | overrides


async def assert_rejected(
    client: httpx.AsyncClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    body: dict[str, Any],
    field: str,
) -> dict[str, Any]:
    """422 invalid_request with `details[field]`, and no payment, ledger or job written."""
    before = {
        t: await count_rows(runtime, t) for t in ("payments", "ledger_postings", "jobs", "events")
    }
    error = assert_error(await pay(client, merchant.headers(), body), 422, "invalid_request")
    assert field in error["details"], error
    assert all(isinstance(m, str) and m for m in error["details"][field])
    after = {t: await count_rows(runtime, t) for t in before}
    assert after == before
    return error


async def assert_created(
    client: httpx.AsyncClient, merchant: MerchantKeys, body: dict[str, Any]
) -> dict[str, Any]:
    response = await pay(client, merchant.headers(), body)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


@pytest.fixture
async def merchant(runtime: Runtime) -> MerchantKeys:
    return await make_merchant(runtime)


# --- operator ---------------------------------------------------------------------------


@pytest.mark.parametrize("operator", ["airtel", "mtn_bj", "", "VISA_ELECTRON"])
async def test_unknown_operator(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, operator: str
) -> None:
    await assert_rejected(client, runtime, merchant, momo_body(operator=operator), "operator")


async def test_missing_operator(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = momo_body()
    del body["operator"]
    await assert_rejected(client, runtime, merchant, body, "operator")


@pytest.mark.parametrize(
    ("given", "code"), [("MTN", "mtn"), ("Mtn", "mtn"), ("Orange_CI", "orange_ci")]
)
async def test_operator_is_case_insensitive(
    client: httpx.AsyncClient, merchant: MerchantKeys, given: str, code: str
) -> None:
    payment = await assert_created(client, merchant, valid_body(code, operator=given))
    assert payment["payment_mode"]["operator"] == code
    assert payment["status"] == "succeeded"


async def test_card_operator_is_case_insensitive(
    client: httpx.AsyncClient, merchant: MerchantKeys
) -> None:
    payment = await assert_created(client, merchant, card_body(operator="mastercard"))
    assert payment["payment_mode"]["operator"] == "MASTERCARD"
    assert payment["payment_mode"]["type"] == "card"


@pytest.mark.parametrize("operator", sorted(OPERATOR_COUNTRY))
async def test_every_operator_accepts_a_valid_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, operator: str
) -> None:
    payment = await assert_created(client, merchant, valid_body(operator))
    assert payment["status"] == "succeeded"
    assert payment["payment_mode"]["operator"] == operator
    assert payment["payment_url"] is None


# --- rule 1: OTP ------------------------------------------------------------------------


@pytest.mark.parametrize("operator", sorted(OTP_OPERATORS))
async def test_otp_required(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, operator: str
) -> None:
    body = valid_body(operator)
    del body["otp"]
    await assert_rejected(client, runtime, merchant, body, "otp")
    await assert_rejected(client, runtime, merchant, body | {"otp": ""}, "otp")
    await assert_created(client, merchant, body | {"otp": "4321"})


async def test_otp_not_required_elsewhere(
    client: httpx.AsyncClient, merchant: MerchantKeys
) -> None:
    await assert_created(client, merchant, valid_body("wave_sn"))


# --- rule 2: free_sn return_url -----------------------------------------------------------


async def test_free_sn_requires_return_url(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = valid_body("free_sn")
    del body["return_url"]
    await assert_rejected(client, runtime, merchant, body, "return_url")
    await assert_rejected(
        client, runtime, merchant, body | {"return_url": "not a url"}, "return_url"
    )
    await assert_created(client, merchant, body | {"return_url": "https://shop.example/back"})


# --- rule 3: phone numbers ------------------------------------------------------------------


@pytest.mark.parametrize(
    "number",
    [
        "229 97 00 00 00",
        "229-97-00-00-00",
        "(229)97000000",
        "229.97000000",
        "2299700",  # 7 digits
        "2299700000000000",  # 16 digits
        "+2299700",  # 7 digits after the +
        "++22997000000",
        "22997000000+",
        "2299700000a",
        "",
        "٢٢٩٩٧٠٠٠٠٠٠",  # Arabic-Indic digits are not digits here
    ],
)
async def test_malformed_phone_number(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, number: str
) -> None:
    await assert_rejected(client, runtime, merchant, momo_body(phone_number=number), "phone_number")


async def test_mobile_money_needs_a_phone_number(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = momo_body()
    del body["phone_number"]
    await assert_rejected(client, runtime, merchant, body, "phone_number")


@pytest.mark.parametrize("number", ["22990000", "229970000000000", "+22997000000"])
async def test_phone_length_bounds_and_plus(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str
) -> None:
    """8 and 15 digits are inside the bounds; a leading + is tolerated and not stored."""
    payment = await assert_created(client, merchant, momo_body(phone_number=number))
    assert payment["status"] == "succeeded"


@pytest.mark.parametrize("operator", sorted(OPERATOR_COUNTRY))
async def test_phone_must_carry_the_operator_country_code(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, operator: str
) -> None:
    country = OPERATOR_COUNTRY[operator]
    for other, number in NUMBER.items():
        if other != country:
            body = valid_body(operator, phone_number=number)
            await assert_rejected(client, runtime, merchant, body, "phone_number")


async def test_well_formed_unknown_number_passes_validation(
    client: httpx.AsyncClient, merchant: MerchantKeys
) -> None:
    """Rule 4: a number that may not exist is the operator's business, not a 422."""
    payment = await assert_created(client, merchant, momo_body(phone_number="+22900000000"))
    assert payment["status"] == "succeeded"


# --- currencies and amounts (invariant 1) ----------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "currency"),
    [("mtn", "XAF"), ("mtn", "EUR"), ("orange_sn", "USD"), ("mtn_cg", "XOF")],
)
async def test_mobile_money_currency_is_the_country_currency(
    client: httpx.AsyncClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    operator: str,
    currency: str,
) -> None:
    await assert_rejected(
        client, runtime, merchant, valid_body(operator, currency=currency), "currency"
    )


async def test_congo_pays_in_xaf(client: httpx.AsyncClient, merchant: MerchantKeys) -> None:
    body = valid_body("mtn_cg")
    del body["currency"]  # XOF by default, which Congo does not use
    payment = await assert_created(client, merchant, body | {"currency": "XAF"})
    assert payment["currency"] == "XAF"


@pytest.mark.parametrize("currency", ["GBP", "xof", ""])
async def test_unknown_currency(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, currency: str
) -> None:
    await assert_rejected(client, runtime, merchant, momo_body(currency=currency), "currency")


@pytest.mark.parametrize("amount", [10.5, "1000.01", 0, -100, "abc", None, True, 1e20])
async def test_invalid_amount(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, amount: Any
) -> None:
    await assert_rejected(client, runtime, merchant, momo_body(amount=amount), "amount")


async def test_missing_amount(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = momo_body()
    del body["amount"]
    await assert_rejected(client, runtime, merchant, body, "amount")


async def test_whole_amount_written_with_decimals_is_accepted(
    client: httpx.AsyncClient, merchant: MerchantKeys
) -> None:
    payment = await assert_created(client, merchant, momo_body(amount=1500.0))
    assert payment["amount"] == 1500 and isinstance(payment["amount"], int)


async def test_card_in_euros_keeps_cents(client: httpx.AsyncClient, merchant: MerchantKeys) -> None:
    payment = await assert_created(client, merchant, card_body(amount=12.34, currency="EUR"))
    assert payment["amount"] == 12.34 and payment["currency"] == "EUR"


async def test_card_in_euros_refuses_a_third_decimal(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    await assert_rejected(
        client, runtime, merchant, card_body(amount=12.345, currency="EUR"), "amount"
    )


# --- rule 5: Mobile Money total bounds, fee included ----------------------------------------


@pytest.mark.parametrize("amount", [10, 1_000_000])
async def test_bounds_are_inclusive(
    client: httpx.AsyncClient, merchant: MerchantKeys, amount: int
) -> None:
    payment = await assert_created(client, merchant, momo_body(amount=amount))
    assert payment["total_amount"] == amount


@pytest.mark.parametrize(("amount", "total"), [(9, "9"), (1, "1"), (1_000_001, "1000001")])
async def test_total_out_of_bounds_without_fee(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, amount: int, total: str
) -> None:
    error = await assert_rejected(client, runtime, merchant, momo_body(amount=amount), "amount")
    assert total in error["message"]


async def test_upper_bound_counts_the_fee(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    await set_fee(runtime, merchant.id, "mtn", percent="1", fixed=0)
    # 990,100 is in bounds; its fee (9,901) takes the total debited to 1,000,001.
    error = await assert_rejected(client, runtime, merchant, momo_body(amount=990_100), "amount")
    assert "1000001" in error["message"]
    payment = await assert_created(client, merchant, momo_body(amount=990_099))
    assert payment["fee_amount"] == 9901 and payment["total_amount"] == 1_000_000


async def test_upper_bound_counts_a_fixed_fee(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    await set_fee(runtime, merchant.id, "mtn", percent="0", fixed=5)
    error = await assert_rejected(client, runtime, merchant, momo_body(amount=999_996), "amount")
    assert "1000001" in error["message"]


async def test_lower_bound_counts_the_fee(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    """An amount below 10 is fine when the fee takes the total debited to 10."""
    await set_fee(runtime, merchant.id, "mtn", percent="0", fixed=5)
    error = await assert_rejected(client, runtime, merchant, momo_body(amount=4), "amount")
    assert "9" in error["message"]
    payment = await assert_created(client, merchant, momo_body(amount=5))
    assert payment["total_amount"] == 10


# --- cards ----------------------------------------------------------------------------------


async def test_card_refuses_a_phone_number(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    await assert_rejected(
        client, runtime, merchant, card_body(phone_number="22997000000"), "phone_number"
    )


@pytest.mark.parametrize(
    "missing",
    [("firstname",), ("lastname",), ("email",), ("firstname", "lastname", "email")],
)
async def test_card_requires_the_holder_identity(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, missing: tuple[str, ...]
) -> None:
    body = card_body()
    body["customer"] = {k: v for k, v in body["customer"].items() if k not in missing}
    before = await count_rows(runtime, "payments")
    error = assert_error(await pay(client, merchant.headers(), body), 422, "invalid_request")
    assert set(error["details"]) == {f"customer.{name}" for name in missing}
    assert await count_rows(runtime, "payments") == before


async def test_card_without_customer_object(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = card_body()
    del body["customer"]
    error = await assert_rejected(client, runtime, merchant, body, "customer.email")
    assert {"customer.firstname", "customer.lastname", "customer.email"} <= set(error["details"])


async def test_card_blank_identity_counts_as_missing(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = card_body(customer={"firstname": "", "lastname": "Diallo", "email": "awa@example.com"})
    await assert_rejected(client, runtime, merchant, body, "customer.firstname")


async def test_card_email_must_be_an_email(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys
) -> None:
    body = card_body(customer={"firstname": "Awa", "lastname": "Diallo", "email": "awa"})
    await assert_rejected(client, runtime, merchant, body, "customer.email")


@pytest.mark.parametrize("amount", [1, 5_000_000])
async def test_card_is_exempt_from_the_mobile_money_bounds(
    client: httpx.AsyncClient, merchant: MerchantKeys, amount: int
) -> None:
    payment = await assert_created(client, merchant, card_body(amount=amount))
    assert payment["total_amount"] == amount


async def test_card_returns_the_hosted_page(
    client: httpx.AsyncClient, merchant: MerchantKeys
) -> None:
    payment = await assert_created(client, merchant, card_body())
    assert payment["status"] == "pending"
    assert payment["payment_url"] == f"http://127.0.0.1/pay/{payment['reference']}"
    assert payment["customer"] == {
        "firstname": "Awa",
        "lastname": "Diallo",
        "email": "awa@example.com",
        "phone_number": None,
    }


# --- the payment object ----------------------------------------------------------------------


async def test_payment_object_shape(client: httpx.AsyncClient, merchant: MerchantKeys) -> None:
    body = momo_body(
        description="Commande 42",
        external_id="order-42",
        metadata={"order": 42, "tags": ["a"]},
        customer={"firstname": "Kofi", "phone_number": "22997000000"},
        callback_url="https://merchant.example/hook",
    )
    payment = await assert_created(client, merchant, body)
    assert set(payment) >= {
        "reference",
        "identifier",
        "external_id",
        "status",
        "amount",
        "fee_amount",
        "total_amount",
        "currency",
        "description",
        "payment_mode",
        "customer",
        "payment_url",
        "metadata",
        "livemode",
        "created_at",
        "updated_at",
    }
    assert payment["external_id"] == "order-42"
    assert payment["description"] == "Commande 42"
    assert payment["metadata"] == {"order": 42, "tags": ["a"]}
    assert payment["currency"] == "XOF"
    assert payment["payment_mode"] == {
        "id": 1,
        "name": "MTN Mobile Money Bénin",
        "type": "mobile_money",
        "operator": "mtn",
    }
    assert payment["customer"] == {
        "firstname": "Kofi",
        "lastname": None,
        "email": None,
        "phone_number": "22997000000",
    }
    assert payment["identifier"] and payment["livemode"] is False
    assert "+00:00" in payment["created_at"] or payment["created_at"].endswith("Z")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("description", "x" * 256),
        ("external_id", "x" * 256),
        ("metadata", [1, 2]),
        ("callback_url", "ftp://example.com"),
    ],
)
async def test_field_shapes(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, field: str, value: Any
) -> None:
    await assert_rejected(client, runtime, merchant, momo_body(**{field: value}), field)
