"""The payment hot path's round trips (DESIGN: Hot paths): a test payment that settles at
once is inserted settled, with its money and its event, in one statement that commits as it
runs (no BEGIN, no COMMIT); never inserted pending and then updated."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import text

from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS
from tests.plans.builders import create_plan, pay
from tests.round_trips import statements
from tests.support import make_merchant, momo_body, scalar


async def test_a_payment_settled_at_once_is_inserted_settled(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    async with statements(runtime) as seen:
        response = await client.post(PAYMENTS, json=momo_body(), headers=merchant.headers())
    assert response.status_code == 201, response.text
    assert response.json()["data"]["status"] == "succeeded"
    # The key with the fee terms of the mode, then the payment with its ledger transaction
    # and its event in one statement: two round trips, no transaction opened or committed.
    assert seen.asyncpg == ["SELECT c.*, t.*", "WITH pay AS"]
    assert seen.session == []
    reference = response.json()["data"]["reference"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 1
    recorded = (
        "SELECT count(*) FROM ledger_transactions WHERE reference = :ref AND kind = 'payment'"
    )
    assert await scalar(runtime, recorded, ref=reference, kind="payment") == 1
    assert (
        await scalar(runtime, "SELECT count(*) FROM events WHERE type = 'payment.succeeded'") == 1
    )


async def test_a_replay_writes_nothing_more(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(external_id="order-42")
    first = await client.post(PAYMENTS, json=body, headers=merchant.headers())
    assert first.status_code == 201, first.text
    async with statements(runtime) as seen:
        again = await client.post(PAYMENTS, json=body, headers=merchant.headers())
    assert again.status_code == 200, again.text
    assert again.json()["data"] == first.json()["data"]
    # The one statement found the external_id taken: no second row, money or event.
    assert "WITH pay AS" in seen.asyncpg
    for table in ("payments", "ledger_transactions", "events"):
        assert await scalar(runtime, f"SELECT count(*) FROM {table}") == 1, table  # noqa: S608


async def test_the_event_its_delivery_and_its_job_take_one_statement(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    endpoint = await client.put(
        "/api/v1/webhooks/endpoint",
        json={"url": "https://merchant.example/hooks"},
        headers=merchant.headers(),
    )
    assert endpoint.status_code == 200, endpoint.text
    async with statements(runtime) as seen:
        response = await client.post(PAYMENTS, json=momo_body(), headers=merchant.headers())
    assert response.status_code == 201, response.text
    # A payment with somewhere to notify costs no more statements than one without.
    assert seen.session == [] and len(seen.asyncpg) == 2, seen
    # The delivery's first attempt is queued in the event's transaction, as the worker
    # queues any job: its lane, its endpoint's group, its payload.
    job = await row(
        runtime,
        "SELECT j.kind, j.lane, j.group_key, j.payload, j.status, j.max_attempts, "
        "j.run_at = e.created_at, j.created_at = e.created_at, d.id = e.id "
        "FROM events e JOIN webhook_deliveries d ON d.event_id = e.id "
        "JOIN jobs j ON j.payload ->> 'delivery_id' = d.id::text "
        "WHERE e.merchant_id = :merchant",
        merchant=merchant.id,
    )
    assert job is not None
    kind, lane, group, payload, status, max_attempts, *same = job
    assert (kind, lane, group, status, max_attempts) == (
        "webhooks.deliver",
        "webhooks-test",
        f"{merchant.id}/test",
        "queued",
        10,
    )
    assert payload["attempt"] == 1
    assert same == [True, True, True]
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 1


async def test_an_event_with_nowhere_to_go_queues_no_job(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(PAYMENTS, json=momo_body(), headers=merchant.headers())
    assert response.status_code == 201, response.text
    assert await scalar(runtime, "SELECT count(*) FROM events") == 1
    assert await scalar(runtime, "SELECT count(*) FROM webhook_deliveries") == 0
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 0


async def row(runtime: Runtime, sql: str, **params: Any) -> Any:
    async with runtime.sessionmaker() as session:
        return (await session.execute(text(sql), params)).one_or_none()


async def test_a_refusal_at_initiation_is_inserted_failed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    async with statements(runtime) as seen:
        response = await client.post(
            PAYMENTS, json=momo_body(phone_number="22997000001"), headers=merchant.headers()
        )
    assert response.status_code == 402, response.text
    # The failed payment and its event are kept, in one statement, with no ledger movement.
    assert seen.session == [] and seen.asyncpg[-1] == "WITH pay AS", seen
    assert not [s for s in seen.all() if s.startswith("UPDATE")], seen
    listed = await client.get(PAYMENTS, headers=merchant.headers())
    assert [p["status"] for p in listed.json()["data"]] == ["failed"]
    assert await scalar(runtime, "SELECT count(*) FROM ledger_transactions") == 0
    assert await scalar(runtime, "SELECT count(*) FROM events WHERE type = 'payment.failed'") == 1


async def test_an_instalment_reads_its_fee_terms_with_its_key(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    async with statements(runtime) as seen:
        response = await pay(client, merchant, plan["reference"], amount=2_000)
    assert response.status_code == 201, response.text
    assert seen.asyncpg[0] == "SELECT c.*, t.*", seen
    assert not [s for s in seen.all() if s.startswith("SELECT m.mode")], seen
