"""The payment hot path's round trips (DESIGN: Hot paths): a test payment that settles at
once is inserted settled, never inserted pending and then updated."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from sqlalchemy import event

from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS
from tests.support import make_merchant, momo_body


@contextmanager
def statements(runtime: Runtime) -> Iterator[list[str]]:
    """The SQL statements run while the block runs, as their first two words and table."""
    seen: list[str] = []

    def record(*params: Any) -> None:
        seen.append(" ".join(params[2].split()[:3]))

    engine = runtime.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


async def test_a_payment_settled_at_once_is_inserted_settled(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    with statements(runtime) as seen:
        response = await client.post(PAYMENTS, json=momo_body(), headers=merchant.headers())
    assert response.status_code == 201, response.text
    assert response.json()["data"]["status"] == "succeeded"
    # Authentication, fee terms, the payment, its ledger transaction, its event: nothing else.
    assert len(seen) == 5, seen
    assert [s for s in seen if s.startswith("INSERT INTO payments")] == ["INSERT INTO payments"]
    assert not [s for s in seen if s.startswith("UPDATE")], seen


async def test_a_refusal_at_initiation_is_inserted_failed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    with statements(runtime) as seen:
        response = await client.post(
            PAYMENTS, json=momo_body(phone_number="22997000001"), headers=merchant.headers()
        )
    assert response.status_code == 402, response.text
    # The failed payment and its event are kept, in two statements and no ledger movement.
    assert not [s for s in seen if s.startswith("UPDATE") or s.startswith("WITH tx")], seen
    listed = await client.get(PAYMENTS, headers=merchant.headers())
    assert [p["status"] for p in listed.json()["data"]] == ["failed"]
