"""MTN's OAuth tokens, one per product (collection, disbursement), fetched with the API user
and key (HTTP Basic) and the product's subscription key, and shared: concurrent calls wait
for one fetch instead of each asking for a token (MTN limits token requests), and a token
is reused until shortly before it expires."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import httpx

from cauri.operators import exchange
from cauri.operators.protocol import Exchange


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
        self._tokens: dict[str, exchange.CachedToken[Refusal]] = {
            product: exchange.CachedToken() for product in subscription_keys
        }

    def forget(self, product: str, value: str) -> None:
        """MTN refused this token (401): the next call fetches another."""
        self._tokens[product].forget(value)

    async def get(self, client: httpx.AsyncClient, product: str) -> str | Refusal:
        return await self._tokens[product].get(lambda: self._fetch(client, product))

    async def _fetch(self, client: httpx.AsyncClient, product: str) -> exchange.Token | Refusal:
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
        return exchange.Token(value, lifetime)
