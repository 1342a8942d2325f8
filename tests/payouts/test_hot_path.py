"""The payout hot path's round trips (DESIGN: Hot paths; issue 13): a test payout the
simulator pays at once is its key with the payout terms, then one statement that records it
paid, debits the balance and emits its event, committed as it runs, so that the balance's
row is locked for that statement and its commit only."""

from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from tests.payments.builders import merchant_available
from tests.payouts.builders import create, top_up
from tests.round_trips import statements
from tests.support import make_merchant, scalar


async def test_a_payout_paid_at_once_is_one_statement_after_its_key(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5_000)
    async with statements(runtime) as seen:
        response = await create(client, merchant.headers(), amount=1_000)
    assert response.status_code == 201, response.text
    assert response.json()["data"]["status"] == "succeeded"
    # No BEGIN and no COMMIT: the statement is its own transaction.
    assert seen.asyncpg == ["SELECT c.*, t.*", "WITH pyo AS"]
    assert seen.session == []
    assert await merchant_available(runtime, merchant.id) == 4_000
    reference = response.json()["data"]["reference"]
    paid = "SELECT count(*) FROM ledger_transactions WHERE reference = :ref AND kind = 'payout'"
    assert await scalar(runtime, paid, ref=reference) == 1
    assert await scalar(runtime, "SELECT count(*) FROM events WHERE type = 'payout.succeeded'") == 1


async def test_a_payout_the_simulator_does_not_pay_at_once_takes_the_recorded_path(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A delayed outcome is recorded pending and debited in the request's transaction, as
    before: the one statement is for a payout paid as it is asked."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5_000)
    async with statements(runtime) as seen:
        response = await create(
            client, merchant.headers(), amount=1_000, phone_number="22997000002"
        )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["status"] == "pending"
    assert "WITH pyo AS" not in seen.asyncpg
    assert await merchant_available(runtime, merchant.id) == 4_000
