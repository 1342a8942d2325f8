"""GET /payment-modes/predict (issue 11): the country and likely operator of a number, from
the numbering plans, and on a live key from pawaPay's predict-provider when a pawaPay
account is configured. A hint, said to be one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cauri.catalogue.prediction import CARRIERS, predict
from cauri.operators import catalogue
from cauri.runtime import Runtime
from tests.fakes.pawapay import PawapayFake
from tests.operators.live import connect
from tests.payments.builders import PAYMENT_MODES
from tests.support import MerchantKeys, assert_error, make_merchant

PREDICT = f"{PAYMENT_MODES}/predict"


async def predicted(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str, *, livemode: bool = False
) -> dict[str, Any]:
    response = await client.get(
        PREDICT, params={"phone_number": number}, headers=merchant.headers(livemode=livemode)
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


@pytest.mark.parametrize(
    ("number", "country", "operator"),
    [
        ("22997123456", "BJ", "mtn"),  # Benin's old eight digits: 01 is added
        ("+2290197123456", "BJ", "mtn"),
        ("2290195123456", "BJ", "moov"),
        ("2290140123456", "BJ", "celtiis_bj"),
        ("22607123456", "BF", "orange_bf"),
        ("22670123456", "BF", "moov_bf"),
        ("2250512345678", "CI", "mtn_ci"),
        ("2250112345678", "CI", "moov_ci"),
        ("2250712345678", "CI", "orange_ci"),
        ("22376123456", "ML", "orange_ml"),
        ("22366123456", "ML", "mobicash_ml"),
        ("221771234567", "SN", "orange_sn"),
        ("221761234567", "SN", "free_sn"),
        ("22890123456", "TG", "togocom_tg"),
        ("22899123456", "TG", "moov_tg"),
        ("242061234567", "CG", "mtn_cg"),
    ],
)
async def test_the_numbering_plan_names_the_operator(
    client: httpx.AsyncClient, runtime: Runtime, number: str, country: str, operator: str
) -> None:
    merchant = await make_merchant(runtime)
    data = await predicted(client, merchant, number)
    assert (data["country_code"], data["operator"]) == (country, operator)
    mode = catalogue.find(operator)
    assert mode is not None and data["payment_mode_id"] == mode.id
    assert (data["confidence"], data["source"]) == ("medium", "numbering_plan")
    assert "portabilité" in data["note"]
    assert data["phone_number"] == number.lstrip("+")


async def test_a_carrier_without_mobile_money_in_the_catalogue_is_low_and_wallets_are_listed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    data = await predicted(client, merchant, "221701234567")  # Expresso
    assert (data["operator"], data["payment_mode_id"], data["confidence"]) == (None, None, "low")
    assert data["carrier"] == "Expresso"
    assert data["wallets"] == ["wave_sn"]


@pytest.mark.parametrize(
    ("number", "field_words"),
    [("33612345678", "Indicatif inconnu"), ("229-97-12", "8 à 15 chiffres"), ("", "8 à 15")],
)
async def test_what_is_not_a_number_of_the_seven_countries_is_422(
    client: httpx.AsyncClient, runtime: Runtime, number: str, field_words: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(
        PREDICT, params={"phone_number": number}, headers=merchant.headers()
    )
    error = assert_error(response, 422, "invalid_request")
    assert field_words in error["details"]["phone_number"][0]


async def test_a_key_is_needed(client: httpx.AsyncClient) -> None:
    response = await client.get(PREDICT, params={"phone_number": "22997123456"})
    assert_error(response, 401, "unauthorized")


def test_every_operator_the_plans_name_is_in_the_catalogue() -> None:
    for country, names in CARRIERS.items():
        for operator in names.values():
            mode = catalogue.find(operator)
            assert mode is not None and mode.country_code == country
    assert predict("22997123456").carrier == "MTN"


@pytest.fixture
def pawapay() -> Iterator[PawapayFake]:
    with PawapayFake(api_token="token") as fake:
        yield fake


async def test_on_a_live_key_pawapays_prediction_comes_first(
    client: httpx.AsyncClient, runtime: Runtime, pawapay: PawapayFake
) -> None:
    merchant = await make_merchant(runtime)
    # Without a pawaPay account: the numbering plan, on a live key too.
    assert (await predicted(client, merchant, "22995123456", livemode=True))["source"] == (
        "numbering_plan"
    )
    await connect(
        runtime,
        name="pawapay",
        kind="pawapay",
        base_url=pawapay.base_url,
        settings={},
        secrets={"api_token": "token"},
        operators=[],
    )
    live = await predicted(client, merchant, "22995123456", livemode=True)
    assert (live["operator"], live["source"], live["confidence"]) == ("moov", "pawapay", "high")
    asked = [r for r in pawapay.requests if r.path == "/v2/predict-provider"]
    assert [r.body for r in asked] == [{"phoneNumber": "22995123456"}]
    # A test key never contacts an operator.
    test = await predicted(client, merchant, "22995123456")
    assert test["source"] == "numbering_plan"
    assert len([r for r in pawapay.requests if r.path == "/v2/predict-provider"]) == 1
    # pawaPay refusing (or not answering): the numbering plan answers.
    pawapay.api_token = "revoked"
    fallback = await predicted(client, merchant, "22995123456", livemode=True)
    assert (fallback["operator"], fallback["source"]) == ("moov", "numbering_plan")


async def test_the_prediction_is_in_the_openapi_document(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/api/v1/openapi.json")).json()
    operation = schema["paths"]["/api/v1/payment-modes/predict"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["phone_number"]
    shown = schema["components"]["schemas"]["PredictionOut"]["properties"]
    assert {"operator", "confidence", "source", "note", "wallets"} <= set(shown)
    modes = schema["components"]["schemas"]["PaymentModeOut"]["properties"]
    assert "availability" in modes
    states = schema["components"]["schemas"]["Availability"]["properties"]["payout"]
    assert states["enum"] == ["operational", "degraded", "closed"]
