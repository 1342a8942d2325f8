"""MTN's OAuth tokens, one per product (collection, disbursement), fetched with the API user
and key (HTTP Basic) and the product's subscription key, and shared: concurrent calls wait
for one fetch instead of each asking for a token (MTN limits token requests), and a token
is reused until shortly before it expires."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass

import httpx

from cauri.operators import exchange
from cauri.operators.protocol import Exchange

# A token is replaced this long before MTN says it expires: a call started with it must not
# arrive after its end.
MARGIN_SECONDS = 60.0


@dataclass(frozen=True)
class Token:
    value: str
    expires_at: float  # time.monotonic()


@dataclass(frozen=True)
class Refusal:
    """No token: why, as MTN or the network said it."""

    status: int | None
    text: str | None
    exchange: Exchange


class Tokens:
    def __init__(
        self, base_url: str, api_user: str, api_key: str, subscription_keys: dict[str, str]
    ) -> None:
        self._base_url = base_url
        self._basic = base64.b64encode(f"{api_user}:{api_key}".encode()).decode()
        self._subscription_keys = subscription_keys
        self._tokens: dict[str, Token] = {}
        self._locks = {product: asyncio.Lock() for product in subscription_keys}

    def forget(self, product: str, value: str) -> None:
        """MTN refused this token (401): the next call fetches another."""
        if (held := self._tokens.get(product)) is not None and held.value == value:
            del self._tokens[product]

    async def get(self, client: httpx.AsyncClient, product: str) -> str | Refusal:
        held = self._tokens.get(product)
        if held is not None and held.expires_at > time.monotonic():
            return held.value
        async with self._locks[product]:
            held = self._tokens.get(product)  # fetched while this call waited
            if held is not None and held.expires_at > time.monotonic():
                return held.value
            return await self._fetch(client, product)

    async def _fetch(self, client: httpx.AsyncClient, product: str) -> str | Refusal:
        answer = await exchange.send(
            client,
            "token",
            "POST",
            f"{self._base_url}/{product}/token/",
            headers={
                "Authorization": f"Basic {self._basic}",
                "Ocp-Apim-Subscription-Key": self._subscription_keys[product],
            },
            secret_answer=True,
        )
        try:
            body = json.loads(answer.text or "")
            value, lifetime = str(body["access_token"]), float(body.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError):
            return Refusal(answer.status, answer.text, answer.exchange)
        if answer.status != 200 or not value:
            return Refusal(answer.status, answer.text, answer.exchange)
        expires_at = time.monotonic() + max(lifetime - MARGIN_SECONDS, lifetime / 2)
        self._tokens[product] = Token(value, expires_at)
        return value
