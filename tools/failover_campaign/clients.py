"""Merchants' integrations under the failover, over the public API with a test key: payments
and payouts, each with an `external_id`, sent again with the same body on a 5xx, a
timeout or a lost connection (spec, retry rules) until Cauri acknowledges it (2xx)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

REQUEST_TIMEOUT = 10.0  # seconds: a request that hangs longer counts as one with no answer
GIVE_UP_AFTER = 120.0  # seconds of refusals and errors: the service did not come back
# Retried as they are: a 409 is the same external_id still being made by another attempt.
RETRIED = {409, 429}
OPERATIONS = {"payment": "/api/v1/payments", "payout": "/api/v1/payouts"}


@dataclass(frozen=True)
class Acknowledged:
    kind: str
    external_id: str
    reference: str
    sent: float  # when its last attempt was sent (the loop's clock)
    answered: float


@dataclass
class Tally:
    acknowledged: list[Acknowledged] = field(default_factory=list)
    answers: Counter[str] = field(default_factory=Counter)
    retried: int = 0  # operations sent more than once before their acknowledgement
    sent: dict[str, str] = field(default_factory=dict)  # external_id: kind, every one tried
    refused: list[str] = field(default_factory=list)  # answers neither 2xx nor retried
    abandoned: list[str] = field(default_factory=list)  # never acknowledged


@dataclass
class Merchant:
    client: httpx.AsyncClient
    rng: random.Random
    tally: Tally

    async def run(self, stop: asyncio.Event) -> None:
        """One integration: an operation after the other until `stop`."""
        while not stop.is_set():
            kind = self.rng.choice(("payment", "payment", "payout"))
            await self.until_acknowledged(kind, self._body())

    def _body(self) -> dict[str, Any]:
        # 0000 succeeds at once; other endings stay pending, then succeed (a job settles them).
        ending = self.rng.choice(("0000", f"{self.rng.randrange(1000, 10_000)}"))
        return {
            "amount": self.rng.choice((500, 1000, 2500, 10_000)),
            "operator": "mtn",
            "phone_number": f"2299700{ending}",
            "external_id": f"failover-{uuid.uuid4().hex[:20]}",
        }

    async def until_acknowledged(self, kind: str, body: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        self.tally.sent[body["external_id"]] = kind
        started, pause, attempts = loop.time(), 0.05, 0
        while loop.time() - started < GIVE_UP_AFTER:
            attempts += 1
            sent = loop.time()
            try:
                answer = await self.client.post(
                    OPERATIONS[kind], json=body, timeout=REQUEST_TIMEOUT
                )
            except httpx.TransportError as error:
                self.tally.answers[f"{kind}: no answer ({type(error).__name__})"] += 1
            else:
                code = answer.json().get("error", {}).get("code") if answer.is_error else ""
                self.tally.answers[f"{kind}: {answer.status_code} {code}".strip()] += 1
                if answer.is_success:
                    reference = answer.json()["data"]["reference"]
                    self.tally.acknowledged.append(
                        Acknowledged(kind, body["external_id"], reference, sent, loop.time())
                    )
                    self.tally.retried += attempts > 1
                    return
                if answer.status_code < 500 and answer.status_code not in RETRIED:
                    self.tally.refused.append(f"{kind} {body['external_id']}: {answer.text[:200]}")
                    return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)
        self.tally.abandoned.append(f"{kind} {body['external_id']}")
