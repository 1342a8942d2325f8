"""What merchants and their customers do during the campaign, over Cauri's public API with a
live key, as a careful integration does it (spec, Errors, retry rules): a creation is replayed
after a network failure only when it carries an `external_id`; an instalment, which cannot,
is re-read before it is sent again. Some of it is adversarial: the same refund twice at once,
a refund larger than what is left, a partial refund a whole-only operator refuses."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tools.chaos_campaign.operators import Rig, Route, pick_route

PLANS = "/api/v1/installment-plans"
RETURN_URL = "https://shop.example/merci"
PENDING = "pending"


@dataclass
class Tally:
    """What the merchants saw: operations by kind and operator, answers by status."""

    started: Counter[str] = field(default_factory=Counter)
    created: Counter[str] = field(default_factory=Counter)  # creations' answers, by connector
    answers: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)  # 5xx: never an answer Cauri gives
    replays: int = 0  # requests sent again after the API went away
    unknown: int = 0  # creations whose outcome stayed unknown (no external_id to replay)
    references: list[str] = field(default_factory=list)  # payments created, for forgers


@dataclass
class Merchant:
    client: httpx.AsyncClient
    rigs: list[Rig]
    rng: random.Random
    tally: Tally
    settle_wait: float  # how long a flow waits for an outcome before it moves on

    async def call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, replayable: bool
    ) -> httpx.Response | None:
        """The answer; None when the API could not be reached and the call may not be
        replayed. A replayable call is sent again until the API is back (it is restarted)."""
        for attempt in range(600):
            try:
                response = await self.client.request(method, path, json=body, timeout=30)
            except httpx.TransportError:
                if not replayable:
                    return None
                self.tally.replays += attempt == 0
                await asyncio.sleep(0.2)
                continue
            code = response.json().get("error", {}).get("code") if response.is_error else ""
            self.tally.answers[f"{method} {response.status_code} {code}".strip()] += 1
            if response.status_code >= 500 and code != "payout_failed":
                self.tally.server_errors.append(f"{method} {path}: {response.text[:300]}")
            return response
        raise RuntimeError(f"the API did not come back for {method} {path}")

    async def read(self, path: str) -> Any:
        response = await self.call("GET", path, replayable=True)
        assert response is not None and response.status_code == 200, path
        return response.json()["data"]

    async def settled(self, path: str) -> dict[str, Any]:
        """The resource once it is no longer pending, or as it stands after `settle_wait`
        (the verdict judges what never settles)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_wait
        while True:
            data = await self.read(path)
            if data["status"] != PENDING or loop.time() > deadline:
                return data
            await asyncio.sleep(0.25)

    async def customer(self, rig: Rig, reference: str, pays: bool) -> None:
        """The customer acts on the operator's side once the operator has the payment (it may
        never: a request that failed or hung before the operator took it)."""
        for _ in range(40):
            if await asyncio.to_thread(rig.customer_acts, reference, pays):
                return
            await asyncio.sleep(0.1)

    # Payments and their refunds.

    async def payment(self) -> None:
        rig, route = pick_route(self.rigs, "collect", self.rng)
        fails = route.failing is not None and self.rng.random() < 0.15
        amount = self.rng.choice((500, 1000, 2500, 10_000, 40_000))
        created, _ = await self._pay(
            "/api/v1/payments", rig, route, amount, fails, {"external_id": _external()}
        )
        if created is None:
            return
        payment = await self.settled(f"/api/v1/payments/{created['reference']}")
        if payment["status"] == "succeeded" and self.rng.random() < 0.6:
            await self.refund(rig, payment)

    async def _pay(
        self,
        path: str,
        rig: Rig,
        route: Route,
        amount: int,
        fails: bool,
        extra: dict[str, Any],
    ) -> tuple[dict[str, Any] | None, bool]:
        """The payment created, if it was; whether the API answered at all."""
        number = route.failing if fails and route.failing else route.number
        body = {"amount": amount, "operator": route.operator, "phone_number": number}
        body |= {"return_url": RETURN_URL, **extra}
        self.tally.started[f"payment {rig.connector}"] += 1
        response = await self.call("POST", path, body, replayable="external_id" in extra)
        if response is None:
            self.tally.unknown += 1
            return None, False
        code = response.json().get("error", {}).get("code", "") if response.is_error else ""
        self.tally.created[f"payment {rig.connector} {response.status_code} {code}".strip()] += 1
        if response.status_code not in (200, 201):
            return None, True
        created: dict[str, Any] = response.json()["data"]
        self.tally.references.append(created["reference"])
        if created["status"] == PENDING and created.get("payment_url"):
            # The customer has a page to act on (the sandbox numbers decide elsewhere).
            await self.customer(rig, created["reference"], pays=self.rng.random() > 0.1)
        return created, True

    async def refund(self, rig: Rig, payment: dict[str, Any]) -> None:
        path = f"/api/v1/payments/{payment['reference']}/refund"
        amount = int(payment["amount"])

        async def ask(body: dict[str, Any]) -> None:
            self.tally.started[f"refund {rig.connector}"] += 1
            await self.call("POST", path, body | {"external_id": _external()}, replayable=True)

        dice = self.rng.random()
        if rig.refunds == "none" or (rig.refunds == "whole" and dice < 0.2):
            # Refused before anything is written: 402 (none), 422 (part of a whole-only one).
            await ask({"amount": max(amount // 2, 1)} if rig.refunds == "whole" else {})
        elif rig.refunds == "whole" or dice < 0.4:
            # The whole of it, asked twice at once under two external_ids: once is a refund.
            await asyncio.gather(ask({}), ask({}))
        elif dice < 0.7:
            half = amount // 2
            await asyncio.gather(ask({"amount": half}), ask({"amount": amount - half}))
            await ask({"amount": 1})  # nothing is left: refused
        else:
            # The same refund replayed at once (one refund), then more than what is left.
            body = {"amount": max(amount // 3, 1), "external_id": _external()}
            self.tally.started[f"refund {rig.connector}"] += 2
            await asyncio.gather(*(self.call("POST", path, body, replayable=True) for _ in "ab"))
            await ask({"amount": amount})

    # Payouts.

    async def payout(self) -> None:
        rig, route = pick_route(self.rigs, "disburse", self.rng)
        fails = route.failing is not None and self.rng.random() < 0.1
        body = {
            "amount": self.rng.choice((500, 1000, 5000, 20_000)),
            "operator": route.operator,
            "phone_number": route.failing if fails and route.failing else route.number,
            "external_id": _external(),
        }
        copies = 2 if self.rng.random() < 0.2 else 1  # a retry racing the first attempt
        self.tally.started[f"payout {rig.connector}"] += copies
        answers = await asyncio.gather(
            *(self.call("POST", "/api/v1/payouts", body, replayable=True) for _ in range(copies))
        )
        created = [a for a in answers if a is not None and a.status_code in (200, 201)]
        if created:
            await self.settled(f"/api/v1/payouts/{created[0].json()['data']['reference']}")

    # Instalment plans: paid to their target, or cancelled and refunded from escrow.

    async def plan(self) -> None:
        body = {"target_amount": 3000, "external_id": _external()}
        self.tally.started["plan"] += 1
        response = await self.call("POST", PLANS, body, replayable=True)
        if response is None or response.status_code != 201:
            return
        reference = response.json()["data"]["reference"]
        instalments = self.rng.choice((1, 2, 3))
        for _ in range(instalments):
            rig, route = self.rng.choice(self._refundable_routes())
            paid = await self._instalment(reference, rig, route)
            if paid is None or paid["status"] == "failed":
                break
        if instalments < 3 or self.rng.random() < 0.2:
            self.tally.started["plan cancel"] += 1
            cancel = f"{PLANS}/{reference}/cancel"
            await self.call("POST", cancel, {"reason": "chaos"}, replayable=True)
        await self.settled(f"{PLANS}/{reference}")

    def _refundable_routes(self) -> list[tuple[Rig, Route]]:
        """Where an instalment can be sent back from escrow: collected and disbursed by the
        same route (a plan's cancellation is paid out to the customer's number)."""
        return [
            (rig, route)
            for rig in self.rigs
            for route in rig.routes
            if {"collect", "disburse"} <= set(route.actions)
        ]

    async def _instalment(self, plan: str, rig: Rig, route: Route) -> dict[str, Any] | None:
        path = f"{PLANS}/{plan}/payments"
        before = len((await self.read(f"{PLANS}/{plan}"))["payments"])
        while True:
            created, answered = await self._pay(path, rig, route, 1000, False, {})
            if created is not None:
                return await self.settled(f"/api/v1/payments/{created['reference']}")
            if answered:
                return None
            # No answer: sent again only if the plan shows no new instalment.
            payments = (await self.read(f"{PLANS}/{plan}"))["payments"]
            if len(payments) > before:
                # It was created: its customer still has it to pay.
                reference = payments[-1]["reference"]
                if payments[-1].get("payment_url"):
                    await self.customer(rig, reference, pays=True)
                return await self.settled(f"/api/v1/payments/{reference}")


def _external() -> str:
    return f"chaos-{uuid.uuid4().hex[:20]}"
