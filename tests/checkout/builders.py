"""Builders of the checkout tests: a session through the API, and the customer's form posted
as a browser posts it (the CSRF nonce's cookie with the form's token)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from cauri.runtime import Runtime
from tests.support import MerchantKeys, scalar

RETURN_URL = "https://boutique.example/merci"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def session_body(**overrides: Any) -> dict[str, Any]:
    return {"amount": 5000, "description": "Commande 1042", "return_url": RETURN_URL} | overrides


async def open_session(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False, **overrides: Any
) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/checkout-sessions",
        json=session_body(**overrides),
        headers=merchant.headers(livemode),
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()["data"]
    return created


def page_path(checkout: dict[str, Any]) -> str:
    path = httpx.URL(checkout["url"]).path
    assert path == f"/checkout/{checkout['reference']}"
    return path


async def submit(
    client: httpx.AsyncClient, checkout: dict[str, Any], operator: str, **fields: str
) -> httpx.Response:
    """Opens the mode's form, then posts it with its token and cookie, as a browser does."""
    path = page_path(checkout)
    form = await client.get(path, params={"operator": operator})
    assert form.status_code == 200, form.text
    token = _CSRF.search(form.text)
    assert token is not None, form.text
    nonce = _cookie(form)
    return await client.post(
        path,
        data={"operator": operator, "csrf": token.group(1), **fields},
        headers={"Cookie": f"cauri_checkout={nonce}"},
    )


def _cookie(response: httpx.Response) -> str:
    # httpx keeps a Secure cookie for https only; a browser also sends it to 127.0.0.1.
    header = response.headers["set-cookie"]
    match = re.match(r"cauri_checkout=([^;]+)", header)
    assert match is not None, header
    return match.group(1)


async def fetch(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str, livemode: bool = False
) -> dict[str, Any]:
    response = await client.get(
        f"/api/v1/checkout-sessions/{reference}", headers=merchant.headers(livemode)
    )
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["data"]
    return found


async def event_types(runtime: Runtime, reference: str) -> list[str]:
    """The types of the events about one session, oldest first."""
    types = await scalar(
        runtime,
        "SELECT coalesce(array_agg(type ORDER BY created_at), '{}') FROM events "
        "WHERE type LIKE 'checkout_session.%' AND data->>'reference' = :reference",
        reference=reference,
    )
    return list(types)
