"""What a payout object tells of its fate: `failure_code` and `failure_message` once failed
(null otherwise), `awaiting_approval` while held; a held payout counts in the balance's
`pending_payouts` without being debited (DESIGN: payouts held for approval)."""

from __future__ import annotations

import httpx

from cauri.kit.failures import MESSAGES
from cauri.runtime import Runtime
from tests.payouts.builders import (
    BALANCE,
    PAYOUTS,
    REFUSED,
    approve,
    create,
    live_operator,
    reject,
    set_limits,
    top_up,
)
from tests.support import MerchantKeys, assert_error, make_merchant


async def _payout(
    client: httpx.AsyncClient, headers: dict[str, str], ref: str
) -> dict[str, object]:
    response = await client.get(f"{PAYOUTS}/{ref}", headers=headers)
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()["data"]
    return data


async def _balance(client: httpx.AsyncClient, merchant: MerchantKeys) -> tuple[int, int]:
    [row] = (await client.get(BALANCE, headers=merchant.headers(True))).json()["data"]
    return row["available"], row["pending_payouts"]


async def test_a_failed_payout_says_why(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    await top_up(runtime, merchant.id, 5000)
    ok = (await create(client, headers, external_id="ok")).json()["data"]
    assert (ok["status"], ok["failure_code"], ok["failure_message"]) == ("succeeded", None, None)
    assert ok["awaiting_approval"] is False
    assert_error(
        await create(client, headers, phone_number=REFUSED, external_id="no"), 402, "payout_failed"
    )
    failed = await _payout(client, headers, "no")
    assert (failed["status"], failed["failure_code"]) == ("failed", "refused_at_initiation")
    assert failed["failure_message"] == MESSAGES["refused_at_initiation"]


async def test_a_held_payout_awaits_approval_and_counts_as_pending(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    headers = merchant.headers(True)
    await top_up(runtime, merchant.id, 50_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1000)
    first = (await create(client, headers, amount=4000)).json()["data"]
    second = (await create(client, headers, amount=6000)).json()["data"]
    for held in (first, second):
        assert (held["status"], held["awaiting_approval"]) == ("pending", True)
        assert (held["failure_code"], held["failure_message"]) == (None, None)
    assert await _balance(client, merchant) == (50_000, 10_000)

    await approve(runtime, first["reference"])
    assert (await _payout(client, headers, first["reference"]))["awaiting_approval"] is False
    assert await _balance(client, merchant) == (46_000, 10_000)

    await reject(runtime, second["reference"])
    rejected = await _payout(client, headers, second["reference"])
    assert (rejected["status"], rejected["awaiting_approval"]) == ("failed", False)
    assert rejected["failure_code"] == "approval_rejected"
    assert rejected["failure_message"] == MESSAGES["approval_rejected"]
    assert await _balance(client, merchant) == (46_000, 4000)
