"""Issue 12: a plan shows what its settled cancellation gave back and kept, and a plan whose
refund failed is resolved by the staff (`cauri plans resolve`): a new refund to a number
they give, or the escrow released to the merchant. Nothing stays in escrow with no way out,
and no resolution moves the money twice."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import CauriError, Conflict
from cauri.plans import resolution
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.foundation.builders import run_cli
from tests.plans.builders import (
    SETTLE_DELAY,
    assert_plan_reconciles,
    available,
    cancel,
    count,
    create_plan,
    escrow,
    fetch,
    paid_instalment,
    penalised_plan,
)
from tests.support import MerchantKeys, card_body

REFUSED_LATER = "22997000003"  # test mode: the refund is accepted, then fails


async def failed_plan(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> tuple[MerchantKeys, str]:
    """A plan paid 3,000 with a 10 % penalty, cancelled, whose refund of 2,700 failed: the
    2,700 are back in its escrow."""
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, REFUSED_LATER, 3_000)
    assert (await cancel(client, merchant, reference)).status_code == 200
    for _ in range(3):
        clock.advance(SETTLE_DELAY + 1)
        await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "failed"
    assert await escrow(runtime, merchant.id, reference) == 2_700
    return merchant, reference


async def test_a_settled_cancellation_shows_what_was_refunded_and_kept(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, "22997000000", 3_000)
    pending = await fetch(client, merchant, reference)
    assert (pending["refunded_amount"], pending["penalty_amount"]) == (None, None)
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    plan = await fetch(client, merchant, reference)
    assert plan["status"] == "refunded"
    assert (plan["refunded_amount"], plan["penalty_amount"]) == (2_700, 300)
    assert (plan["resolution"], plan["resolved_at"]) == (None, None)


async def test_a_failed_plan_shows_nothing_refunded(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    plan = await fetch(client, merchant, reference)
    assert (plan["refunded_amount"], plan["penalty_amount"]) == (0, 300)


async def test_resolve_by_a_new_refund(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    database_url: str,
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    args = ("plans", "resolve", reference, "--refund-to", "22997000000", "--operator", "mtn")
    result = (await run_cli(database_url, *args, "--reason", "numéro corrigé", "--json")).json()
    assert result["refund"]["status"] == "succeeded"
    assert (result["refund"]["amount"], result["refund"]["phone_number"]) == (2_700, "22997000000")
    plan = await fetch(client, merchant, reference)
    assert (plan["status"], plan["resolution"], plan["resolution_reason"]) == (
        "refunded",
        "refunded",
        "numéro corrigé",
    )
    assert plan["refunded_amount"] == 2_700 and plan["resolved_at"] is not None
    assert await escrow(runtime, merchant.id, reference) == 0
    await assert_plan_reconciles(runtime, reference)
    # Nothing left to resolve: the plan is no longer failed.
    again = await run_cli(database_url, *args)
    assert again.error()["code"] == "conflict"


async def test_a_resolution_refund_that_fails_leaves_the_plan_failed_for_another_try(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    async with unit_of_work(runtime.sessionmaker) as session:
        await resolution.refund_to(
            session, runtime, reference, phone_number=REFUSED_LATER, operator="mtn"
        )
    assert await escrow(runtime, merchant.id, reference) == 0  # sent
    async with unit_of_work(runtime.sessionmaker) as session:
        # While it is under way, no other resolution.
        with pytest.raises(Conflict):
            await resolution.release_to_merchant(session, runtime, reference, reason="x")
    for _ in range(2):
        clock.advance(SETTLE_DELAY + 1)
        await worker.drain()
    plan = await fetch(client, merchant, reference)
    assert (plan["status"], plan["resolution"]) == ("failed", None)
    assert await escrow(runtime, merchant.id, reference) == 2_700
    async with unit_of_work(runtime.sessionmaker) as session:
        await resolution.refund_to(
            session, runtime, reference, phone_number="22997000000", operator="mtn"
        )
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    await assert_plan_reconciles(runtime, reference)


async def test_release_to_the_merchant(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    database_url: str,
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    before = await available(runtime, merchant.id)
    missing_reason = await run_cli(
        database_url, "plans", "resolve", reference, "--release-to-merchant"
    )
    assert missing_reason.error()["code"] == "invalid_request"
    result = await run_cli(
        database_url,
        "plans",
        "resolve",
        reference,
        "--release-to-merchant",
        "--reason",
        "Le marchand a remboursé le client en espèces.",
        "--json",
    )
    plan = result.json()["plan"]
    assert (plan["status"], plan["resolution"]) == ("failed", "released_to_merchant")
    assert plan["resolution_reason"] == "Le marchand a remboursé le client en espèces."
    assert await available(runtime, merchant.id) == before + 2_700
    assert await escrow(runtime, merchant.id, reference) == 0
    fetched = await fetch(client, merchant, reference)
    assert fetched["resolution"] == "released_to_merchant"
    await assert_plan_reconciles(runtime, reference)


async def test_a_card_plan_is_resolved_by_a_refund_to_a_number(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    paid = await client.post(
        f"/api/v1/installment-plans/{reference}/payments",
        json=card_body(amount=3_000),
        headers=merchant.headers(),
    )
    assert paid.status_code == 201, paid.text
    decided = await client.post(
        f"/pay/{paid.json()['data']['reference']}", data={"outcome": "succeeded"}
    )
    assert decided.status_code in (200, 303), decided.text
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "failed"
    async with unit_of_work(runtime.sessionmaker) as session:
        _, refund = await resolution.refund_to(
            session, runtime, reference, phone_number="22997000000", operator="mtn"
        )
    assert (refund.status, refund.amount) == ("succeeded", 2_700)
    assert (await fetch(client, merchant, reference))["status"] == "refunded"


async def test_only_a_failed_plan_with_money_in_escrow_is_resolved(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    refusals: list[CauriError] = []
    for target in (reference, "00000000-0000-0000-0000-000000000000", "pas-un-plan"):
        async with unit_of_work(runtime.sessionmaker) as session:
            try:
                await resolution.release_to_merchant(session, runtime, target, reason="x")
            except CauriError as error:
                refusals.append(error)
    assert [error.http_status for error in refusals] == [409, 404, 404]
    async with unit_of_work(runtime.sessionmaker) as session:
        with pytest.raises(CauriError) as refused:
            await resolution.refund_to(
                session, runtime, reference, phone_number="22997000000", operator="visa"
            )
    assert refused.value.http_status == 422
    await create_plan(client, merchant)  # nothing else was touched
    assert await available(runtime, merchant.id) == 0


async def test_simultaneous_resolutions_move_the_escrow_once(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    before = await available(runtime, merchant.id)

    async def release() -> str:
        try:
            async with unit_of_work(runtime.sessionmaker) as session:
                await resolution.release_to_merchant(session, runtime, reference, reason="r")
        except Conflict:
            return "conflict"
        return "released"

    async def refund() -> str:
        try:
            async with unit_of_work(runtime.sessionmaker) as session:
                await resolution.refund_to(
                    session, runtime, reference, phone_number="22997000000", operator="mtn"
                )
        except Conflict:
            return "conflict"
        return "refunded"

    outcomes = await asyncio.gather(*(release() if i % 2 else refund() for i in range(10)))
    assert outcomes.count("conflict") == 9
    assert await escrow(runtime, merchant.id, reference) == 0
    released = await available(runtime, merchant.id) - before
    refunds = await count(
        runtime,
        "SELECT count(*) FROM plan_refunds WHERE CAST(plan_id AS text) = :p AND status = "
        "'succeeded'",
        p=reference,
    )
    # Exactly one of the two ways out, once: never both, never twice.
    assert (released, refunds) in ((2_700, 0), (0, 1))
    await assert_plan_reconciles(runtime, reference)
