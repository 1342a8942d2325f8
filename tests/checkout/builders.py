"""Builders of the checkout tests: a session through the API, and the customer's form posted
as a browser posts it (the CSRF nonce's cookie with the form's token)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
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
    """The path of the session's page (its `url` is under CAURI_PUBLIC_URL)."""
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


async def make_link(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False, **fields: Any
) -> dict[str, Any]:
    body = {"description": "Cotisation annuelle", "amount": 15000} | fields
    response = await client.post(
        "/api/v1/payment-links", json=body, headers=merchant.headers(livemode)
    )
    assert response.status_code == 201, response.text
    link: dict[str, Any] = response.json()["data"]
    return link


async def go_on(client: httpx.AsyncClient, link: dict[str, Any], **fields: str) -> httpx.Response:
    """Opens the link's page, then goes on with its form's token, as a browser does."""
    return await (await link_form(client, link))(**fields)


async def link_form(
    client: httpx.AsyncClient, link: dict[str, Any]
) -> Callable[..., Awaitable[httpx.Response]]:
    """The link's form as the page gave it, to post now or later."""
    path = httpx.URL(link["url"]).path
    shown = await client.get(path)
    token = _CSRF.search(shown.text)
    assert token is not None, shown.text
    cookie = {"Cookie": f"cauri_checkout={_cookie(shown)}"}

    async def post(**fields: str) -> httpx.Response:
        return await client.post(path, data={"csrf": token.group(1), **fields}, headers=cookie)

    return post


async def session_of(client: httpx.AsyncClient, answer: httpx.Response) -> dict[str, Any]:
    """The checkout session a link's visit was sent to (its page's reference)."""
    assert answer.status_code == 303, answer.text
    reference = answer.headers["location"].rsplit("/", 1)[1]
    assert reference.startswith("cs_")
    return {"reference": reference, "url": f"http://127.0.0.1/checkout/{reference}"}
